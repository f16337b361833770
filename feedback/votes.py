"""Votes on answers: one row per (answer, user), last write wins, a repeated click changes nothing.

A 👎 may carry a reason (`VOTE_REASONS`, picked privately after the vote; issue 9): it is a column of the
same row, so changing the reason keeps one row, and turning the vote into a 👍 clears it.

`upsert_vote` inserts with ``ON CONFLICT DO NOTHING`` and, when the user has voted before, reads the row
locked and updates it, inside the store's write transaction: on SQLite ``BEGIN IMMEDIATE`` serialises the
writers; on PostgreSQL the conflict clause and ``FOR UPDATE`` do, so concurrent clicks on different
replicas lose no vote.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from feedback.answers import reaction_time
from feedback.db import is_postgres, rows, run, time_bounds
from feedback.errors import InvalidRecord, UnknownAnswer

#: The only values a vote may take (👍 / 👎); also enforced by a CHECK constraint on `votes.value`.
VOTE_VALUES = ("up", "down")
#: Why a 👎 (DESIGN.md: outdated · wrong · incomplete · not what I asked); also a CHECK on `votes.reason`.
VOTE_REASONS = ("outdated", "wrong", "incomplete", "not_what_i_asked")


@dataclass(frozen=True)
class VoteResult:
    """What a vote did to the stored state.

    Attributes:
        changed: True when the row was inserted or its value changed; False for a repeated click
            with the same value (nothing was written).
        previous: the user's value before this vote, ``"up"``/``"down"``, or None for a first vote.
        value: the user's value now, ``"up"`` or ``"down"``.
        reason: the 👎's reason now (one of VOTE_REASONS), or None.
    """

    changed: bool
    previous: str | None
    value: str
    reason: str | None = None


def upsert_vote(
    conn: Connection, answer_id: str, user_id: str, value: str, voted_at: datetime | None
) -> VoteResult:
    """Stores one user's vote on one answer.

    Args:
        conn: a connection inside a write transaction (`feedback.store.FeedbackStore.transaction`).
        answer_id: id of a recorded answer.
        user_id: Slack user id (``"U…"``) or another stable voter id; non-empty.
        value: ``"up"`` or ``"down"``.
        voted_at: aware datetime of the click; None means now. A first vote sets both `voted_at` and
            `updated_at` to it; a changed vote sets only `updated_at`.

    Returns:
        VoteResult; ``changed=False`` when the stored value already equals `value`.

    Raises:
        InvalidRecord: `value` not in VOTE_VALUES, empty `user_id`, or naive `voted_at`
            (InvalidRecord is a ValueError).
        UnknownAnswer: no answer with `answer_id` was recorded.
    """
    moment = _checked_vote(user_id, value, voted_at)
    if _insert_vote(conn, answer_id, user_id, value, None, moment):
        return VoteResult(changed=True, previous=None, value=value)
    current = _current_vote(conn, answer_id, user_id)
    previous, reason = current
    if previous == value:
        return VoteResult(changed=False, previous=previous, value=value, reason=reason)
    # A 👍 has no reason; a 👎 after a 👍 starts without one.
    run(conn, "UPDATE votes SET value = :value, reason = NULL, updated_at = :at "
              "WHERE answer_id = :answer_id AND user_id = :user_id",
        value=value, at=moment, answer_id=answer_id, user_id=user_id)
    return VoteResult(changed=True, previous=previous, value=value)


def insert_first_vote(
    conn: Connection, answer_id: str, user_id: str, value: str, voted_at: datetime | None
) -> VoteResult | None:
    """Stores the vote when it is the user's first on this answer, in one statement; None (nothing written)
    when the user has voted before — then `upsert_vote`, in a transaction of its own, changes it.

    Raises:
        InvalidRecord, UnknownAnswer: as `upsert_vote`.
    """
    moment = _checked_vote(user_id, value, voted_at)
    if _insert_vote(conn, answer_id, user_id, value, None, moment):
        return VoteResult(changed=True, previous=None, value=value)
    return None


def _checked_vote(user_id: str, value: str, voted_at: datetime | None) -> str:
    """``voted_at`` as UTC ISO 8601 once ``value`` and ``user_id`` are valid.

    Raises:
        InvalidRecord: `value` not in VOTE_VALUES, empty `user_id` or naive `voted_at`.
    """
    if value not in VOTE_VALUES:
        raise InvalidRecord(f"vote value must be one of {', '.join(VOTE_VALUES)}; got {value!r}")
    return reaction_time(user_id, voted_at, field="voted_at")


def set_vote_reason(
    conn: Connection, answer_id: str, user_id: str, reason: str, at: datetime | None
) -> VoteResult:
    """Stores why a user voted 👎 on an answer, in that user's one vote row.

    Picking a reason is a 👎: without a vote it inserts one, and it turns a 👍 into a 👎 (the click comes from
    the private message offered after a 👎, so the user meant 👎 when they clicked it).

    Args:
        conn: a connection inside a write transaction (`feedback.store.FeedbackStore.transaction`).
        answer_id: id of a recorded answer.
        user_id: the voter's Slack user id; non-empty.
        reason: one of VOTE_REASONS.
        at: aware datetime of the click; None means now (sets `updated_at`, and `voted_at` of a new row).

    Returns:
        VoteResult with ``value="down"`` and ``reason``; ``changed=False`` when the row already held this
        reason on a 👎 (nothing written).

    Raises:
        InvalidRecord: `reason` not in VOTE_REASONS, empty `user_id`, or naive `at`.
        UnknownAnswer: no answer with `answer_id` was recorded.
    """
    if reason not in VOTE_REASONS:
        raise InvalidRecord(f"vote reason must be one of {', '.join(VOTE_REASONS)}; got {reason!r}")
    moment = reaction_time(user_id, at, field="at")
    if _insert_vote(conn, answer_id, user_id, "down", reason, moment):
        return VoteResult(changed=True, previous=None, value="down", reason=reason)
    current = _current_vote(conn, answer_id, user_id)
    previous, previous_reason = current
    if (previous, previous_reason) == ("down", reason):
        return VoteResult(changed=False, previous=previous, value="down", reason=reason)
    run(conn, "UPDATE votes SET value = 'down', reason = :reason, updated_at = :at "
              "WHERE answer_id = :answer_id AND user_id = :user_id",
        reason=reason, at=moment, answer_id=answer_id, user_id=user_id)
    return VoteResult(changed=True, previous=previous, value="down", reason=reason)


def _current_vote(conn: Connection, answer_id: str, user_id: str) -> tuple[str, str | None]:
    """The stored ``(value, reason)`` of one user's existing vote, its row locked until the transaction ends.

    SQLite's BEGIN IMMEDIATE already holds the file's write lock; PostgreSQL needs ``FOR UPDATE`` (the one
    dialect branch here) so two replicas changing the same vote cannot both read the old value.
    """
    lock = " FOR UPDATE" if is_postgres(conn) else ""
    row = run(conn, "SELECT value, reason FROM votes WHERE answer_id = :answer_id AND user_id = :user_id" + lock,
              answer_id=answer_id, user_id=user_id).one()
    return row[0], row[1]


def _insert_vote(conn: Connection, answer_id: str, user_id: str, value: str, reason: str | None,
                 moment: str) -> bool:
    """Inserts one user's first vote on one answer (``moment`` sets voted_at and updated_at); False, writing
    nothing, when the user has voted on it before (also when another replica's insert won the race).

    The votes → answers foreign key finds an unknown answer in the same statement (one round trip fewer
    per click than looking it up first, which matters on PostgreSQL over the network).

    Raises:
        UnknownAnswer: no answer with ``answer_id`` was recorded.
    """
    try:
        return run(
            conn,
            "INSERT INTO votes (answer_id, user_id, value, reason, voted_at, updated_at) "
            "VALUES (:answer_id, :user_id, :value, :reason, :at, :at) ON CONFLICT (answer_id, user_id) DO NOTHING",
            answer_id=answer_id, user_id=user_id, value=value, reason=reason, at=moment,
        ).rowcount == 1
    except sa.exc.IntegrityError as error:  # the foreign key: the CHECKs were validated in Python
        raise UnknownAnswer(answer_id) from error


def count_reasons(
    conn: Connection, *, by: str = "doc", since: str | None = None, until: str | None = None
) -> dict[str, dict[str, int]]:
    """How many 👎 gave each reason, per cited document or per answer.

    Args:
        conn: the database (read only).
        by: ``"doc"`` (a 👎 counts once for every document its answer cited) or ``"answer"``.
        since, until: ISO-8601 UTC text; only votes on answers created in ``[since, until)`` (None: no bound).

    Returns:
        ``{doc_id or answer_id: {reason: count}}``, only reasons that occur (counts >= 1); 👎 without a
        reason are not counted. E.g. ``{"api:webhooks.md": {"outdated": 3, "wrong": 1}}``.

    Raises:
        ValueError: `by` is neither "doc" nor "answer".
    """
    if by not in ("doc", "answer"):
        raise ValueError(f"by must be 'doc' or 'answer'; got {by!r}")
    key = "c.doc_id" if by == "doc" else "v.answer_id"
    join = "JOIN citations c ON c.answer_id = v.answer_id" if by == "doc" else ""
    bounds, params = time_bounds("a.created_at", since, until)
    found = rows(
        conn,
        f"SELECT {key} AS subject, v.reason AS reason, COUNT(*) AS n "
        f"FROM votes v JOIN answers a ON a.answer_id = v.answer_id {join} "
        f"WHERE v.value = 'down' AND v.reason IS NOT NULL AND {bounds} GROUP BY {key}, v.reason",
        **params,
    )
    counts: dict[str, dict[str, int]] = {}
    for row in found:
        counts.setdefault(row["subject"], {})[row["reason"]] = row["n"]
    return counts


def fetch_votes(conn: Connection, answer_id: str) -> list[dict[str, Any]]:
    """Returns the votes on one answer, oldest first.

    Returns:
        List of dicts with keys answer_id, user_id, value (``"up"``/``"down"``), reason (one of
        VOTE_REASONS or None), voted_at and updated_at (ISO-8601 UTC text); empty for an unknown answer.
    """
    return rows(
        conn,
        "SELECT answer_id, user_id, value, reason, voted_at, updated_at FROM votes "
        "WHERE answer_id = :answer_id ORDER BY voted_at, user_id",
        answer_id=answer_id,
    )
