"""Question labels: the ``topics`` (one centroid per topic and embedding model) and ``answer_labels`` tables.

`jobs.classify` decides intents and topics; this module stores them. Writes run inside one
`FeedbackStore.transaction()` per batch, which starts with `lock_topics` so two classifier runs at once (the
scheduler and ``minerva classify``, possibly on two replicas) never create the same topic id twice nor lose a
centroid update::

    with store.transaction() as conn:
        lock_topics(conn)
        topics = load_topics(conn, model)
        ...
        topic_id = insert_topic(conn, label="How do I rotate a key?", model=model, centroid=vec.tobytes(), n=1, at=now)
        labelled = insert_labels(conn, [{"answer_id": ..., "intent": "how-to", "topic_id": topic_id,
                                         "created_at": ..., "labelled_at": now}])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from feedback import schema
from feedback.db import first, is_postgres, rows, run, scalar
from feedback.windows import chunks

#: PostgreSQL advisory lock key serialising topic writers (SQLite's BEGIN IMMEDIATE already does).
TOPICS_LOCK_KEY = 0x6D696E_746F70  # "min" "top"


@dataclass(frozen=True)
class Topic:
    """One stored topic: ``centroid`` is the float32 vector as bytes, ``n`` its member count."""

    topic_id: int
    centroid: bytes
    n: int


def lock_topics(conn: Connection) -> None:
    """Serialises topic writers for the rest of this write transaction.

    SQLite: a no-op, the transaction already holds the database's write lock (BEGIN IMMEDIATE). PostgreSQL
    (READ COMMITTED, row locks only) needs a transaction-scoped advisory lock: new topic ids are max + 1 and
    centroids are read-modify-written, so two writers must not interleave.
    """
    if is_postgres(conn):
        run(conn, "SELECT pg_advisory_xact_lock(:key)", key=TOPICS_LOCK_KEY)


def load_topics(conn: Connection, model: str) -> list[Topic]:
    """The topics of embedding model ``model``, by topic id."""
    found = rows(conn, "SELECT topic_id, centroid, n FROM topics WHERE model = :model ORDER BY topic_id", model=model)
    return [Topic(int(r["topic_id"]), bytes(r["centroid"]), int(r["n"])) for r in found]


def insert_topic(conn: Connection, *, label: str, model: str, centroid: bytes, n: int, at: str,
                 topic_id: int | None = None) -> int:
    """Stores a new topic and returns its id: ``topic_id`` when given (tests), else one more than the
    highest stored (ids are never reused while the table keeps them; call `lock_topics` first)."""
    if topic_id is None:
        topic_id = int(scalar(conn, "SELECT COALESCE(MAX(topic_id), 0) + 1 FROM topics"))
    conn.execute(schema.topics.insert(), {"topic_id": topic_id, "label": label, "model": model,
                                          "centroid": centroid, "n": int(n), "created_at": at, "updated_at": at})
    return topic_id


def update_topic(conn: Connection, topic_id: int, *, centroid: bytes, n: int, at: str) -> None:
    """Replaces a topic's centroid and member count."""
    run(conn, "UPDATE topics SET centroid = :centroid, n = :n, updated_at = :at WHERE topic_id = :topic_id",
        centroid=centroid, n=int(n), at=at, topic_id=int(topic_id))


def topic_labels(conn: Connection) -> dict[int, str]:
    """topic_id → label of every topic."""
    return {int(r["topic_id"]): r["label"] for r in rows(conn, "SELECT topic_id, label FROM topics")}


def insert_labels(conn: Connection, labels: list[dict[str, Any]]) -> int:
    """Stores answer labels, keeping any label an answer already has.

    Args:
        labels: dicts with "answer_id", "intent", "topic_id", "created_at" (the answer's) and "labelled_at".

    Returns:
        How many were stored (already labelled answers are skipped).
    """
    if not labels:
        return 0
    ids = list(dict.fromkeys(label["answer_id"] for label in labels))
    before = count_labels(conn, ids)
    statement = sa.text(
        "INSERT INTO answer_labels (answer_id, intent, topic_id, created_at, labelled_at) "
        "VALUES (:answer_id, :intent, :topic_id, :created_at, :labelled_at) ON CONFLICT (answer_id) DO NOTHING")
    conn.execute(statement, labels)
    return count_labels(conn, ids) - before


def count_labels(conn: Connection, answer_ids: list[str]) -> int:
    """How many of ``answer_ids`` have a label (chunked for any number of ids)."""
    return sum(int(scalar(conn, "SELECT COUNT(*) FROM answer_labels WHERE answer_id IN :ids", ids=part))
               for part in chunks(answer_ids))


_PENDING = ("FROM answers a LEFT JOIN answer_labels l ON l.answer_id = a.answer_id "
            "WHERE l.answer_id IS NULL AND a.redacted_at IS NULL")


def pending_answers(conn: Connection, limit: int | None = None) -> list[tuple[str, str, str]]:
    """Unlabelled answers, oldest first: [(answer_id, question, created_at)], at most ``limit`` (None: all).

    An answer whose question the retention policy removed (``redacted_at`` set) is never labelled: there is no
    text left to classify.
    """
    sql = f"SELECT a.answer_id, a.question, a.created_at {_PENDING} ORDER BY a.created_at, a.answer_id"
    found = rows(conn, sql + " LIMIT :limit", limit=int(limit)) if limit is not None else rows(conn, sql)
    return [(r["answer_id"], r["question"], r["created_at"]) for r in found]


def count_pending(conn: Connection) -> int:
    """How many answers `pending_answers` would return."""
    return int(scalar(conn, f"SELECT COUNT(*) {_PENDING}"))


def answer_label(conn: Connection, answer_id: str) -> dict[str, Any] | None:
    """{"intent", "topic_id", "created_at", "labelled_at"} of one answer, or None when unlabelled."""
    return first(conn, "SELECT intent, topic_id, created_at, labelled_at FROM answer_labels WHERE answer_id = :id",
                 id=answer_id)


def labels_of_answers(conn: Connection, answer_ids: list[str]) -> list[dict[str, Any]]:
    """The labels of the given answers: [{"answer_id", "intent", "topic_id"}] (unlabelled ones are absent;
    any number of ids, queried in chunks)."""
    found: list[dict[str, Any]] = []
    for part in chunks(answer_ids):
        found += rows(conn, "SELECT answer_id, intent, topic_id FROM answer_labels WHERE answer_id IN :ids", ids=part)
    return found
