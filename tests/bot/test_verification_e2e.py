"""Owners verify their pages (issue 25 item 3), end to end on the sample knowledge base: the ``verification``
job DMs each due page's owner group through the fake Slack Web API (real HTTP), the buttons are clicked with
real signed requests into the real app, and a later reply's citation carries the badge.

The sample's ``api`` collection gets ``verify_days: 90``; its pages name the user group S0APITEAM (members
U0API1, U0API2) as owner. The job runs at a fixed `NOW`, 100 days after the session's index was built, so
every api page is due; the clicks and the reply happen at the wall clock.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
import pytest
import pytest_asyncio
from aiohttp.test_utils import TestServer

from bot.slack.app import build_app, make_client
from bot.slack.digests import SlackNotifier
from bot.slack.server import create_web_app
from bot.slack.verification_badges import citation_badges
from bot.slack.verify_blocks import VERIFY_NOT_MINE_ACTION, VERIFY_OK_ACTION, VERIFY_UPDATE_ACTION
from config.alerts import alerts_config_for
from feedback import FeedbackStore
from jobs.findings import JobContext
from jobs.review import items as review_items
from jobs.runner import JobEnv, JobRunner
from jobs.signals import freshness
from tests.bot.test_slack_e2e import PRO_QUESTION, SECRET, Bot
from tests.fakes.fixtures import button_click

NOW = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=100)
PAGE = "api:rate-limits.md"
GROUPS = {"S0APITEAM": ["U0API1", "U0API2"], "S0BILLING": ["U0BILL"], "S0DBATEAM": ["U0DBA"],
          "S0MARKETING": ["U0MKT"], "S0PLATFORM": ["U0PLAT"], "S0PRODUCT": ["U0PROD"], "S0SECURITY": ["U0SEC"],
          "S0SRETEAM": ["U0SRE"], "S0SUPPORT": ["U0SUP"]}


@pytest.fixture
def settings(sample_settings):
    sources = [dataclasses.replace(s, verify_days=90) if s.name == "api" else s for s in sample_settings.sources]
    slack = dataclasses.replace(sample_settings.slack, admins=["U0ADMIN"], alert_channel="CALERTS")
    return dataclasses.replace(sample_settings, sources=sources, slack=slack)


@pytest_asyncio.fixture
async def world(fake_slack, tmp_path: Path, sample_kb, settings) -> AsyncIterator[dict]:
    """The app on a TestServer and a job runner, sharing one store (``tmp_path/minerva.sqlite``)."""
    fake_slack.usergroups.update(GROUPS)
    async with AsyncExitStack() as stack:
        store = FeedbackStore.open(tmp_path / "minerva.sqlite")
        stack.callback(store.close)
        executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="test-verify")
        stack.callback(executor.shutdown, wait=False)
        app = build_app(sample_kb, store, settings, client=make_client("xoxb-test", fake_slack.url),
                        signing_secret=SECRET, executor=executor)
        server = TestServer(create_web_app(app), host="127.0.0.1")
        await server.start_server()
        stack.push_async_callback(server.close)
        session = await stack.enter_async_context(aiohttp.ClientSession())
        clock = [NOW]
        notifier = SlackNotifier(make_client("xoxb-test", fake_slack.url), seconds_between_posts=0.0)
        runner = JobRunner(JobEnv(settings, tmp_path, alerts_config_for(settings), kb=sample_kb, notifier=notifier,
                                  clock=lambda: clock[0]), signal_jobs={})
        yield {"bot": Bot(fake_slack, store, server, session), "runner": runner, "clock": clock, "store": store,
               "fake": fake_slack, "settings": settings, "kb": sample_kb}
        await asyncio.sleep(0.05)


def _dms(fake, doc_id: str = PAGE) -> list[dict]:
    """The verification messages about ``doc_id``, in order: the posted body, its ``ts`` and ``posted_in`` (the
    DM channel Slack answered with)."""
    found = []
    for call in fake.calls_to("chat.postMessage"):
        body = call["body"]
        blocks = body.get("blocks") or []
        blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
        values = [e.get("value", "") for b in blocks if b.get("type") == "actions" for e in b.get("elements", [])]
        if any(v.startswith(f"{doc_id}|") for v in values):
            found.append({**body, "blocks": blocks, "ts": call["response"]["ts"],
                          "posted_in": call["response"]["channel"]})
    return found


async def _click(bot: Bot, dm: dict, action_id: str, user: str) -> None:
    """``user`` clicks ``action_id`` on ``dm`` as Slack sends it: from the DM's channel, with the message's ts."""
    value = next(e["value"] for b in dm["blocks"] if b["type"] == "actions" for e in b["elements"]
                 if e["action_id"] == action_id)
    payload = button_click(value, message={**dm, "channel": dm["posted_in"]}, message_ts=dm["ts"], user=user,
                           action_id=action_id, response_url=bot.fake.response_url("verify"))
    assert await bot.post(urlencode({"payload": json.dumps(payload)}).encode()) == 200


async def _ephemerals(fake, count: int) -> list[str]:
    return [c["body"]["text"] for c in await fake.wait_for("chat.postEphemeral", count=count)]


async def test_the_owner_is_asked_once_and_still_correct_verifies_and_badges_the_citation(world):
    bot, runner, fake, store = world["bot"], world["runner"], world["fake"], world["store"]
    result = await runner.run("verification")
    assert result.outcome == "ok", result.error
    dms = _dms(fake)
    assert sorted(d["channel"] for d in dms) == ["U0API1", "U0API2"]  # the owner group's members, once each
    text = dms[0]["blocks"][0]["text"]["text"]
    assert "Please check that" in text and "every 90 days" in text and "No answer cited it" in text
    assert "{" not in text and '"' not in text  # sentences, not JSON
    assert [e["text"]["text"] for e in dms[0]["blocks"][1]["elements"]] == ["Still correct", "Needs an update",
                                                                           "Not mine"]
    # not due again: a second run (and a run an hour later) asks nobody
    world["clock"][0] = NOW + timedelta(hours=1)
    await runner.run("verification")
    assert len(_dms(fake)) == 2

    # someone outside the owner group is refused privately; nothing changes
    await _click(bot, dms[0], VERIFY_OK_ACTION, user="U0STRANGER")
    assert "Only the owner" in (await _ephemerals(fake, 1))[0]
    assert store.page_verifications([PAGE])[PAGE]["state"] == "due"

    # the owners click twice: verified once, each member's DM updated once, the second click told so
    await _click(bot, dms[0], VERIFY_OK_ACTION, user="U0API1")
    updates = await fake.wait_for("chat.update", count=2)
    assert [(u["body"]["channel"], u["body"]["ts"]) for u in updates] == [(d["channel"], d["ts"]) for d in dms]
    assert all("<@U0API1> confirmed" in u["body"]["text"] for u in updates)
    await _click(bot, dms[1], VERIFY_OK_ACTION, user="U0API2")
    assert "already answered" in (await _ephemerals(fake, 2))[1]
    assert len(fake.calls_to("chat.update")) == 2
    row = store.page_verifications([PAGE])[PAGE]
    assert (row["state"], row["verified_by"]) == ("verified", "U0API1")
    assert datetime.fromisoformat(row["verified_until"]) - datetime.fromisoformat(row["verified_at"]) == timedelta(days=90)

    # a later reply citing the page says who verified it
    before = len(fake.calls_to("chat.postMessage"))
    await bot.mention(PRO_QUESTION)
    reply = (await bot.posts(before + 1))[-1]
    blocks = json.loads(reply["blocks"]) if isinstance(reply["blocks"], str) else reply["blocks"]
    lines = [b["elements"][0]["text"] for b in blocks if b["type"] == "context"]
    assert any("rate-limits" in line.lower() or "rate limits" in line.lower() for line in lines), lines
    assert any("verified by <@U0API1> today" in line for line in lines), lines


async def test_an_answer_changes_every_members_copy_and_its_reminder_in_their_dm_channels(world):
    """Slack answers a post to a user with the DM's own channel id, and ``chat.update`` needs that id: the
    copies are updated where Slack said they are, each once, all naming who answered, none keeping buttons."""
    bot, runner, fake, store, clock = world["bot"], world["runner"], world["fake"], world["store"], world["clock"]
    fake.dm_channels.update({"U0API1": "D0API1", "U0API2": "D0API2"})
    await runner.run("verification")
    clock[0] = NOW + timedelta(days=8)  # remind_after_days is 7: a reminder to each member, same ask
    await runner.run("verification")
    dms = _dms(fake)
    assert [d["posted_in"] for d in dms] == ["D0API1", "D0API2", "D0API1", "D0API2"]
    assert store.page_verifications([PAGE])[PAGE]["posted"] == [[d["posted_in"], d["ts"]] for d in dms]

    await _click(bot, dms[3], VERIFY_UPDATE_ACTION, user="U0API2")  # on the reminder

    updates = await fake.wait_for("chat.update", count=4)
    assert [(u["body"]["channel"], u["body"]["ts"]) for u in updates] == [
        (d["posted_in"], d["ts"]) for d in (dms[3], dms[0], dms[1], dms[2])]  # the clicked copy first
    for update in updates:
        blocks = update["body"]["blocks"]
        blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
        assert "<@U0API2> said" in update["body"]["text"] and "needs an update" in update["body"]["text"]
        assert not [b for b in blocks if b["type"] == "actions"]
    await asyncio.sleep(0.2)
    assert len(fake.calls_to("chat.update")) == 4
    assert store.page_verifications([PAGE])[PAGE]["state"] == "needs_update"


async def test_an_unanswered_ask_is_reminded_exactly_once(world):
    runner, fake, clock = world["runner"], world["fake"], world["clock"]
    await runner.run("verification")
    assert len(_dms(fake)) == 2
    clock[0] = NOW + timedelta(days=6)  # remind_after_days is 7
    await runner.run("verification")
    assert len(_dms(fake)) == 2
    clock[0] = NOW + timedelta(days=8)
    await runner.run("verification")
    reminders = _dms(fake)[2:]
    assert len(reminders) == 2 and all("Reminder" in d["blocks"][0]["text"]["text"] for d in reminders)
    for day in (9, 20):
        clock[0] = NOW + timedelta(days=day)
        await runner.run("verification")
    assert len(_dms(fake)) == 4
    assert world["store"].page_verifications([PAGE])[PAGE]["reminded_at"].startswith((NOW + timedelta(days=8)).date().isoformat())


async def test_needs_an_update_opens_a_review_item_and_not_mine_tells_the_admins(world):
    bot, runner, fake, store = world["bot"], world["runner"], world["fake"], world["store"]
    await runner.run("verification")
    await _click(bot, _dms(fake)[0], VERIFY_UPDATE_ACTION, user="U0API2")
    await fake.wait_for("chat.update", count=1)
    item = next(i for i in review_items(store) if i["problem"] == "verification_needs_update")
    assert item["subject"] == PAGE and item["action"] == "update_content" and "U0API2" in item["reason"]
    assert store.page_verifications([PAGE])[PAGE]["state"] == "needs_update"

    other = "api:errors.md"
    before = len(fake.calls_to("chat.postMessage"))
    await _click(bot, _dms(fake, other)[0], VERIFY_NOT_MINE_ACTION, user="U0API1")
    posts = await fake.wait_for("chat.postMessage", count=before + 1)
    notice = posts[-1]["body"]
    assert notice["channel"] == "CALERTS" and "<@U0ADMIN>" in notice["text"] and "needs an owner" in notice["text"]
    assert store.page_verifications([other])[other]["state"] == "handed_over"


async def test_overdue_pages_are_a_freshness_finding_and_badged_until_verified(world):
    store, settings, kb = world["store"], world["settings"], world["kb"]
    ctx = JobContext(settings=settings, home=Path(store.path).parent, store=store, now=NOW, kb=kb)
    found = [f for f in freshness.check(ctx).findings if f.alert == "verification_overdue"]
    assert [f.labels for f in found] == [{"collection": "api"}]
    assert PAGE in [e["doc_id"] for e in found[0].annotations["top"]]
    documents = kb.index().documents
    assert citation_badges(store, settings, documents, [PAGE, "plans:sla.md"], "en", now=NOW) == {
        PAGE: "verification overdue"}  # plans has no interval: no badge
    assert citation_badges(store, settings, documents, [PAGE], "ko", now=NOW) == {PAGE: "확인 기한 지남"}
    # verified: no longer overdue, and the badge names the verifier
    store.claim_verification_ask(PAGE, "S0APITEAM", due_at=NOW, now=NOW)
    asked = store.page_verifications([PAGE])[PAGE]["asked_at"]
    store.answer_verification(PAGE, "verified", asked_at=asked, by="U0API1", now=NOW,
                              verified_until=NOW + timedelta(days=90))
    later = NOW + timedelta(days=12)
    ctx.now = later
    found = [f for f in freshness.check(ctx).findings if f.alert == "verification_overdue"]
    assert PAGE not in [e["doc_id"] for e in found[0].annotations["top"]]
    assert citation_badges(store, settings, documents, [PAGE], "en", now=later) == {
        PAGE: "verified by <@U0API1> 12 days ago"}


async def test_pages_neither_verified_nor_cited_for_long_are_proposed_for_archiving(world):
    runner, clock, store = world["runner"], world["clock"], world["store"]
    clock[0] = NOW + timedelta(days=400)  # archive_after_days is 365
    await runner.run("verification")
    proposed = [i for i in review_items(store) if i["action"] == "propose_archive"]
    assert PAGE in {i["subject"] for i in proposed}
    assert all(i["subject"].startswith("api:") for i in proposed)  # only pages with an interval
    assert all(world["kb"].index().documents[i["subject"]]["stage"] == "active" for i in proposed)  # never archived
