"""The Slack app: slack-bolt `AsyncApp` listeners for mentions, DMs, `/ask` and feedback clicks.

Rules from notes/slack.md: events are acknowledged at once (Bolt acks events itself; commands and clicks
call ``ack()`` first) and the work runs off the event loop; every event id is claimed in SQLite before any
side effect, so a Slack retry does nothing; bots are ignored; the reply goes in the thread; on any failure
the user still gets a short message and the log gets the detail. Every ``action_id`` ever shipped keeps a
handler, and handlers read everything from SQLite by the id the button carries, so buttons in old messages
work after a restart.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.alert_buttons import handle_alert_button, handle_page_button
from bot.slack.blocks import FEEDBACK_ACTION, REPORT_WRONG_ACTION, VOTE_DOWN_ACTION, VOTE_UP_ACTION, parse_vote_value
from bot.slack import experts
from bot.slack.channels import answers_message
from bot.slack.digest_blocks import (ALERT_ACK_ACTION, ALERT_QUARANTINE_ACTION, ALERT_RELEASE_ACTION,
                                     ALERT_SILENCE_ACTION)
from bot.slack.replies import Responder
from bot.slack.check import SlackIdentity
from bot.slack.gate import GatedApp
from bot.slack.origin import allowed_origin
from bot.slack.verify_blocks import VERIFY_ACTIONS
from bot.slack.verify_buttons import handle_verify_button
from bot.slack.vote_reasons import VOTE_REASON_PATTERN, answer_language, confirm_reason, reason_blocks, store_reason
from config import Settings
from config.alerts import alerts_config_for
from feedback import FeedbackError, FeedbackStore, UnknownAnswer
from knowledge import KnowledgeBase
from knowledge.messages import message

log = structlog.get_logger(__name__)
#: Seconds a click (vote, 👎 reason, wrong-answer report) waits for its row to be stored before Slack is
#: acknowledged anyway (Slack shows the user an error after 3 s without an ack; notes/slack.md).
ACK_BUDGET_S = 2.0
T = TypeVar("T")

#: Click confirmations in English (`knowledge.messages`); a stored answer's clicks are confirmed in its language.
VOTE_THANKS = {"up": message("vote.thanks_up"), "down": message("vote.thanks_down")}
VOTE_UNCHANGED = message("vote.unchanged")
FLAG_THANKS = message("flag.thanks")
FLAG_UNCHANGED = message("flag.unchanged")
VOTE_UNKNOWN = message("vote.unknown")
VOTE_FAILED = message("vote.failed")


def make_client(token: str, api_url: str | None = None) -> AsyncWebClient:
    """A Web API client that retries HTTP 429 (honouring Retry-After) up to 3 times.

    Args:
        token: bot token (``xoxb-…``).
        api_url: Web API base URL ending in "/api/"; None = Slack's. Tests pass the fake's URL.
    """
    client = AsyncWebClient(token=token, base_url=api_url or AsyncWebClient.BASE_URL)
    client.retry_handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=3))
    return client


def build_app(
    kb: KnowledgeBase,
    store: FeedbackStore,
    settings: Settings,
    *,
    client: AsyncWebClient,
    signing_secret: str,
    executor: ThreadPoolExecutor | None = None,
    identity: SlackIdentity | None = None,
) -> GatedApp:
    """Create the Bolt app with all listeners registered.

    Args:
        kb: answers questions (called in ``executor`` threads, never on the event loop).
        store: feedback store (answers, votes, event ids).
        settings: loaded config.
        client: Web API client (see `make_client`).
        signing_secret: verifies request signatures in HTTP mode (bad signature or stale timestamp → 401).
        executor: thread pool for retrieval and SQLite; default 2 workers (one per core).
        identity: the bot's own ids (``auth.test`` at start, `bot.slack.check`): the workspace (and app, when
            Slack names it) answered unless ``slack.workspaces`` / ``slack.app_id`` say otherwise. None: the
            app asks ``auth.test`` itself before the first request.
    """
    # The gate refuses other workspaces' requests and answers malformed payloads (wrong field types, not JSON)
    # before Bolt reads them.
    app = GatedApp(client=client, signing_secret=signing_secret, origin=allowed_origin(settings.slack, identity),
                   process_before_response=False)
    responder = Responder(kb, store, settings, executor or ThreadPoolExecutor(max_workers=2, thread_name_prefix="minerva"))

    @app.event("app_mention")
    async def on_mention(event: dict, body: dict, client: AsyncWebClient) -> None:
        if await _claimed_before(store, body, event):
            return
        # A DM that mentions the bot also arrives as app_mention; whichever comes first, it is a DM.
        await responder.answer_in_thread(client, event, question=event.get("text") or "", is_dm=_in_dm(event))

    @app.event("message")
    async def on_message(event: dict, body: dict, client: AsyncWebClient) -> None:
        # Direct messages; in a channel only a question posted in a `respond: questions` one (bot.slack.channels):
        # elsewhere the bot answers mentions (app_mention), never every message.
        is_dm = event.get("channel_type") == "im"
        if is_dm and (event.get("subtype") or event.get("bot_id")):
            return
        if not is_dm and not answers_message(event, responder.channel_settings(event.get("channel"))):
            return
        if await _claimed_before(store, body, event):
            return
        if not is_dm:
            log.info("slack.channel_question", channel=event.get("channel"))
        await responder.answer_in_thread(client, event, question=event.get("text") or "", is_dm=is_dm)

    @app.command("/ask")
    async def on_ask(ack, command: dict, respond) -> None:
        await ack()
        await responder.answer_command(command, respond)

    async def on_vote(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        text, blocks = await _stored_then_acked(ack, _store_vote(store, responder.executor, body, action))
        await _confirm_privately(client, body, text, blocks=blocks)

    app.action(FEEDBACK_ACTION)(on_vote)
    app.action(VOTE_UP_ACTION)(on_vote)
    app.action(VOTE_DOWN_ACTION)(on_vote)

    @app.action(VOTE_REASON_PATTERN)
    async def on_vote_reason(ack, body: dict, action: dict, respond) -> None:
        # One of the reason buttons offered privately after a 👎 (bot.slack.vote_reasons).
        text = await _stored_then_acked(ack, store_reason(store, responder.executor, body, action))
        await confirm_reason(respond, text)

    @app.action(REPORT_WRONG_ACTION)
    async def on_report_wrong(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        text = await _stored_then_acked(ack, _store_flag(store, responder.executor, body, action))
        await _confirm_privately(client, body, text)

    async def on_alert_button(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        # Digest / critical-alert buttons; the value is the alert fingerprint, read from SQLite.
        await ack()
        await handle_alert_button(store, responder.executor, client, body, action)

    app.action(ALERT_ACK_ACTION)(on_alert_button)
    app.action(ALERT_SILENCE_ACTION)(on_alert_button)
    alerting = alerts_config_for(settings)
    owners = {source.name: source.owner for source in settings.sources if source.owner}

    async def on_page_button(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        # "Take out of search" / "Put back in search" on an alert about pages: owners and slack.admins only.
        await ack()
        await handle_page_button(store, responder.executor, client, body, action, config=alerting,
                                 documents=lambda: _documents(kb), defaults=owners, admins=settings.slack.admins)

    app.action(ALERT_QUARANTINE_ACTION)(on_page_button)
    app.action(ALERT_RELEASE_ACTION)(on_page_button)

    # "Ask an expert", the answer modal, "Answer this once" and votes on kept answers (issue 25, bot.slack.experts)
    experts.register(app, responder.experts, stored_then_acked=_stored_then_acked, confirm=_confirm_privately)
    async def on_verify_button(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        # A verification message's buttons (issue 25 item 3): the page's owners and slack.admins only.
        await ack()
        await handle_verify_button(store, responder.executor, client, body, action, documents=lambda: _documents(kb),
                                   settings=settings, alert_channel=alerting.routing.alert_channel)

    for verify_action in VERIFY_ACTIONS:
        app.action(verify_action)(on_verify_button)

    @app.event("app_home_opened")
    async def on_home(event: dict, client: AsyncWebClient) -> None:
        if event.get("user"):
            await responder.publish_home(client, event["user"])

    @app.event({"type": re.compile(r"^(tokens_revoked|app_uninstalled)$")})
    async def on_revoked(event: dict) -> None:
        log.error("slack.access_revoked", event_type=event.get("type"))

    @app.error
    async def on_error(error: Exception, body: dict) -> None:
        log.error("slack.listener_failed", error=repr(error), body_type=body.get("type"), exc_info=error)

    return app


def _in_dm(event: dict) -> bool:
    """True for a direct message: ``channel_type`` "im" (message.im), or a DM channel id ("D…"), which is
    all an app_mention carries."""
    return event.get("channel_type") == "im" or str(event.get("channel") or "").startswith("D")


async def _claimed_before(store: FeedbackStore, body: dict, event: dict) -> bool:
    """True when this event (or this message, seen through another event type) was handled already.

    The event id covers Slack retries; (channel, ts) covers one message arriving as both app_mention and
    message.im (notes/slack.md).
    """
    if event.get("bot_id") or event.get("subtype") == "bot_message":
        return True
    keys = [f"event:{body.get('event_id')}"] if body.get("event_id") else []
    keys.append(f"msg:{event.get('channel')}:{event.get('ts')}")
    if not await asyncio.to_thread(store.claim_events, keys):
        log.info("slack.duplicate_ignored", keys=keys)  # a retry, or one message seen as two event types
        return True
    return False


async def _stored_then_acked(ack, storing: Awaitable[T]) -> T:
    """Store a click first, then ack it: a click Slack saw acknowledged is stored, even when this replica dies
    right after. Storing takes milliseconds; a slow store is acknowledged at ACK_BUDGET_S all the same (and
    finishes afterwards), so Slack never shows the user an error. Returns what ``storing`` returned."""
    stored = asyncio.ensure_future(storing)
    try:
        await asyncio.wait_for(asyncio.shield(stored), ACK_BUDGET_S)
    except asyncio.TimeoutError:
        log.warning("click.slow_store", budget_s=ACK_BUDGET_S)
    await ack()
    return await stored


async def _store_vote(store, executor, body: dict, action: dict) -> tuple[str, list | None]:
    """Stores a 👍/👎 click; returns the private confirmation's text and blocks (the 👎 reasons), in the voted
    answer's language (English when its row cannot be read, or for a vote that was not stored)."""
    user = body.get("user", {}).get("id", "")
    blocks = None
    try:
        value, answer_id = parse_vote_value(action.get("value", ""))
        if action.get("action_id") == VOTE_UP_ACTION:
            value = "up"
        elif action.get("action_id") == VOTE_DOWN_ACTION:
            value = "down"
        loop = asyncio.get_running_loop()
        result, language = await loop.run_in_executor(executor, _record_vote, store, answer_id, user, value)
        text = message(f"vote.thanks_{value}" if result.changed else "vote.unchanged", language)
        if value == "down":  # offer the reasons, privately, one click each
            blocks = reason_blocks(answer_id, text, language)
        log.info("vote", answer_id=answer_id, user=user, value=value, changed=result.changed)
    except (ValueError, UnknownAnswer) as exc:
        log.warning("vote.rejected", reason=str(exc), value=action.get("value"))
        text = VOTE_UNKNOWN
    except FeedbackError:  # e.g. StoreUnavailable: the voter still gets an answer (never silence)
        log.exception("vote.failed", value=action.get("value"))
        text = VOTE_FAILED
    return text, blocks


async def _store_flag(store, executor, body: dict, action: dict) -> str:
    """"Report a wrong answer": one flag per answer and user (the design's hallucination flag); returns the
    private confirmation's text, in the flagged answer's language."""
    user = body.get("user", {}).get("id", "")
    answer_id = action.get("value") or ""
    try:
        loop = asyncio.get_running_loop()
        stored, language = await loop.run_in_executor(executor, _record_flag, store, answer_id, user)
        text = message("flag.thanks" if stored else "flag.unchanged", language)
        log.info("flag", answer_id=answer_id, user=user, stored=stored)
    except UnknownAnswer:
        text = VOTE_UNKNOWN
    except FeedbackError:
        log.exception("flag.failed", value=answer_id)
        text = VOTE_FAILED
    return text


def _record_vote(store, answer_id: str, user: str, value: str):
    """`FeedbackStore.record_vote`'s result and the voted answer's language (one executor job)."""
    return store.record_vote(answer_id, user, value), answer_language(store, answer_id)


def _record_flag(store, answer_id: str, user: str):
    """`FeedbackStore.record_flag`'s result and the flagged answer's language (one executor job)."""
    return store.record_flag(answer_id, user), answer_language(store, answer_id)


def _field(body: dict, name: str) -> dict:
    """``body[name]`` when it is an object, else {}: a click's parts may be strings in a malformed payload."""
    value = body.get(name)
    return value if isinstance(value, dict) else {}


async def _confirm_privately(client: AsyncWebClient, body: dict, text: str, *, blocks: list[dict] | None = None) -> None:
    """An ephemeral reply to the clicking user, in the thread of the clicked message (``text`` is the
    fallback when ``blocks`` are given)."""
    user = _field(body, "user").get("id", "")
    channel = _field(body, "channel").get("id") or _field(body, "container").get("channel_id")
    container = _field(body, "container")
    thread_ts = _field(body, "message").get("thread_ts") or container.get("message_ts")
    if container.get("is_ephemeral"):
        # A click on an ephemeral reply (a `private` channel): its own ts is no message a thread can hang on,
        # so the confirmation goes in the reply's thread (``thread_ts``) or the channel.
        thread_ts = container.get("thread_ts") or None
    if channel and user:
        try:
            await client.chat_postEphemeral(channel=channel, user=user, text=text, thread_ts=thread_ts, blocks=blocks)
        except SlackApiError as exc:
            log.warning("slack.confirm_failed", error=exc.response.get("error"))


def _documents(kb: KnowledgeBase) -> dict[str, dict]:
    """doc_id → index record of the live generation; empty before the first ingest (only admins then)."""
    from knowledge import KnowledgeError

    try:
        return kb.index().documents
    except KnowledgeError:
        return {}
