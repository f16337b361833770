"""Requests as Slack sends them to an app: signed headers, ``event_callback`` envelopes, mentions, button clicks.

Used by `minerva sandbox` (`bot.cli.sandbox.conversation`, `bot.cli.sandbox.replicas`) and by the tests
(``tests/fakes/fixtures.py`` re-exports them beside its pytest fixtures).
"""

from __future__ import annotations

import time

from slack_sdk.signature import SignatureVerifier

from bot.cli.sandbox.slack_api import APP_ID, BOT_USER_ID, TEAM_ID


def signed_request_headers(secret: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
    """Headers that make `body` a validly signed Slack request for the app's ``/slack/events`` route.

    Args:
        secret: the app's signing secret.
        body: the exact raw request body (JSON for events, ``payload=<json>`` form for interactivity,
            form fields for slash commands).
        timestamp: Unix seconds for ``X-Slack-Request-Timestamp``; None means now. Slack apps reject
            timestamps more than 5 minutes from their clock, so pass an old one to test that.

    Returns:
        ``X-Slack-Request-Timestamp``, ``X-Slack-Signature`` (``"v0=<hex hmac-sha256>"``) and a
        ``Content-Type`` guessed from the body: ``application/json`` when it starts with ``{``, else
        ``application/x-www-form-urlencoded``.
    """
    timestamp = int(time.time()) if timestamp is None else timestamp
    signature = SignatureVerifier(secret).generate_signature(timestamp=str(timestamp), body=body)
    is_json = body.lstrip().startswith(b"{")
    return {
        "X-Slack-Request-Timestamp": str(timestamp),
        "X-Slack-Signature": signature,
        "Content-Type": "application/json" if is_json else "application/x-www-form-urlencoded",
    }


def event_envelope(event: dict, event_id: str, *, team_id: str = TEAM_ID, api_app_id: str = APP_ID) -> dict:
    """The ``event_callback`` envelope Slack POSTs around ``event`` to the app's events URL; ``team_id`` and
    ``api_app_id`` name another workspace or app (an install of the app elsewhere) when given."""
    return {
        "token": "legacy-verification-token",
        "team_id": team_id,
        "api_app_id": api_app_id,
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()),
        "authorizations": [{"enterprise_id": None, "team_id": team_id, "user_id": BOT_USER_ID, "is_bot": True,
                            "is_enterprise_install": False}],
    }


def mention_event(question: str, *, ts: str, channel: str, user: str, thread_ts: str | None = None,
                  **extra) -> dict:
    """An ``app_mention`` event of ``<@BOT> question`` posted at ``ts`` (in ``thread_ts``'s thread when given)."""
    event = {"type": "app_mention", "user": user, "text": f"<@{BOT_USER_ID}> {question}", "ts": ts,
             "channel": channel, **extra}
    event["event_ts"] = event["ts"]
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def button_click(value: str, *, message: dict, message_ts: str, user: str, action_id: str,
                 response_url: str, team_id: str = TEAM_ID, api_app_id: str = APP_ID) -> dict:
    """The ``block_actions`` payload of clicking a 👍/👎 button (``value``) on ``message``, a recorded
    chat.postMessage body; by a user of workspace ``team_id``, through app ``api_app_id``."""
    return {
        "type": "block_actions",
        "user": {"id": user, "username": "alice", "name": "alice", "team_id": team_id},
        "api_app_id": api_app_id,
        "token": "legacy-verification-token",
        "container": {"type": "message", "message_ts": message_ts, "channel_id": message["channel"],
                      "is_ephemeral": False, "thread_ts": message.get("thread_ts")},
        "trigger_id": "123.456.abc",
        "team": {"id": team_id, "domain": "minerva-test"},
        "channel": {"id": message["channel"], "name": "general"},
        "message": {"type": "message", "user": BOT_USER_ID, "bot_id": "BBOT", "ts": message_ts,
                    "thread_ts": message.get("thread_ts"), "text": message.get("text", ""),
                    "blocks": message.get("blocks", [])},
        "response_url": response_url,
        "actions": [{"type": "feedback_buttons", "action_id": action_id, "block_id": "fb",
                     "value": value, "action_ts": str(time.time())}],
    }


def view_submission(callback_id: str, private_metadata: str, values: dict, *, user: str,
                    team_id: str = TEAM_ID, api_app_id: str = APP_ID) -> dict:
    """The ``view_submission`` payload of ``user`` submitting a modal (``callback_id``, ``private_metadata``)
    whose inputs hold ``values`` (``{block_id: {action_id: {"type": …, "value": …}}}``, as Slack sends them)."""
    return {"type": "view_submission", "team": {"id": team_id, "domain": "minerva-test"},
            "user": {"id": user, "team_id": team_id, "name": "expert"}, "api_app_id": api_app_id,
            "token": "legacy-verification-token", "trigger_id": f"{time.time()}.submit",
            "view": {"id": "VSANDBOX", "team_id": team_id, "type": "modal", "callback_id": callback_id,
                     "private_metadata": private_metadata, "state": {"values": values}, "hash": str(time.time())}}
