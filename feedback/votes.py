"""Votes on answers: one row per (answer, user), last write wins, a repeated click changes nothing.

`upsert_vote` reads the current vote and then writes, so it must run inside a ``BEGIN IMMEDIATE``
transaction (the store does this): with a deferred BEGIN, two processes can both read "no vote" and
one of them fails with "database is locked" when upgrading to a write lock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlite_utils

from feedback.answers import check_reaction
from feedback.errors import InvalidRecord

#: The only values a vote may take (👍 / 👎); also enforced by a CHECK constraint on `votes.value`.
VOTE_VALUES = ("up", "down")


@dataclass(frozen=True)
class VoteResult:
    """What a vote did to the stored state.

    Attributes:
        changed: True when the row was inserted or its value changed; False for a repeated click
            with the same value (nothing was written).
        previous: the user's value before this vote, ``"up"``/``"down"``, or None for a first vote.
        value: the user's value now, ``"up"`` or ``"down"``.
    """

    changed: bool
    previous: str | None
    value: str


def upsert_vote(
    db: sqlite_utils.Database, answer_id: str, user_id: str, value: str, voted_at: datetime | None
) -> VoteResult:
    """Stores one user's vote on one answer.

    Args:
        db: a database whose connection is inside a ``BEGIN IMMEDIATE`` transaction.
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
    if value not in VOTE_VALUES:
        raise InvalidRecord(f"vote value must be one of {', '.join(VOTE_VALUES)}; got {value!r}")
    moment = check_reaction(db, answer_id, user_id, voted_at, field="voted_at")
    current = db.execute(
        "SELECT value FROM votes WHERE answer_id = ? AND user_id = ?", [answer_id, user_id]
    ).fetchone()
    if current is None:
        db.execute(
            "INSERT INTO votes (answer_id, user_id, value, voted_at, updated_at) VALUES (?, ?, ?, ?, ?)",
            [answer_id, user_id, value, moment, moment],
        )
        return VoteResult(changed=True, previous=None, value=value)
    previous = current[0]
    if previous == value:
        return VoteResult(changed=False, previous=previous, value=value)
    db.execute(
        "UPDATE votes SET value = ?, updated_at = ? WHERE answer_id = ? AND user_id = ?",
        [value, moment, answer_id, user_id],
    )
    return VoteResult(changed=True, previous=previous, value=value)


def fetch_votes(db: sqlite_utils.Database, answer_id: str) -> list[dict[str, Any]]:
    """Returns the votes on one answer, oldest first.

    Returns:
        List of dicts with keys answer_id, user_id, value (``"up"``/``"down"``), voted_at and
        updated_at (ISO-8601 UTC text); empty for an unknown answer.
    """
    return list(
        db.query(
            "SELECT answer_id, user_id, value, voted_at, updated_at FROM votes "
            "WHERE answer_id = ? ORDER BY voted_at, user_id",
            [answer_id],
        )
    )
