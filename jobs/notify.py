"""Sending due alerts and digests through a `Notifier`, and turning failed posts into alerts.

`jobs` knows nothing of Slack: ``minerva serve`` hands the runner a notifier (`bot.digests.SlackNotifier`)
that posts and reports each post as a `Delivery`. Here the alert state is read before and written after,
off the event loop. A post that fails (``not_in_channel``, …) leaves its alerts un-notified, so the next
sweep tries again, and raises a ``slack_delivery_failed`` alert for that channel; a later successful post
resolves it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import structlog

from config.alerts import AlertsConfig
from jobs import alerts
from jobs.digest import Digest, build_digest
from jobs.findings import Finding

log = structlog.get_logger(__name__)
DELIVERY_ALERT = "slack_delivery_failed"


@dataclass(frozen=True)
class Delivery:
    """The result of one post: ``ts`` of the (main) message, or the Slack ``error`` code; ``fingerprints``
    names the alerts the post carried (for batched alert posts)."""

    channel: str
    ts: str | None = None
    error: str | None = None
    fingerprints: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None


class Notifier(Protocol):
    """Posts alerts and digests somewhere (Slack in production, a fake in tests); never raises."""

    async def post_alerts(self, channel: str, notices: list[alerts.Notice]) -> list[Delivery]:
        """Post due alerts (batched as the notifier sees fit); one delivery per message, naming its alerts.
        Stops after the first failed message."""
        ...

    async def post_digest(self, channel: str, digest: Digest, chart_png: bytes | None = None) -> Delivery: ...


async def notify_now(store, config: AlertsConfig, notifier: Notifier | None, *, now: datetime) -> list[Delivery]:
    """Post every alert due on the "now" route (critical) to the alert channel, batched into few messages.

    Returns:
        One delivery per message; [] when nothing was due, no channel is configured, or there is no
        notifier (e.g. ``minerva jobs run`` without SLACK_BOT_TOKEN): the alerts stay due for the next sweep,
        as do those of a failed post.
    """
    notices = await asyncio.to_thread(alerts.due_notices, store, config, route="now", now=now)
    channel = config.routing.alert_channel
    if not notices or not _can_post(notifier, channel, "alert_channel", len(notices)):
        return []
    deliveries = await notifier.post_alerts(channel, notices)
    by_fingerprint = {n.alert.fingerprint: n for n in notices}
    for delivery in deliveries:
        carried = [by_fingerprint[fp] for fp in delivery.fingerprints if fp in by_fingerprint]
        await asyncio.to_thread(alerts.record_delivery, store, carried, channel=channel, ts=delivery.ts,
                                error=delivery.error, now=now)
    await asyncio.to_thread(record_delivery_health, store, config, deliveries, now=now)
    return deliveries


async def send_digest(store, config: AlertsConfig, notifier: Notifier | None, *, kind: str, now: datetime,
                      chart_png: bytes | None = None, post_when_empty: bool = False) -> Delivery | None:
    """Build and post the ``kind`` digest ("daily" → daily channel, "weekly" → weekly channel).

    An empty daily digest is not posted (no news is not worth a message); the weekly one is posted when
    ``post_when_empty`` (it carries the quality chart). Returns None when nothing was posted.
    """
    digest = await asyncio.to_thread(build_digest, store, config, kind=kind, now=now)
    channel = config.routing.daily_digest_channel if kind == "daily" else config.routing.weekly_digest_channel
    if digest.empty and not post_when_empty:
        log.info("digest.empty", kind=kind)
        return None
    if not _can_post(notifier, channel, f"{kind}_digest_channel", len(digest.notices)):
        return None
    delivery = await notifier.post_digest(channel, digest, chart_png)
    await asyncio.to_thread(alerts.record_delivery, store, digest.notices, channel=channel, ts=delivery.ts,
                            error=delivery.error, now=now)
    await asyncio.to_thread(record_delivery_health, store, config, [delivery], now=now)
    return delivery


def record_delivery_health(store, config: AlertsConfig, deliveries: list[Delivery], *, now: datetime) -> None:
    """Raise (or clear) a ``slack_delivery_failed`` alert per channel from these deliveries."""
    by_channel: dict[str, list[Delivery]] = {}
    for delivery in deliveries:
        by_channel.setdefault(delivery.channel, []).append(delivery)
    for channel, posted in by_channel.items():
        failed = [d for d in posted if not d.ok]
        findings = [Finding(
            alert=DELIVERY_ALERT, severity="warning", labels={"channel": channel}, value=len(failed), threshold=0,
            n=len(posted), summary=f"Slack refused posts to {channel}: {failed[-1].error}. {_fix_for(failed[-1].error)}",
        )] if failed else []
        alerts.evaluate(store, config, f"slack:{channel}", findings, now=now)


def _can_post(notifier: Notifier | None, channel: str, setting: str, count: int) -> bool:
    if not channel:
        log.error("alerts.no_channel", setting=setting, pending=count,
                  fix=f"set routing.{setting} in config/alerts.yaml (a channel id such as C0123456789)")
        return False
    if notifier is None:
        log.warning("alerts.notifications_deferred", pending=count, reason="no Slack client (SLACK_BOT_TOKEN unset)")
        return False
    return True


def _fix_for(error: str | None) -> str:
    if error in ("not_in_channel", "channel_not_found"):
        return "Invite the bot to the channel (/invite @minerva) or grant it chat:write.public."
    if error in ("invalid_auth", "token_revoked", "account_inactive", "not_authed"):
        return "The bot token is no longer valid: reinstall the app and update SLACK_BOT_TOKEN."
    return "See the bot's log for details."
