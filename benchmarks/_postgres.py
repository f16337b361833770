"""A PostgreSQL server for the benchmarks: ``MINERVA_TEST_DATABASE_URL``, or one started from the pgserver wheel."""

from __future__ import annotations

import os
from pathlib import Path


def postgres_server(folder: Path) -> tuple[str, object | None]:
    """(server URL, handle whose ``cleanup()`` stops it, or None for a configured server)."""
    if os.environ.get("MINERVA_TEST_DATABASE_URL"):
        return os.environ["MINERVA_TEST_DATABASE_URL"], None
    import pgserver

    server = pgserver.get_server(str(folder), cleanup_mode="delete")
    return server.get_uri(), server


def new_database(server_url: str, name: str) -> str:
    """(Re)creates database ``name`` on the server; returns its URL."""
    import sqlalchemy as sa

    url = sa.make_url(server_url).set(drivername="postgresql+psycopg")
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    admin.dispose()
    return url.set(database=name).render_as_string(hide_password=False)
