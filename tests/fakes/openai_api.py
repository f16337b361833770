"""A local fake of an OpenAI-compatible chat-completions endpoint, over real HTTP (like `tests.fakes.slack_api`).

It records every request and answers ``POST /v1/chat/completions`` with scripted replies, delays and
status codes, so the generator path is tested through aiohttp's real client, timeouts and errors::

    fake = FakeOpenAI()
    await fake.start()
    fake.script("Deliveries time out after 30 seconds [1].")          # next reply
    fake.script(status=503)                                           # then an HTTP 503
    fake.script("late", delay=5.0)                                    # then a reply after 5 s
    cfg = GeneratorConfig(base_url=fake.url, model="fake-model")
    ...
    assert fake.requests[0]["body"]["messages"][1]["content"].startswith("Passages:")
    await fake.stop()

Without a script the fake answers `FakeOpenAI.default` (or, when it is callable, ``default(body)``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakes.local_server import LocalServer


@dataclass
class _Reply:
    content: str | None
    status: int
    delay: float
    raw: str | None


class FakeOpenAI(LocalServer):
    """Records chat-completion requests and answers them as scripted.

    Attributes:
        requests: every request received, oldest first: ``{"body": dict (decoded JSON, or {} if not JSON),
            "headers": dict, "path": str}``.
        default: the reply when nothing is scripted: a string, or a callable taking the request body.
        url: the API root for ``GeneratorConfig(base_url=...)``, ``http://127.0.0.1:<port>/v1``; set by `start`.
    """

    def __init__(self, default: str | Callable[[dict], str] = "I cannot say [1].") -> None:
        self.requests: list[dict[str, Any]] = []
        self.default = default
        self.root = ""
        self._script: deque[_Reply] = deque()
        self._runner: web.AppRunner | None = None
        self._ids = itertools.count(1)

    @property
    def url(self) -> str:
        return f"{self.root}/v1"

    def script(self, content: str | None = None, *, status: int = 200, delay: float = 0.0,
               raw: str | None = None) -> None:
        """Queues the next reply.

        Args:
            content: the assistant message text (None with a 200 status: the default reply).
            status: HTTP status; >= 400 sends an OpenAI-style error body.
            delay: seconds to wait before answering (a slow model; the client may time out first).
            raw: a body sent as is instead of a completion (e.g. ``"not json"``), with ``status``.
        """
        self._script.append(_Reply(content, status, delay, raw))

    def routes(self, app: web.Application) -> None:
        """The chat-completions endpoint (see `LocalServer.start`)."""
        app.router.add_post("/v1/chat/completions", self._handle)

    @contextlib.contextmanager
    def running_in_thread(self) -> Iterator[FakeOpenAI]:
        """Serves from a thread with its own event loop, for synchronous callers (a CLI run with
        ``asyncio.run`` inside); stopped when the block ends. Script replies before entering or inside."""
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="fake-openai", daemon=True)
        thread.start()
        asyncio.run_coroutine_threadsafe(self.start(), loop).result(timeout=10)
        try:
            yield self
        finally:
            asyncio.run_coroutine_threadsafe(self.stop(), loop).result(timeout=10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            loop.close()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            body = {}
        self.requests.append({"body": body, "headers": dict(request.headers), "path": request.path})
        reply = self._script.popleft() if self._script else _Reply(None, 200, 0.0, None)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.raw is not None:
            return web.Response(status=reply.status, text=reply.raw, content_type="application/json")
        if reply.status >= 400:
            return web.json_response({"error": {"message": f"scripted HTTP {reply.status}", "type": "server_error"}},
                                     status=reply.status)
        content = reply.content
        if content is None:
            content = self.default(body) if callable(self.default) else self.default
        return web.json_response({
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "model": body.get("model", ""),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        })
