"""Copying a whole store into another database (``minerva db migrate --to postgresql://…``) and describing one
(``minerva db status``).

`copy_store` moves an existing store, typically the embedded SQLite file, into an empty PostgreSQL database
that several replicas will share. The target is opened with `FeedbackStore.open` (which creates the schema
from `feedback.schema`), then every table of `feedback.schema.METADATA` is copied in dependency order
(`METADATA.sorted_tables`: answers before the votes that reference them, topics before labels) in batches,
inside one write transaction on the target and one read snapshot of the source: a failure leaves the target
as empty as it was. ``schema_migrations`` is not copied: both stores are at the newest version (the source
was migrated when it was opened) and the target stamped its own rows.

Ids are copied as they are, so the PostgreSQL sequences behind the autoincrement id columns are then moved
past the largest copied id (`_reset_sequences`, the one PostgreSQL-only step); new rows get fresh ids.

Example::

    with FeedbackStore.open(home / "minerva.sqlite") as source, FeedbackStore.open(url) as target:
        report = copy_store(source, target)      # CopyReport(tables={"answers": 1200, "votes": 3400, ...})
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from feedback import schema
from feedback.db import begin_read, create_engine, is_postgres, is_url, redact
from feedback.errors import FeedbackError, StoreUnavailable
from feedback.migrations import MIGRATIONS, current_version
from feedback.store import FeedbackStore

#: Rows read and inserted per round trip. 5,000 rows of the widest table (answers, with its retrieved JSON)
#: stay well under 50 MB in memory.
BATCH_SIZE = 5_000
#: Tables the copy leaves alone: the target stamps its own schema versions when it is created.
NOT_COPIED = ("schema_migrations",)


class TargetNotEmpty(FeedbackError):
    """The target database already holds feedback rows; copying would mix two stores (use ``force``)."""


class SchemaMismatch(FeedbackError):
    """Source and target are at different schema versions (one Minerva is older than the other)."""


@dataclass
class CopyReport:
    """What `copy_store` copied.

    Attributes:
        source, target: where from and where to, passwords redacted.
        tables: rows copied per table, in copy order (every table of the schema but `NOT_COPIED`).
        sequences: PostgreSQL sequences moved past the copied ids, ``"table.column"`` → next id; empty on SQLite.
        cleared: rows deleted from the target first (``force``), per table; empty without ``force``.
    """

    source: str
    target: str
    tables: dict[str, int] = field(default_factory=dict)
    sequences: dict[str, int] = field(default_factory=dict)
    cleared: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Rows copied, all tables together."""
        return sum(self.tables.values())


@dataclass(frozen=True)
class StoreStatus:
    """What `describe` found.

    Attributes:
        backend: ``"sqlite"`` or ``"postgresql"``.
        target: the file or URL, password redacted.
        schema_version: the stored version (0: no Minerva tables yet).
        current_version: the newest version this Minerva knows (``len(MIGRATIONS)``).
        tables: rows per table of the schema that exists in the store.
    """

    backend: str
    target: str
    schema_version: int
    current_version: int
    tables: dict[str, int]


def copied_tables() -> list[sa.Table]:
    """The tables `copy_store` copies, parents before children (foreign keys hold after every insert)."""
    return [t for t in schema.METADATA.sorted_tables if t.name not in NOT_COPIED]


def row_counts(conn: Connection) -> dict[str, int]:
    """Rows per table of `feedback.schema` that exists behind ``conn`` (tables not created yet are left out)."""
    present = set(sa.inspect(conn).get_table_names())
    return {t.name: conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one()
            for t in schema.METADATA.sorted_tables if t.name in present}


def copy_store(source: FeedbackStore, target: FeedbackStore, *, batch_size: int = BATCH_SIZE, force: bool = False,
               progress: Callable[[str, int], None] | None = None) -> CopyReport:
    """Copies every row of ``source`` into ``target``, in one transaction on the target.

    Args:
        source: the store to copy (e.g. the SQLite file); only read.
        target: an open store (its schema created by `FeedbackStore.open`) holding no feedback rows.
        batch_size: rows per batch (>= 1).
        force: delete the target's rows first (children before parents) instead of refusing a non-empty
            target; the deletion and the copy commit together or not at all.
        progress: called after each batch with (table name, rows in the batch), e.g. to move a progress bar.

    Returns:
        A `CopyReport`; its row counts were checked against the target before committing.

    Raises:
        TargetNotEmpty: the target holds rows (its ``schema_migrations`` aside) and ``force`` is false.
        SchemaMismatch: the two stores are at different schema versions.
        StoreUnavailable: either database failed, a row broke a constraint of the target (e.g. a vote whose
            answer is missing), or the copied counts do not match; the target was rolled back.
        ValueError: ``batch_size`` < 1.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    report = CopyReport(source=redact(source.target), target=redact(target.target))
    tables = copied_tables()
    with source.snapshot() as src, target.transaction() as dst:
        versions = current_version(src), current_version(dst)
        if versions[0] != versions[1]:
            raise SchemaMismatch(f"{report.source} is at schema version {versions[0]}, {report.target} at "
                                 f"{versions[1]}: open both with the same Minerva first")
        present = set(sa.inspect(src).get_table_names())
        held = {name: n for name, n in row_counts(dst).items() if n and name not in NOT_COPIED}
        if held and not force:
            raise TargetNotEmpty(f"{report.target} already holds feedback rows ("
                                 + ", ".join(f"{name}: {n}" for name, n in held.items())
                                 + "); copy into an empty database, or replace them (`minerva db migrate --force`)")
        for table in reversed(tables):  # children first: no foreign key is left dangling
            if held.get(table.name):
                report.cleared[table.name] = dst.execute(table.delete()).rowcount
        for table in tables:
            report.tables[table.name] = 0
            if table.name not in present:
                continue
            _copy_table(src, dst, table, batch_size, report, progress)
        copied = row_counts(dst)
        wrong = {name: (n, copied.get(name)) for name, n in report.tables.items() if copied.get(name) != n}
        if wrong:  # raising rolls the target back
            raise StoreUnavailable(f"copy into {report.target} is incomplete (table: copied, found): {wrong}")
        if is_postgres(dst):
            report.sequences = _reset_sequences(dst, tables, _sqlite_sequences(src))
    return report


def describe(target: str | Path) -> StoreStatus:
    """The backend, schema version and row counts of the store at ``target``, without creating or migrating it.

    Args:
        target: a SQLite file path or a database URL (`feedback.db.create_engine`).

    Raises:
        StoreUnavailable: no SQLite file there, or the database cannot be reached or read.
    """
    shown = redact(target)
    url = sa.make_url(str(target)) if is_url(target) else None
    path = Path(url.database or "") if url is not None and url.get_backend_name() == "sqlite" else (
        None if url is not None else Path(target))
    if path is not None and not path.is_file():
        raise StoreUnavailable(f"no feedback store at {shown} yet (Minerva creates it on first use)")
    try:
        engine = create_engine(target)
    except (ValueError, sa.exc.ArgumentError) as error:
        raise StoreUnavailable(f"cannot open feedback database {shown}: {error}") from error
    try:
        with begin_read(engine) as conn:
            return StoreStatus(backend="postgresql" if is_postgres(conn) else "sqlite", target=shown,
                               schema_version=current_version(conn), current_version=len(MIGRATIONS),
                               tables=row_counts(conn))
    except sa.exc.DBAPIError as error:
        reason = str(getattr(error, "orig", None) or error).strip().splitlines()[0]
        raise StoreUnavailable(f"{shown} cannot be read: {reason}") from error
    finally:
        engine.dispose()


def _copy_table(src: Connection, dst: Connection, table: sa.Table, batch_size: int, report: CopyReport,
                progress: Callable[[str, int], None] | None) -> None:
    """Streams ``table`` from ``src`` to ``dst`` in primary-key order, ``batch_size`` rows per insert."""
    converters = {c.name: _converter(c) for c in table.columns}
    order = list(table.primary_key.columns) or list(table.columns)
    result = src.execute(table.select().order_by(*order))
    for batch in result.mappings().partitions(batch_size):
        rows = [{name: convert(row[name]) for name, convert in converters.items()} for row in batch]
        dst.execute(table.insert(), rows)
        report.tables[table.name] += len(rows)
        if progress is not None:
            progress(table.name, len(rows))


def _converter(column: sa.Column) -> Callable[[Any], Any]:
    """SQLite stores any value in any column; PostgreSQL does not. A number in a TEXT column (a thread_ts
    written as a float by an old client, say) becomes its text; text in a BLOB column becomes UTF-8 bytes."""
    if isinstance(column.type, sa.Text):
        return lambda v: v if v is None or isinstance(v, str) else str(v)
    if isinstance(column.type, sa.LargeBinary):
        return lambda v: v.encode("utf-8") if isinstance(v, str) else v
    return lambda v: v


def _sqlite_sequences(conn: Connection) -> dict[str, int]:
    """The largest id each AUTOINCREMENT table of a SQLite source ever handed out (``sqlite_sequence``), which
    may exceed the largest id left (the newest rows deleted); {} for another source. SQLite only, by nature."""
    if is_postgres(conn) or not sa.inspect(conn).has_table("sqlite_sequence"):
        return {}
    return {name: int(seq) for name, seq in conn.execute(sa.text("SELECT name, seq FROM sqlite_sequence"))}


def _reset_sequences(conn: Connection, tables: list[sa.Table], used: dict[str, int]) -> dict[str, int]:
    """Moves the sequence of each autoincrement id column past the largest copied id (or past ``used[table]``,
    the largest id the source ever gave, so an id is never reused across the move); returns the next ids.

    PostgreSQL only (``setval``/``pg_get_serial_sequence``, ``greatest``): its SERIAL columns draw ids from a
    sequence that explicit inserts do not advance, so without this the next new row would collide with a
    copied id. SQLite needs nothing (an AUTOINCREMENT table's ``sqlite_sequence`` follows the largest id
    inserted).
    """
    moved = {}
    for table in tables:
        column = table.autoincrement_column
        if column is None:
            continue
        next_id = conn.execute(
            sa.text(f"SELECT setval(pg_get_serial_sequence(:table, :column), "
                    f"greatest(coalesce(max({column.name}), 0), :used) + 1, false) FROM {table.name}"),
            {"table": table.name, "column": column.name, "used": used.get(table.name, 0)},
        ).scalar_one()
        moved[f"{table.name}.{column.name}"] = int(next_id)
    return moved
