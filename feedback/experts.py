"""The ``expert_requests``, ``expert_answers`` and ``expert_answer_votes`` tables (issue 25 items 1–2).

An escalation ("Ask an expert") is one row per escalated answer, keyed by the answer's id: the first
``INSERT … ON CONFLICT DO NOTHING`` wins, so a double click, a Slack retry or a click seen by two replicas
makes one request. It is answered once: `resolve_request` is one conditional ``UPDATE … WHERE status =
'open'``, atomic on SQLite and PostgreSQL, and only the caller it changed a row for posts the answer.

An expert answer is kept as knowledge until ``expires_at``; two distinct users' 👎 retire it
(`RETIRE_AFTER_DOWNS`). Rows as returned::

    request: {"request_id", "question", "attempt", "asker", "channel", "thread_ts", "whom", "doc_ids": [str],
              "language", "status": "open" | "resolved", "requested_at", "posted": [[channel, ts]],
              "reminded_at", "answered_by", "answer", "answered_at"}
    expert answer: {"expert_answer_id", "request_id", "question", "answer", "expert", "answered_at",
                    "expires_at", "doc_ids": [str], "page_wrong": bool, "language", "also_asked": [str]}

``also_asked`` holds later askers' wordings that a 👍 confirmed the answer fits (`add_wording`): a later
question is matched against each of them too, so one kept answer learns how people ask in their own words and
languages (`benchmarks/experts_sim.py`).

Times are UTC ISO-8601 text (`feedback._time.utc_iso`). Functions take a connection from
``store.transaction()`` / ``store.snapshot()``; `feedback.store.FeedbackStore` delegates to them.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Connection

from feedback._time import utc_iso
from feedback.db import first, rows, run
from feedback.errors import InvalidRecord, UnknownAnswer

#: Distinct users whose 👎 retire an expert answer (issue 25 item 2: "not 👎 by two different users").
RETIRE_AFTER_DOWNS = 2
#: Longest question, attempt and answer kept, in characters (Slack's section limit is 3,000).
MAX_TEXT_CHARS = 3000
_REQUEST_JSON = ("doc_ids", "posted")
#: Wordings kept per expert answer besides its own question (the newest kept): enough for a topic's usual
#: phrasings in three languages, few enough that a match stays one small numpy product.
MAX_WORDINGS = 20


def claim_request(conn: Connection, *, request_id: str, question: str, attempt: str, asker: str,
                  channel: str | None, thread_ts: str | None, whom: str, doc_ids: list[str], language: str,
                  requested_at: datetime) -> bool:
    """Stores a new open request unless one with ``request_id`` exists.

    Returns:
        True when this call created it (go on and ask the experts), False when it was there already.

    Raises:
        InvalidRecord: empty ``request_id``, ``asker`` or ``whom``, or a naive ``requested_at``.
    """
    if not request_id or not asker or not whom:
        raise InvalidRecord("an expert request needs a request id, an asker and whom to ask")
    return run(
        conn,
        "INSERT INTO expert_requests (request_id, question, attempt, asker, channel, thread_ts, whom, doc_ids, "
        "language, status, requested_at, posted) VALUES (:id, :question, :attempt, :asker, :channel, :thread_ts, "
        ":whom, :doc_ids, :language, 'open', :at, '[]') ON CONFLICT (request_id) DO NOTHING",
        id=request_id, question=question[:MAX_TEXT_CHARS], attempt=attempt[:MAX_TEXT_CHARS], asker=asker,
        channel=channel, thread_ts=thread_ts, whom=whom, doc_ids=json.dumps(list(doc_ids)), language=language,
        at=utc_iso(requested_at, field="requested_at"),
    ).rowcount == 1


def set_posted(conn: Connection, request_id: str, posted: list[tuple[str, str]]) -> None:
    """Records where the experts' messages are (``[(channel, ts)]``), so the answer can update them."""
    run(conn, "UPDATE expert_requests SET posted = :posted WHERE request_id = :id",
        id=request_id, posted=json.dumps([list(p) for p in posted]))


def release_request(conn: Connection, request_id: str) -> None:
    """Forgets an open request whose messages reached nobody, so that the next "Ask an expert" click asks again."""
    run(conn, "DELETE FROM expert_requests WHERE request_id = :id AND status = 'open' AND posted = '[]'", id=request_id)


def fetch_request(conn: Connection, request_id: str) -> dict[str, Any] | None:
    """The request row (JSON columns decoded), or None."""
    row = first(conn, "SELECT * FROM expert_requests WHERE request_id = :id", id=request_id)
    return _decoded(row) if row else None


def resolve_request(conn: Connection, request_id: str, *, expert: str, answer: str, at: datetime) -> bool:
    """Marks an open request answered by ``expert``.

    Returns:
        True for the one call that resolved it; False when it was resolved already (or is unknown).

    Raises:
        InvalidRecord: empty ``expert`` or ``answer``, or a naive ``at``.
    """
    if not expert or not answer.strip():
        raise InvalidRecord("an expert answer needs an expert and a text")
    return run(
        conn,
        "UPDATE expert_requests SET status = 'resolved', answered_by = :expert, answer = :answer, "
        "answered_at = :at WHERE request_id = :id AND status = 'open'",
        id=request_id, expert=expert, answer=answer[:MAX_TEXT_CHARS], at=utc_iso(at, field="at"),
    ).rowcount == 1


def insert_expert_answer(conn: Connection, *, request_id: str | None, question: str, answer: str, expert: str,
                         answered_at: datetime, expires_at: datetime, doc_ids: list[str], page_wrong: bool,
                         language: str) -> str | None:
    """Keeps an expert's answer as knowledge; one per ``request_id`` (None: no request, always stored).

    Returns:
        The new ``expert_answer_id`` (32 hex digits), or None when this request's answer was stored already.

    Raises:
        InvalidRecord: empty question, answer or expert, or a naive time.
    """
    if not question.strip() or not answer.strip() or not expert:
        raise InvalidRecord("an expert answer needs a question, an answer and an expert")
    answer_id = uuid.uuid4().hex
    stored = run(
        conn,
        "INSERT INTO expert_answers (expert_answer_id, request_id, question, answer, expert, answered_at, "
        "expires_at, doc_ids, page_wrong, language) VALUES (:id, :request_id, :question, :answer, :expert, "
        ":answered_at, :expires_at, :doc_ids, :page_wrong, :language) ON CONFLICT (request_id) DO NOTHING",
        id=answer_id, request_id=request_id, question=question[:MAX_TEXT_CHARS], answer=answer[:MAX_TEXT_CHARS],
        expert=expert, answered_at=utc_iso(answered_at, field="answered_at"),
        expires_at=utc_iso(expires_at, field="expires_at"), doc_ids=json.dumps(list(doc_ids)),
        page_wrong=int(bool(page_wrong)), language=language,
    ).rowcount == 1
    return answer_id if stored else None


def fetch_active_answers(conn: Connection, now: datetime) -> list[dict[str, Any]]:
    """Expert answers not expired at ``now`` and not retired by 👎 (`RETIRE_AFTER_DOWNS`), newest first."""
    found = rows(
        conn,
        "SELECT * FROM expert_answers a WHERE a.expires_at > :now AND (SELECT count(DISTINCT v.user_id) FROM "
        "expert_answer_votes v WHERE v.expert_answer_id = a.expert_answer_id AND v.value = 'down') < :downs "
        "ORDER BY a.answered_at DESC",
        now=utc_iso(now, field="now"), downs=RETIRE_AFTER_DOWNS)
    return [_answer_decoded(row) for row in found]


def fetch_expert_answer(conn: Connection, expert_answer_id: str) -> dict[str, Any] | None:
    """One expert answer (decoded), or None."""
    row = first(conn, "SELECT * FROM expert_answers WHERE expert_answer_id = :id", id=expert_answer_id)
    return _answer_decoded(row) if row else None


def upsert_expert_vote(conn: Connection, expert_answer_id: str, user_id: str, value: str, at: datetime) -> bool:
    """A 👍/👎 on an expert answer: one per user, last click wins.

    Returns:
        True when the stored vote changed (a first vote or a new value), False for a repeated click.

    Raises:
        InvalidRecord: ``value`` not "up"/"down", empty ``user_id`` or a naive ``at``.
        UnknownAnswer: no expert answer with that id.
    """
    if value not in ("up", "down") or not user_id:
        raise InvalidRecord(f"an expert-answer vote is 'up' or 'down' by a user, not {value!r}")
    if fetch_expert_answer(conn, expert_answer_id) is None:
        raise UnknownAnswer(expert_answer_id)
    return run(
        conn,
        "INSERT INTO expert_answer_votes (expert_answer_id, user_id, value, voted_at) VALUES (:id, :user, :value, "
        ":at) ON CONFLICT (expert_answer_id, user_id) DO UPDATE SET value = excluded.value, "
        "voted_at = excluded.voted_at WHERE expert_answer_votes.value <> excluded.value",
        id=expert_answer_id, user=user_id, value=value, at=utc_iso(at, field="at"),
    ).rowcount == 1


def claim_reminders(conn: Connection, *, requested_before: datetime, now: datetime) -> list[dict[str, Any]]:
    """The open requests asked before ``requested_before`` and never reminded, each marked reminded at ``now``
    by one conditional UPDATE (so two replicas running the job remind each request once)."""
    due = rows(conn, "SELECT request_id FROM expert_requests WHERE status = 'open' AND reminded_at IS NULL "
                     "AND requested_at <= :before ORDER BY requested_at",
               before=utc_iso(requested_before, field="requested_before"))
    claimed = []
    for row in due:
        if run(conn, "UPDATE expert_requests SET reminded_at = :now WHERE request_id = :id AND reminded_at IS NULL "
                     "AND status = 'open'", id=row["request_id"], now=utc_iso(now, field="now")).rowcount == 1:
            claimed.append(fetch_request(conn, row["request_id"]))
    return claimed


def fetch_waiting(conn: Connection, *, limit: int = 5) -> tuple[int, list[dict[str, Any]]]:
    """``(how many, the oldest limit)`` of the open requests already reminded: the digest's "Waiting for an
    expert"."""
    where = "FROM expert_requests WHERE status = 'open' AND reminded_at IS NOT NULL"
    count = rows(conn, f"SELECT count(*) AS n {where}")[0]["n"]
    oldest = rows(conn, f"SELECT * {where} ORDER BY requested_at LIMIT :limit", limit=limit)
    return int(count), [_decoded(row) for row in oldest]


def _decoded(row: dict[str, Any]) -> dict[str, Any]:
    for column in _REQUEST_JSON:
        row[column] = json.loads(row[column] or "[]")
    return row


def add_wording(conn: Connection, expert_answer_id: str, question: str) -> bool:
    """Keeps ``question`` as another wording of the expert answer (a 👍 said it fits); True when it was new.
    The newest `MAX_WORDINGS` are kept. Raises UnknownAnswer when there is no such answer."""
    row = fetch_expert_answer(conn, expert_answer_id)
    if row is None:
        raise UnknownAnswer(expert_answer_id)
    text = " ".join(question.split())[:MAX_TEXT_CHARS]
    known = {" ".join(w.split()).casefold() for w in [row["question"], *row["also_asked"]]}
    if not text or text.casefold() in known:
        return False
    wordings = [*row["also_asked"], text][-MAX_WORDINGS:]
    run(conn, "UPDATE expert_answers SET also_asked = :w WHERE expert_answer_id = :id",
        w=json.dumps(wordings, ensure_ascii=False), id=expert_answer_id)
    return True


def _answer_decoded(row: dict[str, Any]) -> dict[str, Any]:
    row["also_asked"] = json.loads(row.get("also_asked") or "[]")
    row["doc_ids"] = json.loads(row["doc_ids"] or "[]")
    row["page_wrong"] = bool(row["page_wrong"])
    return row
