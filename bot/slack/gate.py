"""Malformed Slack traffic is answered here, before Bolt reads it: never a 500, never a traceback.

Bolt assumes well-formed payloads: a body that is not JSON fails in its aiohttp adapter (HTTP 500), an
``event`` that is a string fails in its authorization middleware, a numeric button ``value`` fails in our
listeners (issue 10 item 5). `GatedApp` is the Bolt app with a gate in front:

- HTTP: a body that is not UTF-8 or carries no signature headers → 400; a wrong signature or stale
  timestamp → 401 (as Bolt); a signed body that cannot be parsed → 200, logged (Slack would only retry it);
- both modes: a payload from another workspace or app (`bot.slack.origin`) → 200, logged as
  ``slack.foreign_workspace`` with its ids, and nothing else: no listener runs, no reply is sent;
- both modes: a parsed payload whose fields have the wrong shape (`payload_problem`) → 200 and, when the
  payload names a user and a channel, a private (ephemeral) message saying nothing was changed;
- a click on a button no listener handles → 200 and the same kind of private message; any other payload no
  listener handles → 200 (Slack would retry a 404);
- whatever still fails inside Bolt's own machinery → 200, logged without the payload.

Usage: ``GatedApp(client=client, signing_secret=secret, origin=allowed, process_before_response=False)``, as
`AsyncApp`; in Socket Mode behind `bot.slack.socket_mode.GatedSocketModeHandler`, which acks envelopes whose payload
is not even an object before slack_sdk reads them.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import structlog
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.request.internals import parse_body
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier

from bot.slack.check import identity_of
from bot.slack.origin import AllowedOrigin, is_unscoped, own_workspaces, request_origin

log = structlog.get_logger(__name__)
#: Slack's replay window: a request whose timestamp is further off is refused (slack_sdk's SignatureVerifier).
STALE_SECONDS = 300

MALFORMED_TEXT = ("Sorry, I couldn't read that request (it was malformed), so nothing was changed. "
                  "Please try again from the latest message.")
UNSUPPORTED_TEXT = "That button is no longer supported, so nothing was changed."
#: What to do when the app id is not known (HTTP mode without ``slack.app_id``).
APP_ID_FIX = ("set slack.app_id to the app's id (A…, Basic Information → App Credentials at api.slack.com/apps) "
              "so that requests naming another app are refused")


# --- the shapes Bolt and our listeners read ---------------------------------------------------------------


@dataclass(frozen=True)
class _Obj:
    """A JSON object whose listed fields, when present, have these shapes (others are not looked at)."""

    fields: dict[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()


@dataclass(frozen=True)
class _List:
    """A JSON array of ``item``; ``non_empty`` when Bolt reads element 0."""

    item: Any
    non_empty: bool = False


@dataclass(frozen=True)
class _OneOf:
    options: tuple


def _obj(*required: str, **fields: Any) -> _Obj:
    return _Obj(fields, required)


_ID = _OneOf((str, None))
_USER = _OneOf((str, None, _obj(id=_ID, team_id=_ID, username=_ID, name=_ID)))
_CHANNEL = _OneOf((str, None, _obj(id=_ID, name=_ID)))
_TEAM = _OneOf((str, None, _obj(id=_ID, enterprise_id=_ID, domain=_ID)))
_MESSAGE = _obj(ts=_ID, thread_ts=_ID, text=_ID, user=_USER, bot_id=_ID, subtype=_ID)
_EVENT = _obj("type", type=str, user=_USER, text=_ID, channel=_CHANNEL, channel_type=_ID, ts=_ID, thread_ts=_ID,
              event_ts=_ID, subtype=_ID, bot_id=_ID, team=_ID, user_team=_ID, tab=_ID, enterprise=_ID,
              function_execution_id=_ID, bot_access_token=_ID, message=_MESSAGE, previous_message=_MESSAGE)
_BLOCK_ACTION = _obj("action_id", action_id=str, block_id=_ID, value=_ID, type=_ID, action_ts=_ID)
_COMMON = dict(
    type=_ID, token=_ID, team_id=_ID, enterprise_id=_ID, user_id=_ID, channel_id=_ID, api_app_id=_ID, event_id=_ID,
    command=_ID, text=_ID, trigger_id=_ID, thread_ts=_ID, callback_id=_ID, response_url=_ID, challenge=_ID,
    function_execution_id=_ID, bot_access_token=_ID, is_ext_shared_channel=_OneOf((bool, None)),
    is_enterprise_install=_OneOf((bool, str, None)), team=_TEAM, user=_USER, channel=_CHANNEL,
    enterprise=_OneOf((str, None, _obj(id=_ID))), authorizations=_List(_obj(enterprise_id=_ID, team_id=_ID, user_id=_ID)),
    event=_EVENT, container=_obj(channel_id=_ID, message_ts=_ID, thread_ts=_ID), message=_MESSAGE,
    previous_message=_MESSAGE, item=_obj(channel=_CHANNEL), assistant_thread=_obj(channel_id=_ID, thread_ts=_ID),
    response_urls=_List(_obj(response_url=_ID)), view=_obj(app_installed_team_id=_ID, team_id=_ID, callback_id=_ID),
    function_data=_obj(execution_id=_ID), actions=_List(_obj()),
)
#: Per payload type: what Bolt indexes without checking (``body["event"]``, ``body["actions"][0]``) and
#: what our listeners need (a block action's ``action_id``, the clicking user's id).
_BY_TYPE = {
    "event_callback": _Obj({**_COMMON, "event": _EVENT}, ("event",)),
    "block_actions": _Obj({**_COMMON, "actions": _List(_BLOCK_ACTION, non_empty=True),
                           "user": _obj("id", id=str, team_id=_ID, username=_ID, name=_ID)}, ("actions", "user")),
    "interactive_message": _Obj({**_COMMON, "actions": _List(_obj(), non_empty=True)}, ("actions",)),
}
_BODY = _Obj(_COMMON)


def payload_problem(body: Any) -> str | None:
    """Why ``body`` (a parsed Slack request body or Socket Mode payload) cannot be handed to Bolt, or None.

    Only the fields Bolt and the listeners read are checked: each must have the type Slack sends (ids and
    texts are strings, ``event`` and ``user`` objects, ``actions`` a non-empty array of objects with a string
    ``action_id`` and ``value`` …). Other fields are not looked at.

    Returns:
        e.g. ``"actions[0].value: expected text, got int"``; None for a well-formed body. Never raises.
    """
    if not isinstance(body, dict):
        return f"body: expected an object, got {kind_of(body)}"
    shape = _BY_TYPE.get(body.get("type")) if isinstance(body.get("type"), str) else None
    return _check(body, shape or _BODY, "body")


def _check(value: Any, shape: Any, path: str) -> str | None:
    if isinstance(shape, _OneOf):
        problems = [_check(value, option, path) for option in shape.options]
        return None if None in problems else next(p for p in problems if p)
    if shape is None:
        return None if value is None else f"{path}: expected null, got {kind_of(value)}"
    if isinstance(shape, type):
        # bool is an int in Python: a JSON true is never a valid number or text here.
        ok = isinstance(value, shape) and not (shape is not bool and isinstance(value, bool))
        return None if ok else f"{path}: expected {_NAMES.get(shape, shape.__name__)}, got {kind_of(value)}"
    if isinstance(shape, _List):
        if not isinstance(value, list):
            return f"{path}: expected an array, got {kind_of(value)}"
        if shape.non_empty and not value:
            return f"{path}: empty"
        return next((p for i, item in enumerate(value) if (p := _check(item, shape.item, f"{path}[{i}]"))), None)
    if not isinstance(value, dict):
        return f"{path}: expected an object, got {kind_of(value)}"
    missing = [name for name in shape.required if name not in value]
    if missing:
        return f"{path}.{missing[0]}: missing"
    for name, inner in shape.fields.items():
        if name in value and (problem := _check(value[name], inner, f"{path}.{name}")):
            return problem
    return None


_NAMES = {str: "text", bool: "true/false", dict: "an object", list: "an array"}


def kind_of(value: Any) -> str:
    """What JSON ``value`` is, as messages name it: "null", "true/false", "int", "float", "text", "an array",
    "an object"."""
    return {type(None): "null", bool: "true/false", int: "int", float: "float", str: "text", list: "an array",
            dict: "an object"}.get(type(value), type(value).__name__)


# --- the gated app ----------------------------------------------------------------------------------------


class GatedApp(AsyncApp):
    """`AsyncApp` with the gate of this module in front of Bolt, in HTTP and Socket Mode alike.

    Args:
        signing_secret: as for `AsyncApp`; also verifies HTTP requests before their body is parsed.
        origin: the workspaces and app whose requests are answered (`bot.slack.origin.allowed_origin`); no
            workspaces (the default) = the bot token's own, asked from ``auth.test`` before the first request.
        **kwargs: passed to `AsyncApp` (``client``, ``process_before_response`` …).
    """

    def __init__(self, *, signing_secret: str, origin: AllowedOrigin | None = None, **kwargs: Any):
        super().__init__(signing_secret=signing_secret, **kwargs)
        self._verifier = SignatureVerifier(signing_secret)
        self._replies: set[asyncio.Task] = set()  # private replies in flight (a task needs a reference)
        self._origin = origin or AllowedOrigin()
        self._learning = asyncio.Lock()  # one auth.test for the first requests arriving together
        if self._origin.workspaces:
            log.info("slack.allowed_origin", **self._origin.fields())

    @property
    def origin(self) -> AllowedOrigin:
        """The workspaces and app answered now (workspaces empty until learnt, see the constructor)."""
        return self._origin

    def learn_app_id(self, app_id: Any) -> None:
        """Take the app id Slack names for this connection (the Socket Mode ``hello``) when none is configured.

        A configured id is kept (a different one is logged: every request will then be refused); no id at
        all is logged as ``slack.app_id_unchecked``, with the fix.
        """
        known = self._origin.app_id
        if not isinstance(app_id, str) or not app_id:
            if not known:
                log.warning("slack.app_id_unchecked", reason="the connection names no app", fix=APP_ID_FIX)
        elif not known:
            self._origin = AllowedOrigin(self._origin.workspaces, app_id)
            log.info("slack.allowed_origin", **self._origin.fields(), learned_from="socket mode hello")
        elif known != app_id:
            log.warning("slack.app_id_mismatch", configured=known, connection=app_id,
                        fix="slack.app_id must be the id of the app whose SLACK_APP_TOKEN is set")

    def web_app(self, path: str = "/slack/events", port: int = 3000) -> web.Application:
        """An aiohttp application with POST ``path`` for Slack's requests (events, clicks, commands)."""
        web_app = web.Application()
        web_app.router.add_post(path, self._handle_http)
        return web_app

    async def async_dispatch(self, req: AsyncBoltRequest) -> BoltResponse:
        """Bolt's dispatch for well-formed payloads from the allowed origin; 200 and, for a malformed one, a
        private reply (when possible) otherwise."""
        if (screened := await self.screen(req.body, mode=req.mode)) is not None:
            return screened
        try:
            response = await super().async_dispatch(req)
        except Exception as exc:  # Bolt's own machinery; the listeners' errors go to @app.error
            log.error("slack.dispatch_failed", error=repr(exc), payload_type=req.body.get("type"))
            return BoltResponse(status=200, body="")
        if response.status == 404:  # no listener: an action of a retired button, or a payload we never asked for
            if req.body.get("type") in ("block_actions", "interactive_message"):
                log.warning("slack.unhandled_action", action_id=_first_action_id(req.body))
                self._reply_privately(req.body, UNSUPPORTED_TEXT)
            else:
                log.info("slack.unhandled_request", payload_type=req.body.get("type"))
            return BoltResponse(status=200, body="")
        if response.status >= 500:
            log.error("slack.dispatch_failed", status=response.status, payload_type=req.body.get("type"))
            return BoltResponse(status=200, body="")
        return response

    async def _handle_http(self, request: web.Request) -> web.Response:
        raw = await request.read()
        timestamp = request.headers.get("X-Slack-Request-Timestamp")
        signature = request.headers.get("X-Slack-Signature")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            log.warning("slack.garbled_request", reason="body is not UTF-8", size=len(raw))
            return web.Response(status=400, text="the body is not UTF-8")
        if not timestamp or not signature:
            log.warning("slack.unsigned_request", size=len(raw))
            return web.Response(status=400, text="missing X-Slack-Signature / X-Slack-Request-Timestamp")
        if not self._verifier.is_valid(body=text, timestamp=timestamp, signature=signature):
            log.warning("slack.bad_signature", **_signature_hint(timestamp))
            return web.json_response({"error": "invalid request"}, status=401)
        try:
            body = parse_body(text, request.content_type)
        except Exception as exc:  # JSONDecodeError, RecursionError on absurd nesting, …
            log.warning("slack.malformed_request", reason=f"body is not JSON: {type(exc).__name__}", size=len(raw))
            return web.Response(status=200)
        if (screened := await self.screen(body, mode="http")) is not None:  # before Bolt parses it again
            return await to_aiohttp_response(screened)
        try:
            bolt_request = AsyncBoltRequest(body=text, query=request.query_string, headers=request.headers)
        except Exception as exc:
            log.warning("slack.malformed_request", reason=repr(exc), size=len(raw))
            return web.Response(status=200)
        return await to_aiohttp_response(await self.async_dispatch(bolt_request))

    async def screen(self, body: Any, *, mode: str) -> BoltResponse | None:
        """The gate's answer to a parsed payload, given before Bolt builds a request of it (Bolt's request
        fails on some malformed shapes): 200 and nothing else for another workspace's or app's (checked
        first, so its user is told nothing); 200 and a private reply when possible for a malformed one
        (`payload_problem`); None when Bolt may have it.

        Args:
            body: the parsed HTTP body or Socket Mode payload, of any JSON type.
            mode: "http" or "socket_mode", for the log.
        """
        if (refused := await self._refused(body, mode=mode)) is not None:
            return refused
        if (problem := payload_problem(body)) is not None:
            return self._malformed(body, problem, mode=mode)
        return None

    async def _refused(self, body: Any, *, mode: str) -> BoltResponse | None:
        """200 and nothing else for a payload from another workspace or app (logged as ``slack.foreign_workspace``
        with the ids it names and the allowed ones); None when it may go on (also for a body that is not an
        object, and for Slack's URL checks, which name no workspace)."""
        if not isinstance(body, dict) or is_unscoped(body):
            return None
        allowed = await self._allowed()
        origin = request_origin(body)
        reason = "the bot's own workspace is unknown (auth.test failed)" if allowed is None else allowed.refusal(origin)
        if reason is None:
            return None
        payload_type = body.get("type") if isinstance(body.get("type"), str) else None
        log.warning("slack.foreign_workspace", reason=reason, payload_type=payload_type, mode=mode, **origin.fields(),
                    **(allowed or self._origin).fields())
        return BoltResponse(status=200, body="")

    async def _allowed(self) -> AllowedOrigin | None:
        """The allowed origin; without workspaces, first the bot token's own from ``auth.test`` (asked once, and
        again after a failure). None while ``auth.test`` fails (logged)."""
        if self._origin.workspaces:
            return self._origin
        async with self._learning:
            if not self._origin.workspaces:
                try:
                    identity = identity_of((await self.client.auth_test()).data)
                except Exception as exc:  # SlackApiError, network trouble: refuse now, ask again next time
                    log.error("slack.identity_unknown", error=repr(exc), fix="check SLACK_BOT_TOKEN (minerva doctor)")
                    return None
                self._origin = AllowedOrigin(own_workspaces(identity), self._origin.app_id or identity.app_id)
                log.info("slack.allowed_origin", **self._origin.fields(), learned_from="auth.test")
        return self._origin if self._origin.workspaces else None

    def _malformed(self, body: Any, problem: str, *, mode: str) -> BoltResponse:
        payload_type = body.get("type") if isinstance(body, dict) else None
        log.warning("slack.malformed_payload", problem=problem, payload_type=payload_type, mode=mode)
        if isinstance(body, dict):
            self._reply_privately(body, MALFORMED_TEXT)
        return BoltResponse(status=200, body="")

    def _reply_privately(self, body: dict, text: str) -> None:
        """An ephemeral ``text`` to the payload's user in its channel (and thread), after the ack."""
        where = _reply_target(body)
        if where is None:
            return
        task = asyncio.ensure_future(self._post_ephemeral(*where, text))
        self._replies.add(task)
        task.add_done_callback(self._replies.discard)

    async def _post_ephemeral(self, channel: str, user: str, thread_ts: str | None, text: str) -> None:
        try:
            await self.client.chat_postEphemeral(channel=channel, user=user, text=text, thread_ts=thread_ts)
        except SlackApiError as exc:
            log.warning("slack.confirm_failed", error=exc.response.get("error"))
        except Exception as exc:  # network trouble: the log says so, the ack is long sent
            log.warning("slack.confirm_failed", error=repr(exc))


def _reply_target(body: dict) -> tuple[str, str, str | None] | None:
    """(channel, user, thread_ts) read defensively from any payload; None when a channel or user is missing."""
    user = _text(body.get("user")) or _field(body.get("user"), "id") or _text(body.get("user_id"))
    channel = (_text(body.get("channel")) or _field(body.get("channel"), "id")
               or _field(body.get("container"), "channel_id") or _text(body.get("channel_id")))
    thread_ts = _field(body.get("message"), "thread_ts") or _field(body.get("container"), "message_ts")
    return (channel, user, thread_ts) if channel and user else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _field(value: Any, key: str) -> str | None:
    return _text(value.get(key)) if isinstance(value, dict) else None


def _first_action_id(body: dict) -> str | None:
    actions = body.get("actions")
    first = actions[0] if isinstance(actions, list) and actions else None
    return _field(first, "action_id")


def _signature_hint(timestamp: str) -> dict[str, str]:
    """Why a signed request was refused, for the admin reading the log: a stale timestamp (more than 5 minutes
    off, Slack's replay window) or a signature made with another signing secret."""
    try:
        skew = abs(time.time() - int(timestamp))
    except ValueError:
        return {"reason": "X-Slack-Request-Timestamp is not a number"}
    if skew > STALE_SECONDS:
        return {"reason": f"timestamp {skew:.0f} s off", "fix": "check this machine's clock (NTP)"}
    return {"reason": "signature does not match",
            "fix": "SLACK_SIGNING_SECRET must be the app's Signing Secret (Basic Information at api.slack.com/apps)"}
