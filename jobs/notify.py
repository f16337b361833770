"""Sending due alerts and digests through a `Notifier`, and turning failed posts into alerts.

`jobs` knows nothing of Slack: ``minerva serve`` hands the runner a notifier (`bot.slack.digests.SlackNotifier`)
that posts and reports each post as a `Delivery`. Here the alert state is read before and written after,
off the event loop. A post that fails (``not_in_channel``, four 429s in a row, …) is recorded as undelivered
(an ``alert_notifications`` row with the error): critical alerts stay due, and digest items are posted again
by the next sweep (`resend_undelivered`, from the ``critical_notifications`` job). It also raises a critical
``slack_delivery_failed`` alert for that channel, posted to the alert channel (never to the failing channel:
when the alert channel itself fails, the log at error level is all that is left); a later successful post
resolves it. While the notifier is paused (a dead token) nothing is posted or recorded: no row per sweep.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

import structlog

from config.alerts import AlertsConfig
from config.errors import MinervaError
from jobs import alerts
from jobs.digest import KINDS, Digest, build_digest
from jobs.findings import Finding

log = structlog.get_logger(__name__)
DELIVERY_ALERT = "slack_delivery_failed"


class Undelivered(MinervaError):
    """Some posts of a job could not be delivered; the message names the channel and Slack's error.
    The runner records the run as failed (never "ok")."""


@dataclass(frozen=True)
class Delivery:
    """The result of one post: ``ts`` of the (main) message, or the Slack ``error`` code; ``fingerprints``
    names the alerts the post carried (for batched alert posts); ``posted_in`` the conversation Slack says it
    posted in: for a post to a user id, the DM's own id (D…), which ``chat.update`` needs (None: not known)."""

    channel: str
    ts: str | None = None
    error: str | None = None
    fingerprints: tuple[str, ...] = ()
    posted_in: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class Notifier(Protocol):
    """Posts alerts and digests somewhere (Slack in production, a fake in tests); never raises.

    Attributes:
        paused: the fatal error (e.g. ``token_revoked``) after which the notifier posts nothing; None while
            posting works.
    """

    paused: str | None

    async def post_alerts(self, channel: str, notices: list[alerts.Notice]) -> list[Delivery]:
        """Post due alerts (batched as the notifier sees fit); one delivery per message, naming its alerts.
        Stops after the first failed message."""
        ...

    async def post_digest(self, channel: str, digest: Digest, chart_png: bytes | None = None) -> list[Delivery]:
        """Post a digest; one delivery per message (main first), each naming the alerts it carried."""
        ...

    async def post_reply(self, channel: str, thread_ts: str | None, text: str, blocks: list[dict]) -> Delivery:
        """Post an answer that could not be posted before, in its thread."""
        ...


async def notify_now(store, config: AlertsConfig, notifier: Notifier | None, *, now: datetime) -> list[Delivery]:
    """Post every alert due on the "now" route (critical) to the alert channel, batched into few messages.

    Returns:
        One delivery per message; [] when nothing was due, no channel is configured, or there is no
        notifier (e.g. ``minerva jobs run`` without SLACK_BOT_TOKEN): the alerts stay due for the next sweep,
        as do those of a failed post. While the notifier is paused, one failed delivery, and nothing recorded.
    """
    notices = await asyncio.to_thread(alerts.due_notices, store, config, route="now", now=now)
    channel = config.routing.alert_channel
    if not notices or not _can_post(notifier, channel, "alert_channel", len(notices)):
        return []
    if notifier.paused:
        return [_paused(notifier, channel, notices)]
    notices = _routable(notices, channel)
    if not notices:
        return []
    deliveries = await notifier.post_alerts(channel, notices)
    by_fingerprint = {n.alert.fingerprint: n for n in notices}
    for delivery in deliveries:
        carried = [by_fingerprint[fp] for fp in delivery.fingerprints if fp in by_fingerprint]
        await asyncio.to_thread(alerts.record_delivery, store, carried, channel=channel, ts=delivery.ts,
                                error=delivery.error, now=now)
    if not notifier.paused:  # a dead token is said once, by the notifier
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
    return await _post_digest(store, config, notifier, channel, digest, chart_png, now=now)


async def resend_undelivered(store, config: AlertsConfig, notifier: Notifier | None, *, now: datetime) -> list[Delivery]:
    """Post again, to their digest channel, the digest items whose last post failed (see `alerts.undelivered`),
    unless the route's posts failed several times in a row and its back-off has not passed (`alerts.resend_wait`).

    Returns:
        One delivery per digest kind that had items to resend ([] when none had, or nothing could be posted).
    """
    deliveries = []
    for kind, (route, _) in KINDS.items():
        fingerprints = await asyncio.to_thread(alerts.undelivered, store, route=route)
        if not fingerprints:
            continue
        wait = await asyncio.to_thread(alerts.resend_wait, store, route=route, now=now)
        if wait > timedelta(0):  # the channel refused posts several times in a row: back off
            log.info("digest.resend_backoff", kind=kind, items=len(fingerprints), wait_seconds=int(wait.total_seconds()))
            continue
        digest = (await asyncio.to_thread(build_digest, store, config, kind=kind, now=now)).only(fingerprints)
        channel = config.routing.daily_digest_channel if kind == "daily" else config.routing.weekly_digest_channel
        if digest.empty or not _can_post(notifier, channel, f"{kind}_digest_channel", len(digest.notices)):
            continue
        log.info("digest.resending", kind=kind, items=len(digest.notices), channel=channel)
        deliveries.append(await _post_digest(store, config, notifier, channel, digest, None, now=now))
    return deliveries


#: Tries of an answer's Slack reply in all (the first one included) before it is given up and alerted on.
REPLY_TRIES = 4


async def resend_replies(store, config: AlertsConfig, notifier: Notifier | None, *, now: datetime) -> list[Delivery]:
    """Post again the answers Slack did not take when they were asked (`feedback.replies`), in their threads.

    A reply that fails `REPLY_TRIES` times in all is given up: its answer stays ``delivered`` False and a
    ``slack_delivery_failed`` alert is raised for its channel (posted to the alert channel at once).

    Returns:
        One delivery per reply posted or given up (a try that will be repeated is not one); [] when none is
        due or nothing can post (no notifier, or paused).
    """
    if notifier is None or notifier.paused:
        return []
    deliveries = []
    for reply in await asyncio.to_thread(store.due_replies, now):
        delivery = await notifier.post_reply(reply["channel"], reply["thread_ts"], reply["text"], reply["blocks"])
        if delivery.ok:
            await asyncio.to_thread(store.reply_delivered, reply["answer_id"])
            log.info("reply.resent", answer_id=reply["answer_id"], channel=reply["channel"], tries=reply["attempts"] + 1)
            deliveries.append(delivery)  # clears the channel's delivery alert, if one was raised
            continue
        last = await asyncio.to_thread(store.reply_failed_again, reply["answer_id"], error=delivery.error, now=now,
                                       give_up_after=REPLY_TRIES)
        if last:
            log.error("reply.given_up", answer_id=reply["answer_id"], channel=reply["channel"], error=delivery.error)
            deliveries.append(delivery)
    if deliveries:
        await asyncio.to_thread(record_delivery_health, store, config, deliveries, now=now)
    return deliveries


async def _post_digest(store, config: AlertsConfig, notifier: Notifier, channel: str, digest: Digest,
                       chart_png: bytes | None, *, now: datetime) -> Delivery:
    """Post ``digest`` and record each item as delivered (with the main message's ts) or not (with the error).

    Returns:
        The digest's delivery: the main message's ``ts`` (None when it failed) and the first error, if any.
    """
    if notifier.paused:
        return _paused(notifier, channel, digest.notices)
    deliveries = await notifier.post_digest(channel, digest, chart_png)
    main, error = deliveries[0], next((d.error for d in deliveries if not d.ok), None)
    delivered = {fp for d in deliveries if d.ok for fp in d.fingerprints}
    sent = [n for n in digest.notices if n.alert.fingerprint in delivered]
    failed = [n for n in digest.notices if n.alert.fingerprint not in delivered]
    await asyncio.to_thread(alerts.record_delivery, store, sent, channel=channel, ts=main.ts, now=now)
    if failed:
        await asyncio.to_thread(alerts.record_delivery, store, failed, channel=channel, ts=None,
                                error=error or "undelivered", now=now)
    if not notifier.paused:  # a dead token is said once, by the notifier; no alert rows per sweep
        await asyncio.to_thread(record_delivery_health, store, config, deliveries, now=now)
    return Delivery(channel, ts=main.ts, error=error, fingerprints=tuple(sorted(delivered)))


def record_delivery_health(store, config: AlertsConfig, deliveries: list[Delivery], *, now: datetime) -> None:
    """Raise (or clear) a ``slack_delivery_failed`` alert per channel from these deliveries."""
    by_channel: dict[str, list[Delivery]] = {}
    for delivery in deliveries:
        by_channel.setdefault(delivery.channel, []).append(delivery)
    for channel, posted in by_channel.items():
        failed = [d for d in posted if not d.ok]
        # Critical: posted at once to the alert channel, not in a digest that may be the very post failing.
        findings = [Finding(
            alert=DELIVERY_ALERT, severity="critical", labels={"channel": channel}, value=len(failed), threshold=0,
            n=len(posted), summary=f"Slack refused posts to {channel}: {failed[-1].error}. {_fix_for(failed[-1].error)}",
        )] if failed else []
        alerts.evaluate(store, config, f"slack:{channel}", findings, now=now)


def _routable(notices: list[alerts.Notice], channel: str) -> list[alerts.Notice]:
    """``notices`` without the delivery failures of ``channel`` itself: posting those there cannot work, so
    the error-level log lines of the failed posts are their only route."""
    kept = [n for n in notices if not (n.alert.alert == DELIVERY_ALERT and n.alert.labels.get("channel") == channel)]
    if len(kept) < len(notices):
        log.error("alerts.delivery_alert_unroutable", channel=channel,
                  fix="the alert channel itself refuses posts: see the slack.post_failed lines for the fix")
    return kept


def _paused(notifier: Notifier, channel: str, notices: list[alerts.Notice]) -> Delivery:
    """A failed delivery for a paused notifier; nothing posted, nothing recorded (the cause was logged once)."""
    log.warning("alerts.posting_paused", channel=channel, pending=len(notices), error=notifier.paused)
    return Delivery(channel, error=notifier.paused, fingerprints=tuple(n.alert.fingerprint for n in notices))


def failures_of(deliveries: list[Delivery | None]) -> str | None:
    """One line naming the failed deliveries' channels and errors, e.g. ``"CDAILY: ratelimited"``; None if all
    were delivered."""
    failed = sorted({f"{d.channel}: {d.error}" for d in deliveries if d is not None and not d.ok})
    return "; ".join(failed) or None


#: The main config's key that fills each routing channel when alerts.yaml leaves it empty
#: (`config.alerts.alerts_config_for`): what a team edits, not the bundled alerts.yaml.
_MAIN_SETTING = {"alert_channel": "alert_channel", "daily_digest_channel": "digest_channel",
                 "weekly_digest_channel": "digest_channel"}


def _can_post(notifier: Notifier | None, channel: str, setting: str, count: int) -> bool:
    if not channel:
        log.error("alerts.no_channel", setting=setting, pending=count,
                  fix=f"set slack.{_MAIN_SETTING[setting]} in your Minerva config (a channel id such as "
                      f"C0123456789), or routing.{setting} in an alerts.yaml beside it")
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
