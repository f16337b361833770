"""Alerts from findings, Alertmanager-style: fingerprints, pending → firing → resolved with hysteresis,
routing by severity, and the bookkeeping that makes one problem page once (notes/monitoring.md).

A signal job returns `Finding`s; `evaluate` turns one job's findings into alert state::

    result = evaluate(store, cfg, "bad_docs", findings, now=now)   # one transaction
    notices = due_notices(store, cfg, route="now", now=now)        # critical, not yet (re)notified
    ... post them ...
    record_delivery(store, notices, channel="C0ALERTS", ts=ts, now=now)   # or error="not_in_channel"

Every alert a job raised before and does not raise now gets a *good* evaluation from that job; a finding
is a *bad* one. An alert fires after ``fire_after`` bad evaluations in a row and resolves after
``resolve_after`` good ones (`config.alerts.RuleConfig`). Routing: critical → "now" (the alert channel),
warning → "daily" digest, info → "weekly" digest. On the "now" route an alert is posted when it starts
firing, when it escalates to critical, and again after ``repeat_interval_hours``, never twice within
``cooldown_minutes``; a digest lists every firing alert of its route. Silenced, acknowledged and inhibited
alerts (a running re-index of their collection) are not notified. A critical alert whose rule has
``kill_switch`` disables its collection from search when it starts firing (`jobs.killswitch`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from config.alerts import AlertsConfig
from feedback import alerting as alert_store
from feedback.alerting import AlertingError, AmbiguousFingerprint, UnknownAlert
from jobs import inhibition, killswitch, silences
from jobs.findings import Finding

__all__ = [
    "ROUTES", "STATES", "Alert", "AlertStatus", "AlertingError", "AmbiguousFingerprint", "Evaluation", "Notice",
    "Transition", "UnknownAlert", "acknowledge", "collection_of", "due_notices", "evaluate", "fingerprint",
    "firing_counts", "get_alert", "list_alerts", "record_delivery", "resolve_fingerprint", "undelivered",
]

STATES = ("pending", "firing", "resolved")
#: Severity → route. Critical is posted at once; the others wait for their digest (DESIGN.md "Alerts").
ROUTES = {"critical": "now", "warning": "daily", "info": "weekly"}
_RANK = {"info": 0, "warning": 1, "critical": 2}


def fingerprint(alert: str, labels: dict[str, Any]) -> str:
    """The identity of an alert: 16 hex digits of SHA-256 over its name and sorted labels.

    Values are compared as text, so ``{"n": 1}`` and ``{"n": "1"}`` are the same alert. Volatile values
    (the measured rate, counts) belong in annotations, never in labels.
    """
    canonical = json.dumps([alert, sorted((str(k), str(v)) for k, v in labels.items())],
                           ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def collection_of(labels: dict[str, Any]) -> str | None:
    """The collection an alert is about: its ``collection`` label, else the prefix of its ``doc_id``
    (doc ids are ``"{collection}:{path}"``), else None."""
    if labels.get("collection"):
        return str(labels["collection"])
    doc_id = str(labels.get("doc_id") or "")
    return doc_id.split(":", 1)[0] if ":" in doc_id else None


@dataclass(frozen=True)
class Alert:
    """One row of the ``alerts`` table (`feedback.schema.alerts`, read through `feedback.alerting`).

    Times are aware UTC datetimes or None; ``labels`` and ``annotations`` are decoded dicts.
    """

    fingerprint: str
    alert: str
    severity: str
    labels: dict[str, str]
    source: str
    state: str
    bad_streak: int
    good_streak: int
    value: float | None
    threshold: float | None
    n: int | None
    summary: str
    link: str
    annotations: dict[str, Any]
    first_seen_at: datetime
    started_at: datetime | None
    resolved_at: datetime | None
    last_evaluated_at: datetime
    last_notified_at: datetime | None
    notified_severity: str | None
    notify_count: int
    acked_at: datetime | None
    acked_by: str | None

    @property
    def collection(self) -> str | None:
        """See `collection_of`."""
        return collection_of(self.labels)

    @property
    def route(self) -> str:
        """"now", "daily" or "weekly" (see `ROUTES`)."""
        return ROUTES[self.severity]

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Alert:
        """From a decoded row of `feedback.alerting` (times as datetimes, JSON columns as dicts)."""
        return cls(**{name: row[name] for name in alert_store.ALERT_COLUMNS})


@dataclass(frozen=True)
class Transition:
    """An alert's state changed in an evaluation (``before`` is None for a new alert)."""

    fingerprint: str
    alert: str
    before: str | None
    after: str


@dataclass(frozen=True)
class Evaluation:
    """What `evaluate` did: state changes, the collections its critical alerts disabled and the documents they
    quarantined (both announced as ``kill_switch_engaged`` alerts)."""

    transitions: list[Transition]
    disabled_collections: list[str]
    quarantined_documents: list[str] = ()

    def entered(self, state: str) -> list[str]:
        """Fingerprints that moved into ``state``."""
        return [t.fingerprint for t in self.transitions if t.after == state and t.before != state]


@dataclass(frozen=True)
class Notice:
    """An alert due for a notification on its route.

    Attributes:
        alert: the alert as stored.
        kind: "firing" (first in this episode), "escalated" (became critical), "reminder" (repeat
            interval passed) or "digest".
        route: "now", "daily" or "weekly".
    """

    alert: Alert
    kind: str
    route: str


@dataclass(frozen=True)
class AlertStatus:
    """An alert with what currently holds its notifications back (for listings)."""

    alert: Alert
    silenced_until: datetime | None
    inhibited: bool


def evaluate(store, config: AlertsConfig, source: str, findings: list[Finding], *, now: datetime) -> Evaluation:
    """Apply one run of ``source`` to the alert table, in one transaction.

    Args:
        store: the `feedback.FeedbackStore` holding the alert tables.
        config: rules (hysteresis, severity override, kill switch).
        source: what produced ``findings``, e.g. the signal job's name; every unresolved alert previously
            raised by ``source`` and absent from ``findings`` gets a good evaluation.
        findings: this run's findings (several with one fingerprint count once; the last one's values win).
        now: evaluation time, aware.

    Returns:
        The state transitions, and the collections disabled by the kill switch.

    Raises:
        StoreUnavailable: the database failed; nothing was changed.
    """
    bad = {fingerprint(f.alert, f.labels): f for f in findings}
    transitions: list[Transition] = []
    disabled: list[str] = []
    quarantined: list[str] = []
    with store.transaction() as conn:
        alert_store.lock_alert_state(conn)  # no button click or other replica writes between read and save
        current = {r["fingerprint"]: r for r in alert_store.unresolved_alerts(conn, source=source)}
        current.update(alert_store.alerts_by_fingerprint(conn, bad))
        for fp, finding in bad.items():
            before = current.get(fp)
            row = _bad_evaluation(before, fp, finding, source, config, now)
            alert_store.save_alert(conn, row)
            _note_transition(conn, before, row, now, transitions)
            if _kill_switch_due(before, row, config):
                announced = _kill_switch(conn, fp, finding, row, config, now, disabled, quarantined)
                for notice in announced:
                    nfp = fingerprint(notice.alert, notice.labels)
                    nbefore = current.get(nfp) or alert_store.fetch_alert(conn, nfp)
                    nrow = _bad_evaluation(nbefore, nfp, notice, f"killswitch:{nfp}", config, now)
                    alert_store.save_alert(conn, nrow)
                    _note_transition(conn, nbefore, nrow, now, transitions)
        for fp, before in current.items():
            if fp in bad or before["source"] != source or before["state"] == "resolved":
                continue
            row = _good_evaluation(before, config, now)
            alert_store.save_alert(conn, row)
            _note_transition(conn, before, row, now, transitions)
    return Evaluation(transitions, disabled, quarantined)


def announce(store, config: AlertsConfig, finding: Finding, *, now: datetime) -> Evaluation:
    """Raise a `killswitch.announcement` finding (a manual disable or quarantine) so it reaches the alert
    channel; its source is ``killswitch:<fingerprint>``, and `resolve_announcement` resolves it."""
    return evaluate(store, config, f"killswitch:{fingerprint(finding.alert, finding.labels)}", [finding], now=now)


def resolve_announcement(store, config: AlertsConfig, labels: dict[str, str], *, now: datetime) -> None:
    """Resolve the ``kill_switch_engaged`` alert of ``labels`` (the subject was put back into search)."""
    fp = fingerprint("kill_switch_engaged", labels)
    for _ in range(config.rule("kill_switch_engaged").resolve_after):
        evaluate(store, config, f"killswitch:{fp}", [], now=now)


def resolve_gone_documents(store, config: AlertsConfig, documents: dict[str, dict] | None, *,
                           now: datetime) -> list[Transition]:
    """Resolve at once every unresolved alert about a document that no longer answers anything (issue 11 item 4).

    An alert with a ``doc_id`` label whose document is archived, deprecated or gone from the index is resolved
    now (not after ``resolve_after`` quiet runs), and says why: its summary ends with "resolved: document
    archived (newer version: …)" or "resolved: document deleted", the same reason is in its annotations
    (``resolved_because``) and in a "resolved" event. Alerts of quarantined documents' announcements are
    treated alike. Nothing happens without an index (``documents`` None or empty).

    Returns:
        The transitions made (one "resolved" per alert).
    """
    if not documents:
        return []
    from jobs.signals.bad_docs import newer_version  # the signal module imports this one's neighbours

    at = now
    transitions: list[Transition] = []
    with store.transaction() as conn:
        alert_store.lock_alert_state(conn)
        for before in alert_store.unresolved_alerts(conn):
            doc_id = str(before["labels"].get("doc_id") or "")
            if not doc_id:
                continue
            doc = documents.get(doc_id)
            if doc is not None and doc.get("stage", "active") == "active":
                continue
            if doc is None:
                reason = "document deleted"
            else:
                newer = newer_version(doc_id, documents)
                reason = f"document {doc.get('stage')}" + (f" (newer version: {newer})" if newer else "")
            annotations = {**before["annotations"], "resolved_because": reason}
            row = dict(before, state="resolved", resolved_at=at if before["state"] == "firing" else before["resolved_at"],
                       bad_streak=0, good_streak=before["good_streak"] + 1, last_evaluated_at=at,
                       summary=f"{before['summary']} — resolved: {reason}", annotations=annotations)
            alert_store.save_alert(conn, row)
            _note_transition(conn, before, row, at, transitions)
            alert_store.log_event(conn, row["fingerprint"], at, "resolved_because", {"reason": reason, "doc_id": doc_id})
    return transitions


def _kill_switch(conn, fp: str, finding: Finding, row: dict, config: AlertsConfig, now: datetime,
                 disabled: list[str], quarantined: list[str]) -> list[Finding]:
    """Act on a critical alert whose rule has ``kill_switch``; returns the announcements to raise.

    Scope "documents": quarantine the finding's ``documents`` annotation (else its ``doc_id`` label), one
    announcement per document. Scope "collection": disable the collection (a signal users cannot cause).
    """
    at = now
    why = f"{row['alert']}: {row['summary']}"
    if config.rule(row["alert"]).kill_switch_scope == "collection":
        collection = collection_of(finding.labels)
        if collection is None:
            alert_store.log_event(conn, fp, at, "kill_switch_skipped", {"reason": "no collection or doc_id label"})
            return []
        if not killswitch.disable_in(conn, collection, reason=why, fingerprint=fp, changed_by="alert", now=now):
            return []
        disabled.append(collection)
        return [killswitch.announcement(what=f"collection {collection}", subject={"collection": collection}, why=why,
                                        command=killswitch.enable_command(collection), by="alert")]
    documents = [str(d) for d in (finding.annotations.get("documents") or [])]
    if not documents and finding.labels.get("doc_id"):
        documents = [str(finding.labels["doc_id"])]
    if not documents:
        alert_store.log_event(conn, fp, at, "kill_switch_skipped", {
            "reason": "no documents named; a collection is never disabled by a signal users can cause"})
        return []
    notices = []
    for doc_id in documents:
        if killswitch.quarantine_in(conn, doc_id, reason=why, fingerprint=fp, changed_by="alert", now=now):
            quarantined.append(doc_id)
            notices.append(killswitch.announcement(what=f"document {doc_id}", subject={"doc_id": doc_id}, why=why,
                                                   command=killswitch.release_command(doc_id), by="alert"))
    alert_store.log_event(conn, fp, at, "kill_switch_quarantined", {"documents": quarantined})
    return notices


def due_notices(store, config: AlertsConfig, *, route: str, now: datetime) -> list[Notice]:
    """Firing alerts of ``route`` that should be notified now, most severe and oldest first.

    On the "now" route, see the module docstring (first firing, escalation, repeat interval, cooldown);
    on "daily"/"weekly" every firing alert of that route is listed (kind "digest"). Silenced, acknowledged
    and inhibited alerts are left out.

    Raises:
        ValueError: unknown route.
    """
    if route not in ROUTES.values():
        raise ValueError(f"route must be one of {sorted(set(ROUTES.values()))}, not {route!r}")
    statuses = list_alerts(store, config, states=("firing",), now=now)
    notices = []
    for status in statuses:
        alert = status.alert
        if alert.route != route or status.silenced_until or status.inhibited or alert.acked_at:
            continue
        kind = "digest" if route != "now" else _now_kind(alert, config, now)
        if kind:
            notices.append(Notice(alert, kind, route))
    return notices


def record_delivery(store, notices: list[Notice], *, channel: str, ts: str | None, now: datetime,
                    error: str | None = None) -> None:
    """Log a Slack post of ``notices``; a successful one (``error`` None) marks them notified.

    Raises:
        StoreUnavailable: the database failed.
    """
    with store.transaction() as conn:
        for notice in notices:
            alert_store.record_notification(conn, notice.alert.fingerprint, kind=notice.kind, route=notice.route,
                                            channel=channel, ts=ts, at=now, error=error)


def undelivered(store, *, route: str) -> list[str]:
    """Fingerprints of firing alerts whose last post on ``route`` failed (``record_delivery`` with an error),
    oldest first: the items a sweep posts again.

    Raises:
        StoreUnavailable: the database failed.
    """
    with store.snapshot() as conn:
        return alert_store.failed_deliveries(conn, route=route)


#: The wait before posting again to a route whose posts failed ``n`` times in a row: none after one failure (the
#: next sweep), then 5 minutes doubling with each failure, at most 6 hours — a channel that refuses posts
#: (archived, bot removed) is not hit on every sweep, and one that recovers is back within the cap.
RESEND_FIRST_WAIT = timedelta(minutes=5)
RESEND_MAX_WAIT = timedelta(hours=6)


def resend_wait(store, *, route: str, now: datetime) -> timedelta:
    """How long to wait before posting the undelivered items of ``route`` again (`RESEND_FIRST_WAIT`,
    `RESEND_MAX_WAIT`); zero when they may go now.

    Raises:
        StoreUnavailable: the database failed.
    """
    with store.snapshot() as conn:
        streak, last = alert_store.failure_streak(conn, route=route)
    if streak <= 1 or last is None:
        return timedelta(0)
    wait = min(RESEND_FIRST_WAIT * 2 ** (streak - 2), RESEND_MAX_WAIT)
    return max(timedelta(0), last + wait - now)


def acknowledge(store, fingerprint_or_prefix: str, *, by: str, now: datetime) -> Alert:
    """Acknowledge an alert: no reminders until it resolves (a new episode notifies again).

    Returns:
        The alert after the change; acknowledging twice keeps the first time and person.

    Raises:
        UnknownAlert, AmbiguousFingerprint: see `resolve_fingerprint`.
    """
    with store.transaction() as conn:
        fp = alert_store.resolve_fingerprint(conn, fingerprint_or_prefix)
        alert_store.acknowledge(conn, fp, by=by, at=now)
        return Alert.from_row(alert_store.fetch_alert(conn, fp))


def get_alert(store, fingerprint_or_prefix: str) -> Alert:
    """The alert with this fingerprint (or unique prefix of at least 4 characters).

    Raises:
        UnknownAlert, AmbiguousFingerprint: see `resolve_fingerprint`.
    """
    with store.snapshot() as conn:
        fp = alert_store.resolve_fingerprint(conn, fingerprint_or_prefix)
        return Alert.from_row(alert_store.fetch_alert(conn, fp))


def resolve_fingerprint(store, fingerprint_or_prefix: str) -> str:
    """The full fingerprint for an exact one or a unique prefix (>= 4 characters), as ``git`` does.

    Raises:
        UnknownAlert: nothing matches.
        AmbiguousFingerprint: the prefix matches several alerts.
    """
    with store.snapshot() as conn:
        return alert_store.resolve_fingerprint(conn, fingerprint_or_prefix)


def list_alerts(store, config: AlertsConfig, *, states: tuple[str, ...] = ("pending", "firing"),
                now: datetime) -> list[AlertStatus]:
    """Alerts in ``states``, most severe first, then oldest; with their silence and inhibition."""
    with store.snapshot() as conn:
        found = [Alert.from_row(r) for r in alert_store.alerts_in_states(conn, states)]
        silenced = silences.active_in(conn, now)
        reindexing = inhibition.reindexing_in(conn, now, max_age=timedelta(hours=config.reindex_mark_max_hours))
    found.sort(key=lambda a: (-_RANK[a.severity], a.started_at or a.first_seen_at, a.alert, a.fingerprint))
    return [AlertStatus(a, silenced.get(a.fingerprint), _inhibited(a, config, reindexing)) for a in found]


def _inhibited(alert: Alert, config: AlertsConfig, reindexing: set[str]) -> bool:
    """Muted by a running re-index: of its collection, or of any collection when the alert has none (a global
    figure such as citation health moves while any collection is re-indexed)."""
    if not reindexing or not config.rule(alert.alert).muted_during_reindex:
        return False
    return alert.collection is None or alert.collection in reindexing


def firing_counts(store) -> dict[str, int]:
    """Firing alerts per severity, e.g. ``{"critical": 1, "warning": 4, "info": 0}``."""
    with store.snapshot() as conn:
        counted = alert_store.firing_counts(conn)
    return {severity: counted.get(severity, 0) for severity in ROUTES}


# --- the state machine ---------------------------------------------------------------------------------


def _bad_evaluation(before: dict | None, fp: str, f: Finding, source: str, config: AlertsConfig, at: datetime) -> dict:
    rule = config.rule(f.alert)
    state = before["state"] if before else None
    streak = (before["bad_streak"] if state in ("pending", "firing") else 0) + 1
    row = dict(before) if before else {
        "fingerprint": fp, "first_seen_at": at, "started_at": None, "resolved_at": None, "last_notified_at": None,
        "notified_severity": None, "notify_count": 0, "acked_at": None, "acked_by": None,
    }
    row.update({
        "alert": f.alert, "severity": rule.severity or f.severity, "labels": {str(k): str(v) for k, v in f.labels.items()},
        "source": source, "bad_streak": streak, "good_streak": 0, "value": _number(f.value), "threshold": _number(f.threshold),
        "n": int(f.n), "summary": f.summary, "link": f.link, "annotations": dict(f.annotations), "last_evaluated_at": at,
    })
    if state == "firing":
        row["state"] = "firing"
    elif streak >= rule.fire_after:
        row.update(state="firing", started_at=at, resolved_at=None, notify_count=0, acked_at=None, acked_by=None)
    else:
        row["state"] = "pending"
    return row


def _good_evaluation(before: dict, config: AlertsConfig, at: datetime) -> dict:
    rule = config.rule(before["alert"])
    row = dict(before, good_streak=before["good_streak"] + 1, bad_streak=0, last_evaluated_at=at)
    if before["state"] == "pending" or row["good_streak"] >= rule.resolve_after:
        row.update(state="resolved", resolved_at=at if before["state"] == "firing" else before["resolved_at"])
    return row


def _now_kind(alert: Alert, config: AlertsConfig, now: datetime) -> str | None:
    rule = config.rule(alert.alert)
    last = alert.last_notified_at
    if last is None or (alert.started_at and last < alert.started_at):
        cooling = last is not None and now - last < timedelta(minutes=rule.cooldown_minutes)
        return None if cooling else "firing"
    if _RANK[alert.severity] > _RANK.get(alert.notified_severity or "info", 0):
        return "escalated"
    return "reminder" if now - last >= timedelta(hours=rule.repeat_interval_hours) else None


def _kill_switch_due(before: dict | None, row: dict, config: AlertsConfig) -> bool:
    if row["state"] != "firing" or row["severity"] != "critical" or not config.rule(row["alert"]).kill_switch:
        return False
    was_critical_firing = before is not None and before["state"] == "firing" and before["severity"] == "critical"
    return not was_critical_firing


def _note_transition(conn, before: dict | None, row: dict, at: datetime, transitions: list[Transition]) -> None:
    was = before["state"] if before else None
    if was == row["state"]:
        return
    transitions.append(Transition(row["fingerprint"], row["alert"], was, row["state"]))
    alert_store.log_event(conn, row["fingerprint"], at, row["state"],
                          {"from": was, "value": row["value"], "severity": row["severity"]})


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number and abs(number) != float("inf") else None
