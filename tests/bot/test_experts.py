"""End to end: "Ask an expert", the answer modal and kept expert answers (issue 25 items 1–2).

Real signed HTTP requests into the real app (`tests.bot.test_slack_e2e`'s ``start_bot``), the fake Slack Web API
over real HTTP; clicks and modal submissions are the payloads Slack sends.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from datetime import datetime, timedelta, timezone
from urllib.parse import urlencode

import pytest

from bot.slack.experts import (ANSWER_BLOCK, ANSWER_INPUT, ASK_EXPERT_ACTION, EXPERT_ANSWER_ACTION, EXPERT_MODAL,
                               EXPERT_VOTE_ACTION, PAGE_BLOCK, PAGE_INPUT, whom_to_ask)
from bot.slack.server import EVENTS_PATH
from config import ChannelConfig, ExpertsConfig
from tests.bot.test_slack_e2e import PRO_QUESTION, QUIET_SECONDS, SECRET, UNANSWERABLE, Bot, start_bot  # noqa: F401
from tests.fakes.fixtures import button_click, signed_request_headers

EXPERT = "UEXPERT"
LATER_QUESTION = "how many requests per minute can a Pro plan customer make to the API?"
KOREAN_QUESTION = "Pro 요금제의 API 요청 한도는 얼마인가요?"
EXPERT_TEXT = "600 requests per minute; ask support for a temporary raise."


def with_experts(settings, *, ask: str = EXPERT, channels: dict | None = None):
    return dataclasses.replace(settings, experts=ExpertsConfig(ask=ask), channels=channels or {})


async def post_payload(bot: Bot, payload: dict) -> tuple[int, str]:
    """POSTs an interactivity payload; returns the HTTP status and the response body (a view_submission's ack)."""
    body = urlencode({"payload": json.dumps(payload)}).encode()
    async with bot.session.post(bot.server.make_url(EVENTS_PATH), data=body,
                                headers=signed_request_headers(SECRET, body)) as response:
        return response.status, await response.text()


async def click(bot: Bot, message: dict, action_id: str, value: str, *, user: str = "U1") -> int:
    payload = button_click(value, message=message, message_ts=message.get("ts") or "1700000001.000001", user=user,
                           action_id=action_id, response_url=bot.fake.response_url("x"))
    payload["actions"][0]["type"] = "button"
    status, _ = await post_payload(bot, payload)
    return status


def submission(key: str, text: str, *, user: str = EXPERT, page_wrong: bool = False) -> dict:
    values = {ANSWER_BLOCK: {ANSWER_INPUT: {"type": "plain_text_input", "value": text}}}
    values[PAGE_BLOCK] = {PAGE_INPUT: {"type": "checkboxes", "selected_options": (
        [{"value": "wrong", "text": {"type": "plain_text", "text": "x"}}] if page_wrong else [])}}
    return {"type": "view_submission", "team": {"id": "T1", "domain": "minerva-test"},
            "user": {"id": user, "team_id": "T1", "name": "expert"}, "api_app_id": "A1",
            "token": "legacy-verification-token", "trigger_id": "9.9.submit",
            "view": {"id": "V1", "team_id": "T1", "type": "modal", "callback_id": EXPERT_MODAL,
                     "private_metadata": key, "state": {"values": values}, "hash": str(time.time())}}


def button(message: dict, action_id: str) -> dict | None:
    for block in message.get("blocks") or []:
        for element in block.get("elements") or []:
            if element.get("action_id") == action_id:
                return element
    return None


def context_texts(message: dict) -> list[str]:
    return [e.get("text", "") for b in message.get("blocks") or [] if b["type"] == "context" for e in b["elements"]]


def posts_to(bot: Bot, channel: str) -> list[dict]:
    return [c["body"] for c in bot.fake.calls_to("chat.postMessage") if c["body"].get("channel") == channel]


async def ask_and_answer(bot: Bot, question: str = PRO_QUESTION, *, page_wrong: bool = False) -> dict:
    """Mention → "Ask an expert" → "Answer" → submit; returns the reply that was escalated."""
    await bot.mention(question)
    reply = (await bot.posts())[-1]
    assert await click(bot, reply, ASK_EXPERT_ACTION, button(reply, ASK_EXPERT_ACTION)["value"]) == 200
    request = (await wait_posts(bot, EXPERT, 1))[0]
    await posted_stored(bot, button(reply, ASK_EXPERT_ACTION)["value"])
    assert await click(bot, request, EXPERT_ANSWER_ACTION, button(request, EXPERT_ANSWER_ACTION)["value"],
                       user=EXPERT) == 200
    (opened,) = await bot.fake.wait_for("views.open")
    key = opened["body"]["view"]["private_metadata"]
    status, body = await post_payload(bot, submission(key, EXPERT_TEXT, page_wrong=page_wrong))
    assert status == 200 and body == ""  # a plain ack closes the modal
    await wait_until(lambda: any("Answered by" in p.get("text", "") for p in posts_to(bot, reply["channel"])))
    return reply


async def wait_posts(bot: Bot, channel: str, count: int, timeout: float = 10.0) -> list[dict]:
    await wait_until(lambda: len(posts_to(bot, channel)) >= count, timeout)
    return posts_to(bot, channel)


async def posted_stored(bot: Bot, request_id: str) -> dict:
    """The request's row once the messages to the experts are stored with it (they are stored after posting)."""
    await wait_until(lambda: (bot.store.expert_request(request_id) or {}).get("posted"))
    return bot.store.expert_request(request_id)


async def wait_until(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


# --- escalation and the modal ---------------------------------------------------------------------------------


async def test_escalate_from_a_reply_answer_in_the_modal_and_the_thread_gets_it_exactly_once(
        start_bot, sample_settings) -> None:
    bot = await start_bot(settings=with_experts(sample_settings))
    event = await bot.mention(PRO_QUESTION)
    (reply,) = await bot.posts()
    ask = button(reply, ASK_EXPERT_ACTION)
    assert ask is not None and ask["text"]["text"] == "Ask an expert"
    # a double click (or a retry) asks once
    statuses = await asyncio.gather(click(bot, reply, ASK_EXPERT_ACTION, ask["value"]),
                                    click(bot, reply, ASK_EXPERT_ACTION, ask["value"]))
    assert statuses == [200, 200]
    await bot.fake.wait_for("chat.postEphemeral", count=2)
    await asyncio.sleep(QUIET_SECONDS)
    (request,) = posts_to(bot, EXPERT)  # a user: a DM
    text = json.dumps(request["blocks"])
    assert "<@U1> asks an expert" in text and "rate limit on the Pro plan" in text and "attempt" in text
    confirmations = sorted(c["body"]["text"] for c in bot.fake.calls_to("chat.postEphemeral"))
    assert any(t.startswith("I asked <@UEXPERT>") for t in confirmations)
    assert any(t.startswith("An expert was already asked") for t in confirmations)

    answer = button(request, EXPERT_ANSWER_ACTION)
    assert await click(bot, request, EXPERT_ANSWER_ACTION, answer["value"], user=EXPERT) == 200
    (opened,) = await bot.fake.wait_for("views.open")
    view = opened["body"]["view"]
    assert opened["body"]["trigger_id"] == "123.456.abc" and view["callback_id"] == EXPERT_MODAL
    assert {b.get("block_id") for b in view["blocks"]} >= {ANSWER_BLOCK, PAGE_BLOCK}

    status, body = await post_payload(bot, submission(view["private_metadata"], "   "))
    assert status == 200 and json.loads(body)["response_action"] == "errors" and ANSWER_BLOCK in json.loads(body)["errors"]
    # two experts submit at once: one answer is posted; the other is told who answered
    results = await asyncio.gather(post_payload(bot, submission(view["private_metadata"], EXPERT_TEXT)),
                                   post_payload(bot, submission(view["private_metadata"], "no idea", user="UOTHER")))
    bodies = sorted(body for _, body in results)
    assert bodies[0] == "" and json.loads(bodies[1])["response_action"] == "update"
    await wait_until(lambda: any("Answered by" in p.get("text", "") for p in posts_to(bot, "C1")))
    await asyncio.sleep(QUIET_SECONDS)
    answered = [p for p in posts_to(bot, "C1") if "Answered by" in p.get("text", "")]
    assert len(answered) == 1 and answered[0]["thread_ts"] == event["ts"]
    winner = "UOTHER" if "UOTHER" in answered[0]["text"] else EXPERT
    assert answered[0]["text"].startswith(f"*Answered by <@{winner}>:*")
    assert "already answered" in json.dumps(json.loads(bodies[1]))
    (update,) = await bot.fake.wait_for("chat.update")
    assert update["body"]["channel"] == EXPERT and f"Answered by <@{winner}>" in json.dumps(update["body"]["blocks"])
    assert button(update["body"], EXPERT_ANSWER_ACTION) is None
    row = bot.store.expert_request(ask["value"])
    assert row["status"] == "resolved" and row["answered_by"] == winner
    assert len(bot.store.active_expert_answers(datetime.now(timezone.utc))) == 1


async def test_escalate_from_a_refusal_to_a_user_group_without_an_alert_channel(start_bot, sample_settings) -> None:
    bot = await start_bot(settings=with_experts(sample_settings, ask="SEXPERTS"))
    bot.fake.usergroups["SEXPERTS"] = ["UA", "UB"]
    await bot.mention(UNANSWERABLE)
    (refusal,) = await bot.posts()
    assert "couldn't find" in refusal["text"]
    ask = button(refusal, ASK_EXPERT_ACTION)
    assert ask is not None
    assert await click(bot, refusal, ASK_EXPERT_ACTION, ask["value"]) == 200
    await wait_posts(bot, "UA", 1)
    await wait_posts(bot, "UB", 1)
    assert "parental leave" in json.dumps(posts_to(bot, "UA")[0]["blocks"])
    await wait_until(lambda: len(bot.store.expert_request(ask["value"])["posted"]) == 2)
    row = bot.store.expert_request(ask["value"])
    assert row["whom"] == "SEXPERTS" and sorted(c for c, _ in row["posted"]) == ["UA", "UB"]


async def test_a_user_group_slack_cannot_read_is_not_reported_as_asked(start_bot, sample_settings) -> None:
    """A newcomer's docs example group (unknown to the workspace): the bot said "I asked <!subteam^…>" though no
    one was messaged. The asker is told it failed, and a later click, once the group exists, asks it."""
    bot = await start_bot(settings=with_experts(sample_settings, ask="SMISSING"))
    await bot.mention(UNANSWERABLE)
    (refusal,) = await bot.posts()
    ask = button(refusal, ASK_EXPERT_ACTION)
    assert await click(bot, refusal, ASK_EXPERT_ACTION, ask["value"]) == 200
    (failed,) = await bot.fake.wait_for("chat.postEphemeral")
    assert failed["body"]["text"].startswith("Sorry, I couldn't reach the experts")
    assert bot.store.expert_request(ask["value"]) is None

    bot.fake.usergroups["SMISSING"] = ["UA"]
    assert await click(bot, refusal, ASK_EXPERT_ACTION, ask["value"]) == 200
    await wait_posts(bot, "UA", 1)
    confirmations = [c["body"]["text"] for c in await bot.fake.wait_for("chat.postEphemeral", count=2)]
    assert confirmations[-1].startswith("I asked")


async def test_a_user_group_is_mentioned_in_the_alert_channel_when_there_is_one(start_bot, sample_settings) -> None:
    settings = with_experts(sample_settings, ask="SEXPERTS")
    settings = dataclasses.replace(settings, slack=dataclasses.replace(settings.slack, alert_channel="CALERTS"))
    bot = await start_bot(settings=settings)
    await bot.mention(UNANSWERABLE)
    (refusal,) = await bot.posts()
    assert await click(bot, refusal, ASK_EXPERT_ACTION, button(refusal, ASK_EXPERT_ACTION)["value"]) == 200
    (posted,) = await wait_posts(bot, "CALERTS", 1)
    assert posted["text"].startswith("<!subteam^SEXPERTS>")


async def test_no_button_when_no_one_is_configured_or_the_channel_says_off(start_bot, sample_settings) -> None:
    bot = await start_bot(settings=with_experts(sample_settings, channels={"C9": ChannelConfig(experts="off")}))
    await bot.mention(PRO_QUESTION, channel="C9")
    await bot.mention(UNANSWERABLE, channel="C9")
    posts = await bot.posts(2)
    assert all(button(p, ASK_EXPERT_ACTION) is None for p in posts)
    assert whom_to_ask(with_experts(sample_settings, ask=""), "C1", ["api"]) is None


def test_whom_to_ask_prefers_the_cited_collection_then_the_channel_then_the_default(sample_settings) -> None:
    sources = [dataclasses.replace(s, experts="CAPI" if s.name == "api" else "") for s in sample_settings.sources]
    settings = dataclasses.replace(with_experts(sample_settings, channels={"C2": ChannelConfig(experts="<@UCHAN>"),
                                                                         "C3": ChannelConfig(experts="off")}),
                                   sources=sources)
    assert whom_to_ask(settings, "C2", ["api", "plans"]) == "CAPI"
    assert whom_to_ask(settings, "C2", ["plans", "api"]) == "UCHAN"
    assert whom_to_ask(settings, "C1", []) == EXPERT
    assert whom_to_ask(settings, "C3", ["plans"]) is None
    assert whom_to_ask(settings, "C3", ["api"]) == "CAPI"  # the collection's experts answer for their pages
    kept_to_api = dataclasses.replace(settings, channels={"C4": ChannelConfig(collections=["api"])})
    assert whom_to_ask(kept_to_api, "C4", []) == "CAPI"  # a refusal there: the channel's collection's experts


# --- kept answers ----------------------------------------------------------------------------------------------


async def test_a_later_similar_question_and_a_korean_one_are_answered_from_the_kept_answer(
        start_bot, sample_settings) -> None:
    bot = await start_bot(settings=with_experts(sample_settings))
    await ask_and_answer(bot)
    today = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    before = len(bot.fake.calls_to("chat.postMessage"))
    await bot.mention(LATER_QUESTION, user="U5")
    await bot.mention(KOREAN_QUESTION, user="U6")
    replies = [c["body"] for c in (await bot.fake.wait_for("chat.postMessage", count=before + 2))[before:]]
    # the two questions are answered in parallel: tell the replies apart by their label's language
    korean, later = sorted(replies, key=lambda r: "답변함" not in r["blocks"][0]["elements"][0]["text"])
    for reply, label in ((later, f"Answered by <@{EXPERT}> on {today}"), (korean, f"<@{EXPERT}>님이 {today}에 답변함")):
        assert label in reply["blocks"][0]["elements"][0]["text"]
        assert "600 requests per minute; ask support" in reply["blocks"][1]["text"]["text"]
        assert button(reply, EXPERT_VOTE_ACTION) is not None
        assert any(b["type"] == "context_actions" for b in reply["blocks"])  # the page answer's own 👍/👎 below


async def kept_answer_shown(start_bot, sample_settings) -> tuple[Bot, int, dict]:
    """An expert answered PRO_QUESTION; U5 then asked LATER_QUESTION: (bot, posts before U5's, U5's reply)."""
    bot = await start_bot(settings=with_experts(sample_settings))
    await ask_and_answer(bot)
    before = len(bot.fake.calls_to("chat.postMessage"))
    await bot.mention(LATER_QUESTION, user="U5")
    return bot, before, (await bot.fake.wait_for("chat.postMessage", count=before + 1))[-1]["body"]


async def test_an_expired_answer_or_one_two_people_voted_down_is_not_shown(start_bot, sample_settings) -> None:
    bot, before, shown = await kept_answer_shown(start_bot, sample_settings)
    vote = button(shown, EXPERT_VOTE_ACTION)
    down = vote["value"].replace("up:", "down:")
    for user in ("U7", "U7", "U8"):  # one person twice is one 👎; a second person's retires it
        assert await click(bot, shown, EXPERT_VOTE_ACTION, down, user=user) == 200
    await bot.fake.wait_for("chat.postEphemeral", count=4)  # the asker's confirmation and three votes
    await bot.mention(LATER_QUESTION, user="U9")
    after = (await bot.fake.wait_for("chat.postMessage", count=before + 2))[-1]["body"]
    assert button(after, EXPERT_VOTE_ACTION) is None and not any("Answered by" in t for t in context_texts(after))

    now = datetime.now(timezone.utc)
    bot.store.record_expert_answer(request_id=None, question=LATER_QUESTION, answer="Old news.", expert="UOLD",
                                   answered_at=now - timedelta(days=200), expires_at=now - timedelta(days=20),
                                   doc_ids=[], page_wrong=False, language="en")
    await bot.mention(LATER_QUESTION, user="U10")
    expired = (await bot.fake.wait_for("chat.postMessage", count=before + 3))[-1]["body"]
    assert "Old news" not in json.dumps(expired["blocks"]) and button(expired, EXPERT_VOTE_ACTION) is None


async def test_a_thumbs_up_teaches_the_kept_answer_the_askers_wording(start_bot, sample_settings) -> None:
    bot, before, shown = await kept_answer_shown(start_bot, sample_settings)
    vote = button(shown, EXPERT_VOTE_ACTION)
    assert vote["value"].startswith("up:") and vote["value"].count(":") == 2  # up:<kept answer>:<reply>
    assert await click(bot, shown, EXPERT_VOTE_ACTION, vote["value"], user="U5") == 200
    kept_id = vote["value"].split(":")[1]
    await wait_until(lambda: bot.store.expert_answer(kept_id)["also_asked"] == [LATER_QUESTION])
    # an old button without the reply's id still counts the vote and learns nothing
    assert await click(bot, shown, EXPERT_VOTE_ACTION, f"up:{kept_id}", user="U6") == 200
    await bot.fake.wait_for("chat.postEphemeral", count=3)
    assert bot.store.expert_answer(kept_id)["also_asked"] == [LATER_QUESTION]


async def test_the_page_is_wrong_box_files_a_review_item_on_the_cited_page(start_bot, sample_settings) -> None:
    from jobs.review import items

    bot = await start_bot(settings=with_experts(sample_settings))
    reply = await ask_and_answer(bot, page_wrong=True)
    cited = bot.store.get_answer(button(reply, ASK_EXPERT_ACTION)["value"])["cited_doc_ids"][0]
    (item,) = [i for i in items(bot.store) if i["problem"] == "expert_correction"]
    assert item["subject"] == cited and item["signal"] == "expert_correction"
    assert item["details"]["answer"] == EXPERT_TEXT


async def test_answer_this_once_on_a_coverage_gap_keeps_the_answer_for_the_gaps_question(
        start_bot, sample_settings) -> None:
    from bot.slack.experts import GAP_ANSWER_ACTION
    from config.alerts import load_alerts_config
    from jobs.alerts import evaluate, get_alert, fingerprint
    from jobs.findings import Finding

    bot = await start_bot(settings=with_experts(sample_settings))
    gap = Finding(alert="coverage_gap", severity="warning", labels={"gap": "g1"}, value=6.0, threshold=5.0, n=6,
                  summary="6 refused questions on parental leave", link="",
                  annotations={"question": UNANSWERABLE, "nearest": [{"doc_id": "plans:pricing.md"}]})
    evaluate(bot.store, load_alerts_config(), "coverage", [gap], now=datetime.now(timezone.utc))
    alert = get_alert(bot.store, fingerprint("coverage_gap", {"gap": "g1"}))
    digest = {"channel": "CDIGEST", "ts": "1700000005.000001", "text": "digest", "blocks": []}
    assert await click(bot, digest, GAP_ANSWER_ACTION, alert.fingerprint, user="UOWNER") == 200
    (opened,) = await bot.fake.wait_for("views.open")
    view = opened["body"]["view"]
    assert UNANSWERABLE in json.dumps(view["blocks"]) and view["private_metadata"] == f"gap:{alert.fingerprint}"
    status, body = await post_payload(bot, submission(view["private_metadata"], "16 weeks, paid.", user="UOWNER"))
    assert status == 200 and json.loads(body)["response_action"] == "update"
    (kept,) = bot.store.active_expert_answers(datetime.now(timezone.utc))
    assert (kept["question"], kept["answer"], kept["expert"]) == (UNANSWERABLE, "16 weeks, paid.", "UOWNER")
    _, again = await post_payload(bot, submission(view["private_metadata"], "Another text.", user="UOTHER"))
    assert "already answered" in again and len(bot.store.active_expert_answers(datetime.now(timezone.utc))) == 1
    await bot.mention(UNANSWERABLE, user="U4")
    later = (await bot.posts(1))[-1]
    assert "16 weeks, paid." in json.dumps(later["blocks"]) and button(later, EXPERT_VOTE_ACTION) is not None
    assert "couldn't find this" not in json.dumps(later["blocks"])  # no refusal under the expert's answer
