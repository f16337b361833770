"""Answer rows: validation, insert (with one citation row per cited document) and read-back.

Functions here run on a connection the caller has already put in a transaction (see
`feedback.store.FeedbackStore`); they never commit.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from feedback import schema
from feedback._time import utc_iso
from feedback.db import first, rows, scalar, time_bounds
from feedback.errors import DuplicateAnswer, InvalidRecord, UnknownAnswer

#: Where a question came from; the only values `source` accepts.
SOURCES = ("slack", "cli")
#: Keys every dict in ``retrieved`` must carry (knowledge.types.Passage field names).
RETRIEVED_KEYS = ("chunk_id", "doc_id", "score")
#: Columns stored as JSON text, decoded again by `fetch_answer`.
JSON_COLUMNS = ("retrieved", "cited_doc_ids", "visibility")
#: Columns stored as INTEGER 0/1, returned as bool by `fetch_answer`.
BOOL_COLUMNS = ("refused", "low_confidence", "hallucination_flag", "generated", "delivered")


def build_answer_row(
    *,
    answer_id: str,
    question: str,
    channel: str | None,
    thread_ts: str | None,
    user_id: str | None,
    retrieved: Sequence[dict[str, Any]],
    cited_doc_ids: Sequence[str],
    refused: bool,
    top_score: float,
    latency_ms: float,
    language: str,
    low_confidence: bool,
    source: str,
    visibility: Sequence[str] | None,
    created_at: datetime | None,
    hallucination_flag: bool = False,
    generated: bool = False,
    follow_up_of: str | None = None,
) -> dict[str, Any]:
    """Validates one answer's fields and returns the `answers` row to insert.

    Args: see `FeedbackStore.record_answer`.

    Returns:
        Dict keyed by `answers` column; JSON columns already encoded, booleans as 0/1.

    Raises:
        InvalidRecord: empty answer_id, unknown source, a retrieved dict without chunk_id/doc_id/score,
            a non-finite score or latency, a negative latency, a naive created_at, or a `follow_up_of`
            equal to `answer_id` or empty.
    """
    if follow_up_of is not None and (not follow_up_of or follow_up_of == answer_id):
        raise InvalidRecord(f"follow_up_of must name another answer; got {follow_up_of!r}")
    if not answer_id:
        raise InvalidRecord("answer_id must be a non-empty string")
    if source not in SOURCES:
        raise InvalidRecord(f"source must be one of {', '.join(SOURCES)}; got {source!r}")
    for position, item in enumerate(retrieved):
        missing = [key for key in RETRIEVED_KEYS if key not in item]
        if missing:
            raise InvalidRecord(f"retrieved[{position}] lacks {', '.join(missing)}")
    top_score = _finite(top_score, "top_score")
    latency_ms = _finite(latency_ms, "latency_ms")
    if latency_ms < 0:
        raise InvalidRecord(f"latency_ms must be >= 0; got {latency_ms}")
    return {
        "answer_id": answer_id,
        "question": question,
        "channel": channel,
        "thread_ts": thread_ts,
        "user_id": user_id,
        "source": source,
        "language": language,
        "retrieved": _to_json([dict(item) for item in retrieved], "retrieved"),
        "cited_doc_ids": _to_json(list(cited_doc_ids), "cited_doc_ids"),
        "visibility": None if visibility is None else _to_json(list(visibility), "visibility"),
        "refused": int(bool(refused)),
        "low_confidence": int(bool(low_confidence)),
        "top_score": top_score,
        "latency_ms": latency_ms,
        "created_at": utc_iso(created_at, field="created_at"),
        "hallucination_flag": int(bool(hallucination_flag)),
        "generated": int(bool(generated)),
        "follow_up_of": follow_up_of,
    }


def insert_answer(conn: Connection, row: dict[str, Any], answered_from: list[str] | None = None) -> None:
    """Inserts an answer row, its citation rows (rank 1, 2, ... in citation order) and its passage rows
    (``answer_passages``, rank 0 = best retrieved).

    A doc id cited twice gets one citation row, at its first rank. ``answered_from``: the cited pages the
    direct answer came from, whose citations are marked ``answering`` (the answer's votes judge them, issue 26);
    None: every cited page (an answer without a direct answer of its own, or a caller that does not know).

    Raises:
        DuplicateAnswer: an answer with ``row["answer_id"]`` already exists.
    """
    answer_id = row["answer_id"]
    if scalar(conn, "SELECT 1 FROM answers WHERE answer_id = :answer_id", answer_id=answer_id):
        raise DuplicateAnswer(answer_id)
    try:
        conn.execute(schema.answers.insert(), row)
    except sa.exc.IntegrityError as error:  # a concurrent insert of the same id (another replica)
        raise DuplicateAnswer(answer_id) from error
    cited = list(dict.fromkeys(json.loads(row["cited_doc_ids"])))  # order-preserving dedupe
    if cited:
        conn.execute(schema.citations.insert(), [
            {"answer_id": answer_id, "doc_id": doc_id, "rank": rank,
             "answering": int(answered_from is None or doc_id in answered_from)}
            for rank, doc_id in enumerate(cited, start=1)
        ])
    passages = json.loads(row["retrieved"])
    if passages:
        conn.execute(schema.answer_passages.insert(), [
            {"answer_id": answer_id, "rank": rank, "doc_id": p["doc_id"], "chunk_id": p["chunk_id"],
             "score": float(p["score"])} for rank, p in enumerate(passages)
        ])


def fetch_answer(conn: Connection, answer_id: str) -> dict[str, Any] | None:
    """Reads one answer row back, decoded.

    Returns:
        None when the id is unknown; otherwise the row with ``retrieved`` (list of dicts),
        ``cited_doc_ids`` (list of str) and ``visibility`` (list of str or None) decoded from JSON,
        ``refused``, ``low_confidence``, ``hallucination_flag`` and ``generated`` as bool,
        ``follow_up_of`` (str or None), ``created_at`` as ISO-8601 UTC text, and ``redacted_at`` (ISO text
        when the retention policy removed the question, which then reads "[removed]"; else None).
    """
    row = first(conn, "SELECT * FROM answers WHERE answer_id = :answer_id", answer_id=answer_id)
    if row is None:
        return None
    for column in JSON_COLUMNS:
        if row[column] is not None:
            row[column] = json.loads(row[column])
    for column in BOOL_COLUMNS:
        row[column] = bool(row[column])
    return row


def fetch_thread(conn: Connection, channel: str, thread_ts: str) -> list[dict[str, Any]]:
    """The answers posted in one Slack thread, oldest first (the thread's questions, for follow-ups).

    Returns:
        Dicts with ``answer_id``, ``question``, ``follow_up_of`` (str or None), ``refused`` (bool) and
        ``created_at`` (ISO-8601 UTC text); [] when the bot never answered in that thread. Answers whose
        question the retention policy removed are left out (they give no context). Read through
        ``idx_answers_thread``.
    """
    found = rows(
        conn,
        "SELECT answer_id, question, follow_up_of, refused, created_at FROM answers "
        "WHERE channel = :channel AND thread_ts = :thread_ts AND redacted_at IS NULL "
        "ORDER BY created_at, answer_id",
        channel=channel, thread_ts=thread_ts,
    )
    return [{**row, "refused": bool(row["refused"])} for row in found]


def fetch_recent_languages(conn: Connection, user_id: str, limit: int) -> list[str]:
    """The languages of ``user_id``'s last ``limit`` questions, newest first (``"en"``, ``"ko"``, ``"ja"``, as
    `record_answer` stored them); [] for someone who never asked or whose rows retention anonymised. Read
    through ``idx_answers_user``, so an App Home opening does not scan the whole table."""
    found = rows(
        conn,
        "SELECT language FROM answers WHERE user_id = :user_id ORDER BY created_at DESC, answer_id DESC "
        "LIMIT :limit",
        user_id=user_id, limit=limit,
    )
    return [row["language"] for row in found]


def count_hallucinations(
    conn: Connection, *, by: str = "doc", since: str | None = None, until: str | None = None
) -> dict[str, int]:
    """How many generated answers had a sentence removed by the grounding check (``hallucination_flag``).

    The accuracy signal's "hallucination count" per document (seed 004 §5; DESIGN.md: a bad document has
    more than 5). Read through the partial index ``idx_answers_hallucinated``.

    Args:
        conn: the database (read only).
        by: ``"doc"`` (an answer counts once for every document it cited) or ``"answer"`` (1 per flagged answer).
        since, until: ISO-8601 UTC text; answers created in ``[since, until)`` (None: no bound).

    Returns:
        ``{doc_id or answer_id: count >= 1}``; documents without a flagged answer are absent.

    Raises:
        ValueError: `by` is neither "doc" nor "answer".
    """
    if by not in ("doc", "answer"):
        raise ValueError(f"by must be 'doc' or 'answer'; got {by!r}")
    key, join = ("c.doc_id", "JOIN citations c ON c.answer_id = a.answer_id") if by == "doc" else ("a.answer_id", "")
    bounds, params = time_bounds("a.created_at", since, until)
    found = rows(
        conn,
        f"SELECT {key} AS subject, COUNT(*) AS n FROM answers a {join} "
        f"WHERE a.hallucination_flag = 1 AND {bounds} GROUP BY {key}",
        **params,
    )
    return {row["subject"]: row["n"] for row in found}


def answer_exists(conn: Connection, answer_id: str) -> bool:
    """True when an answer with this id is stored."""
    return scalar(conn, "SELECT 1 FROM answers WHERE answer_id = :answer_id", answer_id=answer_id) is not None


def check_reaction(conn: Connection, answer_id: str, user_id: str, at: datetime | None, *,
                   field: str) -> str:
    """Validate a user's reaction (vote, wrong-answer report) to an answer; return ``at`` as UTC ISO 8601.

    Raises:
        InvalidRecord: empty ``user_id`` or naive ``at`` (the message names ``field``).
        UnknownAnswer: no answer with ``answer_id`` was recorded.
    """
    moment = reaction_time(user_id, at, field=field)
    if not answer_exists(conn, answer_id):
        raise UnknownAnswer(answer_id)
    return moment


def reaction_time(user_id: str, at: datetime | None, *, field: str) -> str:
    """`check_reaction` without the answer lookup, for writers whose foreign key finds an unknown answer
    (`feedback.votes`); returns ``at`` as UTC ISO 8601.

    Raises:
        InvalidRecord: empty ``user_id`` or naive ``at``.
    """
    if not user_id:
        raise InvalidRecord("user_id must be a non-empty string")
    return utc_iso(at, field=field)


def _finite(value: float, field: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError) as error:
        raise InvalidRecord(f"{field} must be a number; got {value!r}") from error
    if not math.isfinite(number):
        raise InvalidRecord(f"{field} must be finite; got {value!r}")
    return number


def _to_json(value: Any, field: str) -> str:
    # allow_nan=False: NaN/Infinity would be written as bare tokens that strict JSON readers reject.
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise InvalidRecord(f"{field} is not JSON-serialisable: {error}") from error


def fetch_unanswered(conn: Connection, *, since: str, until: str) -> list[dict[str, Any]]:
    """The questions answered badly in ``[since, until)``: refused or shown with a low-confidence warning.

    The input of the question-based coverage gaps (`jobs.question_gaps`, issue 11 item 2). Read through
    ``idx_answers_created_at``; answers whose question the retention policy removed are left out.

    Args:
        conn: the database (read only).
        since, until: ISO-8601 UTC text.

    Returns:
        Dicts ``{"answer_id", "question", "user_id" (str or None), "language", "refused" (bool),
        "low_confidence" (bool), "top_score" (float in [0, 1]), "created_at" (ISO text)}``, oldest first.
    """
    found = rows(
        conn,
        "SELECT answer_id, question, user_id, language, refused, low_confidence, top_score, created_at "
        "FROM answers WHERE created_at >= :since AND created_at < :until AND (refused = 1 OR low_confidence = 1) "
        "AND redacted_at IS NULL ORDER BY created_at, answer_id",
        since=since, until=until,
    )
    return [{**row, "refused": bool(row["refused"]), "low_confidence": bool(row["low_confidence"])} for row in found]
