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


def test_a_file_asked_to_verify_before_messages_were_kept_gets_the_column(tmp_path: Path) -> None:
    from feedback.migrations import _page_verifications

    old = tmp_path / "old.sqlite"
    conn = sqlite3.connect(old, isolation_level=None)
    db = sqlite_utils.Database(conn)
    apply_migrations(db, MIGRATIONS[:MIGRATIONS.index(_page_verifications) + 1])
    db.execute("ALTER TABLE page_verifications DROP COLUMN posted")  # as that migration made the table then
    db.execute("INSERT INTO page_verifications (doc_id, owner, state, asked_at) "
               "VALUES ('a:x.md', 'U1', 'due', '2026-01-01T00:00:00.000000+00:00')")
    conn.close()
    with FeedbackStore.open(old) as store:
        assert store.page_verifications()["a:x.md"]["posted"] == []
    assert shape(old) == shape(tmp_path / "new.sqlite")


def test_postgresql_store_has_the_same_tables_columns_and_indexes(tmp_path: Path, postgres_url: str) -> None:
    sqlite, postgres = shape(tmp_path / "new.sqlite"), shape(postgres_url)
    assert set(postgres) == set(sqlite)
    for table in sqlite:
        assert postgres[table] == sqlite[table], table


def test_a_postgresql_store_made_by_an_older_minerva_gets_what_it_lacks(tmp_path: Path, postgres_url: str) -> None:
    """A replica upgraded past migrations 9 and 10 found a version-8 PostgreSQL store and tried to migrate a
    SQLite file named after the database instead; now the missing table and columns are added, rows kept."""
    with FeedbackStore.open(postgres_url) as store:
        store.record_answer(answer_id="old1", question="q", channel=None, thread_ts=None, user_id=None,
                            retrieved=[{"chunk_id": "a:x.md#0", "doc_id": "a:x.md", "score": 0.9}],
                            cited_doc_ids=["a:x.md"], refused=False, top_score=0.9, latency_ms=1.0)
    engine = sa.create_engine(postgres_url)
    with engine.begin() as conn:  # as a store of version 8 looked
        conn.execute(sa.text("ALTER TABLE citations DROP COLUMN answering"))
        conn.execute(sa.text("ALTER TABLE answers DROP COLUMN delivered"))
        conn.execute(sa.text("DROP TABLE reply_retries"))
        conn.execute(sa.text("DROP INDEX idx_answers_user"))  # version 13's index
        conn.execute(sa.text("ALTER TABLE page_verifications DROP COLUMN posted"))  # version 14's column
        conn.execute(sa.text("DELETE FROM schema_migrations WHERE version > 8"))
    engine.dispose()

    with FeedbackStore.open(postgres_url) as store:
        with store.snapshot() as conn:
            citation = conn.execute(sa.text("SELECT doc_id, answering FROM citations")).one()
            versions = conn.execute(sa.text("SELECT max(version) FROM schema_migrations")).scalar()
    assert tuple(citation) == ("a:x.md", 1) and versions == len(MIGRATIONS)
    upgraded, created = shape(postgres_url), shape(tmp_path / "new.sqlite")
    assert set(upgraded) == set(created) and all(upgraded[t]["columns"] == created[t]["columns"] for t in created)
    assert all(upgraded[t]["indexes"] == created[t]["indexes"] for t in created)
