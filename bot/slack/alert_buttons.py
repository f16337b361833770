"""The buttons of alert digests and critical alerts: Ack, "Silence 24h", and for alerts about pages "Take out of
search" / "Put back in search" (issue 26: only a page's owner or an admin takes it out of search).

Stateless: the button's value is the alert's fingerprint, and the handler reads and writes the store by it,
so a button in a digest posted before a restart (or a redeploy) still works (bolt-python#264, #326). The
clicker gets a private confirmation (an ephemeral message) in any case, never silence.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Executor
from datetime import datetime, timezone

import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.blocks import escape
from bot.slack.digest_blocks import (ALERT_ACK_ACTION, ALERT_QUARANTINE_ACTION, ALERT_SILENCE_ACTION, parse_alert_value,
                                     parse_page_value)
from feedback import FeedbackError
from jobs.alerts import AlertingError, acknowledge, get_alert
from jobs.owners import owner_of
from jobs.page_actions import QUARANTINE, RELEASE, page_action, put_back, take_out
from jobs.silences import BUTTON_HOURS, add_silence

log = structlog.get_logger(__name__)

ALERT_UNKNOWN = "I no longer have a record of that alert, so nothing was changed."
ALERT_FAILED = "Sorry, I couldn't update that alert just now; please try again later."


async def handle_alert_button(store, executor: Executor | None, client: AsyncWebClient, body: dict, action: dict) -> str:
    """Apply an Ack or Silence click and confirm it privately; returns the confirmation text.

    Args:
        store: the bot's `feedback.FeedbackStore` (alert tables included).
        executor: where the store's work runs (never on the event loop); None = the default executor.
        client: the Web API client for the ephemeral confirmation.
        body: the ``block_actions`` payload.
        action: the clicked action (``action_id`` one of ALERT_ACK_ACTION / ALERT_SILENCE_ACTION).
    """
    user = (body.get("user") or {}).get("id", "")
    now = datetime.now(timezone.utc)
    loop = asyncio.get_running_loop()

    async def apply() -> str:
        fingerprint = parse_alert_value(action.get("value", ""))
        if action.get("action_id") == ALERT_SILENCE_ACTION:
            silence = await loop.run_in_executor(
                executor, lambda: add_silence(store, fingerprint, hours=BUTTON_HOURS, by=user or "slack", now=now,
                                              comment="Silence 24h button"))
            text = (f"Silenced alert `{silence.fingerprint}` for {BUTTON_HOURS} h, until "
                    f"{silence.expires_at.strftime('%Y-%m-%d %H:%M UTC')}. Undo with `minerva unsilence {silence.fingerprint}`.")
        elif action.get("action_id") == ALERT_ACK_ACTION:
            alert = await loop.run_in_executor(executor, lambda: acknowledge(store, fingerprint, by=user or "slack", now=now))
            who = f" by <@{alert.acked_by}>" if alert.acked_by and alert.acked_by.startswith(("U", "W")) else ""
            text = (f"Acknowledged *{escape(alert.alert)}* (`{alert.fingerprint}`){who}: no more reminders "
                    "until it resolves.")
        else:
            raise ValueError(f"not an alert button: {action.get('action_id')!r}")
        log.info("alert.button", action_id=action.get("action_id"), fingerprint=fingerprint, user=user)
        return text

    return await _applied_then_confirmed(apply, client, body, user, action)


async def _applied_then_confirmed(apply, client: AsyncWebClient, body: dict, user: str, action: dict) -> str:
    """The confirmation text of ``apply()`` (an alert the store no longer knows or a malformed value: "no record";
    a store failure: "try again later"), sent privately to the clicker; returns it."""
    try:
        text = await apply()
    except (ValueError, AlertingError) as exc:
        log.warning("alert.button_rejected", reason=str(exc), value=action.get("value"))
        text = ALERT_UNKNOWN
    except FeedbackError:
        log.exception("alert.button_failed", value=action.get("value"))
        text = ALERT_FAILED
    await _confirm(client, body, user, text)
    return text


async def _confirm(client: AsyncWebClient, body: dict, user: str, text: str) -> None:
    channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
    thread_ts = (body.get("message") or {}).get("thread_ts")
    if not (channel and user):
        return
    try:
        await client.chat_postEphemeral(channel=channel, user=user, text=text, thread_ts=thread_ts)
    except SlackApiError as exc:
        log.warning("alert.confirm_failed", error=exc.response.get("error"))


ONLY_OWNERS = ("Only the page's owner or an admin (`slack.admins`) can change whether {pages} is searched; "
               "nothing was changed.")


async def handle_page_button(store, executor: Executor | None, client: AsyncWebClient, body: dict, action: dict, *,
                             config, documents, defaults: dict[str, str], admins: list[str]) -> str:
    """Apply a "Take out of search" or "Put back in search" click (`bot.slack.digest_blocks.page_buttons`) to the
    pages of the alert the button names, for those pages the clicker may change: the page's owner (a user id,
    or a member of the owner's user group) or a member of ``admins``. Confirms privately; returns the text.

    Args:
        store, executor, client, body, action: as for `handle_alert_button`.
        config: the alerting config (the change is announced in the alert channel).
        documents: () → doc_id → index record (``owner``, ``collection``), read in ``executor``.
        defaults: collection → its configured owner.
        admins: user and user group ids of `config.SlackConfig.admins`.
    """
    user = (body.get("user") or {}).get("id", "")
    now = datetime.now(timezone.utc)
    loop = asyncio.get_running_loop()
    wanted = QUARANTINE if action.get("action_id") == ALERT_QUARANTINE_ACTION else RELEASE

    async def apply() -> str:
        fingerprint, only = parse_page_value(action.get("value", ""))
        alert = await loop.run_in_executor(executor, lambda: get_alert(store, fingerprint))
        kind, pages = page_action(alert.alert, alert.labels, alert.annotations or {})
        pages = tuple(p for p in pages if only in (None, p))  # an owner's message names one page
        if kind != wanted or not pages:
            raise ValueError(f"alert {fingerprint} has no pages to {wanted}")
        records = await loop.run_in_executor(executor, documents)
        groups: dict[str, list[str]] = {}
        # a page no longer in the index (or before the first ingest) is owned by its collection's owner
        owners = {p: owner_of(records.get(p) or {"collection": p.split(":", 1)[0]}, defaults) for p in pages}
        allowed = [p for p in pages if await may_change(client, user, [owners[p], *admins], groups)]
        if not allowed:
            text = ONLY_OWNERS.format(pages=_names(list(pages)))
        elif wanted == QUARANTINE:
            why = f"{alert.alert}: taken out of search by {user} from the alert ({alert.summary[:200]})"
            done = await loop.run_in_executor(executor, lambda: take_out(store, config, allowed, by=user, reason=why,
                                                                        now=now))
            text = (f"Took {_names(done)} out of search; the announcement in the alert channel puts it back."
                    if done else f"{_names(allowed)} was already out of search.")
        else:
            why = f"put back in search by {user} from the alert"
            done = await loop.run_in_executor(executor, lambda: put_back(store, config, allowed, by=user, reason=why,
                                                                        now=now))
            text = f"Put {_names(done)} back in search." if done else f"{_names(allowed)} was already in search."
        left = [p for p in pages if p not in allowed]
        if allowed and left:
            text += f" {_names(left)} stays as it was: only its owner or an admin can change it."
        log.info("alert.page_button", action_id=action.get("action_id"), fingerprint=fingerprint, user=user,
                 changed=allowed)
        return text

    return await _applied_then_confirmed(apply, client, body, user, action)


async def may_change(client: AsyncWebClient, user: str, ids: list[str], groups: dict[str, list[str]]) -> bool:
    """Whether ``user`` is one of ``ids`` (user ids) or a member of one of them (user group ids, S…: asked with
    ``usergroups.users.list`` once per click and kept in ``groups``). A group Slack will not list grants
    nothing."""
    if not user:
        return False
    for owner in (i for i in ids if i):
        if owner == user:
            return True
        if owner.startswith("S"):
            if owner not in groups:
                try:
                    groups[owner] = list((await client.usergroups_users_list(usergroup=owner)).get("users") or [])
                except SlackApiError as exc:
                    log.warning("alert.usergroup_unreadable", usergroup=owner, error=exc.response.get("error"))
                    groups[owner] = []
            if user in groups[owner]:
                return True
    return False


def _names(pages: list[str]) -> str:
    return ", ".join(f"`{escape(p)}`" for p in pages)
