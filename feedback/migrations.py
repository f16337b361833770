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

import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING

import sqlalchemy as sa
import sqlite_utils
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.schema import CreateIndex, CreateTable

from feedback import schema
from feedback._time import utc_iso
from feedback.db import is_postgres

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

SQLITE = sqlite_dialect.dialect()

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


def _create_alerting_tables(db: sqlite_utils.Database) -> None:
    """Alerts and their history, silences, scheduled job runs and the collection kill switch (issue 4).

    Written by `jobs.alerts`, `jobs.silences`, `jobs.runs` and `jobs.killswitch`; times are ISO-8601 UTC.
    """
    db.execute(
        """
        CREATE TABLE alerts (
            fingerprint TEXT PRIMARY KEY,      -- hash of alert name + sorted labels (jobs.alerts.fingerprint)
            alert TEXT NOT NULL,               -- e.g. "bad_document"
            severity TEXT NOT NULL CHECK (severity IN ('critical', 'warning', 'info')),
            labels TEXT NOT NULL,              -- JSON object, the identity
            source TEXT NOT NULL,              -- what evaluates it: a job name, "job:<name>", "slack:<channel>"
            state TEXT NOT NULL CHECK (state IN ('pending', 'firing', 'resolved')),
            bad_streak INTEGER NOT NULL,       -- bad evaluations in a row
            good_streak INTEGER NOT NULL,      -- good evaluations in a row
            value REAL, threshold REAL, n INTEGER,
            summary TEXT NOT NULL, link TEXT NOT NULL,
            annotations TEXT NOT NULL,         -- JSON object, volatile extras
            first_seen_at TEXT NOT NULL,
            started_at TEXT,                   -- became firing (current or last episode)
            resolved_at TEXT,
            last_evaluated_at TEXT NOT NULL,
            last_notified_at TEXT,             -- last Slack notification (message or digest) in any episode
            notified_severity TEXT,            -- severity of that notification (an escalation notifies again)
            notify_count INTEGER NOT NULL,     -- notifications in the current episode
            acked_at TEXT, acked_by TEXT       -- cleared when a new episode starts
        )
        """
    )
    db.execute("CREATE INDEX idx_alerts_state ON alerts (state, severity)")
    db.execute("CREATE INDEX idx_alerts_source ON alerts (source)")
    db.execute(
        """
        CREATE TABLE alert_events (
            event_id INTEGER PRIMARY KEY AUTOINCREMENT,
            fingerprint TEXT NOT NULL,
            at TEXT NOT NULL,
            kind TEXT NOT NULL,                -- pending | firing | resolved | acked | silenced | unsilenced
            detail TEXT NOT NULL               -- JSON object
        )
        """
    )
    db.execute("CREATE INDEX idx_alert_events_fingerprint ON alert_events (fingerprint, at)")
    db.execute(
        """
        CREATE TABLE alert_notifications (
            notification_id INTEGER PRIMARY KEY AUTOINCREMENT,
            fingerprint TEXT NOT NULL,
            kind TEXT NOT NULL,                -- firing | reminder | escalated | digest
            route TEXT NOT NULL,               -- now | daily | weekly
            channel TEXT NOT NULL,
            ts TEXT,                           -- Slack message ts (NULL when the post failed)
            sent_at TEXT NOT NULL,
            error TEXT                         -- Slack error code when the post failed
        )
        """
    )
    db.execute("CREATE INDEX idx_alert_notifications_fingerprint ON alert_notifications (fingerprint, sent_at)")
    db.execute(
        """
        CREATE TABLE silences (
            silence_id INTEGER PRIMARY KEY AUTOINCREMENT,
            fingerprint TEXT NOT NULL,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,          -- moved to the removal time by an early unsilence
            created_by TEXT NOT NULL,          -- Slack user id, or "cli"
            comment TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX idx_silences_fingerprint ON silences (fingerprint, expires_at)")
    db.execute(
        """
        CREATE TABLE job_runs (
            run_id INTEGER PRIMARY KEY AUTOINCREMENT,
            job TEXT NOT NULL,                 -- scheduler job name, or "reindex" (inhibition marks)
            target TEXT NOT NULL,              -- e.g. the collection being re-indexed; "" otherwise
            trigger TEXT NOT NULL,             -- schedule | manual | mark
            started_at TEXT NOT NULL,
            ended_at TEXT,                     -- NULL while running (or after a crash)
            outcome TEXT NOT NULL CHECK (outcome IN ('running', 'ok', 'failed')),
            error TEXT,
            findings INTEGER,
            pid INTEGER NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX idx_job_runs_job ON job_runs (job, started_at)")
    db.execute(
        """
        CREATE TABLE kill_switch (
            change_id INTEGER PRIMARY KEY AUTOINCREMENT,
            collection TEXT NOT NULL,
            disabled INTEGER NOT NULL CHECK (disabled IN (0, 1)),  -- the latest row per collection is current
            reason TEXT NOT NULL,
            fingerprint TEXT,                  -- the alert that flipped it; NULL for a manual change
            changed_by TEXT NOT NULL,          -- "alert", "cli", or a Slack user id
            changed_at TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX idx_kill_switch_collection ON kill_switch (collection, change_id)")


def _create_monitoring_tables(db: sqlite_utils.Database) -> None:
    """Question labels and topics, wrong-answer flags and the review queue (issue 4, signals side).

    Written by `jobs.classify`, `FeedbackStore.record_flag` and `jobs.review`; times are ISO-8601 UTC.
    """
    db.execute(
        """
        CREATE TABLE topics (
            topic_id INTEGER PRIMARY KEY,      -- never reused or renumbered
            label TEXT NOT NULL,               -- set once at creation (the first question), never renamed
            model TEXT NOT NULL,               -- embedding model of the centroid
            centroid BLOB NOT NULL,            -- float32 mean of member question vectors (dim * 4 bytes)
            n INTEGER NOT NULL,                -- questions assigned so far
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE answer_labels (
            answer_id TEXT PRIMARY KEY REFERENCES answers (answer_id) ON DELETE CASCADE,
            intent TEXT NOT NULL,              -- "how-to" | "lookup" | ... | "other" (config/monitoring.yaml)
            topic_id INTEGER NOT NULL REFERENCES topics (topic_id),
            created_at TEXT NOT NULL,          -- the answer's created_at, copied so windows need no join
            labelled_at TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX idx_answer_labels_window ON answer_labels (created_at, intent, topic_id)")
    # Covering indexes for the monitoring jobs' window aggregates (answers by time, votes by answer), so a
    # 30-day window over 100k answers is read from the indexes instead of the JSON-heavy rows.
    db.execute("CREATE INDEX idx_answers_window ON answers (created_at, answer_id, refused, top_score, language)")
    db.execute("CREATE INDEX idx_votes_answer_value ON votes (answer_id, value)")
    # The retrieved passages as rows, written by a trigger in the same transaction as the answer (and
    # back-filled here), so jobs join passages instead of parsing the `retrieved` JSON of every answer in
    # a window on every run (json_each over 25k answers took ~3 s; the join takes ~0.2 s).
    db.execute(
        """
        CREATE TABLE answer_passages (
            answer_id TEXT NOT NULL REFERENCES answers (answer_id) ON DELETE CASCADE,
            rank INTEGER NOT NULL,             -- 0 = best, the position in answers.retrieved
            doc_id TEXT NOT NULL,
            chunk_id TEXT NOT NULL,
            score REAL NOT NULL,               -- calibrated relevance in [0, 1]
            PRIMARY KEY (answer_id, rank)
        ) WITHOUT ROWID
        """
    )
    passages = """
        INSERT INTO answer_passages (answer_id, rank, doc_id, chunk_id, score)
        SELECT {answer}.answer_id, CAST(j.key AS INTEGER), json_extract(j.value, '$.doc_id'),
               json_extract(j.value, '$.chunk_id'), json_extract(j.value, '$.score')
        FROM {source} json_each({answer}.retrieved) AS j
    """
    db.execute(passages.format(answer="answers", source="answers,"))
    db.execute(
        "CREATE TRIGGER answers_passages AFTER INSERT ON answers BEGIN "
        + passages.format(answer="NEW", source="") + "; END"
    )
    db.execute(
        """
        CREATE TABLE flags (
            answer_id TEXT NOT NULL REFERENCES answers (answer_id) ON DELETE CASCADE,
            user_id TEXT NOT NULL,
            reason TEXT NOT NULL,              -- free text from the "Report a wrong answer" action, may be ""
            created_at TEXT NOT NULL,
            PRIMARY KEY (answer_id, user_id)   -- one report per answer and user
        )
        """
    )
    db.execute("CREATE INDEX idx_flags_created_at ON flags (created_at)")
    db.execute(
        """
        CREATE TABLE review_queue (
            item_id INTEGER PRIMARY KEY AUTOINCREMENT,
            problem TEXT NOT NULL,             -- alert name, e.g. "bad_document", "coverage_gap"
            subject TEXT NOT NULL,             -- doc id, "intent/topic id", metric or collection
            signal TEXT NOT NULL,              -- the job that proposed it: coverage, bad_docs, ...
            action TEXT NOT NULL,              -- proposed treatment, e.g. "review_or_deprecate"
            priority INTEGER NOT NULL,         -- 1 high, 2 normal, 3 low
            weight REAL NOT NULL,              -- volume behind it (questions, citations); orders within a priority
            reason TEXT NOT NULL,
            details TEXT NOT NULL,             -- JSON object
            auto_deprecate INTEGER NOT NULL,   -- 0/1: may be deprecated without a person (never an only source)
            status TEXT NOT NULL CHECK (status IN ('open', 'done', 'dismissed')),
            first_seen_at TEXT NOT NULL,
            last_seen_at TEXT NOT NULL,
            closed_at TEXT,
            UNIQUE (problem, subject)
        )
        """
    )
    db.execute("CREATE INDEX idx_review_queue_status ON review_queue (status, priority)")


def _create_gap_scores(db: sqlite_utils.Database) -> None:
    """Every gap-query score with its run and time (issue 3, convergence loop); written by `jobs.gaps`."""
    db.execute(
        """
        CREATE TABLE gap_scores (
            run_id TEXT NOT NULL,              -- one id per run of the gap queries (uuid4 hex)
            query TEXT NOT NULL,               -- the query text (config/gap_queries.yaml)
            score REAL NOT NULL,               -- best calibrated score in [0, 1]
            expected REAL NOT NULL,            -- the query's threshold at the time, in [0, 1]
            top_doc_id TEXT NOT NULL,          -- document of the best passage, "" when none
            generation TEXT NOT NULL,          -- index generation searched
            measured_at TEXT NOT NULL,         -- ISO-8601 UTC
            PRIMARY KEY (run_id, query)
        )
        """
    )
    db.execute("CREATE INDEX idx_gap_scores_query_time ON gap_scores (query, measured_at)")


def _answer_grounding_threads_and_vote_reasons(db: sqlite_utils.Database) -> None:
    """Issue 9: the generator's grounding result and thread follow-ups on answers, a reason on 👎 votes.

    Existing rows keep their meaning: no answer was generated (flag 0), none was a follow-up (NULL), no
    vote carried a reason (NULL).
    """
    # 1 when the configured generator wrote a sentence its cited passage does not support (knowledge.grounding)
    db.execute("ALTER TABLE answers ADD COLUMN hallucination_flag INTEGER NOT NULL DEFAULT 0")
    # 1 when the shown direct answer was written by the generator (and passed the grounding check)
    db.execute("ALTER TABLE answers ADD COLUMN generated INTEGER NOT NULL DEFAULT 0")
    # answer_id of the earlier answer in the same Slack thread this question followed up on
    db.execute("ALTER TABLE answers ADD COLUMN follow_up_of TEXT")
    # The earlier questions of a thread are read by (channel, thread_ts) for every reply in a thread.
    db.execute("CREATE INDEX idx_answers_thread ON answers (channel, thread_ts, created_at)")
    # Why a 👎: one of feedback.votes.VOTE_REASONS, or NULL (none given, or a 👍)
    db.execute(
        "ALTER TABLE votes ADD COLUMN reason TEXT "
        "CHECK (reason IS NULL OR reason IN ('outdated', 'wrong', 'incomplete', 'not_what_i_asked'))"
    )


def _retention(db: sqlite_utils.Database) -> None:
    """Issue 10 item 6: questions are personal data (`feedback.retention`).

    ``answers.redacted_at`` marks an answer whose question text was removed by the retention policy (NULL:
    the text is the user's); `jobs.classify` never labels such an answer. ``store_meta`` holds the store's
    random pseudonym salt, so anonymised user ids stay distinct and ``minerva forget`` still finds them.
    """
    db.execute("ALTER TABLE answers ADD COLUMN redacted_at TEXT")  # ISO-8601 UTC, or NULL
    db.execute("CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO store_meta (key, value) VALUES ('pseudonym_salt', ?)", [secrets.token_hex(32)])


def _hallucination_index(db: sqlite_utils.Database) -> None:
    """The few answers whose generated text failed the grounding check, by time, for the accuracy signal
    (`feedback.answers.count_hallucinations`): a partial index, so a window's count reads only flagged rows."""
    db.execute("CREATE INDEX idx_answers_hallucinated ON answers (created_at) WHERE hallucination_flag = 1")


def _quarantine_leases_and_portable_passages(db: sqlite_utils.Database) -> None:
    """Issue 13: the tables PostgreSQL needs to share with SQLite, from the one schema (`feedback.schema`).

    ``quarantine`` was created on first use by older jobs (hence "if not exists"); ``job_leases`` lets one
    replica run each scheduled job slot. The ``answers_passages`` trigger parsed JSON in SQL, which only
    SQLite can; `feedback.answers.insert_answer` now writes the passage rows itself, in the same transaction.
    """
    for table in (schema.quarantine, schema.job_leases):
        db.execute(str(CreateTable(table, if_not_exists=True).compile(dialect=SQLITE)))
        for index in table.indexes:
            db.execute(str(CreateIndex(index, if_not_exists=True).compile(dialect=SQLITE)))
    db.execute("DROP TRIGGER IF EXISTS answers_passages")


def _undelivered_replies(db: sqlite_utils.Database) -> None:
    """Issue 27 item 4: a Slack reply that could not be posted is kept to post again (``reply_retries``) and its
    answer says so (``answers.delivered`` = 0 until it gets through)."""
    db.execute("ALTER TABLE answers ADD COLUMN delivered INTEGER NOT NULL DEFAULT 1")
    db.execute(str(CreateTable(schema.reply_retries, if_not_exists=True).compile(dialect=SQLITE)))
    for index in schema.reply_retries.indexes:
        db.execute(str(CreateIndex(index, if_not_exists=True).compile(dialect=SQLITE)))


def _citation_credit(db: sqlite_utils.Database) -> None:
    """Issue 26 item 4: a vote judges the page the direct answer came from (``citations.answering`` = 1), not
    the pages cited beside it (0). Citations stored before this knew no better and keep 1."""
    db.execute("ALTER TABLE citations ADD COLUMN answering INTEGER NOT NULL DEFAULT 1")


def _expert_requests_and_answers(db: sqlite_utils.Database) -> None:
    """Issue 25 items 1–2: "Ask an expert" requests, the expert answers kept as knowledge and their votes
    (`feedback.experts`), created from `feedback.schema`."""
    _create_from_schema(db, schema.expert_requests, schema.expert_answers, schema.expert_answer_votes)


def _page_verifications(db: sqlite_utils.Database) -> None:
    """Issue 25 item 3: owners confirm their pages on an interval; one ``page_verifications`` row per page asked
    (`feedback.verifications`), from the one schema (`feedback.schema`)."""
    _create_from_schema(db, schema.page_verifications)


def _answers_by_user(db: sqlite_utils.Database) -> None:
    """Issue 25 leftovers: App Home speaks the language of a person's latest questions
    (`feedback.answers.fetch_recent_languages`); an index on (user_id, created_at) reads those few rows instead of
    the whole ``answers`` table on every Home opening."""
    db.execute("CREATE INDEX IF NOT EXISTS idx_answers_user ON answers (user_id, created_at)")


def _verification_messages(db: sqlite_utils.Database) -> None:
    """Issue 25 leftovers: every member of an owner group gets the verification DM, and once one answers, every
    copy changes to say who did; ``page_verifications.posted`` keeps the ask's messages (JSON ``[[channel, ts]]``)
    for that `chat.update`. Asks made before have none: only the clicked copy changes, as it did.

    A file that ran `_page_verifications` after this column joined `feedback.schema` has it already."""
    if "posted" not in db["page_verifications"].columns_dict:
        db.execute("ALTER TABLE page_verifications ADD COLUMN posted TEXT")


def _create_from_schema(db: sqlite_utils.Database, *tables) -> None:
    """Creates ``tables`` (`feedback.schema` tables) and their indexes in SQLite, unless they exist."""
    for table in tables:
        db.execute(str(CreateTable(table, if_not_exists=True).compile(dialect=SQLITE)))
        for index in table.indexes:
            db.execute(str(CreateIndex(index, if_not_exists=True).compile(dialect=SQLITE)))


#: Applied in order; version N means MIGRATIONS[:N] have run. Append only. A new store (SQLite or
#: PostgreSQL) is created from `feedback.schema` at the newest version instead (`create_current`).
MIGRATIONS: list[Migration] = [
    _create_core_tables,
    _create_alerting_tables,
    _create_monitoring_tables,
    _create_gap_scores,
    _answer_grounding_threads_and_vote_reasons,
    _retention,
    _hallucination_index,
    _quarantine_leases_and_portable_passages,
    _undelivered_replies,
    _citation_credit,
    _expert_requests_and_answers,
    _page_verifications,
    _answers_by_user,
    _verification_messages,
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


#: Key of the PostgreSQL advisory lock held while a store is created or migrated, so replicas starting
#: together on an empty database create it once (an arbitrary constant: "minerva" in ASCII).
SCHEMA_LOCK_KEY = 0x6D696E65727661


def current_version(conn: Connection) -> int:
    """The schema version of the store behind ``conn``: 0 when it holds no Minerva tables yet.

    SQLite keeps it in ``PRAGMA user_version`` (files made by older Minervas have no other record);
    PostgreSQL in the highest ``schema_migrations`` row.
    """
    if not is_postgres(conn):
        return int(conn.exec_driver_sql("PRAGMA user_version").scalar() or 0)
    if not sa.inspect(conn).has_table("schema_migrations"):
        return 0
    return int(conn.execute(sa.text("SELECT coalesce(max(version), 0) FROM schema_migrations")).scalar())


def add_missing(conn: Connection, found: int) -> None:
    """Brings a PostgreSQL store made by an older Minerva (schema version ``found``) to the newest one: creates
    the tables `feedback.schema` has and it lacks, adds the columns it lacks (with their server defaults), and
    records the versions in ``schema_migrations``. Every migration since PostgreSQL stores exist only adds
    tables or columns (issue 27's ``reply_retries`` and ``answers.delivered``, issue 26's
    ``citations.answering``), so adding what is missing is the migration; SQLite files run `MIGRATIONS`.

    Indexes a table lacks are created too (``idx_answers_user``, issue 25's App Home language).

    Runs inside the caller's write transaction, holding `SCHEMA_LOCK_KEY`."""
    schema.METADATA.create_all(conn)  # only the tables that are not there
    inspector = sa.inspect(conn)
    preparer = conn.dialect.identifier_preparer
    for table in schema.METADATA.sorted_tables:
        indexes = {i["name"] for i in inspector.get_indexes(table.name)}
        present = {c["name"] for c in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name in present:
                continue
            kind = column.type.compile(dialect=conn.dialect)
            default = column.server_default.arg if column.server_default is not None else None
            # NOT NULL only with a default that fills the rows already there
            rest = f" DEFAULT {default} NOT NULL" if default is not None and not column.nullable else (
                f" DEFAULT {default}" if default is not None else "")
            conn.execute(sa.text(f"ALTER TABLE {preparer.quote(table.name)} ADD COLUMN "
                                 f"{preparer.quote(column.name)} {kind}{rest}"))
        for index in table.indexes:
            if index.name not in indexes:  # after the columns: an index may cover one just added
                index.create(conn)
    applied_at = utc_iso(None, field="applied_at")
    conn.execute(schema.schema_migrations.insert(), [
        {"version": number, "name": migration.__name__, "applied_at": applied_at}
        for number, migration in enumerate(MIGRATIONS, start=1) if number > found
    ])


def create_current(conn: Connection) -> None:
    """Creates every table of `feedback.schema` in an empty store and stamps it with the newest version.

    Runs inside the caller's write transaction (DDL is transactional on both databases), so a crash
    leaves an empty store, never a half-made one. On PostgreSQL the caller holds `SCHEMA_LOCK_KEY`.
    """
    schema.METADATA.create_all(conn)
    applied_at = utc_iso(None, field="applied_at")
    conn.execute(schema.schema_migrations.insert(), [
        {"version": number, "name": migration.__name__, "applied_at": applied_at}
        for number, migration in enumerate(MIGRATIONS, start=1)
    ])
    if not is_postgres(conn):
        conn.exec_driver_sql(f"PRAGMA user_version = {len(MIGRATIONS):d}")
