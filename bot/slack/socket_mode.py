"""Socket Mode with the gate in front: slack_bolt's `AsyncSocketModeHandler`, with a client that acks an envelope
whose payload is not a JSON object and tells the app the app id its connection belongs to.

slack_sdk turns each envelope into a `SocketModeRequest` before Bolt (and `bot.slack.gate.GatedApp`) sees it:
a payload that is a list, a number, true/false or null raises there, inside the SDK, which logs a traceback
and never acks, so Slack sends the envelope again and again; a text payload becomes ``{"text": …}`` and reaches
the app as if it were an object (issue 27). `GatedSocketModeClient` acks such an envelope at once and logs
``slack.malformed_payload`` (no traceback); every other message goes on to the SDK unchanged. Likewise Bolt's
request fails on some malformed objects (a ``user`` that is a number) before the app's dispatch runs:
`GatedSocketModeHandler` has the gate screen each payload first (`GatedApp.screen`), as HTTP mode does.

Usage (what `bot.slack.server.run` does): ``await GatedSocketModeHandler(app, app_token).start_async()``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import structlog
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.adapter.socket_mode.async_internals import run_async_bolt_app, send_async_response
from slack_bolt.response import BoltResponse
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from bot.slack.gate import GatedApp, kind_of

log = structlog.get_logger(__name__)
#: The keys that make a Socket Mode message an envelope (as slack_sdk's `SocketModeRequest.from_dict` reads them).
_ENVELOPE_KEYS = ("type", "envelope_id", "payload")


class GatedSocketModeClient(SocketModeClient):
    """slack_sdk's aiohttp Socket Mode client; an envelope whose payload is not an object is acked and logged
    here, and never reaches the SDK's request listeners.

    Args:
        on_hello: called with the app id of each ``hello`` (``connection_info.app_id``; None when absent).
        *args, **kwargs: as for `SocketModeClient` (``app_token``, ``web_client``, ``logger`` …).
    """

    def __init__(self, *args: Any, on_hello: Callable[[Any], None] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.on_hello = on_hello

    async def run_message_listeners(self, message: dict, raw_message: str) -> None:
        """The SDK's handling of one message, after the checks of this class (see the module docstring)."""
        if message.get("type") == "hello" and self.on_hello is not None:
            connection = message.get("connection_info")
            self.on_hello(connection.get("app_id") if isinstance(connection, dict) else None)
        if all(key in message for key in _ENVELOPE_KEYS) and not isinstance(message["payload"], dict):
            await self._ack_unreadable(message)
            return
        await super().run_message_listeners(message, raw_message)

    async def _ack_unreadable(self, envelope: dict) -> None:
        """Ack an envelope whose payload is not an object (Slack would otherwise send it again) and log it."""
        problem = f"payload: expected an object, got {kind_of(envelope['payload'])}"
        envelope_type = envelope["type"] if isinstance(envelope["type"], str) else None
        log.warning("slack.malformed_payload", problem=problem, envelope_type=envelope_type, mode="socket_mode")
        try:
            await self.send_socket_mode_response(SocketModeResponse(envelope_id=envelope["envelope_id"]))
        except Exception as exc:  # the connection went away: Slack redelivers the envelope on the next one
            log.warning("slack.ack_failed", error=repr(exc), mode="socket_mode")


class GatedSocketModeHandler(AsyncSocketModeHandler):
    """`AsyncSocketModeHandler` for a `GatedApp` over a `GatedSocketModeClient`; the hello's app id goes to
    `GatedApp.learn_app_id`.

    Args:
        app: the gated Bolt app; its Web API client (and so ``SLACK_API_URL``) opens the connections.
        app_token: the app-level token (``xapp-…``).
        ping_interval: seconds between the client's pings, as for `AsyncSocketModeHandler`.
    """

    def __init__(self, app: GatedApp, app_token: str, *, ping_interval: float = 10):
        # Not super().__init__: it would build (and open an HTTP session for) a client of the SDK's own class.
        self.app = app
        self.app_token = app_token
        self.client = GatedSocketModeClient(app_token=app_token, logger=app.logger, web_client=app.client,
                                            ping_interval=ping_interval, on_hello=app.learn_app_id)
        self.client.socket_mode_request_listeners.append(self.handle)

    async def handle(self, client: SocketModeClient, req: SocketModeRequest) -> None:  # type: ignore[override]
        """Answer one envelope: the gate's answer when it has one, else Bolt's; acked either way (a request
        Bolt cannot even build is acked and logged as ``slack.malformed_request``)."""
        start = time.time()
        response = await self.app.screen(req.payload, mode="socket_mode")
        if response is None:
            try:
                response = await run_async_bolt_app(self.app, req)
            except Exception as exc:  # Bolt's request or context failed on a shape the gate let through
                log.warning("slack.malformed_request", reason=repr(exc), envelope_type=req.type, mode="socket_mode")
                response = BoltResponse(status=200, body="")
        await send_async_response(client, req, response, start)
