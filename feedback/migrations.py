"""Schema of the feedback database, as an append-only list of migrations.

``PRAGMA user_version`` holds the number of migrations applied; `schema_migrations` keeps one row per
applied migration (version, name, applied_at) for people reading the file. Each migration runs in its own
``BEGIN IMMEDIATE`` transaction together with the version bump, so a crash leaves the file at the previous
version, never half-migrated. To change the schema, append a function to `MIGRATIONS`; never edit or
reorder one that has shipped, because existing files have already run it.

Migrations use plain DDL through ``db.execute`` rather than sqlite-utils' ``Table.create``: sqlite-utils
3.x commits inside ``create()``, which would end our transaction early.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlite_utils

from feedback._time import utc_iso

Migration = Callable[[sqlite_utils.Database], None]


def _create_core_tables(db: sqlite_utils.Database) -> None:
    """Version 1: answers, citations, votes, slack_events."""
    db.execute(
        """
        CREATE TABLE answers (
            answer_id TEXT PRIMARY KEY,
            question TEXT NOT NULL,
            channel TEXT,
            thread_ts TEXT,
            user_id TEXT,
            source TEXT NOT NULL,              -- "slack" | "cli"
            language TEXT NOT NULL,
            retrieved TEXT NOT NULL,           -- JSON list of {chunk_id, doc_id, score, ...}
            cited_doc_ids TEXT NOT NULL,       -- JSON list of doc ids, citation order
            visibility TEXT,                   -- JSON list of visibility labels, or NULL
            refused INTEGER NOT NULL,          -- 0/1
            low_confidence INTEGER NOT NULL,   -- 0/1
            top_score REAL NOT NULL,
            latency_ms REAL NOT NULL,
            created_at TEXT NOT NULL           -- ISO-8601 UTC
        )
        """
    )
    db.execute("CREATE INDEX idx_answers_created_at ON answers (created_at)")
    # One row per cited document, so jobs can count citations per doc without parsing JSON.
    db.execute(
        """
        CREATE TABLE citations (
            answer_id TEXT NOT NULL REFERENCES answers (answer_id) ON DELETE CASCADE,
            doc_id TEXT NOT NULL,
            rank INTEGER NOT NULL,             -- 1 = first citation shown
            PRIMARY KEY (answer_id, doc_id)
        )
        """
    )
    db.execute("CREATE INDEX idx_citations_doc_id ON citations (doc_id)")
    db.execute(
        """
        CREATE TABLE votes (
            answer_id TEXT NOT NULL REFERENCES answers (answer_id) ON DELETE CASCADE,
            user_id TEXT NOT NULL,
            value TEXT NOT NULL CHECK (value IN ('up', 'down')),
            voted_at TEXT NOT NULL,            -- first vote by this user on this answer, ISO-8601 UTC
            updated_at TEXT NOT NULL,          -- when `value` was last set, ISO-8601 UTC
            PRIMARY KEY (answer_id, user_id)
        )
        """
    )
    # The primary key already starts with answer_id; the named index is kept because jobs' query plans
    # and the schema documentation refer to it.
    db.execute("CREATE INDEX idx_votes_answer_id ON votes (answer_id)")
    db.execute(
        """
        CREATE TABLE slack_events (
            key TEXT PRIMARY KEY,              -- Slack event_id, or another idempotency key
            seen_at TEXT NOT NULL              -- ISO-8601 UTC
        )
        """
    )


#: Applied in order; version N means MIGRATIONS[:N] have run. Append only.
MIGRATIONS: list[Migration] = [
    _create_core_tables,
]


def schema_version(db: sqlite_utils.Database) -> int:
    """Returns the file's ``PRAGMA user_version`` (0 for a new file)."""
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def apply_migrations(db: sqlite_utils.Database, migrations: list[Migration] | None = None) -> int:
    """Brings the database up to the newest schema; a no-op when it is already current.

    The connection must be in autocommit mode (``isolation_level=None``) with no open transaction.
    The version is re-read after ``BEGIN IMMEDIATE`` takes the write lock, so two processes opening a new
    file at once do not both run migration 1. The caller checks for a version newer than
    ``len(migrations)`` first (see `schema_version`); such a file is left untouched here.

    Args:
        db: the open database.
        migrations: the list to apply; defaults to `MIGRATIONS` (tests pass longer lists).

    Returns:
        The schema version after migrating: ``len(migrations)``, or higher for a newer file.

    Raises:
        sqlite3.Error: a migration failed; its transaction is rolled back. The caller translates it.
    """
    migrations = MIGRATIONS if migrations is None else migrations
    target = len(migrations)
    while schema_version(db) < target:
        db.execute("BEGIN IMMEDIATE")
        try:
            version = schema_version(db)
            if version < target:
                migration = migrations[version]
                _ensure_log_table(db)
                migration(db)
                db.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (version + 1, migration.__name__, utc_iso(None, field="applied_at")),
                )
                # PRAGMA takes no bound parameters; the version is an int computed here.
                db.execute(f"PRAGMA user_version = {version + 1:d}")
            db.execute("COMMIT")
        except BaseException:
            # Some errors (disk full, I/O) already ended the transaction; ROLLBACK would then mask them.
            if db.conn.in_transaction:
                db.execute("ROLLBACK")
            raise
    return schema_version(db)


def _ensure_log_table(db: sqlite_utils.Database) -> None:
    # Outside the versioned list because it records the list itself; IF NOT EXISTS keeps it idempotent.
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            applied_at TEXT NOT NULL
        )
        """
    )
