"""The review queue: treatment candidates from every signal, with a priority, for people to work through.

Seed 004 §10: each signal registers treatment candidates (add or extend documents for a coverage gap,
review or deprecate a bad document, review a drift, ...). One row per (problem, subject): a signal that
finds the same problem again refreshes its priority, reason and ``last_seen_at``; a row a person closed
("done" or "dismissed") stays closed. Nothing here deprecates anything: ``auto_deprecate`` only says whether
a later lifecycle step may do it without a person, and it is never set for a document that is the only
source on one of its topics (seed 004 §13.5).

Usage::

    submit(store, "bad_docs", [Candidate("bad_document", doc_id, "review_or_deprecate", 2, 41, "…")], now=now)
    for item in items(store):            # open items, most urgent first
        ...
    close(store, item["item_id"], "done")
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from config.errors import MinervaError
from feedback import review_queue
from feedback.review_queue import STATUSES  # "open", "done", "dismissed"; re-exported for callers

#: Proposed treatments and what a person should do.
ACTIONS = {
    "add_or_extend_documents": "add a source or extend documents for this intent × topic, in small batches",
    "review_or_deprecate": "review the document; deprecate it only once another source covers its topics",
    "improve_only_source": "improve the document: it is the only source on a topic, so do not deprecate it",
    "update_content": "ask the owner to update or confirm the document",
    "check_source": "restore the source file or remove the document from the collection",
    "reindex": "re-index the collection (`minerva reindex --execute`)",
    "human_review": "decide whether to update, re-index or keep the document",
    "review_drift": "find what changed (new users, a release, an outside event); re-baseline if it is intended",
    "review_citations": "check retrieval and chunking: answers cite too little or too few documents",
    "resolve_contradiction": "decide which page is current and correct or archive the other (both are named)",
    "watch": "early bad signals below the alert bar: read the evidence; nothing to do unless it gets worse",
    "check_reports": "readers reported answers quoting this page as wrong: read the reports; take the page out of "
                     "search (the alert's button, `minerva killswitch quarantine`) only if it is wrong",
    # coverage gaps from grouped questions (jobs.question_gaps.suggest_action)
    "add_page": "write a page on the gap's topic: no page comes close to its questions (best score < 0.3)",
    "extend_page": "extend the named page to answer the gap's questions (it scores 0.3–0.6 on them)",
    # owners verifying their pages (jobs.verification, issue 25 item 3)
    "propose_archive": "neither verified nor cited for a long time: archive the page if nobody needs it, or ask "
                       "its owner to verify it; nothing is archived without a person",
    "add_synonym_or_gap_query": "a page answers it well: add the questions' wording as a synonym or a gap query",
}
#: Priority numbers: 1 high, 2 normal, 3 low; a finding's severity maps onto them.
PRIORITY_OF_SEVERITY = {"critical": 1, "warning": 2, "info": 3}


class UnknownReviewItem(MinervaError, LookupError):
    """No review item has this id (``minerva review --all`` lists them)."""


@dataclass(frozen=True)
class Candidate:
    """One proposed treatment.

    Attributes:
        problem: the alert name it comes from, e.g. "bad_document".
        subject: what it is about: a doc id, ``"{intent}/{topic_id}"``, a metric or a collection.
        action: a key of `ACTIONS`.
        priority: 1 high, 2 normal, 3 low.
        weight: the volume behind it (questions, citations); orders items of one priority.
        reason: one human sentence.
        details: JSON-ready extras (figures, intervals, links).
        auto_deprecate: may a later step deprecate the subject without a person.
    """

    problem: str
    subject: str
    action: str
    priority: int
    weight: float
    reason: str
    details: dict[str, Any] = field(default_factory=dict)
    auto_deprecate: bool = False

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"action must be one of {', '.join(ACTIONS)}, not {self.action!r}")
        if self.priority not in (1, 2, 3):
            raise ValueError(f"priority must be 1, 2 or 3, not {self.priority!r}")


def submit(store, signal: str, candidates: Iterable[Candidate], *, now: datetime) -> int:
    """Adds or refreshes candidates in one transaction; returns how many were written.

    Args:
        store: the feedback store.
        signal: the job proposing them, e.g. "coverage".
        candidates: the treatments.
        now: aware time recorded as first/last seen.

    Raises:
        StoreUnavailable: the database failed; nothing was written.
    """
    candidates = list(candidates)
    if not candidates:
        return 0
    with store.transaction() as conn:
        return review_queue.upsert_items(conn, signal, [asdict(c) for c in candidates], at=now)


def items(store, *, status: str | None = "open", limit: int | None = None) -> list[dict[str, Any]]:
    """Review items, most urgent first (priority, then weight, then oldest).

    Args:
        store: the feedback store.
        status: "open", "done", "dismissed", or None for all.
        limit: at most this many.

    Returns:
        Dicts with the table's columns; ``details`` decoded, ``auto_deprecate`` as bool, and ``todo``
        (the action's sentence from `ACTIONS`).
    """
    with store.snapshot() as conn:
        found = review_queue.fetch_items(conn, status=status, limit=limit)
    for item in found:
        item["todo"] = ACTIONS.get(item["action"], "")
    return found


def close(store, item_id: int, status: str, *, now: datetime) -> None:
    """Marks an item "done" or "dismissed" (or "open" again).

    Raises:
        ValueError: unknown status.
        UnknownReviewItem: no item with this id.
    """
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
    with store.transaction() as conn:
        found = review_queue.set_status(conn, item_id, status, at=now)
    if not found:
        raise UnknownReviewItem(f"no review item {item_id} (see `minerva review --all`)")


def filing_job(signal: str, check):
    """The scheduled job of a signal: run ``check(ctx)``, file its review candidates, return its findings.

    Args:
        signal: the signal's name (the review queue's ``signal`` column).
        check: ``check(ctx) -> SignalResult``.
    """
    def run(ctx):
        result = check(ctx)
        submit(ctx.store, signal, result.candidates, now=ctx.now)
        return result.findings

    run.__doc__ = f"The scheduled {signal} job: findings for the alert layer; candidates to the review queue."
    return run
