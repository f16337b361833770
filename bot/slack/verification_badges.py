"""The verification badge of each cited page, looked up at reply time (issue 25 item 3): "verified by <@U…> 12
days ago" or "verification overdue".

Lives in `bot` because it joins the index (the page's interval, `knowledge`) with the store (its last
verification, `feedback`); `knowledge` never imports either. A page without an interval gets no badge. A failed
lookup costs the badges, never the reply.
"""

from __future__ import annotations

from datetime import datetime

import structlog

from bot.slack.verify_blocks import badge_text
from feedback import parse_utc
from jobs.verification import interval_of, is_overdue, source_intervals

log = structlog.get_logger(__name__)


def citation_badges(store, settings, documents: dict[str, dict], doc_ids: list[str], language: str, *,
                    now: datetime, slack: bool = True) -> dict[str, str]:
    """doc_id → badge text for the cited pages that have an interval (`badge_text`); {} on any store error.

    Args:
        store: the feedback store (`FeedbackStore.page_verifications`).
        settings: `config.Settings` (the sources' ``verify_days``).
        documents: doc_id → index record of the live generation.
        doc_ids: the cited pages.
        language: the reply's language.
        now: aware time of the reply.
        slack: mention the verifier (``<@U…>``) rather than printing the bare id (a terminal).
    """
    intervals = source_intervals(settings)
    timed = [d for d in doc_ids if d in documents and interval_of(documents[d], intervals) is not None]
    if not timed:
        return {}
    try:
        rows = store.page_verifications(timed)
    except Exception:  # the reply matters more than its badges; the log has the detail
        log.exception("verification.badges_failed", pages=len(timed))
        return {}
    badges = {}
    for doc_id in timed:
        row = rows.get(doc_id) or {}
        verified = parse_utc(row.get("verified_at"))
        days = max(0, (now - verified).days) if verified else None
        text = badge_text(row.get("verified_by"), days, is_overdue(documents[doc_id], row, intervals, now),
                          language, slack=slack)
        if text:
            badges[doc_id] = text
    return badges


def answer_badges(store, settings, documents: dict[str, dict], answer, *, now: datetime,
                  slack: bool = True) -> dict[str, str]:
    """`citation_badges` of an `knowledge.Answer`'s cited pages, in its language; {} for a refusal."""
    if answer.refused or not answer.citations:
        return {}
    return citation_badges(store, settings, documents, [c.doc_id for c in answer.citations], answer.language,
                           now=now, slack=slack)
