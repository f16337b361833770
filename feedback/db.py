"""The feedback store's database connection: one SQLAlchemy Core engine over SQLite or PostgreSQL.

SQLite (a file under ``MINERVA_HOME``) is the embedded default; PostgreSQL is chosen by a
``postgresql://`` URL (``database.url`` in config or ``MINERVA_DATABASE_URL``) so several bot replicas
share one store. Every query of the `feedback` package is written once as SQLAlchemy ``text()`` with
named parameters (``:name``); SQLAlchemy turns them into each driver's parameter style, and a list value
becomes an expanding ``IN :ids`` parameter. The few places where the two dialects differ are named where
they occur (`is_postgres`).

Transactions (`begin_write`, `begin_read`):

- SQLite: the driver runs in autocommit mode and we issue ``BEGIN IMMEDIATE`` for writes (the write
  lock taken up front, so a read-then-write cannot fail half-way with "database is locked";
  notes/monitoring.md) and a deferred ``BEGIN`` for reads (one WAL snapshot for the whole block). This is
  SQLAlchemy's documented pysqlite recipe ("Serializable isolation / Savepoints / Transactional DDL").
- PostgreSQL: writes run at READ COMMITTED (row-level conflicts are settled by ``ON CONFLICT`` upserts and
  conditional UPDATEs); reads run in a READ ONLY REPEATABLE READ transaction, so every query of a job sees
  the same snapshot.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, CursorResult, Engine

#: Environment variable naming the store's database URL; overrides the config's ``database.url``.
DATABASE_URL_ENV = "MINERVA_DATABASE_URL"

#: Milliseconds a SQLite statement waits for another writer's lock before failing. 10 s: monitoring.md,
#: "SQLite as the event store" (>= 10 s; with BEGIN IMMEDIATE, 4 writer processes saw 0 lock errors).
BUSY_TIMEOUT_MS = 10_000

#: Applied to every SQLite connection, in this order (busy_timeout first, so switching to WAL waits for
#: locks). synchronous=NORMAL is durable across application crashes in WAL mode and ~15x faster per commit
#: than FULL (monitoring.md); only an OS crash or power loss can drop the last commits.
SQLITE_PRAGMAS = (
    f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}",
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA foreign_keys = ON",
)

#: Connections each process keeps open to PostgreSQL (the bot's executor threads + a job). A replica
#: never needs more; 3 replicas x 8 stays far under PostgreSQL's default max_connections of 100.
POSTGRES_POOL_SIZE = 8

_WRITE = "minerva_write"


def is_url(target: str | Path) -> bool:
    """True when ``target`` is a database URL (``postgresql://…``, ``sqlite:///…``) rather than a file path."""
    return "://" in str(target)


def redact(target: str | Path) -> str:
    """``target`` fit for logs and error messages: a URL's password replaced by ``***``."""
    if not is_url(target):
        return str(target)
    return sa.make_url(str(target)).render_as_string(hide_password=True)


def create_engine(target: str | Path) -> Engine:
    """An engine for a SQLite file path or a database URL.

    Args:
        target: a file path (SQLite, created with its parent folders), ``sqlite:///path``, or
            ``postgresql://user:pass@host:5432/db`` (``postgres://`` and ``postgresql+psycopg://`` too;
            the psycopg 3 driver is always used).

    Returns:
        An Engine whose connections are set up for the store (pragmas, transaction handling, NUMERIC
        read as float).

    Raises:
        ValueError: a URL of another database, or an unparsable URL.
    """
    if not is_url(target):
        return _sqlite_engine(Path(target))
    url = sa.make_url(str(target))
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(Path(url.database or ""))
    if url.get_backend_name() in ("postgresql", "postgres"):
        return _postgres_engine(url.set(drivername="postgresql+psycopg"))
    raise ValueError(f"unsupported database URL {redact(target)!r}: use a SQLite file or postgresql://…")


def is_postgres(conn: Connection | Engine) -> bool:
    """True on PostgreSQL; the branch points where the two dialects must differ use it."""
    return conn.dialect.name == "postgresql"


@contextlib.contextmanager
def begin_write(engine: Engine, *, one_statement: bool = False) -> Iterator[Connection]:
    """A write transaction: committed when the block ends, rolled back when it raises.

    SQLite takes the write lock up front (``BEGIN IMMEDIATE``); PostgreSQL runs at READ COMMITTED.

    Args:
        one_statement: the block runs a single statement, atomic on its own. PostgreSQL then runs it in
            autocommit mode: no BEGIN/COMMIT round trips, which halves the cost of the hot single-row writes
            (a first vote, a Slack event claim). SQLite is unchanged.

    Raises:
        sqlalchemy.exc.DBAPIError: the database failed; callers translate it (`feedback.store`).
    """
    with engine.connect() as conn:
        if one_statement and is_postgres(conn):
            conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        conn = conn.execution_options(**{_WRITE: True})
        with conn.begin():
            yield conn


@contextlib.contextmanager
def begin_read(engine: Engine) -> Iterator[Connection]:
    """A read transaction over one consistent snapshot (SELECTs only; nothing is written)."""
    with engine.connect() as conn:
        if is_postgres(conn):
            conn = conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
        with conn.begin():
            yield conn


def run(conn: Connection, sql: str, /, **params: Any) -> CursorResult:
    """Executes one statement with named parameters; a list/tuple/set value expands for ``IN :name``.

    Example::

        run(conn, "UPDATE alerts SET state = :state WHERE fingerprint IN :fps", state="resolved", fps=[...])
    """
    return conn.execute(statement(sql, params), _values(params))


def rows(conn: Connection, sql: str, /, **params: Any) -> list[dict[str, Any]]:
    """All rows of a SELECT as plain dicts, column name → value."""
    return [dict(row) for row in run(conn, sql, **params).mappings()]


def first(conn: Connection, sql: str, /, **params: Any) -> dict[str, Any] | None:
    """The first row of a SELECT as a dict, or None when it returns no row."""
    row = run(conn, sql, **params).mappings().first()
    return None if row is None else dict(row)


def scalar(conn: Connection, sql: str, /, **params: Any) -> Any:
    """The first column of the first row, or None when the SELECT returns no row."""
    return run(conn, sql, **params).scalar()


def statement(sql: str, params: Mapping[str, Any]) -> sa.TextClause:
    """``sql`` as a TextClause whose list-valued parameters expand (``IN :ids``)."""
    clause = sa.text(sql)
    expanding = [sa.bindparam(name, expanding=True) for name, value in params.items() if _is_list(value)]
    return clause.bindparams(*expanding) if expanding else clause


def _values(params: Mapping[str, Any]) -> dict[str, Any]:
    return {name: list(value) if _is_list(value) else value for name, value in params.items()}


def _is_list(value: Any) -> bool:
    return isinstance(value, (list, tuple, set, frozenset))


def _sqlite_engine(path: Path) -> Engine:
    path.parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(
        f"sqlite:///{path}", connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False}
    )

    @sa.event.listens_for(engine, "connect")
    def _setup(dbapi_connection, _record) -> None:
        # Autocommit at the driver: pysqlite's own implicit BEGIN would defeat BEGIN IMMEDIATE.
        dbapi_connection.isolation_level = None
        for pragma in SQLITE_PRAGMAS:
            dbapi_connection.execute(pragma)

    @sa.event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(_WRITE) else "BEGIN")

    return engine


#: Session settings of every PostgreSQL connection. synchronous_commit=off: a commit returns before its WAL
#: reaches the disk, as SQLite's synchronous=NORMAL above. A crash of the database *server* can lose the
#: last fraction of a second of votes and answers (at most 3 x wal_writer_delay, 600 ms by default), never
#: corrupt them; an application crash loses nothing. It is what lets one replica store > 2,000 votes/s
#: (benchmarks/replicas.py); set MINERVA_DATABASE_URL's ``options`` to override it.
POSTGRES_OPTIONS = "-c synchronous_commit=off"


def _postgres_engine(url: sa.URL) -> Engine:
    connect_args = {} if "options" in url.query else {"options": POSTGRES_OPTIONS}
    engine = sa.create_engine(url, pool_size=POSTGRES_POOL_SIZE, max_overflow=4, pool_pre_ping=True,
                              connect_args=connect_args)

    @sa.event.listens_for(engine, "connect")
    def _setup(dbapi_connection, _record) -> None:
        # avg()/sum() over integers return NUMERIC, which psycopg reads as Decimal; the store's callers do
        # float arithmetic with them, as with SQLite's REAL.
        from psycopg.types.numeric import FloatLoader

        dbapi_connection.adapters.register_loader("numeric", FloatLoader)

    return engine


def database_target(home: Path, configured: str | None) -> str | Path:
    """Where the store lives: ``MINERVA_DATABASE_URL``, else the config's ``database.url``, else
    ``<home>/minerva.sqlite`` (the embedded SQLite default)."""
    return os.environ.get(DATABASE_URL_ENV) or configured or home / "minerva.sqlite"


def time_bounds(column: str, since: str | None, until: str | None) -> tuple[str, dict[str, str]]:
    """A WHERE fragment for ``column`` in ``[since, until)`` and its parameters; an absent bound is left out.

    Built in Python rather than as ``(:until IS NULL OR …)``, because PostgreSQL cannot type a parameter
    that is only compared with NULL.

    Returns:
        ``("created_at >= :since AND created_at < :until", {"since": …, "until": …})``, or ``("1 = 1", {})``.
    """
    parts, params = [], {}
    if since is not None:
        parts.append(f"{column} >= :since")
        params["since"] = since
    if until is not None:
        parts.append(f"{column} < :until")
        params["until"] = until
    return (" AND ".join(parts) or "1 = 1"), params
