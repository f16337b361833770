"""A real PostgreSQL server for the store's tests, and the ``store_target`` fixture that runs a test on both backends.

The server is ``MINERVA_TEST_DATABASE_URL`` when set (a CI service, a developer's own server); otherwise
the suite starts one itself from the ``pgserver`` wheel (PostgreSQL binaries on PyPI; ~1 s to start), in a
temporary folder, once per session, on a Unix socket only (no open port). Each test gets a fresh database
on it, so tests never see each other's rows. Never skipped: a missing server is an error, as in CI.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

TEST_DATABASE_ENV = "MINERVA_TEST_DATABASE_URL"


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """URL of a PostgreSQL server the tests may create databases on (its maintenance database)."""
    configured = os.environ.get(TEST_DATABASE_ENV)
    if configured:
        yield configured
        return
    import pgserver

    folder = tempfile.mkdtemp(prefix="minerva-pg-")
    server = pgserver.get_server(folder, cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


@pytest.fixture
def postgres_url(postgres_server_url: str) -> Iterator[str]:
    """A new, empty database on the test server, dropped after the test."""
    name = f"minerva_test_{uuid.uuid4().hex[:12]}"
    url = sa.make_url(postgres_server_url).set(drivername="postgresql+psycopg")
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    yield url.set(database=name).render_as_string(hide_password=False)
    with admin.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_target(request, tmp_path: Path) -> str | Path:
    """Where a `FeedbackStore` lives, once per backend: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return tmp_path / "minerva.sqlite"
    return request.getfixturevalue("postgres_url")
