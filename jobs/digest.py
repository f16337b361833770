"""What a digest says: firing alerts of one route, grouped by alert type, with counts and thresholds.

Plain data only; `bot.slack.digest_blocks` turns a `Digest` into Block Kit and `bot.slack.digests` posts it. The daily
digest carries warnings, the weekly one info alerts (DESIGN.md "Alerts"); both show the counts of every
severity in their header, so a reader sees the whole picture.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from config.alerts import AlertsConfig
from jobs import alerts
from jobs.page_actions import page_action
from feedback import alerting as alert_store

#: Digest kind → (route, window).
KINDS = {"daily": ("daily", timedelta(days=1)), "weekly": ("weekly", timedelta(days=7))}
#: The oldest unanswered expert requests named in the daily digest (the rest are counted).
WAITING_SHOWN = 3


@dataclass(frozen=True)
class DigestItem:
    """One alert in a digest.

    Attributes:
        fingerprint: the alert's identity; the Ack / Silence buttons carry it.
        value, threshold, n: the last bad measurement (None when the job gave none).
        since: when the alert started firing.
        new: started firing inside the digest's window.
    """

    fingerprint: str
    alert: str
    severity: str
    summary: str
    value: float | None
    threshold: float | None
    n: int | None
    since: datetime
    link: str
    labels: dict[str, str]
    new: bool
    action: str = ""                   # what its button does to ``documents`` (`jobs.page_actions.page_action`)
    documents: tuple[str, ...] = ()

    @classmethod
    def of(cls, a: "alerts.Alert", *, new: bool) -> "DigestItem":
        """The item of alert ``a``; ``new``: it started firing inside the digest's window."""
        action, documents = page_action(a.alert, a.labels, a.annotations or {})
        return cls(a.fingerprint, a.alert, a.severity, a.summary, a.value, a.threshold, a.n,
                   a.started_at or a.first_seen_at, a.link, a.labels, new, action, documents)


@dataclass(frozen=True)
class DigestGroup:
    """The items of one alert type, most observations first."""

    alert: str
    severity: str
    items: list[DigestItem]
    thresholds: list[float]
    fire_after: int
    repeat_interval_hours: float


@dataclass(frozen=True)
class Digest:
    """A digest ready to render.

    Attributes:
        kind: "daily" or "weekly".
        window_start, window_end: the period it covers (aware UTC).
        counts: firing alerts per severity, silenced and acknowledged ones included.
        muted: firing alerts of this route left out (silenced, acknowledged or inhibited).
        resolved: alerts of this route resolved inside the window.
        groups: one per alert type, most severe and largest first.
        notices: the alerts listed, to mark notified once the post succeeded.
    """

    kind: str
    window_start: datetime
    window_end: datetime
    counts: dict[str, int]
    muted: int
    resolved: int
    groups: list[DigestGroup] = field(default_factory=list)
    notices: list[alerts.Notice] = field(default_factory=list)
    #: "Waiting for an expert" (daily only, issue 25): how many reminded requests are still unanswered, and
    #: the oldest few (`feedback.experts` request rows).
    experts_waiting: int = 0
    oldest_waiting: tuple[dict, ...] = ()

    @property
    def empty(self) -> bool:
        """True when no alert of this route is listed and no request waits for an expert."""
        return not self.groups and not self.experts_waiting

    def only(self, fingerprints) -> Digest:
        """This digest with just the items of ``fingerprints`` (to post again what could not be delivered)."""
        keep = set(fingerprints)
        groups = [dataclasses.replace(g, items=[i for i in g.items if i.fingerprint in keep]) for g in self.groups]
        return dataclasses.replace(self, groups=[g for g in groups if g.items],
                                   notices=[n for n in self.notices if n.alert.fingerprint in keep])


def build_digest(store, config: AlertsConfig, *, kind: str, now: datetime) -> Digest:
    """Collect the firing alerts of ``kind``'s route into a `Digest`.

    Args:
        store: the feedback store.
        config: rules (for the footer's thresholds and cadence).
        kind: "daily" (warnings) or "weekly" (info).
        now: aware datetime; the window is the day or week before it.

    Raises:
        ValueError: unknown ``kind``.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {sorted(KINDS)}, not {kind!r}")
    route, span = KINDS[kind]
    start = now - span
    notices = alerts.due_notices(store, config, route=route, now=now)
    firing_of_route = [s for s in alerts.list_alerts(store, config, states=("firing",), now=now) if s.alert.route == route]
    with store.snapshot() as conn:
        resolved = alert_store.resolved_counts(conn, since=start)
    resolved_n = sum(n for severity, n in resolved.items() if alerts.ROUTES[severity] == route)
    by_type: dict[str, list[DigestItem]] = {}
    for notice in notices:
        a = notice.alert
        by_type.setdefault(a.alert, []).append(DigestItem.of(a, new=(a.started_at or a.first_seen_at) >= start))
    groups = []
    for name, items in by_type.items():
        items.sort(key=lambda i: (-(i.n or 0), i.since, i.fingerprint))
        rule = config.rule(name)
        thresholds = sorted({i.threshold for i in items if i.threshold is not None})
        groups.append(DigestGroup(name, items[0].severity, items, thresholds, rule.fire_after, rule.repeat_interval_hours))
    groups.sort(key=lambda g: (g.severity != "critical", g.severity != "warning", -len(g.items), g.alert))
    waiting, oldest = store.waiting_expert_requests(limit=WAITING_SHOWN) if kind == "daily" else (0, [])
    return Digest(kind, start, now, alerts.firing_counts(store), len(firing_of_route) - len(notices), resolved_n,
                  groups, notices, waiting, tuple(oldest))
