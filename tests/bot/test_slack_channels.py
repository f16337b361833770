"""Settings per channel (issue 25 item 4), end to end: real signed HTTP requests into the app, the fake Slack
Web API over real HTTP (`tests.bot.test_slack_e2e` starts both), plus the pure rules of `bot.slack.channels`."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from urllib.parse import urlencode

import pytest

from bot.slack.channels import answers_message, asks_something, channel_filter, language_is_clear, reply_language
from config import ChannelConfig
from knowledge import SearchFilter
from knowledge.messages import message
from tests.bot.test_slack_e2e import (  # noqa: F401  (start_bot is a fixture)
    PRO_QUESTION,
    QUIET_SECONDS,
    Bot,
    BotFactory,
    answer_id_of,
    start_bot,
)
from tests.fakes.fixtures import button_click

RUNBOOKS_ONLY = "CRUNBOOKS"
QUESTIONS = "CQUESTIONS"
PRIVATE = "CPRIVATE"
KOREAN = "CKOREAN"
_URL = re.compile(r"https://wiki\.nimbus\.example/(\w+)/")


def _channels(sample_settings, **channels: ChannelConfig):
    settings = copy.deepcopy(sample_settings)
    settings.channels = dict(channels)
    return settings


@pytest.fixture
def channel_settings(sample_settings):
    return _channels(sample_settings, **{
        RUNBOOKS_ONLY: ChannelConfig(collections=["runbooks"]),
        QUESTIONS: ChannelConfig(respond="questions"),
        PRIVATE: ChannelConfig(private=True),
        KOREAN: ChannelConfig(language="ko"),
    })


@pytest.fixture
async def bot(start_bot: BotFactory, channel_settings) -> Bot:  # noqa: F811
    return await start_bot(settings=channel_settings)


def _cited_collections(bot: Bot) -> set[str]:
    """The collections every stored answer cited or retrieved (doc ids are ``collection:path``)."""
    found = set()
    for row in bot.answer_rows():
        docs = json.loads(row["cited_doc_ids"]) + [r["doc_id"] for r in json.loads(row["retrieved"])]
        found |= {doc.split(":", 1)[0] for doc in docs}
    return found


async def _message(bot: Bot, text: str, *, channel: str, thread_ts: str | None = None, **extra) -> dict:
    ts = bot.next_ts()
    event = {"type": "message", "channel_type": "channel", "channel": channel, "user": "U1", "text": text,
             "ts": ts, "event_ts": ts, **({"thread_ts": thread_ts} if thread_ts else {}), **extra}
    assert await bot.send_event(event) == 200
    return event


# --- collections ------------------------------------------------------------------------------------------


async def test_a_question_in_a_restricted_channel_never_cites_a_page_outside_its_collections(bot: Bot) -> None:
    first = await bot.mention(PRO_QUESTION, channel=RUNBOOKS_ONLY)  # the api/plans pages answer it elsewhere
    await bot.posts()
    await bot.mention("and on the Enterprise plan?", channel=RUNBOOKS_ONLY, thread_ts=first["ts"])  # a follow-up
    await bot.posts(2)
    await bot.mention("how do I announce a SEV1 incident?", channel=RUNBOOKS_ONLY)

    posted = await bot.posts(3)
    assert bot.answer_rows()[1]["follow_up_of"] == bot.answer_rows()[0]["answer_id"]

    assert {url for m in posted for url in _URL.findall(json.dumps(m))} <= {"runbooks"}
    assert _cited_collections(bot) == {"runbooks"}
    assert "/runbooks/incident-response.md" in json.dumps(posted)  # the channel's own pages still answer


async def test_slash_ask_in_a_restricted_channel_keeps_to_its_collections(bot: Bot) -> None:
    assert await bot.slash_ask(PRO_QUESTION, response_key="cmd-r", channel=RUNBOOKS_ONLY, channel_name="ops") == 200

    (reply,) = await bot.fake.wait_for("response_url")
    assert {url for url in _URL.findall(json.dumps(reply["body"]))} <= {"runbooks"}
    assert _cited_collections(bot) <= {"runbooks"}


async def test_a_dm_and_a_channel_without_settings_search_everything(bot: Bot) -> None:
    await bot.mention(PRO_QUESTION, channel="COTHER")
    ts = bot.next_ts()
    await bot.send_event({"type": "message", "channel_type": "im", "channel": "D1", "user": "U1",
                          "text": PRO_QUESTION, "ts": ts, "event_ts": ts})
    await bot.posts(2)

    assert "runbooks" not in _cited_collections(bot) and _cited_collections(bot)


def test_channel_filter_narrows_never_widens() -> None:
    runbooks = ChannelConfig(collections=["runbooks", "api"])
    assert channel_filter(SearchFilter(), ChannelConfig()) == SearchFilter()
    assert channel_filter(SearchFilter(), runbooks).collections == {"runbooks", "api"}
    narrowed = channel_filter(SearchFilter(collections=frozenset({"api", "hr"}), excluded=frozenset({"x"})), runbooks)
    assert narrowed.collections == {"api"} and narrowed.excluded == {"x"} and not narrowed.allow_restricted


# --- respond: questions -------------------------------------------------------------------------------------


async def test_a_questions_channel_answers_a_posted_question_in_its_thread(bot: Bot) -> None:
    event = await _message(bot, PRO_QUESTION, channel=QUESTIONS)

    (reply,) = await bot.posts()
    assert reply["channel"] == QUESTIONS and reply["thread_ts"] == event["ts"]


async def test_chatter_threads_bots_edits_and_mention_channels_are_not_answered(bot: Bot) -> None:
    await _message(bot, "deploying the new build now, thanks all", channel=QUESTIONS)
    top = bot.next_ts()
    await _message(bot, PRO_QUESTION, channel=QUESTIONS, thread_ts=top)
    await _message(bot, PRO_QUESTION, channel=QUESTIONS, bot_id="B9")
    await _message(bot, PRO_QUESTION, channel=QUESTIONS, subtype="message_changed")
    await _message(bot, PRO_QUESTION, channel="CMENTIONONLY")
    await asyncio.sleep(QUIET_SECONDS)
    assert bot.fake.calls_to("chat.postMessage") == []

    control = await _message(bot, "what is the API rate limit on the Pro plan？", channel=QUESTIONS)
    (reply,) = await bot.posts()
    assert reply["thread_ts"] == control["ts"]


async def test_a_question_that_mentions_the_bot_is_answered_once(bot: Bot) -> None:
    event = await bot.mention(PRO_QUESTION, channel=QUESTIONS)
    assert await bot.send_event({**event, "type": "message", "channel_type": "channel"}) == 200
    await bot.posts()
    await asyncio.sleep(QUIET_SECONDS)
    assert len(bot.fake.calls_to("chat.postMessage")) == 1


@pytest.mark.parametrize("text, asks", [
    ("how do I reset my password", True), ("VPN down?", True), ("Pro 플랜 한도는？", True),
    ("휴가는 며칠인가요", True), ("환불 방법이 뭐예요", True), ("休暇は何日ですか", True), ("どこで申請する", True),
    ("thanks, deploying now", False), ("Do not deploy today", False), ("집에 가요", False), ("承知しました", False),
    ("<https://x.example/?a=1>", False), ("??", False), ("", False),
])
def test_asks_something(text: str, asks: bool) -> None:
    assert asks_something(text) is asks


def test_answers_message_needs_a_questions_channel_and_a_persons_top_level_post() -> None:
    event = {"type": "message", "user": "U1", "text": "where is the VPN guide?", "ts": "1.1"}
    questions = ChannelConfig(respond="questions")
    assert answers_message(event, questions)
    assert answers_message({**event, "thread_ts": "1.1"}, questions)  # the thread's own first message
    assert not answers_message(event, ChannelConfig())
    assert not answers_message({**event, "thread_ts": "0.9"}, questions)
    assert not answers_message({k: v for k, v in event.items() if k != "user"}, questions)


# --- private --------------------------------------------------------------------------------------------------


async def test_a_private_channel_replies_ephemerally_and_votes_on_it_still_work(bot: Bot) -> None:
    top = await bot.mention(PRO_QUESTION, channel=PRIVATE)
    await bot.fake.wait_for("chat.postEphemeral")  # answered (and stored) before the follow-up is asked
    await bot.mention("and on the Enterprise plan?", channel=PRIVATE, thread_ts=top["ts"])

    first, follow_up = (c["body"] for c in await bot.fake.wait_for("chat.postEphemeral", count=2))
    assert bot.fake.calls_to("chat.postMessage") == []
    assert first["user"] == "U1" and first["channel"] == PRIVATE and not first.get("thread_ts")
    assert follow_up["thread_ts"] == top["ts"]
    assert bot.answer_rows()[1]["follow_up_of"] == bot.answer_rows()[0]["answer_id"]

    # A click on an ephemeral message: Slack sends its container (is_ephemeral) and no message ts to edit.
    blocks = json.loads(first["blocks"]) if isinstance(first["blocks"], str) else first["blocks"]
    answer_id = answer_id_of({"blocks": blocks})
    payload = button_click(f"up:{answer_id}", message={"channel": PRIVATE, "blocks": blocks},
                           message_ts="1700000009.000001", user="U1", action_id="minerva_feedback",
                           response_url=bot.fake.response_url("eph"))
    payload["container"]["is_ephemeral"] = True
    payload.pop("message")
    assert await bot.post(urlencode({"payload": json.dumps(payload)}).encode()) == 200

    *_, confirm = await bot.fake.wait_for("chat.postEphemeral", count=3)
    assert confirm["body"]["user"] == "U1" and not confirm["body"].get("thread_ts")
    (vote,) = bot.vote_rows()
    assert vote["answer_id"] == answer_id and vote["value"] == "up"


async def test_slash_ask_in_a_private_channel_answers_only_the_asker(bot: Bot) -> None:
    assert await bot.slash_ask(PRO_QUESTION, response_key="cmd-p", channel=PRIVATE, channel_name="hr") == 200

    (reply,) = await bot.fake.wait_for("response_url")
    assert reply["body"]["response_type"] == "ephemeral" and reply["body"]["blocks"]


# --- language ---------------------------------------------------------------------------------------------------


async def test_an_unclear_question_gets_the_channels_language(bot: Bot) -> None:
    await bot.mention("SLA?", channel=KOREAN)
    await bot.mention("what is the SLA?", channel=KOREAN)  # clearly English: stays English

    # answered in parallel: the replies in the order the questions were asked (their thread is the question)
    unclear, english = sorted(await bot.posts(2), key=lambda post: post["thread_ts"])
    assert message("button.prompt", "ko") in json.dumps(unclear, ensure_ascii=False)
    assert message("button.prompt", "en") in json.dumps(english, ensure_ascii=False)
    assert {r["question"]: r["language"] for r in bot.answer_rows()} == {"SLA?": "ko", "what is the SLA?": "en"}


def test_reply_language_rule() -> None:
    korean = ChannelConfig(language="ko")
    assert not language_is_clear("VPN?") and not language_is_clear("500") and language_is_clear("VPN 설정")
    assert reply_language("VPN?", korean) == "ko" and reply_language("VPN?", ChannelConfig()) == "en"
    assert reply_language("how do I set up the VPN?", korean) == "en"
    assert reply_language("VPN設定", korean) == "ja"


def test_history_scopes_are_needed_only_by_questions_channels() -> None:
    from bot.slack.channels import needed_history_scopes

    assert needed_history_scopes({"C1": ChannelConfig(private=True)}) == []
    assert needed_history_scopes({"C1": ChannelConfig(respond="questions")}) == ["channels:history"]
    assert needed_history_scopes({"G1": ChannelConfig(respond="questions"), "C2": ChannelConfig(respond="questions")}
                                 ) == ["channels:history", "groups:history"]
