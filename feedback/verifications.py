"""The ``page_verifications`` table and its queries: owners confirming that their pages are still correct
(issue 25 item 3).

One row per page, created the first time its owner is asked. A row is::

    {"doc_id": str, "owner": str, "state": "due" | "verified" | "needs_update" | "handed_over",
     "asked_at": str, "reminded_at": str | None, "verified_by": str | None, "verified_at": str | None,
     "verified_until": str | None, "answered_by": str | None, "answered_at": str | None,
     "posted": [[channel, ts], ...]}

with the times as stored (UTC ISO-8601 text of one width, `feedback._time.utc_iso`, so they compare as text).
``posted`` lists the Slack messages of the current ask (each group member's DM, then its reminder; `add_posted`),
so an answer can change every copy; [] for an ask made before it was kept, and a new ask starts it afresh.

Every change is one conditional statement, so two replicas (or a double click) change a row once: an ask is
claimed only while the row was not asked since the page fell due (`claim_ask`), a reminder only while none
was sent for that ask (`claim_reminder`), and an answer only while the ask it answers is still the row's and
its state allows it (`answer`). `jobs.verification` decides what is due; nothing here knows Slack.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from feedback._time import utc_iso
from feedback.db import is_postgres, rows, run
from feedback.errors import InvalidRecord

STATES = ("due", "verified", "needs_update", "handed_over")
#: The states an answer may replace: "Still correct" also after "Needs an update" (the owner fixed the page),
#: the other answers only while the ask is open.
ANSWERABLE_FROM = {"verified": ("due", "needs_update"), "needs_update": ("due",),
                   "handed_over": ("due", "needs_update")}

# A new ask replaces the row only when it was never asked since the page fell due (``:due_at``), or when the
# page was handed over and now has another owner. ON CONFLICT … WHERE is portable (SQLite ≥ 3.24, PostgreSQL).
_CLAIM_ASK = sa.text(
    "INSERT INTO page_verifications (doc_id, owner, state, asked_at) VALUES (:doc_id, :owner, 'due', :at) "
    "ON CONFLICT (doc_id) DO UPDATE SET owner = excluded.owner, state = 'due', asked_at = excluded.asked_at, "
    "reminded_at = NULL, posted = NULL "
    "WHERE page_verifications.asked_at < :due_at "
    "OR (page_verifications.state = 'handed_over' AND page_verifications.owner <> excluded.owner)")


def fetch(conn: Connection, doc_ids: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """doc_id → row (see the module docstring), for ``doc_ids`` (None: every page ever asked)."""
    if doc_ids is None:
        found = rows(conn, "SELECT * FROM page_verifications")
    else:
        wanted = sorted(set(doc_ids))
        if not wanted:
            return {}
        found = rows(conn, "SELECT * FROM page_verifications WHERE doc_id IN :ids", ids=wanted)
    return {r["doc_id"]: {**r, "posted": json.loads(r["posted"]) if r["posted"] else []} for r in found}


def claim_ask(conn: Connection, doc_id: str, owner: str, *, due_at: datetime, at: datetime) -> bool:
    """Record that ``owner`` is asked about ``doc_id`` now, unless someone already asked since ``due_at``.

    Returns:
        True when this call made the ask (the caller sends the message); False when it was asked already.

    Raises:
        InvalidRecord: naive times or an empty owner.
    """
    if not owner:
        raise InvalidRecord("a verification ask needs an owner")
    result = conn.execute(_CLAIM_ASK, {"doc_id": doc_id, "owner": owner, "at": utc_iso(at, field="at"),
                                       "due_at": utc_iso(due_at, field="due_at")})
    return result.rowcount == 1


def release_ask(conn: Connection, doc_id: str, *, asked_at: str, previous: dict[str, Any] | None) -> None:
    """Undo the ask made at ``asked_at`` (its message could not be delivered), so the next run asks again:
    the row as it was before (``previous``), or no row when there was none. A row asked again since is kept."""
    if previous is None:
        run(conn, "DELETE FROM page_verifications WHERE doc_id = :doc_id AND asked_at = :asked_at",
            doc_id=doc_id, asked_at=asked_at)
        return
    run(conn, "UPDATE page_verifications SET owner = :owner, state = :state, asked_at = :old_asked, "
              "reminded_at = :reminded_at, posted = :posted WHERE doc_id = :doc_id AND asked_at = :asked_at",
        owner=previous["owner"], state=previous["state"], old_asked=previous["asked_at"],
        reminded_at=previous["reminded_at"], posted=_posted_json(previous.get("posted") or []), doc_id=doc_id,
        asked_at=asked_at)


def add_posted(conn: Connection, doc_id: str, *, asked_at: str, posted: Iterable[tuple[str, str]]) -> bool:
    """Add ``posted``, the ``(channel, ts)`` of messages just sent for the ask made at ``asked_at`` (the DM
    channel as Slack's answer names it, since ``chat.update`` needs it), to the row's ``posted`` list.

    Returns:
        True when added; False when the page was asked again since (the messages belong to an ask that is gone)
        or has no row.

    Raises:
        InvalidRecord: a channel or ts that is empty.
    """
    new = [[str(channel), str(ts)] for channel, ts in posted]
    if any(not channel or not ts for channel, ts in new):
        raise InvalidRecord(f"a posted message needs a channel and a ts; got {new!r}")
    # read, then write: the row is locked for the transaction (BEGIN IMMEDIATE on SQLite, FOR UPDATE on
    # PostgreSQL), so two writers adding to one ask at once (two replicas' runs) both keep their messages
    lock = " FOR UPDATE" if is_postgres(conn) else ""
    found = rows(conn, f"SELECT posted FROM page_verifications WHERE doc_id = :doc_id AND asked_at = :asked_at{lock}",
                 doc_id=doc_id, asked_at=asked_at)
    if not found:
        return False
    kept = json.loads(found[0]["posted"]) if found[0]["posted"] else []
    kept += [p for p in new if p not in kept]
    run(conn, "UPDATE page_verifications SET posted = :posted WHERE doc_id = :doc_id AND asked_at = :asked_at",
        posted=_posted_json(kept), doc_id=doc_id, asked_at=asked_at)
    return True


def _posted_json(posted: list) -> str | None:
    """``posted`` as stored: JSON text, or NULL for none."""
    return json.dumps([list(p) for p in posted]) if posted else None


def claim_reminder(conn: Connection, doc_id: str, *, asked_at: str, at: datetime) -> bool:
    """Record the one reminder of the ask made at ``asked_at``; False when it was sent already, the page was
    answered, or it was asked again since."""
    return run(conn, "UPDATE page_verifications SET reminded_at = :at WHERE doc_id = :doc_id AND "
                     "asked_at = :asked_at AND state = 'due' AND reminded_at IS NULL",
               at=utc_iso(at, field="at"), doc_id=doc_id, asked_at=asked_at).rowcount == 1


def release_reminder(conn: Connection, doc_id: str, *, asked_at: str) -> None:
    """Undo a reminder that could not be delivered (the next run reminds again)."""
    run(conn, "UPDATE page_verifications SET reminded_at = NULL WHERE doc_id = :doc_id AND asked_at = :asked_at",
        doc_id=doc_id, asked_at=asked_at)


def answer(conn: Connection, doc_id: str, state: str, *, asked_at: str, by: str, at: datetime,
           verified_until: datetime | None = None) -> bool:
    """The owner's answer to the ask made at ``asked_at``: ``state`` "verified" (with ``verified_until``),
    "needs_update" or "handed_over".

    Returns:
        True when this call changed the row; False for a second click, an answer a later ask replaced, or a
        state the row cannot move to (`ANSWERABLE_FROM`).

    Raises:
        InvalidRecord: an unknown state, "verified" without ``verified_until``, or naive times.
    """
    if state not in ANSWERABLE_FROM:
        raise InvalidRecord(f"an answer's state must be one of {', '.join(ANSWERABLE_FROM)}, not {state!r}")
    stamp = utc_iso(at, field="at")
    params: dict[str, Any] = {"doc_id": doc_id, "asked_at": asked_at, "state": state, "by": by, "at": stamp,
                              "from": list(ANSWERABLE_FROM[state])}
    verified = ""
    if state == "verified":
        if verified_until is None:
            raise InvalidRecord("a verification needs verified_until")
        params["until"] = utc_iso(verified_until, field="verified_until")
        verified = ", verified_by = :by, verified_at = :at, verified_until = :until"
    return run(conn, f"UPDATE page_verifications SET state = :state, answered_by = :by, answered_at = :at{verified} "
                     "WHERE doc_id = :doc_id AND asked_at = :asked_at AND state IN :from", **params).rowcount == 1
