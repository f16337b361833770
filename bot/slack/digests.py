"""Posting alerts and digests to Slack with the bot's AsyncWebClient (`jobs.notify.Notifier`).

Posts are paced per channel (about one message per second, notes/slack.md); HTTP 429 is retried by the
client's `AsyncRateLimitErrorRetryHandler` (`bot.slack.app.make_client`: 3 retries, so a fourth 429 in a row fails
the post). A Slack error never raises: it comes back as a `Delivery` with the error code and a log line
saying how to fix it (``not_in_channel`` → invite the bot), and `jobs.notify` turns it into a critical
``slack_delivery_failed`` alert and posts the items again on the next sweep. After ``invalid_auth`` or
``token_revoked`` the notifier logs one critical line saying what to do and stops posting until restart
(`SlackNotifier.paused`; bolt-python#121).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable

import aiohttp
import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.digest_blocks import SlackMessage, alert_messages, digest_messages
from jobs.alerts import Notice
from jobs.digest import Digest
from jobs.notify import Delivery

log = structlog.get_logger(__name__)

#: Errors after which no post can succeed until someone reinstalls the app.
FATAL_ERRORS = frozenset({"invalid_auth", "token_revoked", "account_inactive", "not_authed", "token_expired"})
_FIXES = {
    "not_in_channel": "invite the bot to the channel (/invite @minerva) or grant the chat:write.public scope",
    "channel_not_found": "check the channel id in config/alerts.yaml (routing) and that the bot can see it",
    "is_archived": "the channel is archived: configure another one in config/alerts.yaml",
}


class ChannelPacer:
    """Waits so that two posts to one channel are at least ``interval`` seconds apart."""

    def __init__(self, interval: float, clock: Callable[[], float] = time.monotonic):
        self.interval = interval
        self.clock = clock
        self._last: dict[str, float] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def wait(self, channel: str) -> None:
        lock = self._locks.setdefault(channel, asyncio.Lock())
        async with lock:
            last = self._last.get(channel)
            if last is not None:
                delay = self.interval - (self.clock() - last)
                if delay > 0:
                    await asyncio.sleep(delay)
            self._last[channel] = self.clock()


class SlackNotifier:
    """`jobs.notify.Notifier` over Slack.

    Args:
        client: the bot's Web API client (with the 429 retry handler).
        seconds_between_posts: pacing per channel (``digest.seconds_between_posts``).
        top_items: items per alert type in a digest's main message.
    """

    def __init__(self, client: AsyncWebClient, *, seconds_between_posts: float = 1.0, top_items: int = 3):
        self.client = client
        self.top_items = top_items
        self.pacer = ChannelPacer(seconds_between_posts)
        self.revoked: str | None = None

    @property
    def paused(self) -> str | None:
        """The fatal Slack error (``token_revoked`` …) after which nothing is posted; None while posting works."""
        return self.revoked

    async def post_alerts(self, channel: str, notices: list[Notice]) -> list[Delivery]:
        """Post critical alerts (with Ack / Silence buttons) to ``channel``, batched (`alert_messages`);
        stops at the first failed message, so the rest stay due."""
        deliveries = []
        for batch, message in alert_messages(notices):
            delivery = await self._post(channel, message)
            deliveries.append(dataclasses.replace(delivery, fingerprints=tuple(n.alert.fingerprint for n in batch)))
            if not delivery.ok:
                break
        return deliveries

    async def post_digest(self, channel: str, digest: Digest, chart_png: bytes | None = None) -> list[Delivery]:
        """Post a digest: the main message, its overflow as thread replies, then the chart (if any) in the thread.

        Returns:
            One delivery per message posted or tried, the main message first, each naming the alerts it
            carried (``fingerprints``); stops after the main message when that fails (its thread has no
            parent). A failed chart upload is logged, not returned.
        """
        messages = digest_messages(digest, top_items=self.top_items, chart_attached=chart_png is not None)
        main = await self._post(channel, messages.main)
        deliveries = [dataclasses.replace(main, fingerprints=messages.main.fingerprints)]
        if not main.ok:
            return deliveries
        for reply in messages.thread:
            delivery = await self._post(channel, reply, thread_ts=main.ts)
            deliveries.append(dataclasses.replace(delivery, fingerprints=reply.fingerprints))
        if chart_png is not None:
            await self._upload_chart(channel, chart_png, digest, thread_ts=main.ts)
        return deliveries

    async def post_direct(self, owner: str, report) -> list[Delivery]:
        """Send an owner's findings (`jobs.owners.OwnerReport`) as one direct message (issue 11 item 9).

        ``owner`` is a user id (U…/W…: chat.postMessage with the user id as channel opens the DM) or a user
        group id (S…: each member from usergroups.users.list gets the message; needs ``usergroups:read``).

        Returns:
            One delivery per message tried (channel = the user id), or one failed delivery for the group
            when its members cannot be read (Slack's error, e.g. ``missing_scope``, ``no_such_subteam``).
        """
        from bot.slack.owner_blocks import owner_message

        message = owner_message(report)
        users, failed = await self._members(owner)
        if failed is not None:
            return [failed]
        deliveries = [await self._post(user, message) for user in users]
        log.info("owners.messaged", owner=owner, users=len(users), pages=len(report.pages),
                 findings=len(report.findings), failed=sum(not d.ok for d in deliveries))
        return deliveries

    async def post_verification(self, owner: str, ask) -> list[Delivery]:
        """Ask ``owner`` to verify a page (`jobs.verification.VerificationAsk`, issue 25 item 3) in a direct
        message with the three buttons (`bot.slack.verify_blocks`); a user group's members each get it.

        Returns:
            One delivery per message tried, or one failed delivery for a group whose members cannot be read.
        """
        from bot.slack.verify_blocks import verification_message

        users, failed = await self._members(owner)
        if failed is not None:
            return [failed]
        message = verification_message(ask)
        deliveries = [await self._post(user, message) for user in users]
        log.info("verification.messaged", owner=owner, users=len(users), doc_id=ask.doc_id, reminder=ask.reminder,
                 failed=sum(not d.ok for d in deliveries))
        return deliveries

    async def _members(self, owner: str) -> tuple[list[str], Delivery | None]:
        """The user ids ``owner`` names (itself, or a user group's members) and None, or ([], the failed
        delivery) when Slack will not list the group."""
        if not owner.startswith("S"):
            return [owner], None
        try:
            response = await self.client.usergroups_users_list(usergroup=owner)
        except SlackApiError as exc:
            return [], self._failed(owner, exc.response.get("error") or "unknown_error", what="usergroup")
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            log.error("slack.usergroup_failed", usergroup=owner, error=repr(exc))
            return [], Delivery(owner, error="network_error")
        users = list(response.get("users") or [])
        if not users:
            log.warning("owners.empty_group", usergroup=owner)
        return users, None

    async def post_reply(self, channel: str, thread_ts: str | None, text: str, blocks: list[dict]) -> Delivery:
        """Post a stored answer again in its thread (`jobs.notify.resend_replies`); never raises."""
        return await self._post(channel, SlackMessage(text=text, blocks=blocks or None), thread_ts=thread_ts)

    async def _post(self, channel: str, message: SlackMessage, *, thread_ts: str | None = None) -> Delivery:
        if self.revoked:
            return Delivery(channel, error=self.revoked)
        await self.pacer.wait(channel)
        try:
            response = await self.client.chat_postMessage(channel=channel, text=message.text, blocks=message.blocks,
                                                          thread_ts=thread_ts, unfurl_links=False, unfurl_media=False)
        except SlackApiError as exc:
            return self._failed(channel, exc.response.get("error") or "unknown_error")
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            log.error("slack.post_failed", channel=channel, error=repr(exc))
            return Delivery(channel, error="network_error")
        return Delivery(channel, ts=response.get("ts"), posted_in=response.get("channel") or channel)

    async def _upload_chart(self, channel: str, png: bytes, digest: Digest, *, thread_ts: str | None) -> None:
        day = digest.window_end.strftime("%Y-%m-%d")
        await self.pacer.wait(channel)
        try:
            await self.client.files_upload_v2(
                channel=channel, thread_ts=thread_ts, file=png, filename=f"minerva-quality-{day}.png",
                title=f"Knowledge quality, week ending {day}", alt_txt="Minerva weekly quality chart",
            )
        except SlackApiError as exc:
            self._failed(channel, exc.response.get("error") or "unknown_error", what="upload")
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            log.error("slack.upload_failed", channel=channel, error=repr(exc))

    def _failed(self, channel: str, error: str, *, what: str = "post") -> Delivery:
        if error in FATAL_ERRORS:
            if not self.revoked:  # one critical line; later posts return at once (see `_post`)
                log.critical("slack.access_revoked", channel=channel, error=error,
                             fix="the bot token is dead: reinstall the Slack app, update SLACK_BOT_TOKEN and restart "
                                 "`minerva serve`; alert and digest posts are paused until then")
            self.revoked = error
        else:
            log.error(f"slack.{what}_failed", channel=channel, error=error,
                      fix=_FIXES.get(error, "see https://api.slack.com/methods/chat.postMessage#errors"))
        return Delivery(channel, error=error)
