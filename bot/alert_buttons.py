"""The Ack and "Silence 24h" buttons of alert digests and critical alerts.

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

from bot.blocks import escape
from bot.digest_blocks import ALERT_ACK_ACTION, ALERT_SILENCE_ACTION, parse_alert_value
from feedback import FeedbackError
from jobs.alerts import AlertingError, acknowledge
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
    try:
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
