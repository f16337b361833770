"""End to end: real signed HTTP requests into the real aiohttp app, Web API calls into a local fake Slack.

Nothing of slack-bolt or slack-sdk is mocked: events, clicks and slash commands are signed with the app's
signing secret and POSTed to ``/slack/events`` of `bot.slack.server.create_web_app`; the app's AsyncWebClient
talks to `tests.fakes.slack_api.FakeSlack`. Bolt acks first and runs listeners afterwards
(``process_before_response=False``), so tests wait for the fake to record the reply; "nothing posted"
cases sleep briefly and then send a control question that must be answered.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
import pytest
import pytest_asyncio
import structlog
import structlog.testing
from aiohttp.test_utils import TestServer

from bot.slack.app import VOTE_FAILED, VOTE_THANKS, VOTE_UNCHANGED, VOTE_UNKNOWN, build_app, make_client
from bot.slack.blocks import FEEDBACK_ACTION
from bot.slack.replies import FAILURE_TEXT, NO_WORDS_TEXT, NOT_READY_TEXT
from bot.slack.gate import MALFORMED_TEXT, UNSUPPORTED_TEXT
from bot.slack.server import EVENTS_PATH, create_web_app
from feedback import FeedbackStore
from knowledge import KnowledgeBase
from tests.fakes.fixtures import button_click, event_envelope, mention_event, signed_request_headers
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack

SECRET = "test-signing-secret"
PRO_QUESTION = "what is the API rate limit on the Pro plan?"
# Retrieves runbooks/incident-response.md with high confidence (its "Declaring" section, with <!channel>).
INCIDENT_QUESTION = "how do I announce a SEV1 incident?"
UNANSWERABLE = "what's the parental leave policy?"
REFUSAL_TEXT = "I couldn't find this in the knowledge base."
QUIET_SECONDS = 0.5  # how long a "nothing is posted" case waits before it checks


@dataclass
class Bot:
    """One running app: its aiohttp server, the fake Slack it posts to, and its feedback store."""

    fake: FakeSlack
    store: FeedbackStore
    server: TestServer
    session: aiohttp.ClientSession

    def __post_init__(self) -> None:
        self._serial = itertools.count(1)

    def next_ts(self) -> str:
        return f"1700000000.{next(self._serial):06d}"

    async def post(self, body: bytes, *, timestamp: int | None = None, secret: str = SECRET,
                   extra_headers: dict[str, str] | None = None) -> int:
        """POSTs a signed request to /slack/events; returns the HTTP status."""
        headers = {**signed_request_headers(secret, body, timestamp), **(extra_headers or {})}
        async with self.session.post(self.server.make_url(EVENTS_PATH), data=body, headers=headers) as response:
            await response.read()
            return response.status

    async def send_event(self, event: dict, *, event_id: str | None = None, retry_num: int | None = None) -> int:
        """Delivers an ``event_callback`` envelope around ``event``."""
        envelope = event_envelope(event, event_id or f"Ev{next(self._serial):08d}")
        extra = {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"} if retry_num else None
        return await self.post(json.dumps(envelope).encode(), extra_headers=extra)

    async def mention(self, question: str, *, channel: str = "C1", user: str = "U1", thread_ts: str | None = None,
                      **extra) -> dict:
        """Sends ``<@UBOT> question`` as an app_mention; returns the event (its ``ts`` is the thread)."""
        event = mention_event(question, ts=self.next_ts(), channel=channel, user=user, thread_ts=thread_ts, **extra)
        assert await self.send_event(event) == 200
        return event

    async def click(self, value: str, *, answer_message: dict, user: str = "U1",
                    action_id: str = FEEDBACK_ACTION) -> int:
        """Clicks a 👍/👎 button on ``answer_message`` (a recorded chat.postMessage body)."""
        payload = button_click(value, message=answer_message, message_ts="1700000001.000001", user=user,
                               action_id=action_id, response_url=self.fake.response_url("action"))
        return await self.post(urlencode({"payload": json.dumps(payload)}).encode())

    async def slash_ask(self, text: str, *, response_key: str = "cmd-1", team_id: str = "T1",
                        channel: str = "C2", channel_name: str = "general") -> int:
        """Sends ``/ask text`` as Slack does: form fields, with a response_url on the fake; from workspace
        ``team_id``, in ``channel``."""
        form = {
            "token": "legacy-verification-token", "team_id": team_id, "team_domain": "minerva-test",
            "channel_id": channel, "channel_name": channel_name, "user_id": "U2", "user_name": "bob",
            "command": "/ask", "text": text, "api_app_id": "A1", "is_enterprise_install": "false",
            "response_url": self.fake.response_url(response_key), "trigger_id": "123.456.def",
        }
        return await self.post(urlencode(form).encode())

    async def posts(self, count: int = 1) -> list[dict]:
        """Waits for ``count`` chat.postMessage calls; returns all their bodies."""
        return [call["body"] for call in await self.fake.wait_for("chat.postMessage", count=count)]

    def answer_rows(self) -> list[dict]:
        return list(self.store.db.query("SELECT * FROM answers ORDER BY created_at"))

    def vote_rows(self) -> list[dict]:
        return list(self.store.db.query("SELECT * FROM votes"))


BotFactory = Callable[..., Awaitable[Bot]]


@pytest_asyncio.fixture
async def start_bot(fake_slack: FakeSlack, tmp_path: Path, sample_kb, sample_settings) -> AsyncIterator[BotFactory]:
    """Starts the real app on a TestServer (127.0.0.1, free port) with a fresh FeedbackStore in tmp_path."""
    async with AsyncExitStack() as stack:
        async def start(kb=None, settings=None) -> Bot:
            store = FeedbackStore.open(tmp_path / "feedback.sqlite")
            stack.callback(store.close)
            executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="test-minerva")
            stack.callback(executor.shutdown, wait=False)
            app = build_app(kb or sample_kb, store, settings or sample_settings, client=make_client("xoxb-test", fake_slack.url),
                            signing_secret=SECRET, executor=executor)
            server = TestServer(create_web_app(app), host="127.0.0.1")
            await server.start_server()
            stack.push_async_callback(server.close)
            session = await stack.enter_async_context(aiohttp.ClientSession())
            return Bot(fake_slack, store, server, session)

        yield start
        await asyncio.sleep(0.05)  # let Bolt's background listeners finish before the fake stops


@pytest_asyncio.fixture
async def bot(start_bot: BotFactory) -> Bot:
    return await start_bot()


def blocks_of_type(message: dict, block_type: str) -> list[dict]:
    return [b for b in message.get("blocks") or [] if b["type"] == block_type]


def answer_id_of(message: dict) -> str:
    (actions,) = blocks_of_type(message, "context_actions")
    return actions["elements"][0]["positive_button"]["value"].split(":", 1)[1]


# --- answering ------------------------------------------------------------------------------------------


async def test_mention_is_answered_once_in_the_thread_with_quote_citation_and_buttons(bot: Bot) -> None:
    event = await bot.mention(PRO_QUESTION)

    (message,) = await bot.posts()
    await asyncio.sleep(QUIET_SECONDS)
    assert len(bot.fake.calls_to("chat.postMessage")) == 1
    assert message["channel"] == "C1" and message["thread_ts"] == event["ts"]
    assert message["text"] and len(message["text"]) <= 300
    sections = [b["text"]["text"] for b in blocks_of_type(message, "section")]
    # the table row that answers, shown as readable text (Slack renders no Markdown tables) first, and a quote
    # of what its section says beyond it
    assert "Plan: Pro · Requests per minute: 600" in sections[0]
    assert any(text.startswith("> ") and "600" not in text for text in sections[1:])
    citations = [e["text"] for b in blocks_of_type(message, "context") for e in b["elements"]]
    citation = re.compile(r"^\[1\] <https://wiki\.nimbus\.example/api/rate-limits\.md\|API rate limits> .*"
                          r" · updated (today|1 day ago|\d+ days ago)$")
    assert any(citation.match(c) for c in citations), citations
    (actions,) = blocks_of_type(message, "context_actions")
    (buttons,) = actions["elements"]
    assert buttons["type"] == "feedback_buttons" and buttons["action_id"] == FEEDBACK_ACTION
    answer_id = answer_id_of(message)
    assert buttons["positive_button"]["value"] == f"up:{answer_id}"
    assert buttons["negative_button"]["value"] == f"down:{answer_id}"

    row = bot.store.get_answer(answer_id)
    assert row is not None
    assert (row["channel"], row["thread_ts"], row["user_id"]) == ("C1", event["ts"], "U1")
    assert row["question"] == PRO_QUESTION and row["refused"] is False and row["source"] == "slack"
    assert "api:rate-limits.md" in row["cited_doc_ids"]


async def test_mention_inside_a_thread_is_answered_in_that_thread(bot: Bot) -> None:
    await bot.mention(PRO_QUESTION, thread_ts="1699999999.000001")
    (message,) = await bot.posts()
    assert message["thread_ts"] == "1699999999.000001"


async def test_slack_retry_of_the_same_event_posts_one_answer(bot: Bot) -> None:
    event = {"type": "app_mention", "user": "U1", "text": f"<@{BOT_USER_ID}> {PRO_QUESTION}", "ts": bot.next_ts(),
             "channel": "C1"}

    statuses = await asyncio.gather(bot.send_event(event, event_id="EvRETRY1"),
                                    bot.send_event(event, event_id="EvRETRY1", retry_num=1))
    await bot.posts()
    assert await bot.send_event(event, event_id="EvRETRY1", retry_num=2) == 200  # a late retry, too
    await asyncio.sleep(QUIET_SECONDS)

    assert statuses == [200, 200]
    assert len(bot.fake.calls_to("chat.postMessage")) == 1
    assert len(bot.answer_rows()) == 1


async def test_one_message_seen_as_app_mention_and_message_im_is_answered_once(bot: Bot) -> None:
    ts = bot.next_ts()
    text = f"<@{BOT_USER_ID}> {PRO_QUESTION}"
    await bot.send_event({"type": "message", "channel_type": "im", "channel": "D1", "user": "U1", "text": text, "ts": ts})
    await bot.send_event({"type": "app_mention", "channel": "D1", "user": "U1", "text": text, "ts": ts})

    await bot.posts()
    await asyncio.sleep(QUIET_SECONDS)
    assert len(bot.fake.calls_to("chat.postMessage")) == 1


async def test_direct_message_is_answered_in_its_thread(bot: Bot) -> None:
    ts = bot.next_ts()
    await bot.send_event({"type": "message", "channel_type": "im", "channel": "D1", "user": "U1",
                          "text": PRO_QUESTION, "ts": ts, "event_ts": ts})

    (message,) = await bot.posts()
    assert (message["channel"], message["thread_ts"]) == ("D1", ts)
    assert answer_id_of(message)
    (row,) = bot.answer_rows()
    assert (row["channel"], row["thread_ts"], row["user_id"]) == ("D1", ts, "U1")


async def test_slash_ask_answers_through_the_response_url(bot: Bot) -> None:
    assert await bot.slash_ask(PRO_QUESTION, response_key="cmd-7") == 200

    (call,) = await bot.fake.wait_for("response_url")
    assert call["path"] == "/response/cmd-7"
    reply = call["body"]
    assert reply["response_type"] == "in_channel"
    assert any("Plan: Pro · Requests per minute: 600" in b["text"]["text"] for b in blocks_of_type(reply, "section"))
    row = bot.store.get_answer(answer_id_of(reply))
    assert (row["channel"], row["user_id"], row["thread_ts"]) == ("C2", "U2", None)
    assert bot.fake.calls_to("chat.postMessage") == []


async def test_empty_slash_ask_gets_a_private_hint(bot: Bot) -> None:
    await bot.slash_ask("   ")
    (call,) = await bot.fake.wait_for("response_url")
    assert call["body"]["response_type"] == "ephemeral"
    assert call["body"]["text"].startswith("The question is empty")
    assert "blocks" not in call["body"]


async def test_quoted_mentions_from_a_document_never_ping(bot: Bot) -> None:
    await bot.mention(INCIDENT_QUESTION)

    (message,) = await bot.posts()
    answer_id = answer_id_of(message)
    assert "runbooks:incident-response.md" in bot.store.get_answer(answer_id)["cited_doc_ids"]
    posted = json.dumps({"text": message["text"], "blocks": message["blocks"]}, ensure_ascii=False)
    assert "&lt;!channel&gt;" in posted and "&lt;@U12345&gt;" in posted
    for raw in ("<!channel>", "<!here>", "<!everyone>", "<@U12345>"):
        assert raw not in posted
    # The only "<" left are links we built ourselves: <https://…|Title>.
    assert all(chunk.startswith("https://") for chunk in posted.split("<")[1:])


async def test_rate_limited_post_is_retried_and_posted_once(bot: Bot) -> None:
    bot.fake.fail_next("chat.postMessage", status=429, retry_after=1)
    event = await bot.mention(PRO_QUESTION)

    first, second = await bot.posts(count=2)
    await asyncio.sleep(QUIET_SECONDS)
    assert len(bot.fake.calls_to("chat.postMessage")) == 2  # the 429, then one successful retry
    assert first == second and second["thread_ts"] == event["ts"]
    assert FAILURE_TEXT not in json.dumps(second)
    assert len(bot.answer_rows()) == 1


async def _undelivered_row(bot: Bot, timeout: float = 10.0) -> dict:
    """The one answer row, once it says its reply was not delivered (the bot stores that after its last try)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = bot.answer_rows()
        if rows and rows[0]["delivered"] == 0:
            return rows[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no undelivered answer row: {bot.answer_rows()}")


async def test_a_reply_lost_to_four_429s_is_kept_and_posted_by_the_next_sweep(bot: Bot) -> None:
    from bot.slack.digests import SlackNotifier
    from config.alerts import load_alerts_config
    from jobs.notify import resend_replies

    bot.fake.fail_next("chat.postMessage", status=429, retry_after=0, times=4)
    event = await bot.mention(PRO_QUESTION)
    await bot.fake.wait_for("chat.postMessage", count=4)
    row = await _undelivered_row(bot)
    assert len(bot.fake.calls_to("chat.postMessage")) == 4 and row["delivered"] == 0  # the answer row says so

    notifier = SlackNotifier(make_client("xoxb-test", bot.fake.url), seconds_between_posts=0)
    now = datetime.now(timezone.utc)
    assert await resend_replies(bot.store, load_alerts_config(), notifier, now=now) == []  # not due yet
    (delivery,) = await resend_replies(bot.store, load_alerts_config(), notifier, now=now + timedelta(minutes=2))

    resent = bot.fake.calls_to("chat.postMessage")[-1]["body"]
    assert delivery.ok and resent["thread_ts"] == event["ts"] and resent["channel"] == "C1"
    assert "600" in json.dumps(resent) and bot.store.get_answer(row["answer_id"])["delivered"] is True
    assert await resend_replies(bot.store, load_alerts_config(), notifier, now=now + timedelta(hours=1)) == []


async def test_a_reply_that_never_gets_through_is_given_up_after_four_tries_and_alerted(bot: Bot) -> None:
    from bot.slack.digests import SlackNotifier
    from config.alerts import load_alerts_config
    from jobs import alerts
    from jobs.notify import REPLY_TRIES, resend_replies

    bot.fake.fail_next("chat.postMessage", error="internal_error", times=100)
    await bot.mention(PRO_QUESTION)
    await _undelivered_row(bot)
    notifier = SlackNotifier(make_client("xoxb-test", bot.fake.url), seconds_between_posts=0)
    config, now = load_alerts_config(), datetime.now(timezone.utc)

    given_up = []
    for minutes in (2, 4, 8, 16, 32):  # the wait doubles: 1, 2, 4 minutes after each failed try
        given_up += await resend_replies(bot.store, config, notifier, now=now + timedelta(minutes=minutes))

    assert len(bot.fake.calls_to("chat.postMessage")) == REPLY_TRIES  # the first post and three more
    (delivery,) = given_up
    assert delivery.error == "internal_error" and bot.answer_rows()[0]["delivered"] == 0
    firing = [s.alert for s in alerts.list_alerts(bot.store, config, states=("firing",), now=now + timedelta(hours=1))]
    assert [(a.alert, a.labels["channel"]) for a in firing] == [("slack_delivery_failed", "C1")]


async def test_rejected_blocks_still_leave_the_user_a_message(bot: Bot) -> None:
    bot.fake.fail_next("chat.postMessage", error="invalid_blocks")
    event = await bot.mention(PRO_QUESTION)

    _, apology = await bot.posts(count=2)
    assert apology.items() >= {"channel": "C1", "thread_ts": event["ts"], "text": FAILURE_TEXT}.items()
    assert "blocks" not in apology


async def test_bot_messages_and_unmentioned_channel_messages_are_ignored(bot: Bot) -> None:
    text = f"<@{BOT_USER_ID}> {PRO_QUESTION}"
    await bot.send_event({"type": "app_mention", "channel": "C1", "user": "U2", "bot_id": "B2", "text": text,
                          "ts": bot.next_ts()})
    await bot.send_event({"type": "message", "subtype": "bot_message", "channel_type": "im", "channel": "D1",
                          "bot_id": "B2", "text": PRO_QUESTION, "ts": bot.next_ts()})
    await bot.send_event({"type": "message", "channel_type": "im", "channel": "D1", "user": "U2", "bot_id": "B2",
                          "text": PRO_QUESTION, "ts": bot.next_ts()})
    await bot.send_event({"type": "message", "channel_type": "im", "channel": "D1", "user": BOT_USER_ID,
                          "text": PRO_QUESTION, "ts": bot.next_ts()})  # our own message
    await bot.send_event({"type": "message", "channel_type": "channel", "channel": "C1", "user": "U1",
                          "text": PRO_QUESTION, "ts": bot.next_ts()})  # no mention

    await asyncio.sleep(QUIET_SECONDS)
    assert bot.fake.calls_to("chat.postMessage") == []
    control = await bot.mention(PRO_QUESTION)  # the app is alive: a real mention is answered
    (message,) = await bot.posts()
    await asyncio.sleep(0.2)
    assert len(bot.fake.calls_to("chat.postMessage")) == 1 and message["thread_ts"] == control["ts"]
    assert len(bot.answer_rows()) == 1


async def test_empty_question_gets_a_short_hint_in_the_thread(bot: Bot) -> None:
    event = {"type": "app_mention", "user": "U1", "text": f"<@{BOT_USER_ID}>   ", "ts": bot.next_ts(), "channel": "C1"}
    await bot.send_event(event)

    (message,) = await bot.posts()
    assert message["thread_ts"] == event["ts"]
    assert message["text"].startswith("The question is empty") and len(message["text"]) < 200
    assert "blocks" not in message  # an empty blocks array would be invalid_blocks on Slack
    assert bot.answer_rows() == []


async def test_slack_markup_is_removed_before_retrieval_and_storage(bot: Bot) -> None:
    clean = await bot.mention(PRO_QUESTION)
    (plain,) = await bot.posts()
    marked = "<#C42|api-help> <https://wiki.example/limits|what> is the API rate limit on the Pro plan? &amp; :thinking_face:"
    await bot.mention(marked)

    _, message = await bot.posts(2)
    first, second = bot.answer_rows()
    assert first["thread_ts"] == clean["ts"] and first["question"] == PRO_QUESTION
    assert second["question"] == "#api-help what is the API rate limit on the Pro plan? &"
    # The markup costs (almost) nothing: the same page is cited first.
    # (the first context line naming a source: a low-confidence note may come before it)
    cited_first = [next(found.group(1) for b in blocks_of_type(m, "context")
                        if (found := re.match(r"\[1\] (<[^|]+\|)", b["elements"][0]["text"])))
                   for m in (plain, message)]
    assert cited_first[0] == cited_first[1]
    assert json.loads(first["cited_doc_ids"])[0] == json.loads(second["cited_doc_ids"])[0]


async def test_a_message_of_only_emoji_and_mentions_gets_a_hint_and_is_not_stored(bot: Bot) -> None:
    event = {"type": "app_mention", "user": "U1", "channel": "C1", "ts": bot.next_ts(),
             "text": f"<@{BOT_USER_ID}> :wave: :+1::skin-tone-3: 🎉 <@U2> ?"}
    await bot.send_event(event)

    (message,) = await bot.posts()
    assert message["text"] == NO_WORDS_TEXT and message["thread_ts"] == event["ts"] and "blocks" not in message
    assert bot.answer_rows() == []  # not a refusal: nothing was asked


async def test_slash_ask_with_only_a_mention_gets_the_empty_question_hint(bot: Bot) -> None:
    await bot.slash_ask(f"<@{BOT_USER_ID}>")
    (call,) = await bot.fake.wait_for("response_url")
    assert call["body"]["response_type"] == "ephemeral" and call["body"]["text"].startswith("The question is empty")
    assert bot.answer_rows() == []


async def test_very_long_question_gets_a_too_long_message(bot: Bot) -> None:
    event = await bot.mention("w" * 40_000)

    (message,) = await bot.posts()
    assert message["thread_ts"] == event["ts"]
    assert "40,000 characters long" in message["text"] and "limit is 2,000" in message["text"]
    assert "shorter question" in message["text"]
    assert bot.answer_rows() == []


async def test_unanswerable_question_is_refused_and_recorded_as_refused(bot: Bot) -> None:
    event = await bot.mention(UNANSWERABLE)

    (message,) = await bot.posts()
    assert message["text"].startswith(REFUSAL_TEXT)
    assert message["blocks"][0]["text"]["text"].startswith(REFUSAL_TEXT + " I searched ")
    assert all(b["type"] == "context" and "Closest pages" in b["elements"][0]["text"] for b in message["blocks"][1:])
    assert blocks_of_type(message, "context_actions") == []
    (row,) = bot.answer_rows()
    assert row["refused"] == 1 and row["thread_ts"] == event["ts"] and row["cited_doc_ids"] == "[]"


class BrokenKnowledgeBase(KnowledgeBase):
    """A knowledge base whose every question fails unexpectedly (a bug, a vanished file...)."""

    def ask(self, question, *, where=None):
        raise RuntimeError("index file vanished")


async def test_unexpected_knowledge_base_error_still_answers_the_user(start_bot: BotFactory, sample_settings,
                                                                      sample_home, embedder) -> None:
    bot = await start_bot(BrokenKnowledgeBase(sample_settings, sample_home, embedder=embedder))
    event = await bot.mention(PRO_QUESTION)

    (message,) = await bot.posts()
    assert message["text"] == FAILURE_TEXT and message["text"].startswith("Sorry, something went wrong")
    assert message["thread_ts"] == event["ts"] and "index file vanished" not in json.dumps(message)
    assert bot.answer_rows() == []


async def test_knowledge_base_not_ingested_says_so(start_bot: BotFactory, sample_settings, tmp_path, embedder) -> None:
    bot = await start_bot(KnowledgeBase(sample_settings, tmp_path / "empty-home", embedder=embedder))
    await bot.mention(PRO_QUESTION)
    (message,) = await bot.posts()
    assert message["text"] == NOT_READY_TEXT


# --- signatures -------------------------------------------------------------------------------------------


async def test_bad_signature_and_stale_timestamp_are_rejected(bot: Bot) -> None:
    event = {"type": "app_mention", "user": "U1", "text": f"<@{BOT_USER_ID}> {PRO_QUESTION}", "ts": bot.next_ts(),
             "channel": "C1"}
    body = json.dumps({"type": "event_callback", "team_id": "T1", "api_app_id": "A1", "event_id": "EvBAD",
                       "event": event}).encode()

    with structlog.testing.capture_logs() as logs:
        assert await bot.post(body, secret="not-the-secret") == 401
        assert await bot.post(body, timestamp=int(time.time()) - 600) == 401
    # the admin learns which setting to check, at the default (warning) level
    assert [(e["event"], e["log_level"]) for e in logs] == [("slack.bad_signature", "warning")] * 2
    assert "SLACK_SIGNING_SECRET" in logs[0]["fix"] and "clock" in logs[1]["fix"]
    tampered = signed_request_headers(SECRET, body)
    async with bot.session.post(bot.server.make_url(EVENTS_PATH), data=body.replace(b"U1", b"U9"),
                                headers=tampered) as response:
        assert response.status == 401

    await asyncio.sleep(QUIET_SECONDS)
    assert bot.fake.calls_to("chat.postMessage") == []
    assert bot.answer_rows() == []


# --- malformed traffic -------------------------------------------------------------------------------------


def interactive(payload: dict) -> bytes:
    return urlencode({"payload": json.dumps(payload)}).encode()


CLICK = {"type": "block_actions", "user": {"id": "U1"}, "channel": {"id": "C1"}, "team": {"id": "T1"},
         "container": {"channel_id": "C1", "message_ts": "1700000001.000001"}, "api_app_id": "A1"}


async def test_a_numeric_button_value_gets_200_and_a_private_reply(bot: Bot) -> None:
    await bot.mention(PRO_QUESTION)
    (message,) = await bot.posts()
    body = interactive({**CLICK, "actions": [{"action_id": FEEDBACK_ACTION, "value": 12345}]})

    assert await bot.post(body) == 200
    (confirm,) = await bot.fake.wait_for("chat.postEphemeral")
    assert confirm["body"].items() >= {"channel": "C1", "user": "U1", "text": MALFORMED_TEXT}.items()
    assert bot.vote_rows() == []
    assert await bot.click(f"up:{answer_id_of(message)}", answer_message=message) == 200  # the app is fine
    await bot.fake.wait_for("chat.postEphemeral", count=2)
    assert len(bot.vote_rows()) == 1


@pytest.mark.parametrize("body", [
    b"{not json", b"payload=%7Bnot+json", interactive([1, 2]), b"", b"[1, 2]",
    interactive({**CLICK, "actions": []}), interactive({**CLICK, "actions": "x"}), interactive({"type": "block_actions"}),
    json.dumps({"type": "event_callback", "event": "x"}).encode(), json.dumps({"type": "event_callback"}).encode(),
    json.dumps({"type": "event_callback", "event": {"type": "app_mention", "text": 7, "channel": "C1"}}).encode(),
    json.dumps({"type": "event_callback", "event": {"type": "app_home_opened"}}).encode(),
    json.dumps({"type": "event_callback", "authorizations": "x", "event": {"type": "app_mention"}}).encode(),
    b'{"a": ' * 5000 + b"1" + b"}" * 5000,  # nesting deeper than json can parse
], ids=lambda b: b[:30].decode("utf-8", "replace"))
async def test_signed_malformed_bodies_get_200_and_no_traceback(bot: Bot, body: bytes, capsys, caplog) -> None:
    assert await bot.post(body) == 200
    await asyncio.sleep(0.1)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    assert [r for r in caplog.records if r.exc_info] == []
    assert bot.fake.calls_to("chat.postMessage") == []


async def test_unsigned_or_garbled_bodies_get_400(bot: Bot) -> None:
    body = interactive({**CLICK, "actions": [{"action_id": FEEDBACK_ACTION, "value": "up:x"}]})
    async with bot.session.post(bot.server.make_url(EVENTS_PATH), data=body) as response:
        assert response.status == 400
    garbled = b"payload=\xff\xfe" + bytes([0xFF, 0xFE])
    async with bot.session.post(bot.server.make_url(EVENTS_PATH), data=garbled,
                                headers={"X-Slack-Signature": "v0=00", "X-Slack-Request-Timestamp": str(int(time.time()))}) as response:
        assert response.status == 400
    assert bot.fake.calls_to("chat.postEphemeral") == []


async def test_a_click_on_a_retired_button_gets_200_and_a_private_reply(bot: Bot) -> None:
    assert await bot.post(interactive({**CLICK, "actions": [{"action_id": "minerva_retired", "value": "x"}]})) == 200
    (confirm,) = await bot.fake.wait_for("chat.postEphemeral")
    assert confirm["body"]["text"] == UNSUPPORTED_TEXT


async def test_url_verification_passes_the_gate(bot: Bot) -> None:
    body = json.dumps({"type": "url_verification", "token": "t", "challenge": "c-123"}).encode()
    headers = signed_request_headers(SECRET, body)
    async with bot.session.post(bot.server.make_url(EVENTS_PATH), data=body, headers=headers) as response:
        assert response.status == 200 and (await response.json()) == {"challenge": "c-123"}


async def test_healthz(bot: Bot) -> None:
    async with bot.session.get(bot.server.make_url("/healthz")) as response:
        assert response.status == 200 and await response.json() == {"ok": True}


# --- feedback ---------------------------------------------------------------------------------------------


async def test_vote_clicks_upsert_one_row_and_confirm_privately(bot: Bot) -> None:
    event = await bot.mention(PRO_QUESTION)
    (message,) = await bot.posts()
    answer_id = answer_id_of(message)

    assert await bot.click(f"up:{answer_id}", answer_message=message) == 200
    (confirm,) = await bot.fake.wait_for("chat.postEphemeral")
    assert confirm["body"].items() >= {"channel": "C1", "user": "U1", "text": VOTE_THANKS["up"],
                                       "thread_ts": event["ts"]}.items()
    assert [(v["answer_id"], v["user_id"], v["value"]) for v in bot.vote_rows()] == [(answer_id, "U1", "up")]

    await bot.click(f"down:{answer_id}", answer_message=message)
    confirms = await bot.fake.wait_for("chat.postEphemeral", count=2)
    assert confirms[1]["body"]["text"] == VOTE_THANKS["down"]
    assert [(v["answer_id"], v["user_id"], v["value"]) for v in bot.vote_rows()] == [(answer_id, "U1", "down")]

    await bot.click(f"down:{answer_id}", answer_message=message)
    confirms = await bot.fake.wait_for("chat.postEphemeral", count=3)
    assert confirms[2]["body"]["text"] == VOTE_UNCHANGED
    assert [(v["answer_id"], v["user_id"], v["value"]) for v in bot.vote_rows()] == [(answer_id, "U1", "down")]
    await asyncio.sleep(0.2)
    assert len(bot.fake.calls_to("chat.postEphemeral")) == 3
    assert len(bot.fake.calls_to("chat.postMessage")) == 1  # votes never post in the channel


async def test_vote_on_unknown_answer_is_not_saved(bot: Bot) -> None:
    message = {"channel": "C1", "thread_ts": "1700000000.000001", "text": "an answer from another database"}

    assert await bot.click("up:0123456789abcdef0123456789abcdef", answer_message=message) == 200
    (confirm,) = await bot.fake.wait_for("chat.postEphemeral")
    assert confirm["body"]["text"] == VOTE_UNKNOWN and "no longer have a record" in VOTE_UNKNOWN
    assert bot.vote_rows() == []


async def test_vote_with_a_malformed_value_is_not_saved(bot: Bot) -> None:
    message = {"channel": "C1", "thread_ts": "1700000000.000001", "text": "x"}
    await bot.click("sideways:abc", answer_message=message)
    (confirm,) = await bot.fake.wait_for("chat.postEphemeral")
    assert confirm["body"]["text"] == VOTE_UNKNOWN and bot.vote_rows() == []


async def test_vote_when_the_store_fails_still_answers_the_voter(bot: Bot) -> None:
    await bot.mention(PRO_QUESTION)
    (message,) = await bot.posts()
    bot.store.close()  # every later store call raises StoreUnavailable

    await bot.click(f"up:{answer_id_of(message)}", answer_message=message)
    (confirm,) = await bot.fake.wait_for("chat.postEphemeral")
    assert confirm["body"]["text"] == VOTE_FAILED


# --- App Home ---------------------------------------------------------------------------------------------


async def test_app_home_shows_how_to_ask_and_the_index_size(bot: Bot) -> None:
    await bot.send_event({"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home",
                          "event_ts": bot.next_ts()})

    (call,) = await bot.fake.wait_for("views.publish")
    assert call["body"]["user_id"] == "U1"
    view = call["body"]["view"]
    assert view["type"] == "home" and len(view["blocks"]) <= 100
    texts = json.dumps(view["blocks"])
    assert "/ask" in texts and " documents, " in texts and "passages" in texts


# --- visibility -----------------------------------------------------------------------------------------

RUNBOOK_QUESTION = "how do I announce a SEV1 incident?"


def _restricted_runbooks(sample_settings):
    """The sample config with the runbooks collection restricted to user UOPS (no re-sync needed)."""
    settings = copy.deepcopy(sample_settings)
    settings.source("runbooks").visibility = "restricted"
    settings.source("runbooks").allowed = ["UOPS"]
    return settings


async def test_restricted_documents_never_appear_in_channel_answers(start_bot: BotFactory, sample_settings,
                                                                    sample_home, embedder) -> None:
    settings = _restricted_runbooks(sample_settings)
    bot = await start_bot(KnowledgeBase(settings, sample_home, embedder=embedder), settings)

    await bot.mention(RUNBOOK_QUESTION, user="UOPS")  # even an allowed user: a channel is not private

    (message,) = await bot.posts()
    assert "runbooks:" not in json.dumps(message) and "/runbooks/" not in json.dumps(message)
    (row,) = bot.answer_rows()
    assert "restricted" not in row["visibility"]


async def test_restricted_documents_are_used_in_dms_of_allowed_users_only(start_bot: BotFactory, sample_settings,
                                                                          sample_home, embedder) -> None:
    settings = _restricted_runbooks(sample_settings)
    bot = await start_bot(KnowledgeBase(settings, sample_home, embedder=embedder), settings)

    for user, channel in (("UOPS", "D1"), ("U1", "D2")):
        ts = bot.next_ts()
        await bot.send_event({"type": "message", "channel_type": "im", "channel": channel, "user": user,
                              "text": RUNBOOK_QUESTION, "ts": ts, "event_ts": ts})
    allowed, other = sorted(await bot.posts(2), key=lambda m: m["channel"])

    assert "/runbooks/incident-response.md" in json.dumps(allowed)
    assert "/runbooks/" not in json.dumps(other)
    rows = {r["user_id"]: r for r in bot.answer_rows()}
    assert "restricted" in rows["UOPS"]["visibility"]


@pytest.mark.parametrize("first", ["message.im", "app_mention"])
async def test_a_dm_mentioning_the_bot_is_a_dm_whichever_event_comes_first(start_bot: BotFactory, sample_settings,
                                                                           sample_home, embedder, first: str) -> None:
    settings = _restricted_runbooks(sample_settings)
    bot = await start_bot(KnowledgeBase(settings, sample_home, embedder=embedder), settings)
    ts, text = bot.next_ts(), f"<@{BOT_USER_ID}> {RUNBOOK_QUESTION}"
    events = {"message.im": {"type": "message", "channel_type": "im", "channel": "D7", "user": "UOPS", "text": text, "ts": ts},
              "app_mention": {"type": "app_mention", "channel": "D7", "user": "UOPS", "text": text, "ts": ts}}
    order = [first, *(name for name in events if name != first)]

    for name in order:
        assert await bot.send_event(events[name]) == 200
    (message,) = await bot.posts()
    await asyncio.sleep(QUIET_SECONDS)

    assert len(bot.fake.calls_to("chat.postMessage")) == 1
    assert "/runbooks/incident-response.md" in json.dumps(message)  # the allowed user's DM sees the restricted page
    (row,) = bot.answer_rows()
    assert "restricted" in row["visibility"] and row["question"] == RUNBOOK_QUESTION


# --- other workspaces and apps (issue 27, "Nothing leaks") ----------------------------------------------------


def _with_app_id(settings, app_id: str = "A1"):
    """The sample config with ``slack.app_id`` set (HTTP requests do not tell the bot its own app id)."""
    settings = copy.deepcopy(settings)
    settings.slack.app_id = app_id
    return settings


def _refusals(logs: list[dict]) -> list[dict]:
    return [entry for entry in logs if entry["event"] == "slack.foreign_workspace"]


async def test_a_dm_from_another_workspace_is_acked_logged_and_not_answered(start_bot: BotFactory, sample_settings,
                                                                             sample_home, embedder) -> None:
    # The app installed in workspace T2 too: its user UOPS asks in a DM what only T1's UOPS may read.
    settings = _restricted_runbooks(sample_settings)
    bot = await start_bot(KnowledgeBase(settings, sample_home, embedder=embedder), settings)
    ts = bot.next_ts()
    dm = {"type": "message", "channel_type": "im", "channel": "D9", "user": "UOPS", "text": RUNBOOK_QUESTION,
          "ts": ts, "event_ts": ts}

    with structlog.testing.capture_logs() as logs:
        assert await bot.post(json.dumps(event_envelope(dm, "EvT2DM", team_id="T2")).encode()) == 200  # acked
        await asyncio.sleep(QUIET_SECONDS)

    (refused,) = _refusals(logs)
    assert refused["log_level"] == "warning" and refused["reason"] == "another workspace"
    assert (refused["team_ids"], refused["allowed_workspaces"], refused["mode"]) == (["T2"], ["T1"], "http")
    assert bot.fake.calls == [c for c in bot.fake.calls if c["method"] == "auth.test"]  # nothing said to anyone
    assert bot.answer_rows() == []
    await bot.send_event({**dm, "ts": bot.next_ts()})  # the same DM in the bot's own workspace (auth.test: T1)
    (message,) = await bot.posts()
    assert "/runbooks/incident-response.md" in json.dumps(message) and len(bot.answer_rows()) == 1


async def test_an_event_naming_another_app_is_acked_logged_and_not_answered(start_bot: BotFactory,
                                                                            sample_settings) -> None:
    bot = await start_bot(settings=_with_app_id(sample_settings))
    event = mention_event(PRO_QUESTION, ts=bot.next_ts(), channel="C1", user="U1")

    with structlog.testing.capture_logs() as logs:
        assert await bot.post(json.dumps(event_envelope(event, "EvA2", api_app_id="A2")).encode()) == 200
        await asyncio.sleep(QUIET_SECONDS)

    (refused,) = _refusals(logs)
    assert (refused["reason"], refused["api_app_id"], refused["allowed_app_id"]) == ("another app", "A2", "A1")
    assert bot.fake.calls_to("chat.postMessage") == [] and bot.answer_rows() == []
    await bot.mention(PRO_QUESTION)  # app A1, workspace T1: answered
    await bot.posts()
    assert len(bot.answer_rows()) == 1


@pytest.mark.parametrize("origin, value", [
    ({"team_id": "T2"}, "down:{answer_id}"),
    ({"api_app_id": "A2"}, "down:{answer_id}"),
    ({"team_id": "T2"}, 12345),  # malformed too: still no private reply to the other workspace's user
], ids=["another workspace", "another app", "another workspace, malformed"])
async def test_a_click_from_another_workspace_or_app_does_nothing(start_bot: BotFactory, sample_settings,
                                                                  origin: dict, value) -> None:
    bot = await start_bot(settings=_with_app_id(sample_settings))
    await bot.mention(PRO_QUESTION)
    (message,) = await bot.posts()
    answer_id = answer_id_of(message)
    click = button_click(value.format(answer_id=answer_id) if isinstance(value, str) else value, message=message,
                         message_ts="1700000001.000001", user="U9", action_id=FEEDBACK_ACTION,
                         response_url=bot.fake.response_url("foreign"), **origin)

    with structlog.testing.capture_logs() as logs:
        assert await bot.post(interactive(click)) == 200
        await asyncio.sleep(QUIET_SECONDS)

    assert len(_refusals(logs)) == 1 and _refusals(logs)[0]["payload_type"] == "block_actions"
    assert bot.vote_rows() == []
    assert bot.fake.calls_to("chat.postEphemeral") == [] and bot.fake.calls_to("response_url") == []
    assert await bot.click(f"up:{answer_id}", answer_message=message) == 200  # the same click from T1 counts
    await bot.fake.wait_for("chat.postEphemeral")
    assert [v["value"] for v in bot.vote_rows()] == ["up"]


async def test_a_slash_command_from_another_workspace_gets_no_answer(bot: Bot) -> None:
    with structlog.testing.capture_logs() as logs:
        assert await bot.slash_ask(PRO_QUESTION, response_key="cmd-t2", team_id="T2") == 200
        await asyncio.sleep(QUIET_SECONDS)

    assert [r["team_ids"] for r in _refusals(logs)] == [["T2"]]
    assert bot.fake.calls_to("response_url") == [] and bot.answer_rows() == []


async def test_while_auth_test_fails_requests_are_refused_then_the_workspace_is_learnt(bot: Bot) -> None:
    bot.fake.fail_next("auth.test", error="internal_error")

    with structlog.testing.capture_logs() as logs:
        await bot.mention(PRO_QUESTION)
        await asyncio.sleep(QUIET_SECONDS)
    assert [e["event"] for e in logs if e["log_level"] != "info"] == ["slack.identity_unknown", "slack.foreign_workspace"]
    assert bot.fake.calls_to("chat.postMessage") == []

    await bot.mention(PRO_QUESTION)  # auth.test answers now: T1 is the bot's own
    await bot.posts()
    assert len(bot.answer_rows()) == 1


async def test_report_a_wrong_answer_records_one_flag_and_confirms_privately(bot: Bot) -> None:
    await bot.mention(PRO_QUESTION)
    (message,) = await bot.posts()
    answer_id = answer_id_of(message)
    (report,) = blocks_of_type(message, "actions")

    for _ in range(2):  # a double click stores one flag
        assert await bot.click(answer_id, answer_message=message, action_id=report["elements"][0]["action_id"]) == 200
    confirmations = await bot.fake.wait_for("chat.postEphemeral", count=2)

    assert [r["answer_id"] for r in bot.store.db.query("SELECT answer_id FROM flags")] == [answer_id]
    assert "flagged" in confirmations[0]["body"]["text"] and "already" in confirmations[1]["body"]["text"]
