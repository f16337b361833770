"""FeedbackStore against real SQLite files in tmp_path."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import sqlite_utils

import feedback
from feedback import db
from feedback import (
    DuplicateAnswer,
    FeedbackError,
    FeedbackStore,
    InvalidRecord,
    SchemaTooNew,
    StoreUnavailable,
    UnknownAnswer,
    VoteResult,
)
from feedback.migrations import MIGRATIONS, apply_migrations, schema_version

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "var" / "feedback.db"


@pytest.fixture
def store(store_target):
    """The store under test, on SQLite and on a real PostgreSQL server (the contract suite)."""
    with FeedbackStore.open(store_target) as opened:
        yield opened


@pytest.fixture
def sqlite_store(db_path: Path):
    """For the SQLite-only checks (pragmas, sqlite-utils views)."""
    with FeedbackStore.open(db_path) as opened:
        yield opened


def count(store: FeedbackStore, table: str) -> int:
    with store.snapshot() as conn:
        return db.scalar(conn, f"SELECT COUNT(*) FROM {table}")


def record(store: FeedbackStore, answer_id: str = "a1", **overrides) -> None:
    fields = dict(
        answer_id=answer_id,
        question="How many days of annual leave do I get?",
        channel="C123",
        thread_ts="1700000000.000100",
        user_id="U42",
        retrieved=[
            {"chunk_id": "hr:leave.md#0", "doc_id": "hr:leave.md", "score": 0.81},
            {"chunk_id": "hr:pay.md#3", "doc_id": "hr:pay.md", "score": 0.40},
        ],
        cited_doc_ids=["hr:leave.md"],
        refused=False,
        top_score=0.81,
        latency_ms=420.5,
        created_at=T0,
    )
    fields.update(overrides)
    store.record_answer(**fields)


# --- opening and migrations ---------------------------------------------------------------------


def test_open_creates_parent_dirs_and_sets_user_version(db_path: Path) -> None:
    with FeedbackStore.open(str(db_path)) as store:
        assert store.path == db_path
        assert isinstance(store.db, sqlite_utils.Database)
    assert db_path.exists()
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) >= 1


def test_open_twice_is_idempotent(db_path: Path) -> None:
    FeedbackStore.open(db_path).close()
    with FeedbackStore.open(db_path) as store:
        assert schema_version(store.db) == len(MIGRATIONS)
        applied = list(store.db.query("SELECT version, name FROM schema_migrations"))
        assert applied == [{"version": i, "name": m.__name__} for i, m in enumerate(MIGRATIONS, start=1)]
        assert {"answers", "citations", "votes", "slack_events", "schema_migrations"} <= set(
            store.db.table_names()
        )


def test_every_connection_gets_the_pragmas(sqlite_store: FeedbackStore) -> None:
    store = sqlite_store
    pragma = lambda name: store.db.execute(f"PRAGMA {name}").fetchone()[0]  # noqa: E731
    assert pragma("journal_mode") == "wal"
    assert pragma("synchronous") == 1  # NORMAL
    assert pragma("busy_timeout") == 10_000
    assert pragma("foreign_keys") == 1


def test_indexes_exist(sqlite_store: FeedbackStore) -> None:
    store = sqlite_store
    indexed = {
        (table, tuple(index.columns))
        for table in ("answers", "citations", "votes")
        for index in store.db[table].indexes
    }
    assert ("answers", ("created_at",)) in indexed
    assert ("citations", ("doc_id",)) in indexed
    assert ("votes", ("answer_id",)) in indexed


def test_appended_migration_runs_once_on_an_existing_file(db_path: Path) -> None:
    FeedbackStore.open(db_path).close()

    def add_answer_model(db: sqlite_utils.Database) -> None:
        db.execute("ALTER TABLE answers ADD COLUMN model TEXT")

    db = sqlite_utils.Database(sqlite3.connect(db_path, isolation_level=None))
    latest = len(MIGRATIONS) + 1
    assert apply_migrations(db, [*MIGRATIONS, add_answer_model]) == latest
    assert apply_migrations(db, [*MIGRATIONS, add_answer_model]) == latest  # second run: nothing to do
    assert "model" in db["answers"].columns_dict
    versions = [row["version"] for row in db.query("SELECT version FROM schema_migrations")]
    assert versions == list(range(1, latest + 1))
    db.close()


def test_failed_migration_leaves_previous_version(db_path: Path) -> None:
    FeedbackStore.open(db_path).close()

    def broken(db: sqlite_utils.Database) -> None:
        db.execute("CREATE TABLE half_done (x INTEGER)")
        db.execute("THIS IS NOT SQL")

    db = sqlite_utils.Database(sqlite3.connect(db_path, isolation_level=None))
    with pytest.raises(sqlite3.OperationalError):
        apply_migrations(db, [*MIGRATIONS, broken])
    assert schema_version(db) == len(MIGRATIONS)
    assert "half_done" not in db.table_names()
    db.close()


def test_file_from_newer_version_is_refused(db_path: Path) -> None:
    FeedbackStore.open(db_path).close()
    with sqlite3.connect(db_path) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(SchemaTooNew) as raised:
        FeedbackStore.open(db_path)
    assert (raised.value.found, raised.value.supported) == (99, len(MIGRATIONS))


def test_non_sqlite_file_raises_store_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "not-a-db"
    path.write_bytes(b"this is not a database file, just text" * 100)
    with pytest.raises(StoreUnavailable):
        FeedbackStore.open(path)


def test_reopening_keeps_data(db_path: Path) -> None:
    with FeedbackStore.open(db_path) as store:
        record(store)
        store.record_vote("a1", "U1", "up", voted_at=T0)
        assert store.claim_event("Ev1")
    with FeedbackStore.open(db_path) as store:
        assert store.get_answer("a1")["question"].startswith("How many days")
        assert [v["value"] for v in store.votes_for("a1")] == ["up"]
        assert store.claim_event("Ev1") is False


# --- answers ------------------------------------------------------------------------------------


def test_answer_round_trip(store: FeedbackStore) -> None:
    record(store, visibility=["public"], language="de", low_confidence=True, source="cli")
    assert store.get_answer("a1") == {
        "answer_id": "a1",
        "question": "How many days of annual leave do I get?",
        "channel": "C123",
        "thread_ts": "1700000000.000100",
        "user_id": "U42",
        "source": "cli",
        "language": "de",
        "retrieved": [
            {"chunk_id": "hr:leave.md#0", "doc_id": "hr:leave.md", "score": 0.81},
            {"chunk_id": "hr:pay.md#3", "doc_id": "hr:pay.md", "score": 0.40},
        ],
        "cited_doc_ids": ["hr:leave.md"],
        "visibility": ["public"],
        "refused": False,
        "low_confidence": True,
        "top_score": 0.81,
        "latency_ms": 420.5,
        "created_at": "2024-05-01T12:00:00.000000+00:00",
        "hallucination_flag": False,
        "generated": False,
        "follow_up_of": None,
        "redacted_at": None,
        "delivered": True,
    }


def test_created_at_is_stored_in_utc(store: FeedbackStore) -> None:
    record(store, created_at=datetime(2024, 5, 1, 14, 0, tzinfo=timezone(timedelta(hours=2))))
    assert store.get_answer("a1")["created_at"] == "2024-05-01T12:00:00.000000+00:00"


def test_refusal_is_an_answer_row(store: FeedbackStore) -> None:
    record(store, refused=True, cited_doc_ids=[], retrieved=[], top_score=0.0, channel=None)
    row = store.get_answer("a1")
    assert row["refused"] is True and row["cited_doc_ids"] == [] and row["channel"] is None
    assert count(store, "citations") == 0


def test_one_citation_row_per_cited_doc(store: FeedbackStore) -> None:
    record(store, cited_doc_ids=["hr:leave.md", "hr:pay.md", "hr:leave.md"])
    with store.snapshot() as conn:
        rows = db.rows(conn, "SELECT doc_id, rank FROM citations WHERE answer_id = 'a1' ORDER BY rank")
    assert rows == [{"doc_id": "hr:leave.md", "rank": 1}, {"doc_id": "hr:pay.md", "rank": 2}]


def test_unknown_answer_reads_as_none(store: FeedbackStore) -> None:
    assert store.get_answer("nope") is None
    assert store.votes_for("nope") == []


def test_duplicate_answer_id_raises_and_writes_nothing(store: FeedbackStore) -> None:
    record(store)
    with pytest.raises(DuplicateAnswer):
        record(store, question="another question", cited_doc_ids=["x:y.md"])
    assert store.get_answer("a1")["question"].startswith("How many days")
    assert count(store, "citations") == 1


@pytest.mark.parametrize(
    "overrides",
    [
        {"source": "email"},
        {"answer_id": ""},
        {"created_at": datetime(2024, 5, 1, 12, 0)},  # naive
        {"retrieved": [{"chunk_id": "c", "score": 0.5}]},  # no doc_id
        {"top_score": float("nan")},
        {"latency_ms": -1.0},
    ],
)
def test_invalid_answer_fields_raise_value_error(store: FeedbackStore, overrides: dict) -> None:
    with pytest.raises(InvalidRecord) as raised:
        record(store, **overrides)
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, FeedbackError)
    assert count(store, "answers") == 0


# --- votes --------------------------------------------------------------------------------------


def test_first_vote_inserts_a_row(store: FeedbackStore) -> None:
    record(store)
    assert store.record_vote("a1", "U1", "up", voted_at=T0) == VoteResult(changed=True, previous=None, value="up")
    t0 = T0.isoformat(timespec="microseconds")
    assert store.votes_for("a1") == [
        {"answer_id": "a1", "user_id": "U1", "value": "up", "reason": None, "voted_at": t0, "updated_at": t0},
    ]


def test_repeated_click_with_same_value_changes_nothing(store: FeedbackStore) -> None:
    record(store)
    store.record_vote("a1", "U1", "up", voted_at=T0)
    before = store.votes_for("a1")
    result = store.record_vote("a1", "U1", "up", voted_at=T0 + timedelta(seconds=1))
    assert result == VoteResult(changed=False, previous="up", value="up")
    assert store.votes_for("a1") == before


def test_changed_vote_updates_the_same_row(store: FeedbackStore) -> None:
    record(store)
    store.record_vote("a1", "U1", "up", voted_at=T0)
    later = T0 + timedelta(minutes=5)
    assert store.record_vote("a1", "U1", "down", voted_at=later) == VoteResult(
        changed=True, previous="up", value="down"
    )
    (row,) = store.votes_for("a1")  # exactly one row
    assert row["value"] == "down"
    assert row["voted_at"] == T0.isoformat(timespec="microseconds")
    assert row["updated_at"] == later.isoformat(timespec="microseconds")


def test_votes_from_different_users_are_separate_rows(store: FeedbackStore) -> None:
    record(store)
    store.record_vote("a1", "U1", "up", voted_at=T0)
    store.record_vote("a1", "U2", "down", voted_at=T0 + timedelta(seconds=1))
    assert [(v["user_id"], v["value"]) for v in store.votes_for("a1")] == [("U1", "up"), ("U2", "down")]


def test_vote_on_unknown_answer_raises(store: FeedbackStore) -> None:
    with pytest.raises(UnknownAnswer) as raised:
        store.record_vote("missing", "U1", "up")
    assert raised.value.answer_id == "missing"
    assert isinstance(raised.value, FeedbackError)
    assert count(store, "votes") == 0


@pytest.mark.parametrize("value", ["UP", "thumbsup", "", "neutral"])
def test_bad_vote_value_raises_value_error(store: FeedbackStore, value: str) -> None:
    record(store)
    with pytest.raises(ValueError):
        store.record_vote("a1", "U1", value)


def test_concurrent_votes_from_threads_leave_one_row(store: FeedbackStore) -> None:
    record(store)
    start = threading.Barrier(8)
    results: list[VoteResult] = []
    errors: list[BaseException] = []

    def click() -> None:
        try:
            start.wait()
            results.append(store.record_vote("a1", "U1", "up"))
        except BaseException as error:  # surfaced below; a thread's exception is otherwise lost
            errors.append(error)

    threads = [threading.Thread(target=click) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(store.votes_for("a1")) == 1
    assert sum(result.changed for result in results) == 1  # only the first click wrote


def test_concurrent_votes_from_separate_connections_leave_one_row(store_target) -> None:
    # Eight stores (as eight replicas): SQLite's BEGIN IMMEDIATE + busy_timeout; PostgreSQL's ON CONFLICT + FOR UPDATE.
    with FeedbackStore.open(store_target) as setup:
        record(setup)
    stores = [FeedbackStore.open(store_target) for _ in range(8)]
    start = threading.Barrier(8)

    def click(index: int) -> VoteResult:
        start.wait()
        return stores[index].record_vote("a1", "U1", "up" if index % 2 else "down")

    with ThreadPoolExecutor(8) as pool:  # list() re-raises a thread's exception here
        results = list(pool.map(click, range(8)))
    for opened in stores:
        opened.close()
    with FeedbackStore.open(store_target) as check:
        (row,) = check.votes_for("a1")
    # Last write wins: the stored value is the value of the last vote that changed something.
    assert row["value"] in ("up", "down")
    assert len(results) == 8
    assert sum(r.previous is None for r in results) == 1  # exactly one vote saw no row and inserted it


def test_a_retry_racing_on_other_connections_is_claimed_once(store_target) -> None:
    """Slack's retries reaching several replicas at once: exactly one claim of each event id wins."""
    FeedbackStore.open(store_target).close()
    stores = [FeedbackStore.open(store_target) for _ in range(6)]
    start = threading.Barrier(6)

    def deliver(store: FeedbackStore) -> list[str]:
        start.wait()
        return [key for key in (f"Ev{n}" for n in range(30)) if store.claim_event(key)]

    with ThreadPoolExecutor(6) as pool:
        won = [key for keys in pool.map(deliver, stores) for key in keys]
    for opened in stores:
        opened.close()
    assert sorted(won) == sorted(f"Ev{n}" for n in range(30))  # each key won once, by one replica


# --- events -------------------------------------------------------------------------------------


def test_claim_event_true_then_false(store: FeedbackStore) -> None:
    assert store.claim_event("Ev0123ABC") is True
    assert store.claim_event("Ev0123ABC") is False
    assert store.claim_event("C1:1700000000.000100") is True


def test_claim_events_is_a_duplicate_when_any_key_was_seen(store: FeedbackStore) -> None:
    assert store.claim_events(["event:Ev1", "msg:C1:1.000"]) is True
    assert store.claim_events(["event:Ev2", "msg:C1:1.000"]) is False  # same message, other event type
    assert store.claim_events(["event:Ev2", "msg:D1:2.000"]) is False  # and Ev2 was stored by that call


def test_an_event_and_its_racing_retry_are_answered_exactly_once(store: FeedbackStore, monkeypatch) -> None:
    """Two requests claiming the same two keys at once: one goes ahead, never none (one key each)."""
    import feedback.store

    insert = feedback.store.insert_event_key

    def slow_insert(db, key):  # widen the gap between the two keys, where a per-key claim would interleave
        claimed = insert(db, key)
        time.sleep(0.02)
        return claimed

    monkeypatch.setattr(feedback.store, "insert_event_key", slow_insert)
    for round_ in range(5):
        keys = [f"event:Ev{round_}", f"msg:C1:{round_}.000"]
        start = threading.Barrier(2)
        results = []

        def claim() -> None:
            start.wait()
            results.append(store.claim_events(keys))

        threads = [threading.Thread(target=claim) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(results) == [False, True]


def test_claim_event_rejects_empty_key(store: FeedbackStore) -> None:
    with pytest.raises(InvalidRecord):
        store.claim_event("")


def test_prune_events_forgets_old_keys(store: FeedbackStore) -> None:
    assert store.claim_event("Ev1")
    assert store.prune_events(datetime.now(timezone.utc) + timedelta(seconds=1)) == 1
    assert store.claim_event("Ev1") is True


# --- lifecycle and package boundaries -----------------------------------------------------------


def test_closed_store_raises_store_unavailable(db_path: Path) -> None:
    store = FeedbackStore.open(db_path)
    store.close()
    store.close()  # harmless
    with pytest.raises(StoreUnavailable):
        store.claim_event("Ev1")
    with pytest.raises(StoreUnavailable):
        store.get_answer("a1")


def test_public_names_are_exported() -> None:
    for name in ("FeedbackStore", "FeedbackError", "UnknownAnswer", "VoteResult"):
        assert name in feedback.__all__
    assert all(hasattr(feedback, name) for name in feedback.__all__)


def test_feedback_does_not_import_bot_or_knowledge() -> None:
    code = "import sys, feedback; print(sorted(m for m in sys.modules if m.split('.')[0] in ('bot', 'knowledge')))"
    root = Path(feedback.__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_transaction_commits_and_rolls_back_on_error(store: FeedbackStore) -> None:
    """`transaction()` is the store's write transaction: committed on exit, rolled back on an exception."""
    with store.transaction() as conn:
        db.run(conn, "INSERT INTO slack_events (key, seen_at) VALUES (:key, :at)", key="kept", at=T0.isoformat())
    with pytest.raises(RuntimeError), store.transaction() as conn:
        db.run(conn, "INSERT INTO slack_events (key, seen_at) VALUES (:key, :at)", key="dropped", at=T0.isoformat())
        raise RuntimeError("boom")
    with store.snapshot() as conn:
        keys = [row["key"] for row in db.rows(conn, "SELECT key FROM slack_events")]
    assert keys == ["kept"]


def test_transaction_and_snapshot_translate_database_errors(store: FeedbackStore) -> None:
    with pytest.raises(StoreUnavailable), store.transaction() as conn:
        db.run(conn, "SELECT * FROM no_such_table")
    with pytest.raises(StoreUnavailable), store.snapshot() as conn:
        db.run(conn, "SELECT * FROM no_such_table")
    store.close()
    with pytest.raises(StoreUnavailable), store.snapshot():
        pass
