"""Setting Minerva up on the user's own documents.

    minerva init [FOLDER ...]        a starter config (one source per folder), gap-query file, next steps
    minerva sources list             configured sources and folders recorded by `minerva ingest FOLDER`
    minerva sources remove NAME      forget a recorded folder (the next plain ingest prunes its pages)
"""

from __future__ import annotations

from pathlib import Path

import click


def register(cli: click.Group) -> None:
    """Add this module's commands to ``cli``."""
    cli.add_command(sources)
    cli.add_command(init)


@click.command()
@click.argument("folders", nargs=-1, type=click.Path(exists=True, file_okay=False))
@click.option("--out", "out", default="minerva.yaml", show_default=True, type=click.Path(dir_okay=False),
              help="The config file to write; gap_queries.yaml is written beside it.")
@click.option("--url-base", "url_bases", multiple=True, metavar="[NAME=]URL",
              help="Link prefix of a folder's pages (citations link to URL + the page's path); once per folder, "
                   "in order, or NAME=URL. A {version} placeholder takes the version folder.")
@click.option("--force", is_flag=True, help="Overwrite existing files.")
def init(folders: tuple[str, ...], out: str, url_bases: tuple[str, ...], force: bool) -> None:
    """Write a starter config for your own FOLDERS of pages (one source each) and print the next commands.

    Guesses `versions: folders` when a folder's subfolders all look like versions or dates (v1/, 2025-02/)
    and says so. Also writes an empty gap-query file with commented examples; Slack settings are in the
    config as comments.
    """
    from config.starter import cjk_pages, render_config, render_gap_queries, starter_sources

    config = Path(out)
    gap_file = config.with_name("gap_queries.yaml")
    if config.exists() and not force:
        raise click.ClickException(f"{config} already exists; use --force to overwrite, or --out")
    keep_gaps = gap_file.exists() and not force  # your gap queries are kept: a second config shares them
    named = dict(u.split("=", 1) for u in url_bases if "=" in u.split("://", 1)[0])
    ordered = [u for u in url_bases if "=" not in u.split("://", 1)[0]]
    unknown = sorted(set(named) - {Path(f).resolve().name for f in folders})
    if unknown:
        raise click.UsageError(f"--url-base {unknown[0]}=...: no folder named {unknown[0]!r} among {list(folders)}")
    try:
        found = starter_sources([Path(f) for f in folders], config.parent.resolve(), named or ordered)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(render_config(found), encoding="utf-8")
    if keep_gaps:
        click.echo(f"wrote {config} ({len(found)} source(s)); kept the existing {gap_file}")
    else:
        gap_file.write_text(render_gap_queries([s.name for s in found]), encoding="utf-8")
        click.echo(f"wrote {config} ({len(found)} source(s)) and {gap_file} (no gap queries yet)")
    for src in found:
        link = f"links {src.url_base}..." if src.url_base else "no url_base: citations show the relative path"
        click.echo(f"  source {src.name!r}: {src.path} ({src.files} files; {link})")
        if src.version_folders:
            click.echo(f"    versions: folders guessed: subfolders {', '.join(src.version_folders[:4])} look like "
                       "versions or dates; only the newest is searched (delete the line in the config if wrong)")
        for chain in src.version_chains[:10]:  # sibling version folders deeper down: page by page, newest searched
            click.echo(f"    versions of one page: {' → '.join(chain)} (only the last is searched)")
        if len(src.version_chains) > 10:
            click.echo(f"    … and {len(src.version_chains) - 10} more pages with versions")
    _warn_other_index(config)
    cjk = sum(cjk_pages(Path(f)) for f in folders)
    if cjk:  # English questions cannot find these pages with the English default model
        click.echo(f"  {cjk} page(s) written in Korean or Japanese: Korean and Japanese questions find them and "
                   "English pages as is; English questions find them by shared words only (docs/languages.md)")
    if not found:
        click.echo("  no folders given: add your sources to the config (an example is in it)")
    where = f"--config {config}"
    click.echo("next:")
    click.echo(f"  minerva {where} ingest                      # index the pages (re-run after changes)")
    click.echo(f"  minerva {where} ask \"your question\"        # answers with citations")
    click.echo(f"  minerva {where} serve                       # the Slack bot (set SLACK_BOT_TOKEN first, "
               "docs/slack.md)")
    click.echo(f"  (or export MINERVA_CONFIG={config.resolve()} and drop --config)")


@click.group()
def sources() -> None:
    """The sources a plain `minerva ingest` syncs: the config's and the folders recorded by `ingest FOLDER`."""


@sources.command("list")
@click.pass_obj
def sources_list(obj) -> None:
    """One line per source: name, path, and where it comes from (config file or HOME/sources.yaml)."""
    from config.home_sources import home_sources_path, load_home_sources

    recorded = {s.name for s in load_home_sources(obj.home)}
    for source in obj.settings.sources:
        origin = home_sources_path(obj.home) if source.name in recorded else (obj.settings.path or "config")
        click.echo(f"{source.name}\t{source.path}\t({origin})")


@sources.command("remove")
@click.argument("name")
@click.pass_obj
def sources_remove(obj, name: str) -> None:
    """Forget the folder NAME recorded by `minerva ingest FOLDER`; the next plain ingest prunes its pages."""
    from config.home_sources import remove_home_source

    removed = remove_home_source(obj.home, name)
    click.echo(f"forgot source {removed.name!r} ({removed.path}); the next `minerva ingest` removes its pages")


def _warn_other_index(config: Path) -> None:
    """Say so when the data folder of the new config (``var/`` beside it) already holds another config's index:
    the README's first command puts the sample there, and the first ``ingest`` would then stop rather than remove
    its pages (a newcomer met that stop with no warning from ``init``)."""
    from config import load_settings
    from knowledge.index import live_manifest

    home = config.parent / "var"
    try:
        manifest = live_manifest(home)
    except Exception:  # no index, or one this version cannot read: nothing to warn about
        return
    synced = sorted(manifest.get("sources") or ())
    if not synced or set(synced) & {s.name for s in load_settings(config).sources}:
        return
    click.echo(f"  note: {home} already holds an index of {', '.join(synced)} (synced with "
               f"{manifest.get('config') or 'another config'}); the first `minerva --config {config} ingest` stops "
               "so as not to remove those pages: add --replace to index your folders there instead, or keep the "
               "config in another folder")

