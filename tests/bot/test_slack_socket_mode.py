"""End to end in Socket Mode: the real app behind `bot.slack.socket_mode.GatedSocketModeHandler` (slack_bolt's
AsyncSocketModeHandler with the gate's client), as `bot.slack.server.run` starts it, connected over a real WebSocket
to the fake Slack (`tests.fakes.socket_mode`).

The handler's Web API client is the app's, pointed at the fake (as SLACK_API_URL does), so
``apps.connections.open`` and every reply go to the fake too. Nothing of slack-bolt or slack-sdk is mocked.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest_asyncio
import structlog.testing

from bot.slack.app import VOTE_THANKS, build_app, make_client
from bot.slack.blocks import FEEDBACK_ACTION
from bot.slack.gate import MALFORMED_TEXT, GatedApp
from bot.slack.socket_mode import GatedSocketModeHandler
from feedback import FeedbackStore
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack

APP_TOKEN = "xapp-1-A1-1-test"
PRO_QUESTION = "what is the API rate limit on the Pro plan?"
ACK_BUDGET = 3.0  # seconds: Slack retries an envelope that is not acked in time
QUIET_SECONDS = 0.5


@dataclass
class SocketBot:
    fake: FakeSlack
    store: FeedbackStore
    app: GatedApp

    def __post_init__(self) -> None:
        self._serial = itertools.count(1)

    def mention(self, question: str, *, channel: str = "C1", drop_before_ack: bool = False, team_id: str = "T1",
                api_app_id: str = "A1") -> tuple[str, dict]:
        """Sends an app_mention envelope (from workspace ``team_id``, for app ``api_app_id``); returns (envelope
        id, event)."""
        n = next(self._serial)
        event = {"type": "app_mention", "user": "U1", "text": f"<@{BOT_USER_ID}> {question}", "channel": channel,
                 "ts": f"1700000100.{n:06d}"}
        body = {"type": "event_callback", "team_id": team_id, "api_app_id": api_app_id, "event": event,
                "event_id": f"EvSOCK{n:04d}", "event_time": int(time.time()),
                "authorizations": [{"team_id": team_id, "user_id": BOT_USER_ID, "is_bot": True}]}
        return self.fake.socket.send("events_api", body, drop_before_ack=drop_before_ack), event

    async def acked(self, envelope_id: str) -> dict:
        ack = await self.fake.socket.wait_for_ack(envelope_id)
        assert ack["at"] < ACK_BUDGET, ack
        return ack

    def replies_in(self, thread_ts: str) -> list[dict]:
        return [c["body"] for c in self.fake.calls_to("chat.postMessage") if c["body"].get("thread_ts") == thread_ts]

    async def answered_once(self, event: dict) -> dict:
        deadline = time.monotonic() + 20
        while not self.replies_in(event["ts"]):
            assert time.monotonic() < deadline, f"no answer to {event['ts']}"
            await asyncio.sleep(0.02)
        await asyncio.sleep(QUIET_SECONDS)
        (reply,) = self.replies_in(event["ts"])
        return reply


@contextlib.asynccontextmanager
async def running(fake_slack: FakeSlack, tmp_path: Path, kb, settings) -> AsyncIterator[SocketBot]:
    """The app with ``settings`` behind the Socket Mode handler, connected to the fake."""
    store = FeedbackStore.open(tmp_path / "feedback.sqlite")
    executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="test-socket")
    app = build_app(kb, store, settings, client=make_client("xoxb-test", fake_slack.url),
                    signing_secret="socket-mode", executor=executor)
    handler = GatedSocketModeHandler(app, APP_TOKEN)  # as bot.slack.server.run does; app.client carries the fake's URL
    await handler.connect_async()
    try:
        await fake_slack.socket.wait_for_connections(1)
        yield SocketBot(fake_slack, store, app)
    finally:
        await handler.close_async()
        executor.shutdown(wait=False)
        store.close()


@pytest_asyncio.fixture
async def socket_bot(fake_slack: FakeSlack, tmp_path: Path, sample_kb, sample_settings) -> AsyncIterator[SocketBot]:
    async with running(fake_slack, tmp_path, sample_kb, sample_settings) as bot:
        yield bot


async def test_events_clicks_and_commands_are_acked_and_answered_once(socket_bot: SocketBot) -> None:
    fake = socket_bot.fake
    assert [c["headers"]["Authorization"] for c in fake.calls_to("apps.connections.open")] == [f"Bearer {APP_TOKEN}"]

    envelope, event = socket_bot.mention(PRO_QUESTION)
    await socket_bot.acked(envelope)
    reply = await socket_bot.answered_once(event)
    answer_id = next(b for b in reply["blocks"] if b["type"] == "context_actions")["elements"][0]["positive_button"][
        "value"].split(":", 1)[1]

    click = {"type": "block_actions", "user": {"id": "U1"}, "team": {"id": "T1"}, "api_app_id": "A1",
             "channel": {"id": "C1"}, "container": {"channel_id": "C1", "message_ts": "1700000101.000001"},
             "message": {"ts": "1700000101.000001", "thread_ts": event["ts"]}, "response_url": fake.response_url("click"),
             "actions": [{"action_id": FEEDBACK_ACTION, "type": "feedback_buttons", "value": f"up:{answer_id}"}]}
    await socket_bot.acked(fake.socket.send("interactive", click))
    (confirm,) = await fake.wait_for("chat.postEphemeral")
    assert confirm["body"]["text"] == VOTE_THANKS["up"]
    assert [v["value"] for v in socket_bot.store.db.query("SELECT value FROM votes")] == ["up"]

    command = {"command": "/ask", "text": PRO_QUESTION, "user_id": "U2", "channel_id": "C2", "channel_name": "general",
               "team_id": "T1", "api_app_id": "A1", "response_url": fake.response_url("cmd"), "trigger_id": "1.2.3"}
    await socket_bot.acked(fake.socket.send("slash_commands", command))
    (response,) = await fake.wait_for("response_url")
    assert response["path"] == "/response/cmd" and response["body"]["response_type"] == "in_channel"

    # A malformed click is acked too, and the clicker is told privately.
    await socket_bot.acked(fake.socket.send("interactive", {**click, "actions": [{"action_id": FEEDBACK_ACTION, "value": 7}]}))
    confirms = await fake.wait_for("chat.postEphemeral", count=2)
    assert confirms[1]["body"]["text"] == MALFORMED_TEXT

    await asyncio.sleep(QUIET_SECONDS)
    assert len(fake.calls_to("chat.postMessage")) == 1  # the mention; the command answered through its response_url
    assert len(list(socket_bot.store.db.query("SELECT answer_id FROM answers"))) == 2
    assert all(envelope.envelope_id in fake.socket.acks for envelope in fake.socket.sent)


async def test_nothing_is_lost_or_duplicated_across_reconnects(socket_bot: SocketBot) -> None:
    fake = socket_bot.fake
    first, before = socket_bot.mention(PRO_QUESTION)
    await socket_bot.acked(first)
    await socket_bot.answered_once(before)

    await fake.socket.disconnect("refresh_requested")  # Slack refreshes the connection
    await fake.socket.wait_for_connections(2)
    second, after_refresh = socket_bot.mention(PRO_QUESTION)
    await socket_bot.acked(second)
    await socket_bot.answered_once(after_refresh)

    await fake.socket.drop()  # Slack restarts: the socket goes away
    queued, while_down = socket_bot.mention(PRO_QUESTION)  # sent while no connection is up: kept for the next
    await fake.socket.wait_for_connections(3)
    await socket_bot.acked(queued)
    await socket_bot.answered_once(while_down)

    lost, unacked = socket_bot.mention(PRO_QUESTION, drop_before_ack=True)  # delivered, ack lost, then retried
    await fake.socket.wait_for_connections(4)
    (retry,) = [e for e in fake.socket.sent if e.payload["event"]["ts"] == unacked["ts"] and e.retry_attempt == 1]
    await socket_bot.acked(retry.envelope_id)
    await socket_bot.answered_once(unacked)

    assert lost not in fake.socket.acks
    assert len(fake.calls_to("apps.connections.open")) == 4
    events = [before, after_refresh, while_down, unacked]
    assert len(fake.calls_to("chat.postMessage")) == len(events)
    rows = list(socket_bot.store.db.query("SELECT thread_ts FROM answers ORDER BY created_at"))
    assert [r["thread_ts"] for r in rows] == [e["ts"] for e in events]
    assert all(ack["at"] < ACK_BUDGET for ack in fake.socket.acks.values())
    assert json.dumps(fake.socket.acks)  # acks are plain JSON, as sent


async def test_an_envelope_whose_payload_is_not_an_object_is_acked_and_logged_without_a_traceback(
        socket_bot: SocketBot, capsys, caplog) -> None:
    fake = socket_bot.fake
    payloads = [("events_api", [1, 2]), ("events_api", "a text"), ("interactive", None), ("slash_commands", 7),
                ("events_api", True), ("interactive", [])]

    with structlog.testing.capture_logs() as logs:
        for envelope in [fake.socket.send(kind, payload) for kind, payload in payloads]:
            await socket_bot.acked(envelope)  # at once: Slack would send an unacked envelope again

    problems = sorted(e["problem"] for e in logs if e["event"] == "slack.malformed_payload")
    assert problems == sorted(f"payload: expected an object, got {kind}" for kind in
                              ("an array", "text", "null", "int", "true/false", "an array"))
    assert all(e["log_level"] == "warning" and e["mode"] == "socket_mode" for e in logs
               if e["event"] == "slack.malformed_payload")
    envelope, event = socket_bot.mention(PRO_QUESTION)  # the connection is fine
    await socket_bot.acked(envelope)
    await socket_bot.answered_once(event)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    assert [r for r in caplog.records if r.exc_info] == []
    assert len(fake.socket.sent) == len(payloads) + 1  # nothing was delivered twice
    assert fake.calls_to("chat.postEphemeral") == [] and len(fake.calls_to("chat.postMessage")) == 1


async def test_envelopes_from_another_workspace_or_app_are_acked_and_ignored(socket_bot: SocketBot) -> None:
    fake = socket_bot.fake
    envelope, event = socket_bot.mention(PRO_QUESTION)
    await socket_bot.acked(envelope)
    reply = await socket_bot.answered_once(event)
    origin = socket_bot.app.origin  # the app named by the connection's hello, the workspace by auth.test
    assert (origin.app_id, origin.workspaces) == ("A1", {"T1"})
    answer_id = next(b for b in reply["blocks"] if b["type"] == "context_actions")["elements"][0]["positive_button"][
        "value"].split(":", 1)[1]
    click = {"type": "block_actions", "user": {"id": "U9", "team_id": "T2"}, "team": {"id": "T2"}, "api_app_id": "A1",
             "channel": {"id": "C1"}, "container": {"channel_id": "C1", "message_ts": "1700000101.000001"},
             "message": {"ts": "1700000101.000001", "thread_ts": event["ts"]}, "response_url": fake.response_url("t2"),
             "actions": [{"action_id": FEEDBACK_ACTION, "type": "feedback_buttons", "value": f"down:{answer_id}"}]}
    command = {"command": "/ask", "text": PRO_QUESTION, "user_id": "U9", "channel_id": "C2", "team_id": "T2",
               "api_app_id": "A1", "response_url": fake.response_url("t2-cmd"), "trigger_id": "1.2.3"}

    with structlog.testing.capture_logs() as logs:
        sent = [socket_bot.mention(PRO_QUESTION, team_id="T2")[0], socket_bot.mention(PRO_QUESTION, api_app_id="A2")[0],
                fake.socket.send("interactive", click), fake.socket.send("slash_commands", command)]
        for envelope in sent:
            await socket_bot.acked(envelope)
        await asyncio.sleep(QUIET_SECONDS)

    refused = [e for e in logs if e["event"] == "slack.foreign_workspace"]
    assert sorted((e["reason"], str(e["payload_type"])) for e in refused) == [
        ("another app", "event_callback"), ("another workspace", "None"), ("another workspace", "block_actions"),
        ("another workspace", "event_callback")]  # a slash command's payload has no type
    assert all(e["mode"] == "socket_mode" for e in refused)
    assert len(fake.calls_to("chat.postMessage")) == 1  # the first mention's answer only
    assert fake.calls_to("chat.postEphemeral") == [] and fake.calls_to("response_url") == []
    assert len(list(socket_bot.store.db.query("SELECT answer_id FROM answers"))) == 1
    assert list(socket_bot.store.db.query("SELECT value FROM votes")) == []


async def test_app_home_is_published_over_socket_mode(socket_bot: SocketBot) -> None:
    fake = socket_bot.fake
    event = {"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "event_ts": "1700000200.000001"}
    body = {"type": "event_callback", "team_id": "T1", "api_app_id": "A1", "event": event, "event_id": "EvSOCKHOME",
            "event_time": int(time.time()), "authorizations": [{"team_id": "T1", "user_id": BOT_USER_ID, "is_bot": True}]}

    await socket_bot.acked(fake.socket.send("events_api", body))

    (call,) = await fake.wait_for("views.publish")
    view = call["body"]["view"]
    view = json.loads(view) if isinstance(view, str) else view
    assert call["body"]["user_id"] == "U1" and view["type"] == "home" and 0 < len(view["blocks"]) <= 100
    assert "/ask" in json.dumps(view) and "Channel settings" in json.dumps(view)


async def test_ask_an_expert_click_modal_and_submission_over_socket_mode(fake_slack: FakeSlack, tmp_path: Path,
                                                                         sample_kb, sample_settings) -> None:
    """Issue 25 item 5: the escalation's click, the expert's "Answer" (views.open) and the form's
    view_submission arrive as Socket Mode envelopes; the asker's thread gets the answer once."""
    import copy

    from bot.slack.experts import (ANSWER_BLOCK, ANSWER_INPUT, ASK_EXPERT_ACTION, EXPERT_ANSWER_ACTION, EXPERT_MODAL,
                                   PAGE_BLOCK, PAGE_INPUT)
    from bot.cli.sandbox.signing import view_submission

    settings = copy.deepcopy(sample_settings)
    settings.experts.ask = "UEXPERT"
    async with running(fake_slack, tmp_path, sample_kb, settings) as bot:
        envelope, event = bot.mention(PRO_QUESTION)
        await bot.acked(envelope)
        reply = await bot.answered_once(event)

        def click(message: dict, action_id: str, user: str) -> dict:
            value = next(e["value"] for b in message["blocks"] for e in b.get("elements", [])
                         if e.get("action_id") == action_id)
            return {"type": "block_actions", "user": {"id": user}, "team": {"id": "T1"}, "api_app_id": "A1",
                    "trigger_id": "1.2.3", "channel": {"id": message["channel"]},
                    "container": {"channel_id": message["channel"], "message_ts": "1700000101.000001"},
                    "message": {"ts": "1700000101.000001", "thread_ts": message.get("thread_ts"),
                                "blocks": message["blocks"]},
                    "response_url": fake_slack.response_url("click"),
                    "actions": [{"action_id": action_id, "type": "button", "value": value}]}

        await bot.acked(fake_slack.socket.send("interactive", click(reply, ASK_EXPERT_ACTION, "U1")))
        deadline = time.monotonic() + 10
        while not [c for c in fake_slack.calls_to("chat.postMessage") if c["body"]["channel"] == "UEXPERT"]:
            assert time.monotonic() < deadline, "the expert was not asked"
            await asyncio.sleep(0.02)
        request = next(c["body"] for c in fake_slack.calls_to("chat.postMessage") if c["body"]["channel"] == "UEXPERT")
        await asyncio.sleep(QUIET_SECONDS)  # the request's messages are stored after posting
        await bot.acked(fake_slack.socket.send("interactive", click(request, EXPERT_ANSWER_ACTION, "UEXPERT")))
        (opened,) = await fake_slack.wait_for("views.open")
        view = opened["body"]["view"]
        view = json.loads(view) if isinstance(view, str) else view
        values = {ANSWER_BLOCK: {ANSWER_INPUT: {"type": "plain_text_input", "value": "600 a minute; ask support."}},
                  PAGE_BLOCK: {PAGE_INPUT: {"type": "checkboxes", "selected_options": []}}}
        for _ in range(2):  # a second submission (another replica, a double click) posts nothing more
            submit = view_submission(EXPERT_MODAL, view["private_metadata"], values, user="UEXPERT",
                                     team_id="T1", api_app_id="A1")
            await bot.acked(fake_slack.socket.send("interactive", submit))
        await asyncio.sleep(QUIET_SECONDS)
        answered = [r for r in bot.replies_in(event["ts"]) if "Answered by" in r.get("text", "")]
        assert len(answered) == 1 and "600 a minute; ask support." in answered[0]["text"]
