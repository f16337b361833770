"""A PostgreSQL server on this machine, for trying several replicas without a database host (`minerva db local`).

The server comes from the ``pgserver`` wheel (PostgreSQL binaries on PyPI; ``pip install 'minerva[replicas]'``).
Its data lives in one folder (``<home>/postgres`` by default); it listens on a Unix socket in that folder (or,
when the path is too long for a socket, in the user's runtime folder) and on no TCP port. It keeps running
after the command that started it, until `stop`; starting it again on the same folder finds it running, or
restarts it with its data. A database (``minerva`` unless told otherwise) is created on it if missing.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

from config.errors import MinervaError

#: How to get the server binaries when ``pgserver`` is not installed.
INSTALL_HINT = "pip install 'minerva[replicas]'   (or: pip install pgserver)"
#: The database `start` creates and names in its URL.
DATABASE = "minerva"
#: The data folder under MINERVA_HOME when none is given.
FOLDER_NAME = "postgres"


class PgserverMissing(MinervaError, RuntimeError):
    """The ``pgserver`` package is not installed; the message says how to install it."""


def default_folder(home: str | Path) -> Path:
    """``{home}/postgres``: where `start` keeps the server's data unless told otherwise."""
    return Path(home) / FOLDER_NAME


def start(folder: str | Path, database: str = DATABASE) -> str:
    """Starts the server whose data is in ``folder`` (created and initialised when new), or finds it running.

    Args:
        folder: the data folder; its parent is created when missing.
        database: created on the server when it does not exist yet (letters, digits, ``_``).

    Returns:
        The URL of ``database`` for ``MINERVA_DATABASE_URL``, e.g.
        ``postgresql://postgres:@/minerva?host=/home/me/var/postgres`` (trust authentication, socket only).

    Raises:
        PgserverMissing: ``pgserver`` is not installed.
        ValueError: ``database`` is not a plain name.
    """
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", database):
        raise ValueError(f"database name {database!r}: use letters, digits and _")
    pgserver = _pgserver()
    folder = Path(folder).expanduser().resolve()
    folder.parent.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(folder, cleanup_mode=None)  # None: it keeps running after this process exits
    _create_database(server.get_uri(), database)
    return server.get_uri(database)


def is_running(folder: str | Path) -> bool:
    """True when a server started from ``folder`` is running (its ``postmaster.pid`` names a live process)."""
    _pgserver()
    from pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(Path(folder).expanduser().resolve())
    return info is not None and info.is_running()


def stop(folder: str | Path) -> bool:
    """Stops the server whose data is in ``folder``; the data stays (`start` brings it back).

    Returns:
        False when no server was running there.

    Raises:
        PgserverMissing: ``pgserver`` is not installed.
    """
    if not is_running(folder):
        return False
    server = _pgserver().get_server(Path(folder).expanduser().resolve(), cleanup_mode="stop")
    server.cleanup_mode = "stop"  # a handle this process opened with `start` would otherwise leave it running
    server.cleanup()
    return True


def _pgserver():
    try:
        with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset; it falls back to /tmp
            warnings.simplefilter("ignore")
            import pgserver
    except ImportError as exc:
        raise PgserverMissing(f"a local PostgreSQL needs the pgserver package: {INSTALL_HINT}") from exc
    return pgserver


def _create_database(server_url: str, database: str) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(sa.make_url(server_url).set(drivername="postgresql+psycopg"),
                              isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            found = conn.execute(sa.text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": database})
            if found.first() is None:
                conn.exec_driver_sql(f'CREATE DATABASE "{database}"')
    finally:
        engine.dispose()
