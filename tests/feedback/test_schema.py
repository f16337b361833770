"""One schema: a store created from `feedback.schema` (SQLite and PostgreSQL) and an old SQLite file brought up
through every migration have the same tables, columns, keys and indexes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sqlalchemy as sa
import sqlite_utils

from feedback import FeedbackStore
from feedback.migrations import MIGRATIONS, apply_migrations
from feedback.schema import METADATA


def shape(target: str | Path) -> dict[str, dict]:
    """Tables → their column names, primary key, unique constraints, and index name → columns."""
    with FeedbackStore.open(target) as store:
        inspector = sa.inspect(store.engine)
        return {
            table: {
                "columns": sorted(c["name"] for c in inspector.get_columns(table)),
                "primary_key": sorted(inspector.get_pk_constraint(table)["constrained_columns"]),
                "unique": sorted(tuple(u["column_names"]) for u in inspector.get_unique_constraints(table)),
                "indexes": sorted((i["name"], tuple(i["column_names"])) for i in inspector.get_indexes(table)
                                  if not i["name"].startswith("sqlite_autoindex")
                                  and not i.get("duplicates_constraint")),  # PostgreSQL's UNIQUE index
                "foreign_keys": sorted((tuple(f["constrained_columns"]), f["referred_table"])
                                       for f in inspector.get_foreign_keys(table)),
            }
            for table in sorted(inspector.get_table_names())
        }


def test_created_and_migrated_sqlite_stores_have_the_same_schema(tmp_path: Path) -> None:
    old = tmp_path / "old.sqlite"
    conn = sqlite3.connect(old, isolation_level=None)
    apply_migrations(sqlite_utils.Database(conn), MIGRATIONS[:1])  # a store made by the first Minerva
    conn.close()
    migrated, created = shape(old), shape(tmp_path / "new.sqlite")
    assert migrated == created
    assert set(created) == set(METADATA.tables)


def test_postgresql_store_has_the_same_tables_columns_and_indexes(tmp_path: Path, postgres_url: str) -> None:
    sqlite, postgres = shape(tmp_path / "new.sqlite"), shape(postgres_url)
    assert set(postgres) == set(sqlite)
    for table in sqlite:
        assert postgres[table] == sqlite[table], table
