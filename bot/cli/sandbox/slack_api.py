"""A local fake of the Slack Web API that records every call and answers like Slack (tests, `minerva sandbox`).

Modelled on bolt-python's ``tests/mock_web_api_server`` (recommended by its maintainers, bolt-python#380),
but built on ``aiohttp.web`` so it runs on the test's own event loop. Point a client at it::

    fake = FakeSlack()
    await fake.start()
    client = AsyncWebClient(token="xoxb-test", base_url=fake.url)
    await client.chat_postMessage(channel="C1", text="hi")
    assert fake.calls_to("chat.postMessage")[0]["body"]["text"] == "hi"
    await fake.stop()

Routes (all on ``http://127.0.0.1:<random port>``):

- ``/api/<method>``: any Web API method, GET or POST, JSON, form-encoded or multipart body. The token may
  come in the ``Authorization`` header or a ``token`` field; a call with neither gets ``not_authed``,
  as on Slack.
- ``/response/<id>``: a slash command's or interaction's ``response_url`` (what ``respond()`` posts to);
  recorded as method ``"response_url"``. Build one with `FakeSlack.response_url`.
- ``/upload/<file_id>``: the upload URL handed out by ``files.getUploadURLExternal``; recorded as
  method ``"file_upload"`` with the byte count as ``body["size"]``.
- ``/socket/<n>``: the Socket Mode WebSocket that ``apps.connections.open`` (with an ``xapp-`` token)
  hands out; script it through `FakeSlack.socket` (`bot.cli.sandbox.socket_mode.FakeSocketMode`).

Not modelled: Block Kit validation, message storage (``conversations.history`` returns no messages),
real rate limits. Use `FakeSlack.fail_next` to script errors and 429s.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web

from bot.cli.sandbox.local_server import LocalServer
from bot.cli.sandbox.socket_mode import FakeSocketMode

#: Identity the fake reports from ``auth.test``; also the author of messages it echoes back.
BOT_USER_ID = "UBOT"
BOT_ID = "BBOT"
TEAM_ID = "T1"
#: The app's id: what the Socket Mode ``hello`` names (``connection_info.app_id``) and payloads carry as
#: ``api_app_id``. ``auth.test`` does not name it, as Slack does not for a bot token.
APP_ID = "A1"
#: Scopes reported in ``auth.test``'s ``x-oauth-scopes`` header by default: every bot scope manifest.yml asks for.
BOT_SCOPES = "app_mentions:read,chat:write,chat:write.public,im:history,commands,files:write,channels:read,groups:read,usergroups:read,channels:history,groups:history"


@dataclass
class _Failure:
    status: int
    error: str | None
    retry_after: int | None
    when: Callable[[dict[str, Any]], bool] | None = None


class FakeSlack(LocalServer):
    """Records Web API calls and answers them like Slack.

    Attributes:
        calls: every request received, oldest first; each ``{"method": str, "body": dict,
            "headers": dict, "path": str}``, and for a Web API method also ``"response"``: the JSON answered
            (e.g. a posted message's ``ts``). ``method`` is the API method (``"chat.postMessage"``),
            ``"response_url"`` or ``"file_upload"``; ``body`` merges query-string and body parameters
            (JSON values decoded, form values left as strings, so form-sent ``blocks`` is a JSON string);
            ``headers`` are the HTTP request headers (the token is in ``headers["Authorization"]``);
            ``path`` is the URL path, e.g. ``"/response/cmd-1"``.
        scopes: the ``x-oauth-scopes`` header of ``auth.test`` (comma-separated); `BOT_SCOPES` unless a test
            grants fewer.
        channels: ``conversations.info`` per channel id: fields merged over the default answer (a public
            channel named "general" the bot is a member of), e.g. ``{"is_member": False}``; None answers
            ``channel_not_found``.
        usergroups: ``usergroups.users.list`` per user group id (S…): its members' user ids; an unknown
            group answers ``no_such_subteam``.
        dm_channels: user id → the DM channel id ``chat.postMessage`` to that user answers with (Slack opens
            the DM and names it, e.g. ``"D0API1"``; ``chat.update`` then needs that id, not the user's). A user
            not listed is answered with the channel as sent.
        url: base URL for ``AsyncWebClient(base_url=...)``, ending in ``"/api/"``; set by `start`.
        root: ``"http://127.0.0.1:<port>"``; set by `start`.
        socket: the Socket Mode side: envelopes to send, acks received, connections opened.
    """

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.root = ""
        self.scopes = BOT_SCOPES
        self.channels: dict[str, dict[str, Any] | None] = {}
        self.usergroups: dict[str, list[str]] = {}
        self.dm_channels: dict[str, str] = {}
        self._failures: dict[str, deque[_Failure]] = defaultdict(deque)
        self._runner: web.AppRunner | None = None
        # Slack ts values are "<unix seconds>.<6 digits>" and strictly increase within a channel.
        self._ts_base = int(time.time())
        self._serial = itertools.count(1)
        self.socket = FakeSocketMode(APP_ID)

    @property
    def url(self) -> str:
        return f"{self.root}/api/"

    def response_url(self, key: str = "1") -> str:
        """Returns a ``response_url`` on this server, to put in slash-command or interaction payloads."""
        return f"{self.root}/response/{key}"

    def routes(self, app: web.Application) -> None:
        """Web API methods, response URLs, file uploads and the Socket Mode socket (see `LocalServer.start`)."""
        app.router.add_route("*", "/api/{method}", self._handle_api)
        app.router.add_route("*", "/response/{key}", self._handle_response_url)
        app.router.add_route("*", "/upload/{file_id}", self._handle_upload)
        app.router.add_get("/socket/{n}", self.socket.handle)

    def fail_next(
        self,
        method: str,
        *,
        status: int = 200,
        error: str | None = None,
        retry_after: int | None = None,
        times: int = 1,
        when: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:
        """Makes the next `times` calls to `method` fail (each call is still recorded).

        Examples::

            fake.fail_next("chat.postMessage", status=429, retry_after=1)  # HTTP 429, Retry-After: 1
            fake.fail_next("chat.postMessage", error="not_in_channel")     # 200 {"ok": false, ...}
            fake.fail_next("auth.test", error="invalid_auth", times=3)
            fake.fail_next("chat.postMessage", status=429, times=4, when=lambda body: "thread_ts" in body)

        Args:
            method: API method name, or ``"response_url"`` / ``"file_upload"``.
            status: HTTP status to answer with; 200 is Slack's normal status for API errors.
            error: the ``error`` string in the body; defaults to ``"ratelimited"`` for 429 and
                ``"http_<status>"`` otherwise.
            retry_after: seconds for a ``Retry-After`` header; None sends no header.
            times: how many consecutive calls fail, >= 1.
            when: only calls whose body (decoded as in `calls`) it accepts fail; others pass untouched.

        Raises:
            ValueError: `times` < 1, or status 200 without an `error` (that would not fail).
        """
        if times < 1:
            raise ValueError(f"times must be >= 1; got {times}")
        if status == 200 and error is None:
            raise ValueError("a status-200 failure needs an error string, e.g. error='not_in_channel'")
        for _ in range(times):
            self._failures[method].append(_Failure(status, error, retry_after, when))

    def calls_to(self, method: str) -> list[dict[str, Any]]:
        """Returns the recorded calls to `method`, oldest first."""
        return [call for call in self.calls if call["method"] == method]

    async def wait_for(self, method: str, count: int = 1, timeout: float = 10.0) -> list[dict[str, Any]]:
        """Waits until at least `count` calls to `method` were recorded.

        Args:
            method: API method name, ``"response_url"`` or ``"file_upload"``.
            count: calls to wait for, >= 1.
            timeout: seconds before giving up.

        Returns:
            All recorded calls to `method` (possibly more than `count`).

        Raises:
            TimeoutError: fewer than `count` calls arrived in time; the message lists what was called.
        """
        deadline = asyncio.get_running_loop().time() + timeout
        while len(self.calls_to(method)) < count:
            if asyncio.get_running_loop().time() >= deadline:
                seen = [call["method"] for call in self.calls]
                raise TimeoutError(
                    f"expected {count} call(s) to {method} within {timeout} s, "
                    f"got {len(self.calls_to(method))}; calls so far: {seen}"
                )
            await asyncio.sleep(0.01)
        return self.calls_to(method)

    # --- request handling -----------------------------------------------------------------------

    async def _handle_api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        body = await _read_params(request)
        call = self._record(method, body, request)
        # no await from here on: the answer is recorded with its call before another request is read
        failure = self._pop_failure(method, body)
        if failure is not None:
            call["response"] = json.loads(failure.text)
            return failure
        if "Authorization" not in request.headers and "token" not in body:
            call["response"] = {"ok": False, "error": "not_authed"}
            return web.json_response(call["response"])
        if method == "apps.connections.open":
            call["response"] = self._open_socket(request.headers.get("Authorization", ""))
            return web.json_response(call["response"])
        response = call["response"] = self._answer(method, body)
        headers = {"x-oauth-scopes": self.scopes} if method == "auth.test" else None
        return web.json_response(response, headers=headers)

    async def _handle_response_url(self, request: web.Request) -> web.Response:
        self._record("response_url", await _read_params(request), request)
        return self._pop_failure("response_url") or web.json_response({"ok": True})

    async def _handle_upload(self, request: web.Request) -> web.Response:
        size = len(await request.read())
        self._record("file_upload", {"file_id": request.match_info["file_id"], "size": size}, request)
        # Slack's upload endpoint answers in plain text; slack_sdk only checks the status.
        return self._pop_failure("file_upload") or web.Response(text=f"OK - {size}")

    def _record(self, method: str, body: dict[str, Any], request: web.Request) -> dict[str, Any]:
        call = {"method": method, "body": body, "headers": dict(request.headers), "path": request.path}
        self.calls.append(call)
        return call

    def _pop_failure(self, method: str, body: dict[str, Any] | None = None) -> web.Response | None:
        queue = self._failures.get(method)
        failure = next((f for f in queue or () if f.when is None or f.when(body or {})), None)
        if failure is None:
            return None
        queue.remove(failure)
        error = failure.error or ("ratelimited" if failure.status == 429 else f"http_{failure.status}")
        headers = {"Retry-After": str(failure.retry_after)} if failure.retry_after is not None else None
        return web.json_response({"ok": False, "error": error}, status=failure.status, headers=headers)

    def _open_socket(self, authorization: str) -> dict[str, Any]:
        """``apps.connections.open``: a fresh WebSocket URL, for an app-level token only (as Slack)."""
        if not authorization.removeprefix("Bearer ").startswith("xapp-"):
            return {"ok": False, "error": "not_allowed_token_type"}
        ws_root = self.root.replace("http://", "ws://", 1)
        return {"ok": True, "url": f"{ws_root}/socket/{next(self._serial)}"}

    def _next_ts(self) -> str:
        return f"{self._ts_base}.{next(self._serial):06d}"

    def _answer(self, method: str, body: dict[str, Any]) -> dict[str, Any]:
        channel = body.get("channel")
        if method == "auth.test":
            return {
                "ok": True,
                "url": "https://minerva-test.slack.com/",
                "team": "Minerva Test",
                "user": "minerva",
                "team_id": TEAM_ID,
                "user_id": BOT_USER_ID,
                "bot_id": BOT_ID,
                "is_enterprise_install": False,
            }
        if method == "chat.postMessage":
            ts = self._next_ts()
            return {"ok": True, "channel": self.dm_channels.get(channel, channel), "ts": ts,
                    "message": self._message(body, ts)}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": self._next_ts()}
        if method == "chat.update":
            ts = body.get("ts")
            message = self._message(body, ts)
            return {"ok": True, "channel": channel, "ts": ts, "text": message["text"], "message": message}
        if method == "views.publish":
            view = _decoded(body.get("view")) or {}
            return {"ok": True, "view": {"id": f"V{next(self._serial):08d}", "team_id": TEAM_ID, **view}}
        if method in ("views.open", "views.update"):  # a modal: Slack answers with the view and its new id
            view = _decoded(body.get("view")) or {}
            return {"ok": True, "view": {"id": f"V{next(self._serial):08d}", "team_id": TEAM_ID, **view}}
        if method == "files.getUploadURLExternal":
            file_id = f"F{next(self._serial):08d}"
            return {"ok": True, "upload_url": f"{self.root}/upload/{file_id}", "file_id": file_id}
        if method == "files.completeUploadExternal":
            files = _decoded(body.get("files")) or []
            return {"ok": True, "files": [{"id": f["id"], "title": f.get("title")} for f in files]}
        if method == "usergroups.users.list":
            group = body.get("usergroup")
            if group not in self.usergroups:
                return {"ok": False, "error": "no_such_subteam"}
            return {"ok": True, "users": list(self.usergroups[group])}
        if method == "conversations.info":
            if channel in self.channels and self.channels[channel] is None:
                return {"ok": False, "error": "channel_not_found"}
            is_im = str(channel).startswith("D")
            info = {"id": channel, "name": "general", "is_channel": not is_im, "is_im": is_im}
            return {"ok": True, "channel": {**info, "is_member": True, **(self.channels.get(channel) or {})}}
        return {"ok": True}

    @staticmethod
    def _message(body: dict[str, Any], ts: str | None) -> dict[str, Any]:
        message = {"type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID, "ts": ts}
        message["text"] = body.get("text", "")
        for key in ("blocks", "thread_ts", "metadata"):
            if key in body:
                message[key] = _decoded(body[key])
        return message


async def _read_params(request: web.Request) -> dict[str, Any]:
    """Merges query-string and body parameters; JSON bodies decoded, form values kept as strings."""
    params: dict[str, Any] = dict(request.query)
    if request.content_type.startswith("multipart/"):
        form = await request.post()
        for key, value in form.items():
            params[key] = value if isinstance(value, str) else f"<file {getattr(value, 'filename', '')}>"
        return params
    raw = await request.read()
    if not raw:
        return params
    if request.content_type == "application/json" or raw.lstrip().startswith(b"{"):
        decoded = json.loads(raw)
        params.update(decoded if isinstance(decoded, dict) else {"_json": decoded})
    else:
        params.update(parse_qsl(raw.decode("utf-8"), keep_blank_values=True))
    return params


def _decoded(value: Any) -> Any:
    # Form-encoded calls carry structured fields (blocks, view, files) as JSON strings.
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value
