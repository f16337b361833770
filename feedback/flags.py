"""Wrong-answer reports ("Report a wrong answer"; DESIGN.md's hallucination flag): one per (answer, user).

The first report of a user on an answer is kept; a repeated click stores nothing and returns False, so a
report cannot be inflated by clicking again. `jobs.signals.bad_docs` counts them per cited document.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.engine import Connection

from feedback.answers import check_reaction
from feedback.db import run

#: Longest reason kept, in characters; longer text is cut (it is shown in digests, not parsed).
MAX_REASON_CHARS = 2000


def insert_flag(
    conn: Connection, answer_id: str, user_id: str, reason: str, created_at: datetime | None
) -> bool:
    """Stores one user's wrong-answer report on one answer, unless that user already reported it.

    Args:
        conn: a connection inside a write transaction (`feedback.store.FeedbackStore.transaction`).
        answer_id: id of a recorded answer.
        user_id: Slack user id (``"U…"``) or another stable reporter id; non-empty.
        reason: free text, may be empty; cut to MAX_REASON_CHARS characters.
        created_at: aware datetime of the report; None means now.

    Returns:
        True when this call stored the report, False when the user had already reported this answer.

    Raises:
        InvalidRecord: empty `user_id` or naive `created_at`.
        UnknownAnswer: no answer with `answer_id` was recorded.
    """
    moment = check_reaction(conn, answer_id, user_id, created_at, field="created_at")
    return run(
        conn,
        "INSERT INTO flags (answer_id, user_id, reason, created_at) VALUES (:answer_id, :user_id, :reason, :at) "
        "ON CONFLICT (answer_id, user_id) DO NOTHING",
        answer_id=answer_id, user_id=user_id, reason=(reason or "")[:MAX_REASON_CHARS], at=moment,
    ).rowcount == 1
