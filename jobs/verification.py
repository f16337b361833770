"""Owners verify their pages on an interval (issue 25 item 3): the ``verification`` job and the rules that
say when a page is due, overdue, or worth proposing for archiving.

**Interval.** A page's front matter ``verify_days`` (stored in its index record by `knowledge.sync`), else its
source's ``verify_days`` (`config.SourceConfig`); None = the page is never due.

**Due.** A page is due `due_at`: the later of its ``verified_until`` (the last "Still correct" plus the
interval) and its ``indexed_at`` plus the interval. ``indexed_at`` is renewed whenever the file changes, so a
page someone just edited starts a new interval rather than asking its owner to confirm fresh text; a page
never verified is therefore due one interval after it was (last) indexed.

**Asked once.** The job asks each due page's owner (`jobs.owners.owner_of`: front matter ``owner``, else the
source's; a user group's members each get the message) once per due date: `feedback.verifications.claim_ask`
records the ask before the message is sent, so a second run or a second replica asks nobody again; a message
that fails is undone and tried on the next run. Where each message went is stored with the ask
(`FeedbackStore.record_verification_messages`), so the first answer changes every member's copy. An ask not answered after ``verification.remind_after_days``
is reminded once. "Needs an update" and "Not mine" leave the page overdue until it is edited, verified, or
handed to another owner (who is then asked).

**Archive proposals.** A page with an interval that was neither verified nor cited for
``verification.archive_after_days`` (and was indexed at least that long ago) is proposed for archiving as a
review item (``propose_archive``); nothing is ever archived here.

`jobs.runner` runs `run_verification` for ``minerva jobs run verification`` and the scheduler; nothing here
knows Slack (the notifier's ``post_verification`` renders and sends, `bot.slack.digests.SlackNotifier`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import structlog

from config.alerts import AlertsConfig
from feedback import parse_utc, utc_iso, windows
from jobs import alerts
from jobs._common import is_active, snapshot, window
from jobs.owners import owner_of, source_owners
from jobs.review import Candidate, submit

log = structlog.get_logger(__name__)

JOB = "verification"
#: Days of citations and 👎 reasons a verification message shows (issue 25 item 3: "citations in the last 30
#: days"), the same window as the freshness signal's default ``citation_window_days``.
SIGNAL_WINDOW_DAYS = 30
#: Pages one owner is asked about in one run, the longest overdue first; the rest wait for the next run. On the
#: whole handbook with `verify_days: 30` on its source every one of its 240 current pages falls due the same day:
#: 240 direct messages at once would bury the owner, ten a day spread the interval's checks over the month.
MAX_ASKS_PER_OWNER = 10
#: Open findings named per page in a message; the rest are counted.
MAX_FINDINGS = 5


@dataclass(frozen=True)
class PageSignals:
    """What the owner is shown about a page: citations in the last ``window_days``, 👎 reasons (reason →
    count) over the same window, and the summaries of the unresolved alerts on it."""

    citations: int = 0
    window_days: int = SIGNAL_WINDOW_DAYS
    down_reasons: dict[str, int] = field(default_factory=dict)
    findings: tuple[str, ...] = ()


@dataclass(frozen=True)
class VerificationAsk:
    """One message to one owner about one page.

    Attributes:
        doc_id, title, url: the page.
        owner: the user or user group id asked.
        interval_days: the page's interval.
        due_at: when it fell due.
        asked_at: the ask's stored time; the buttons carry it, so a click answers this ask and no other.
        reminder: True for the one reminder of an earlier ask.
        signals: the page's citations, 👎 reasons and findings.
        language: the page's language (the message is framed in it).
    """

    doc_id: str
    title: str
    url: str
    owner: str
    interval_days: int
    due_at: datetime
    asked_at: str
    reminder: bool
    signals: PageSignals
    language: str = "en"


@dataclass
class VerificationRun:
    """What one run did: pages due, asks and reminders sent, failed messages, archive proposals filed."""

    due: int = 0
    asked: list[str] = field(default_factory=list)
    reminded: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    archive_proposals: int = 0
    no_owner: list[str] = field(default_factory=list)


def interval_of(doc: dict, intervals: dict[str, int | None]) -> int | None:
    """The page's interval in days: front matter ``verify_days``, else its collection's (``intervals``:
    collection → `config.SourceConfig.verify_days`), else None."""
    own = doc.get("verify_days")
    if isinstance(own, int) and not isinstance(own, bool) and own >= 1:
        return own
    return intervals.get(doc.get("collection", ""))


def source_intervals(settings) -> dict[str, int | None]:
    """collection → its configured ``verify_days`` (None for sources without one)."""
    return {s.name: getattr(s, "verify_days", None) for s in getattr(settings, "sources", [])}


def due_at(doc: dict, row: dict | None, interval: int) -> datetime | None:
    """When the page falls (or fell) due: the later of ``verified_until`` and ``indexed_at`` + interval (see
    the module docstring); None when the record has no readable ``indexed_at`` and was never verified."""
    indexed = parse_utc(doc.get("indexed_at"))
    candidates = [indexed + timedelta(days=interval)] if indexed else []
    until = parse_utc((row or {}).get("verified_until"))
    if until:
        candidates.append(until)
    return max(candidates) if candidates else None


def is_overdue(doc: dict, row: dict | None, intervals: dict[str, int | None], now: datetime) -> bool:
    """True when the page has an interval and its due date has passed."""
    interval = interval_of(doc, intervals)
    if interval is None:
        return False
    due = due_at(doc, row, interval)
    return due is not None and due <= now


def overdue_pages(documents: dict[str, dict], rows: dict[str, dict], intervals: dict[str, int | None],
                  now: datetime) -> list[dict[str, Any]]:
    """The active pages whose verification is overdue, most overdue first: dicts with ``doc_id``,
    ``collection``, ``title``, ``url``, ``owner`` (as stored), ``due_at`` (ISO), ``days_overdue``, ``state``
    (the row's, or "never asked")."""
    found = []
    for doc_id, doc in documents.items():
        if not is_active(doc, now) or not is_overdue(doc, rows.get(doc_id), intervals, now):
            continue
        due = due_at(doc, rows.get(doc_id), interval_of(doc, intervals))
        found.append({"doc_id": doc_id, "collection": doc.get("collection", ""), "title": doc.get("title", doc_id),
                      "url": doc.get("url", ""), "owner": doc.get("owner", ""), "due_at": due.isoformat(),
                      "days_overdue": (now - due).days,
                      "state": (rows.get(doc_id) or {}).get("state", "never asked")})
    return sorted(found, key=lambda e: (-e["days_overdue"], e["doc_id"]))


def gather_signals(store, config: AlertsConfig, doc_ids: list[str], *, now: datetime) -> dict[str, PageSignals]:
    """doc_id → `PageSignals` over the last `SIGNAL_WINDOW_DAYS`, from the store's public queries (citations,
    👎 reasons) and the unresolved, unsilenced alerts naming the page (``doc_id`` or ``other_doc`` label)."""
    since, until = window(now, SIGNAL_WINDOW_DAYS)
    with snapshot(store) as conn:
        cited = windows.citations_per_document(conn, since, until)
    reasons = store.vote_reasons(by="doc", since=now - timedelta(days=SIGNAL_WINDOW_DAYS), until=now)
    findings: dict[str, list[str]] = {}
    for status in alerts.list_alerts(store, config, states=("pending", "firing"), now=now):
        if status.silenced_until is not None:
            continue
        for key in ("doc_id", "other_doc"):
            page = str(status.alert.labels.get(key) or "")
            if page:
                findings.setdefault(page, []).append(status.alert.summary)
    return {d: PageSignals(cited.get(d, 0), SIGNAL_WINDOW_DAYS, dict(reasons.get(d, {})),
                           tuple(findings.get(d, [])[:MAX_FINDINGS])) for d in doc_ids}


def plan(documents: dict[str, dict], rows: dict[str, dict], settings, *, now: datetime
         ) -> tuple[list[tuple[str, str, int, datetime]], list[tuple[str, dict]]]:
    """What is due now, before anything is claimed.

    Returns:
        (asks, reminders): asks as ``(doc_id, owner, interval, due_at)`` for pages due and not asked since
        they fell due (or handed over and now owned by someone else); reminders as ``(doc_id, row)`` for asks
        still open after ``verification.remind_after_days`` with no reminder yet. Pages without an owner
        are left out of both (the run lists them). At most `MAX_ASKS_PER_OWNER` asks per owner, the longest
        overdue first.
    """
    intervals = source_intervals(settings)
    defaults = source_owners(settings)
    remind_after = timedelta(days=settings.verification.remind_after_days)
    asks, reminders = [], []
    for doc_id, doc in sorted(documents.items()):
        interval = interval_of(doc, intervals)
        if interval is None or not is_active(doc, now):
            continue
        row = rows.get(doc_id)
        due = due_at(doc, row, interval)
        if due is None or due > now:
            continue
        owner = owner_of(doc, defaults)
        asked = parse_utc((row or {}).get("asked_at"))
        handed_on = row is not None and row["state"] == "handed_over" and owner and owner != row["owner"]
        if asked is None or asked < due or handed_on:
            asks.append((doc_id, owner, interval, due))
        elif row["state"] == "due" and row["reminded_at"] is None and asked + remind_after <= now:
            reminders.append((doc_id, row))
    return _capped(asks), reminders


def _capped(asks: list[tuple[str, str, int, datetime]]) -> list[tuple[str, str, int, datetime]]:
    """``asks`` with at most `MAX_ASKS_PER_OWNER` per owner, the earliest due first (then by page)."""
    taken: dict[str, int] = {}
    out = []
    for ask in sorted(asks, key=lambda a: (a[3], a[0])):
        taken[ask[1]] = taken.get(ask[1], 0) + 1
        if taken[ask[1]] <= MAX_ASKS_PER_OWNER:
            out.append(ask)
    return sorted(out)


def archive_candidates(documents: dict[str, dict], rows: dict[str, dict], settings, cited: dict[str, int], *,
                       now: datetime) -> list[Candidate]:
    """"propose archive" review items for pages with an interval neither verified nor cited for
    ``verification.archive_after_days`` (``cited``: doc_id → citations over that window) and indexed at least
    that long ago (a new page has had no chance to be cited)."""
    days = settings.verification.archive_after_days
    cutoff = now - timedelta(days=days)
    intervals = source_intervals(settings)
    found = []
    for doc_id, doc in sorted(documents.items()):
        if interval_of(doc, intervals) is None or not is_active(doc, now) or cited.get(doc_id, 0):
            continue
        verified = parse_utc((rows.get(doc_id) or {}).get("verified_at"))
        indexed = parse_utc(doc.get("indexed_at"))
        if (verified and verified > cutoff) or indexed is None or indexed > cutoff:
            continue
        found.append(Candidate(
            "verification_archive", doc_id, "propose_archive", 3, 0,
            f"{doc.get('title') or doc_id} was neither verified nor cited in {days} days",
            {"collection": doc.get("collection", ""), "url": doc.get("url", ""), "owner": doc.get("owner", ""),
             "last_verified": verified.isoformat() if verified else None}))
    return found


async def run_verification(store, settings, config: AlertsConfig, documents: dict[str, dict], notifier, *,
                           now: datetime) -> VerificationRun:
    """The ``verification`` job: ask owners of due pages, remind once, file archive proposals.

    Args:
        store: the feedback store.
        settings: `config.Settings` (sources' intervals and owners, ``verification``).
        config: the alerting config (findings shown in messages).
        documents: doc_id → index record of the live generation.
        notifier: has ``post_verification(owner, ask) -> list[Delivery]``; None (no Slack token) defers every
            message: nothing is claimed, so the next run with Slack asks.
        now: aware time of the run.

    Returns:
        What was done (`VerificationRun`); failed messages are listed in ``failed`` (undone, asked again on
        the next run) and the caller raises `jobs.notify.Undelivered` for them.
    """
    result = VerificationRun()
    rows = await asyncio.to_thread(store.page_verifications)
    asks, reminders = plan(documents, rows, settings, now=now)
    result.due = len(asks) + len(reminders)
    await asyncio.to_thread(_file_archive_proposals, store, settings, documents, rows, now, result)
    if not asks and not reminders:
        return result
    if notifier is None or not hasattr(notifier, "post_verification"):
        log.warning("verification.deferred", due=result.due, reason="no Slack client (SLACK_BOT_TOKEN unset)")
        return result
    doc_ids = [a[0] for a in asks] + [r[0] for r in reminders]
    signals = await asyncio.to_thread(gather_signals, store, config, doc_ids, now=now)
    for doc_id, owner, interval, due in asks:
        if not owner:
            result.no_owner.append(doc_id)
            continue
        await _ask(store, notifier, documents[doc_id], rows.get(doc_id), owner, interval, due, signals[doc_id],
                   now, result)
    intervals = source_intervals(settings)
    for doc_id, row in reminders:
        doc = documents[doc_id]
        await _remind(store, notifier, doc, row, interval_of(doc, intervals), signals[doc_id], now, result)
    if result.no_owner:
        log.warning("verification.no_owner", pages=result.no_owner[:20], count=len(result.no_owner),
                    fix="name an owner in the page's front matter (owner: U…/S…) or the source's owner")
    log.info("verification.run", due=result.due, asked=len(result.asked), reminded=len(result.reminded),
             failed=len(result.failed), archive_proposals=result.archive_proposals)
    return result


async def _ask(store, notifier, doc: dict, previous: dict | None, owner: str, interval: int, due: datetime,
               signals: PageSignals, now: datetime, result: VerificationRun) -> None:
    """Claim the ask, send it, undo the claim when no message got through."""
    doc_id = doc["doc_id"]
    if not await asyncio.to_thread(store.claim_verification_ask, doc_id, owner, due_at=due, now=now):
        log.info("verification.asked_elsewhere", doc_id=doc_id)  # another run or replica asked first
        return
    asked_at = utc_iso(now, field="now")
    ask = _message_of(doc, owner, interval, due, asked_at, signals, reminder=False)
    deliveries = await notifier.post_verification(owner, ask)
    if deliveries and any(d.ok for d in deliveries):
        result.asked.append(doc_id)
        log.info("verification.asked", doc_id=doc_id, owner=owner, due_at=due.isoformat())
        await _keep_messages(store, doc_id, asked_at, deliveries)
    else:
        await asyncio.to_thread(store.release_verification_ask, doc_id, asked_at=asked_at, previous=previous)
        result.failed.append(doc_id)


async def _remind(store, notifier, doc: dict, row: dict, interval: int, signals: PageSignals, now: datetime,
                  result: VerificationRun) -> None:
    """Claim the one reminder of ``row``'s ask, send it, undo the claim when no message got through."""
    doc_id = doc["doc_id"]
    if not await asyncio.to_thread(store.claim_verification_reminder, doc_id, asked_at=row["asked_at"], now=now):
        return
    due = due_at(doc, row, interval) or now
    ask = _message_of(doc, row["owner"], interval, due, row["asked_at"], signals, reminder=True)
    deliveries = await notifier.post_verification(row["owner"], ask)
    if deliveries and any(d.ok for d in deliveries):
        result.reminded.append(doc_id)
        log.info("verification.reminded", doc_id=doc_id, owner=row["owner"])
        await _keep_messages(store, doc_id, row["asked_at"], deliveries)
    else:
        await asyncio.to_thread(store.release_verification_reminder, doc_id, asked_at=row["asked_at"])
        result.failed.append(doc_id)


async def _keep_messages(store, doc_id: str, asked_at: str, deliveries: list) -> None:
    """Store where the ask's messages went (`FeedbackStore.record_verification_messages`), so the first answer
    updates every group member's copy. A failure is logged, never raised: the messages were sent, and without
    the record only the clicked copy changes."""
    posted = [(d.posted_in or d.channel, d.ts) for d in deliveries if d.ok and d.ts]
    if not posted:
        return
    try:
        await asyncio.to_thread(store.record_verification_messages, doc_id, asked_at=asked_at, posted=posted)
    except Exception:
        log.exception("verification.messages_not_kept", doc_id=doc_id)


def _message_of(doc: dict, owner: str, interval: int, due: datetime, asked_at: str, signals: PageSignals, *,
                reminder: bool) -> VerificationAsk:
    return VerificationAsk(doc["doc_id"], doc.get("title") or doc["doc_id"], doc.get("url", ""), owner, interval,
                           due, asked_at, reminder, signals, str(doc.get("language") or "en"))


def _file_archive_proposals(store, settings, documents: dict[str, dict], rows: dict[str, dict], now: datetime,
                            result: VerificationRun) -> None:
    since, until = window(now, settings.verification.archive_after_days)
    with snapshot(store) as conn:
        cited = windows.citations_per_document(conn, since, until)
    candidates = archive_candidates(documents, rows, settings, cited, now=now)
    result.archive_proposals = submit(store, JOB, candidates, now=now)


def needs_update_candidate(doc_id: str, doc: dict, *, by: str) -> Candidate:
    """The review item a "Needs an update" click opens for the page (priority normal)."""
    title = doc.get("title") or doc_id
    return Candidate("verification_needs_update", doc_id, "update_content", 2, 0,
                     f"its owner ({by}) says {title} needs an update",
                     {"collection": doc.get("collection", ""), "url": doc.get("url", ""), "by": by})
