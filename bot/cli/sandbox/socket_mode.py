"""Slack's Socket Mode, faked: the WebSocket that `FakeSlack` hands out from ``apps.connections.open``.

What Slack does (https://api.slack.com/apis/socket-mode), and this fake with it:

- ``apps.connections.open`` (app-level token, ``xapp-…``) returns a one-time ``wss://`` URL; here
  ``ws://127.0.0.1:<port>/socket/<n>``. A bot token gets ``not_allowed_token_type``.
- On connect the server sends ``{"type": "hello", …}``, then envelopes: ``{"envelope_id", "type":
  "events_api" | "interactive" | "slash_commands", "payload", "accepts_response_payload", "retry_attempt",
  "retry_reason"}``. The app acks each with ``{"envelope_id": …}`` (plus ``payload`` for a command's reply).
- Slack refreshes connections: ``{"type": "disconnect", "reason": "refresh_requested"}``; the client opens
  a new one, and the old one gets no more envelopes. A dropped connection (`drop`) is like a server restart.
- An envelope that was not acked when its connection ended is delivered again on the next connection with
  a new envelope id and ``retry_attempt`` + 1 (the same ``event_id``), as Slack retries events.

Use through `FakeSlack.socket`::

    envelope_id = fake.socket.send("events_api", event_callback_body)
    ack = await fake.socket.wait_for_ack(envelope_id)        # {"envelope_id": …, "at": seconds after send}
    await fake.socket.disconnect("refresh_requested")        # or: await fake.socket.drop()
    await fake.socket.wait_for_connections(2)
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web


@dataclass
class Envelope:
    """One envelope as sent; ``sent_at`` is time.monotonic() of the (last) send."""

    envelope_id: str
    type: str
    payload: dict[str, Any]
    retry_attempt: int = 0
    sent_at: float | None = None
    drop_before_ack: bool = False

    def message(self) -> dict[str, Any]:
        return {"envelope_id": self.envelope_id, "type": self.type, "payload": self.payload,
                "accepts_response_payload": self.type == "slash_commands", "retry_attempt": self.retry_attempt,
                "retry_reason": "timeout" if self.retry_attempt else ""}


@dataclass
class _Connection:
    ws: web.WebSocketResponse
    number: int
    unacked: dict[str, Envelope] = field(default_factory=dict)
    draining: bool = False  # a disconnect was sent: no more envelopes on this one
    deaf: bool = False  # closing before any ack could arrive (`send(drop_before_ack=True)`)


class FakeSocketMode:
    """The Socket Mode side of `FakeSlack` (see the module docstring).

    Attributes:
        app_id: the app id each ``hello`` names (``connection_info.app_id``).
        connections: WebSocket connections opened so far (each got a ``hello``).
        acks: envelope id → ``{"envelope_id", "payload" (if any), "at": seconds from send to ack}``.
        sent: every envelope sent, in order (a redelivery is a new envelope with a new id).
    """

    def __init__(self, app_id: str = "A1") -> None:
        self.app_id = app_id  # named in each hello's connection_info, as Slack does
        self.connections = 0
        self.acks: dict[str, dict[str, Any]] = {}
        self.sent: list[Envelope] = []
        self._ids = itertools.count(1)
        self._outbox: deque[Envelope] = deque()
        self._wakeup = asyncio.Event()
        self._current: _Connection | None = None

    def send(self, envelope_type: str, payload: dict[str, Any], *, drop_before_ack: bool = False) -> str:
        """Queue an envelope for the current connection (or the next one); returns its envelope id.

        Args:
            envelope_type: "events_api", "interactive" or "slash_commands".
            payload: what Slack would POST in HTTP mode (an ``event_callback`` body, a ``block_actions``
                payload, or the slash command's fields as a dict).
            drop_before_ack: close the connection right after sending, ignoring any ack of it: the
                envelope is then redelivered on the next connection (a lost ack, deterministically).
        """
        envelope = Envelope(f"env-{next(self._ids):04d}", envelope_type, payload, drop_before_ack=drop_before_ack)
        self._outbox.append(envelope)
        self._wakeup.set()
        return envelope.envelope_id

    async def disconnect(self, reason: str = "refresh_requested") -> None:
        """Send ``{"type": "disconnect", "reason": reason}`` on the current connection; the client should
        open a new one. The old one stays open (until the client closes it) but carries no more envelopes."""
        connection = self._current
        if connection is not None:
            connection.draining = True
            self._current = None
            await connection.ws.send_json({"type": "disconnect", "reason": reason,
                                           "debug_info": {"host": "fake-slack"}})

    async def drop(self) -> None:
        """Close the current connection from the server side (as a Slack restart would); unacked envelopes
        go out again on the next connection."""
        connection, self._current = self._current, None
        if connection is not None:
            await connection.ws.close()

    async def wait_for_ack(self, envelope_id: str, timeout: float = 10.0) -> dict[str, Any]:
        """The ack of ``envelope_id`` once it arrives.

        Raises:
            TimeoutError: no ack within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while envelope_id not in self.acks:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no ack for {envelope_id} within {timeout} s; acked: {sorted(self.acks)}")
            await asyncio.sleep(0.01)
        return self.acks[envelope_id]

    async def wait_for_connections(self, count: int, timeout: float = 15.0) -> None:
        """Wait until ``count`` connections have been opened (and greeted with ``hello``).

        Raises:
            TimeoutError: fewer within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while self.connections < count or self._current is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"expected {count} Socket Mode connection(s), got {self.connections}")
            await asyncio.sleep(0.01)

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        """aiohttp handler of ``/socket/{n}``: hello, then envelopes out and acks in until it closes."""
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.connections += 1
        connection = _Connection(ws, self.connections)
        previous, self._current = self._current, connection
        if previous is not None:  # one consumer per app token: the newest connection gets the envelopes
            previous.draining = True
        await ws.send_json({"type": "hello", "num_connections": 1, "connection_info": {"app_id": self.app_id},
                            "debug_info": {"host": "fake-slack", "approximate_connection_time": 18060}})
        pump = asyncio.ensure_future(self._pump(connection))
        try:
            async for message in ws:
                if message.type == WSMsgType.TEXT:
                    self._acked(connection, json.loads(message.data))
        finally:
            pump.cancel()
            if self._current is connection:
                self._current = None
            self._redeliver(connection)
        return ws

    async def _pump(self, connection: _Connection) -> None:
        while not connection.ws.closed:
            if connection.draining or not self._outbox:
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            envelope = self._outbox.popleft()
            envelope.sent_at = time.monotonic()
            connection.unacked[envelope.envelope_id] = envelope
            self.sent.append(envelope)
            connection.deaf = envelope.drop_before_ack
            try:
                await connection.ws.send_json(envelope.message())
            except (ConnectionError, RuntimeError):  # closed under us: the finally of `handle` redelivers
                return
            if envelope.drop_before_ack:
                if self._current is connection:
                    self._current = None
                await connection.ws.close()
                return

    def _acked(self, connection: _Connection, ack: dict[str, Any]) -> None:
        if connection.deaf:
            return
        envelope = connection.unacked.pop(str(ack.get("envelope_id")), None)
        if envelope is not None:
            self.acks[envelope.envelope_id] = {**ack, "at": time.monotonic() - (envelope.sent_at or 0.0)}

    def _redeliver(self, connection: _Connection) -> None:
        """Slack retries what was not acked: same payload, new envelope id, retry_attempt + 1."""
        for envelope in connection.unacked.values():
            retry = Envelope(f"env-{next(self._ids):04d}", envelope.type, envelope.payload, envelope.retry_attempt + 1)
            self._outbox.append(retry)
        connection.unacked.clear()
        self._wakeup.set()
