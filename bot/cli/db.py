"""`minerva db`: which database holds the feedback store, moving a SQLite store to PostgreSQL, a local server.

    minerva db status [--json]                              backend, URL (password hidden), schema, rows per table
    minerva db migrate --to postgresql://… [--from PATH] [--force] [--batch-size N]
    minerva db local [--dir PATH] [--url] [--stop]          a PostgreSQL on this machine (pgserver), its URL

The store is the one `minerva` uses (``MINERVA_DATABASE_URL``, else config ``database.url``, else
``<home>/minerva.sqlite``). ``migrate`` copies it (or the SQLite file ``--from PATH``) into an empty PostgreSQL
database (`feedback.copy.copy_store`: schema created, every table copied in one transaction, id sequences
moved past the copied ids), then prints the rows copied per table. It refuses a target that already holds
feedback rows unless ``--force``, which replaces them (in the same transaction). Afterwards point every
replica at the new database with ``MINERVA_DATABASE_URL`` (or ``database.url``) and keep the SQLite file as
a backup. ``local`` starts a PostgreSQL server from the pgserver wheel (`bot.cli.local_postgres`) with its data in
``<home>/postgres`` (or ``--dir``), Unix socket only, and prints the URL to use; it runs until ``--stop``. No SQL
over the store here; passwords are never printed (`feedback.db.redact`).
"""

from __future__ import annotations

import json
from pathlib import Path

import click


def register(cli: click.Group) -> None:
    """Add the `db` group to ``cli``."""
    cli.add_command(db)


@click.group()
def db() -> None:
    """The feedback store's database: `status`, `migrate` a SQLite store into PostgreSQL, a `local` PostgreSQL."""


@db.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as one JSON object.")
@click.pass_obj
def status(obj, as_json: bool) -> None:
    """Show which database the store is in (password hidden), its schema version and rows per table."""
    from feedback.copy import describe

    found = describe(obj.database)
    if as_json:
        click.echo(json.dumps({"backend": found.backend, "database": found.target,
                               "schema_version": found.schema_version, "current_version": found.current_version,
                               "tables": found.tables}))
        return
    behind = "" if found.schema_version >= found.current_version else (
        f" (migrated to {found.current_version} when Minerva next opens it)")
    click.echo(f"backend: {found.backend}\ndatabase: {found.target}\nschema version: {found.schema_version}{behind}")
    click.echo("rows:")
    width = max((len(name) for name in found.tables), default=0)
    for name, count in found.tables.items():
        click.echo(f"  {name:<{width}}  {count:>10,}")


@db.command()
@click.option("--to", "to", required=True, metavar="URL",
              help="The empty PostgreSQL database, postgresql://user:password@host:5432/dbname.")
@click.option("--from", "from_", type=click.Path(dir_okay=False), default=None,
              help="The SQLite file to copy (default: the store Minerva uses, <home>/minerva.sqlite).")
@click.option("--force", is_flag=True, help="Replace the rows a non-empty target already holds (one transaction).")
@click.option("--batch-size", type=click.IntRange(min=1), default=5000, show_default=True,
              help="Rows per insert.")
@click.option("--json", "as_json", is_flag=True, help="Print the rows copied per table as one JSON object.")
@click.pass_obj
def migrate(obj, to: str, from_: str | None, force: bool, batch_size: int, as_json: bool) -> None:
    """Copy a SQLite feedback store into an empty PostgreSQL database.

    The schema is created in the target, every table is copied in one transaction (nothing is left half
    copied when it fails), and the id sequences continue after the copied ids. The SQLite file is only read
    (it is first migrated to the current schema, as any Minerva command would). Exit code 1 on any error.
    """
    from tqdm import tqdm

    from feedback import FeedbackError, FeedbackStore
    from feedback.copy import copy_store, describe
    from feedback.db import is_url, redact

    if not _is_postgres_url(to):
        raise click.ClickException(f"--to must be a postgresql://… URL, not {redact(to)!r}")
    source = Path(from_) if from_ else obj.database
    if is_url(source):  # MINERVA_DATABASE_URL already names the target: copy the home's embedded store
        source = Path(obj.home) / "minerva.sqlite"
    if not Path(source).is_file():
        raise click.ClickException(f"no SQLite store at {source}; pass --from PATH to copy another file")
    try:
        total = sum(describe(source).tables.values())
        with FeedbackStore.open(source) as src, FeedbackStore.open(to) as dst:
            with tqdm(total=total, unit="row", desc="copying", disable=True if as_json else None,
                      leave=False) as bar:
                def progress(table: str, rows: int) -> None:
                    bar.set_postfix_str(table, refresh=False)
                    bar.update(rows)

                report = copy_store(src, dst, batch_size=batch_size, force=force, progress=progress)
    except FeedbackError as exc:
        raise click.ClickException(f"{exc} (nothing was copied)") from exc
    if as_json:
        click.echo(json.dumps({"from": report.source, "to": report.target, "tables": report.tables,
                               "total": report.total, "sequences": report.sequences, "cleared": report.cleared}))
        return
    if report.cleared:
        click.echo(f"replaced {sum(report.cleared.values()):,} rows the target held (--force)")
    click.echo(f"copied {report.total:,} rows from {report.source} to {report.target}:")
    width = max(len(name) for name in report.tables)
    for name, count in report.tables.items():
        click.echo(f"  {name:<{width}}  {count:>10,}")
    click.echo(f"Now set MINERVA_DATABASE_URL (or database.url in the config) to {report.target} on every replica; "
               "keep the SQLite file as a backup.")


@db.command()
@click.option("--dir", "folder", type=click.Path(file_okay=False), default=None,
              help="The server's data folder (default: <home>/postgres, beside the SQLite store).")
@click.option("--url", "url_only", is_flag=True,
              help="Print only the URL: export MINERVA_DATABASE_URL=$(minerva db local --url).")
@click.option("--stop", is_flag=True, help="Stop the server of this data folder (its data stays).")
@click.pass_obj
def local(obj, folder: str | None, url_only: bool, stop: bool) -> None:
    """Start a PostgreSQL server on this machine (pgserver) and print the URL for MINERVA_DATABASE_URL.

    For trying several replicas without a database host. The server keeps its data in --dir, listens on a
    Unix socket only (no TCP port) and keeps running after this command, until `minerva db local --stop`;
    running the command again prints the same URL. A database named `minerva` is created on it. Needs the
    pgserver package: pip install 'minerva[replicas]'.
    """
    from bot.cli import local_postgres

    target = Path(folder) if folder else local_postgres.default_folder(obj.home)
    again = "" if folder is None else f" --dir {target}"
    if stop:
        stopped = local_postgres.stop(target)
        click.echo(f"stopped the PostgreSQL server of {target.resolve()} (its data stays; `minerva db local"
                   f"{again}` starts it again)" if stopped else f"no PostgreSQL server is running from {target}")
        return
    url = local_postgres.start(target)
    if url_only:
        click.echo(url)
        return
    click.echo(f"PostgreSQL is running, data in {target.resolve()} (Unix socket only, no TCP port); "
               f"database {local_postgres.DATABASE!r}. Point Minerva (every replica) at it with:\n"
               f"  export MINERVA_DATABASE_URL='{url}'\n"
               f"It keeps running after this command; stop it with: minerva db local{again} --stop")


def _is_postgres_url(target: str) -> bool:
    scheme, sep, _ = target.partition("://")
    return bool(sep) and scheme.lower() in ("postgresql", "postgres", "postgresql+psycopg")
