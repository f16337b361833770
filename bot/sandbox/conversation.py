"""`minerva sandbox`: ask the Slack bot questions in a fake workspace on this machine, and see what Slack would show.

`run`: the real app (`bot.app.build_app`, `bot.server.create_web_app`) runs in this process on 127.0.0.1; each
question is sent to it as a signed ``app_mention`` event (a follow-up question goes in the first one's thread),
and what the bot posts to the fake Slack Web API (`bot.sandbox.slack_api.FakeSlack`) is printed as a reader
would see it: sections, quotes, context lines and buttons. With ``thumbs_down`` it also clicks 👎 on each
answer and prints the private reason picker that follows. Answers and votes go to a throwaway store.

`run_replicas`: the same conversation with several real ``minerva serve`` processes (`bot.sandbox.replicas`) on
one shared database; each event goes to one replica and, at the same time, its Slack retry to the others, and
the output says whether it was answered once and by which replica. 👎 clicks go to a replica that did not
answer. No token, no network, no open port beyond 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TextIO
from urllib.parse import urlencode

import aiohttp
from aiohttp.test_utils import TestServer

from bot.sandbox.replicas import Cluster, Replica, start_replicas, stop_replicas
from bot.sandbox.signing import button_click, event_envelope, mention_event, signed_request_headers
from bot.sandbox.slack_api import FakeSlack

SECRET = "sandbox-signing-secret"
CHANNEL, USER = "CSANDBOX", "USANDBOX"
#: Seconds to wait for the bot's reply to one question (the first loads the model).
REPLY_SECONDS = 120.0
#: Seconds to wait after a replica's answer for a second one (a retry answered twice would be posted by then).
DUPLICATE_SECONDS = 2.0


def render(body: dict) -> str:
    """A posted message (chat.postMessage or response_url body) as lines a reader sees in Slack."""
    lines = []
    for block in body.get("blocks") or []:
        kind = block["type"]
        if kind == "section":
            lines.append(block["text"]["text"])
        elif kind == "context":
            lines += [f"  ({e.get('text', '')})" for e in block.get("elements", [])]
        elif kind in ("actions", "context_actions"):
            labels = []
            for element in block.get("elements", []):
                if element.get("type") == "feedback_buttons":
                    labels += [element["positive_button"]["text"]["text"], element["negative_button"]["text"]["text"]]
                elif "text" in element:
                    labels.append(element["text"]["text"])
            lines.append("  [" + "] [".join(labels) + "]")
    return "\n".join(lines) if lines else body.get("text", "")


async def _post(session: aiohttp.ClientSession, url: str, body: bytes) -> int:
    async with session.post(url, data=body, headers=signed_request_headers(SECRET, body)) as response:
        await response.read()
        return response.status


def _mention(question: str, ts: str, thread_ts: str | None) -> bytes:
    event = mention_event(question, ts=ts, channel=CHANNEL, user=USER, thread_ts=thread_ts)
    return json.dumps(event_envelope(event, f"Ev{ts.replace('.', '')}")).encode()


def _thumbs_down(answer: dict, ts: str, response_url: str) -> bytes:
    from bot.blocks import FEEDBACK_ACTION

    payload = button_click(_down_value(answer), message=answer, message_ts=ts, user=USER,
                           action_id=FEEDBACK_ACTION, response_url=response_url)
    return urlencode({"payload": json.dumps(payload)}).encode()


def _down_value(answer: dict) -> str:
    for block in answer.get("blocks") or []:
        for element in block.get("elements", []):
            if element.get("type") == "feedback_buttons":
                return element["negative_button"]["value"]
    raise ValueError("the answer has no 👍/👎 buttons")


async def run(kb, settings, questions: list[str], *, thumbs_down: bool, out: TextIO = sys.stdout) -> None:
    """Starts the fake Slack and the app in this process, asks ``questions`` in one thread, prints every reply.

    Args:
        kb: the `knowledge.KnowledgeBase` to answer from.
        settings: the `config.Settings` the app runs with.
        questions: asked in order, the later ones as replies in the first one's thread.
        thumbs_down: also click 👎 on each answer and print the private reason picker.
        out: where the conversation is printed.

    Raises:
        TimeoutError: the bot posted no reply within `REPLY_SECONDS`.
    """
    from bot.app import build_app, make_client
    from feedback import FeedbackStore

    fake = FakeSlack()
    await fake.start()
    with tempfile.TemporaryDirectory(prefix="minerva-sandbox-") as scratch, \
            ThreadPoolExecutor(max_workers=2, thread_name_prefix="sandbox") as executor:
        store = FeedbackStore.open(Path(scratch) / "feedback.sqlite")
        app = build_app(kb, store, settings, client=make_client("xoxb-sandbox", fake.url), signing_secret=SECRET,
                        executor=executor)
        from bot.server import create_web_app

        server = TestServer(create_web_app(app), host="127.0.0.1")
        await server.start_server()
        try:
            async with aiohttp.ClientSession() as session:
                await _ask_all(fake, server, session, questions, thumbs_down, out)
        finally:
            await asyncio.sleep(0.05)  # Bolt's listeners finish before the fake stops
            await server.close()
            store.close()
            await fake.stop()


async def _ask_all(fake: FakeSlack, server: TestServer, session: aiohttp.ClientSession, questions: list[str],
                   thumbs_down: bool, out: TextIO) -> None:
    from bot.server import EVENTS_PATH

    thread = None
    for n, question in enumerate(questions, start=1):
        ts = f"{int(time.time())}.{n:06d}"
        print(f"\n### you: @minerva {question}", file=out)
        await _post(session, str(server.make_url(EVENTS_PATH)), _mention(question, ts, thread))
        (*_, call) = await fake.wait_for("chat.postMessage", count=n, timeout=REPLY_SECONDS)
        answer = call["body"]
        print(render(answer), file=out)
        thread = thread or ts
        if thumbs_down and _has_buttons(answer):
            private = len(fake.calls_to("chat.postEphemeral"))
            await _post(session, str(server.make_url(EVENTS_PATH)),
                        _thumbs_down(answer, f"{ts}1", fake.response_url(f"vote-{n}")))
            (*_, picker) = await fake.wait_for("chat.postEphemeral", count=private + 1, timeout=REPLY_SECONDS)
            print("\n### you clicked 👎; only you see:\n" + render(picker["body"]), file=out)


def _has_buttons(answer: dict) -> bool:
    return any(b["type"] == "context_actions" for b in answer.get("blocks") or [])


async def run_replicas(questions: list[str], *, count: int, database_url: str, index_dir: Path,
                       config: Path | None = None, home_sources: Path | None = None, thumbs_down: bool = False,
                       out: TextIO = sys.stdout, status: TextIO = sys.stderr) -> int:
    """Starts ``count`` ``minerva serve`` replicas on one database and asks ``questions`` in one thread.

    Each question's event goes to one replica (in turn) and, at the same time, as Slack's retry
    (``X-Slack-Retry-Num: 1``) to every other one; the answer is printed with the replica that posted it and
    whether it was posted exactly once.

    Args:
        questions: asked in order, the later ones as replies in the first one's thread.
        count: replicas to start, >= 2.
        database_url: the PostgreSQL store they share (``MINERVA_DATABASE_URL``); answers and votes stay in it.
        index_dir: the generations folder they read (``MINERVA_INDEX_DIR``).
        config: their config (``--config``); None means the bundled sample.
        home_sources: a ``sources.yaml`` of folders ingested with ``minerva ingest FOLDER``, copied to each home.
        thumbs_down: also click 👎 on each answer, on a replica that did not post it, and print the picker.
        out: where the conversation is printed.
        status: where progress lines (replicas starting, their URLs) are printed.

    Returns:
        How many questions were not answered exactly once (0 when every retry was recognised).

    Raises:
        RuntimeError: a replica did not start (its log is quoted).
        TimeoutError: no reply within `REPLY_SECONDS`.
    """
    fake = FakeSlack()
    await fake.start()
    try:
        with tempfile.TemporaryDirectory(prefix="minerva-sandbox-") as scratch:
            print(f"starting {count} `minerva serve` replicas on 127.0.0.1 (each loads the models) …", file=status)
            replicas = await start_replicas(count, workdir=Path(scratch), database_url=database_url,
                                            index_dir=index_dir, slack_url=fake.url, config=config,
                                            home_sources=home_sources)
            try:
                print("; ".join(f"{r.name}: {r.url}" for r in replicas), file=status)
                async with aiohttp.ClientSession() as session:
                    return await _ask_replicas(Cluster(replicas, session), fake, questions, thumbs_down, out)
            finally:
                await stop_replicas(replicas)
    finally:
        await fake.stop()


async def _ask_replicas(cluster: Cluster, fake: FakeSlack, questions: list[str], thumbs_down: bool,
                        out: TextIO) -> int:
    replicas, wrong, thread = cluster.replicas, 0, None
    for n, question in enumerate(questions):
        first = replicas[n % len(replicas)]
        others = [r for r in replicas if r is not first]
        envelope = cluster.mention_envelope(question, user=USER, channel=CHANNEL, thread_ts=thread)
        print(f"\n### you: @minerva {question}", file=out)
        before = len(_posts(fake))
        await asyncio.gather(cluster.deliver(first, envelope),
                             *(cluster.deliver(r, envelope, retry_num=1) for r in others))
        await _wait_for_posts(fake, before + 1)
        await asyncio.sleep(DUPLICATE_SECONDS)
        posts = _posts(fake)[before:]
        answer = posts[0]["body"]
        print(render(answer), file=out)
        posters = [_poster(post, replicas) for post in posts]
        retried = ", ".join(r.name for r in others)
        sent = f"event {envelope['event_id']} sent to {first.name}, its Slack retry to {retried}"
        if len(posts) == 1:
            print(f"  => {sent}: answered once, by {posters[0]}", file=out)
        else:
            wrong += 1
            print(f"  => {sent}: answered {len(posts)} times, by {', '.join(posters)}", file=out)
        thread = thread or envelope["event"]["ts"]
        if thumbs_down and _has_buttons(answer):
            voter = next((r for r in replicas if r.name != posters[0]), first)
            private = len(fake.calls_to("chat.postEphemeral"))
            await cluster.click(voter, "down", answer, USER, fake.response_url(f"vote-{n}"))
            (*_, picker) = await fake.wait_for("chat.postEphemeral", count=private + 1, timeout=REPLY_SECONDS)
            print(f"\n### you clicked 👎 (the click went to {voter.name}); only you see:\n" + render(picker["body"]),
                  file=out)
    return wrong


def _posts(fake: FakeSlack) -> list[dict]:
    """The chat.postMessage calls into the sandbox's channel (the replicas' scheduled jobs may post elsewhere)."""
    return [call for call in fake.calls_to("chat.postMessage") if call["body"].get("channel") == CHANNEL]


async def _wait_for_posts(fake: FakeSlack, count: int, timeout: float = REPLY_SECONDS) -> None:
    deadline = time.monotonic() + timeout
    while len(_posts(fake)) < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"no reply within {timeout:.0f} s; Web API calls so far: "
                               f"{[call['method'] for call in fake.calls]}")
        await asyncio.sleep(0.05)


def _poster(post: dict, replicas: list[Replica]) -> str:
    """The replica whose bot token made ``post`` (a recorded call)."""
    headers = {key.lower(): value for key, value in post["headers"].items()}
    token = headers.get("authorization", "").removeprefix("Bearer ")
    return next((r.name for r in replicas if r.token == token), "an unknown sender")
