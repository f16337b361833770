"""The three buttons of a verification message (`bot.slack.verify_blocks`, issue 25 item 3).

- "Still correct": the page is verified until now + its interval; the message is replaced by who confirmed
  it and the next check's date.
- "Needs an update": a review item for the page (``verification_needs_update``, `jobs.review`).
- "Not mine": the page is handed over; the alert channel (``routing.alert_channel``, naming ``slack.admins``)
  is told it needs an owner, or each admin directly when no alert channel is set.

Whichever the answer, every copy of the ask changes, not only the clicked one: each member of an owner group got
the DM (and maybe its reminder), and the job stored where (``posted`` of the page's row,
`FeedbackStore.record_verification_messages`), so the others see it is done and by whom, and have no buttons left
to click. An ask sent before those were stored changes only the clicked copy.

Only the page's owner (a user id, or a member of the owner user group, read with ``usergroups.users.list``),
the owner who was asked, or a member of ``slack.admins`` may answer; anyone else gets a private "only the
owner…" and nothing changes. Each answer is one conditional update of the ask the button carries
(`feedback.verifications.answer`), so a double click, or the same click on two replicas, acts once; the
second click gets a private "already answered".
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Executor
from datetime import datetime, timedelta, timezone

import aiohttp
import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.alert_buttons import may_change as may_answer  # the owners / user groups / admins check of page buttons
from bot.slack.blocks import slack_reference
from bot.slack.verify_blocks import VERIFY_NOT_MINE_ACTION, VERIFY_OK_ACTION, answered_message, page_name, parse_value
from feedback import FeedbackError
from jobs.owners import owner_of, source_owners
from jobs.review import submit
from jobs.verification import JOB, interval_of, needs_update_candidate, source_intervals
from knowledge.messages import message

log = structlog.get_logger(__name__)
#: Interval used when a page's interval was removed from config after it was asked: the issue's example
#: interval (issue 25 item 3, "e.g. 90 days").
FALLBACK_DAYS = 90
_STATES = {VERIFY_OK_ACTION: "verified", VERIFY_NOT_MINE_ACTION: "handed_over"}


async def handle_verify_button(store, executor: Executor | None, client: AsyncWebClient, body: dict, action: dict, *,
                               documents, settings, alert_channel: str, now: datetime | None = None) -> str:
    """Apply one click and tell the clicker; returns the text they were shown (or the DM's new text).

    Args:
        store: the feedback store; executor: where its calls run.
        client: the Web API client (``chat.update`` of the DM, ephemeral replies, the hand-over notice).
        body, action: the ``block_actions`` payload and the clicked button.
        documents: () → doc_id → index record (read in ``executor``).
        settings: `config.Settings` (sources' owners and intervals, ``slack.admins``).
        alert_channel: where "Not mine" is announced ("" = each admin directly).
        now: the click's time (tests pass a fixed one); default the wall clock.
    """
    user = (body.get("user") or {}).get("id", "")
    now = now or datetime.now(timezone.utc)
    loop = asyncio.get_running_loop()
    state = _STATES.get(action.get("action_id"), "needs_update")
    try:
        doc_id, asked_at = parse_value(action.get("value", ""))
        records = await loop.run_in_executor(executor, documents)
        doc = records.get(doc_id)
        rows = await loop.run_in_executor(executor, lambda: store.page_verifications([doc_id]))
        if doc is None or doc_id not in rows:
            raise ValueError(f"no page or ask for {doc_id}")
    except ValueError as exc:
        log.warning("verification.button_rejected", reason=str(exc), value=action.get("value"))
        return await _tell(client, body, user, message("verification.unknown"))
    except FeedbackError:
        log.exception("verification.button_failed", value=action.get("value"))
        return await _tell(client, body, user, message("verification.failed"))
    language = str(doc.get("language") or "en")
    title = page_name(doc.get("title", ""), doc.get("url", ""), doc_id)
    defaults = source_owners(settings)
    owners = [rows[doc_id]["owner"], owner_of(doc, defaults), *settings.slack.admins]
    if not await may_answer(client, user, owners, {}):
        log.info("verification.button_refused", doc_id=doc_id, user=user)
        return await _tell(client, body, user, message("verification.only_owner", language, title=title))
    interval = interval_of(doc, source_intervals(settings)) or FALLBACK_DAYS
    until = now + timedelta(days=interval)
    try:
        changed = await loop.run_in_executor(executor, lambda: store.answer_verification(
            doc_id, state, asked_at=asked_at, by=user, now=now, verified_until=until if state == "verified" else None))
        if changed and state == "needs_update":
            await loop.run_in_executor(executor, lambda: submit(store, JOB, [needs_update_candidate(doc_id, doc, by=user)],
                                                                now=now))
    except FeedbackError:
        log.exception("verification.button_failed", doc_id=doc_id)
        return await _tell(client, body, user, message("verification.failed", language))
    if not changed:
        current = (await loop.run_in_executor(executor, lambda: store.page_verifications([doc_id]))).get(doc_id) or {}
        label = message(f"verification.state_{current.get('state', 'due')}", language)
        return await _tell(client, body, user, message("verification.already", language, state=label))
    log.info("verification.answered", doc_id=doc_id, user=user, state=state)
    if state == "handed_over":
        await _announce_handover(client, settings.slack.admins, alert_channel, doc_id, title, user, language)
    key = {"verified": "verification.verified", "needs_update": "verification.needs_update"}.get(
        state, "verification.handed_over")
    updated = answered_message(key, language, title=title, user=user, date=until)
    await _update_copies(client, body, updated, rows[doc_id].get("posted") or [])
    return updated.text


async def _announce_handover(client: AsyncWebClient, admins: list[str], channel: str, doc_id: str, title: str,
                             user: str, language: str) -> None:
    """Tell the alert channel (mentioning the admins) or, without one, each admin user that the page needs an
    owner."""
    mentions = " ".join(slack_reference(a) for a in admins)
    text = message("verification.needs_owner", language, admins=f"{mentions} " if mentions else "", title=title,
                   doc_id=doc_id, who=f"<@{user}>")
    targets = [channel] if channel else [a for a in admins if not a.startswith("S")]
    if not targets:
        log.error("verification.handover_unannounced", doc_id=doc_id,
                  fix="set slack.alert_channel or slack.admins so someone hears that a page needs an owner")
    for target in targets:
        try:
            await client.chat_postMessage(channel=target, text=text, unfurl_links=False)
        except SlackApiError as exc:
            log.error("verification.handover_post_failed", channel=target, error=exc.response.get("error"))


async def _update_copies(client: AsyncWebClient, body: dict, updated, posted: list) -> None:
    """Replace the clicked message and every other stored copy of the ask (``posted``: ``[channel, ts]`` pairs,
    the DM channel as Slack named it) by ``updated``; their buttons go. The clicked one first, each once. A copy
    Slack will not update (deleted, ``message_not_found``) is logged and the rest still are."""
    channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
    ts = (body.get("message") or {}).get("ts") or (body.get("container") or {}).get("message_ts")
    copies = ([(channel, ts)] if channel and ts else []) + [(str(c), str(t)) for c, t in posted]
    for channel, ts in dict.fromkeys(copies):
        try:
            await client.chat_update(channel=channel, ts=ts, text=updated.text, blocks=updated.blocks)
        except SlackApiError as exc:
            log.warning("verification.update_failed", channel=channel, error=exc.response.get("error"))
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            log.warning("verification.update_failed", channel=channel, error=repr(exc))


async def _tell(client: AsyncWebClient, body: dict, user: str, text: str) -> str:
    """A private reply to the clicker where they clicked; returns ``text``."""
    channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
    if channel and user:
        try:
            await client.chat_postEphemeral(channel=channel, user=user, text=text)
        except SlackApiError as exc:
            log.warning("verification.confirm_failed", error=exc.response.get("error"))
    return text
