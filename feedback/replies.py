"""Slack replies that could not be posted, kept to be posted again (issue 27 item 4): the ``reply_retries`` table.

A reply lost to Slack (four 429s in a row, a network error) used to be gone: the asker got an apology and the
answer row looked delivered. Now the reply is stored here with when to try again, its answer row says
``delivered = 0``, and the monitoring sweep (`jobs.notify.resend_replies`) posts it again with a doubling
wait, gives up after a few tries and raises an alert. Functions run on a connection the caller has put in a
transaction (`feedback.store.FeedbackStore`); they never commit. Rows go with their answer (``ON DELETE
CASCADE``), so ``minerva forget`` and retention remove them too.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.engine import Connection

from feedback._time import parse_utc, utc_iso
from feedback.db import rows, run

#: Wait before the first new try; it doubles with every failed one.
FIRST_RETRY_AFTER = timedelta(minutes=1)


def keep_undelivered(conn: Connection, answer_id: str, *, channel: str, thread_ts: str | None, text: str,
                     blocks: list[dict], error: str, now: datetime) -> None:
    """Stores a reply that could not be posted and marks its answer undelivered (a second failure of the same
    reply only updates the error)."""
    run(conn, "UPDATE answers SET delivered = 0 WHERE answer_id = :id", id=answer_id)
    run(conn, "DELETE FROM reply_retries WHERE answer_id = :id", id=answer_id)
    run(conn, "INSERT INTO reply_retries (answer_id, channel, thread_ts, text, blocks, attempts, next_try_at, "
              "last_error) VALUES (:id, :channel, :ts, :text, :blocks, 1, :next, :error)",
        id=answer_id, channel=channel, ts=thread_ts, text=text, blocks=json.dumps(blocks, ensure_ascii=False),
        next=utc_iso(now + FIRST_RETRY_AFTER, field="next_try_at"), error=error)


def due_replies(conn: Connection, now: datetime) -> list[dict[str, Any]]:
    """The stored replies whose next try is due, oldest first: ``[{"answer_id", "channel", "thread_ts",
    "text", "blocks": list, "attempts": int, "last_error"}, ...]``."""
    found = rows(conn, "SELECT * FROM reply_retries WHERE next_try_at <= :now ORDER BY next_try_at",
                 now=utc_iso(now, field="now"))
    return [dict(r, blocks=json.loads(r["blocks"])) for r in found]


def reply_delivered(conn: Connection, answer_id: str) -> None:
    """The reply got through: its answer is delivered, its stored copy goes."""
    run(conn, "UPDATE answers SET delivered = 1 WHERE answer_id = :id", id=answer_id)
    run(conn, "DELETE FROM reply_retries WHERE answer_id = :id", id=answer_id)


def reply_failed_again(conn: Connection, answer_id: str, *, error: str, now: datetime, give_up_after: int) -> bool:
    """Counts one more failed try; returns True when that was the last (``give_up_after`` tries in all): the
    stored copy goes and the answer stays undelivered. Else the next try waits twice as long as the last."""
    (row,) = rows(conn, "SELECT attempts FROM reply_retries WHERE answer_id = :id", id=answer_id) or [None]
    if row is None:
        return True
    attempts = int(row["attempts"]) + 1
    if attempts >= give_up_after:
        run(conn, "DELETE FROM reply_retries WHERE answer_id = :id", id=answer_id)
        return True
    run(conn, "UPDATE reply_retries SET attempts = :n, last_error = :error, next_try_at = :next WHERE answer_id = :id",
        id=answer_id, n=attempts, error=error,
        next=utc_iso(now + FIRST_RETRY_AFTER * 2 ** (attempts - 1), field="next_try_at"))
    return False


def next_try(conn: Connection, answer_id: str) -> datetime | None:
    """When the stored reply of ``answer_id`` is tried next, or None when none is stored."""
    found = rows(conn, "SELECT next_try_at FROM reply_retries WHERE answer_id = :id", id=answer_id)
    return parse_utc(found[0]["next_try_at"]) if found else None
