"""Try the Slack bot on your own pages without a Slack workspace: a fake workspace on this machine.

    python -m tests.fakes.sandbox --config minerva.yaml "how do I set up the VPN?" "and on linux?"

The real app (`bot.app.build_app`, `bot.server.create_web_app`) runs on 127.0.0.1; each question is sent to it
as a signed ``app_mention`` event (a follow-up question goes in the first one's thread), and what the bot posts
to the fake Slack Web API (`tests.fakes.slack_api.FakeSlack`) is printed as a reader would see it: sections,
quotes, context lines and buttons. With ``--thumbs-down`` it also clicks 👎 on each answer and prints the
private reason picker that follows. Answers and votes go to a throwaway store in a temporary folder; the index
is read from your home as ``minerva`` reads it. No token, no network, no open port beyond 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
from aiohttp.test_utils import TestServer

from bot.app import build_app, make_client
from bot.logs import configure_logging
from bot.blocks import FEEDBACK_ACTION
from bot.server import EVENTS_PATH, create_web_app
from config import load_settings
from feedback import FeedbackStore
from knowledge import KnowledgeBase
from tests.fakes.fixtures import button_click, event_envelope, mention_event, signed_request_headers
from tests.fakes.slack_api import FakeSlack

SECRET = "sandbox-signing-secret"
CHANNEL, USER = "CSANDBOX", "USANDBOX"
#: Seconds to wait for the bot's reply to one question (the first loads the model).
REPLY_SECONDS = 120.0


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
    payload = button_click(_down_value(answer), message=answer, message_ts=ts, user=USER,
                           action_id=FEEDBACK_ACTION, response_url=response_url)
    return urlencode({"payload": json.dumps(payload)}).encode()


def _down_value(answer: dict) -> str:
    for block in answer.get("blocks") or []:
        for element in block.get("elements", []):
            if element.get("type") == "feedback_buttons":
                return element["negative_button"]["value"]
    raise ValueError("the answer has no 👍/👎 buttons")


async def run(kb: KnowledgeBase, settings, questions: list[str], *, thumbs_down: bool, out=sys.stdout) -> None:
    """Starts the fake Slack and the app, asks ``questions`` in one thread, prints every reply."""
    fake = FakeSlack()
    await fake.start()
    with tempfile.TemporaryDirectory(prefix="minerva-sandbox-") as scratch, \
            ThreadPoolExecutor(max_workers=2, thread_name_prefix="sandbox") as executor:
        store = FeedbackStore.open(Path(scratch) / "feedback.sqlite")
        app = build_app(kb, store, settings, client=make_client("xoxb-sandbox", fake.url), signing_secret=SECRET,
                        executor=executor)
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
                   thumbs_down: bool, out) -> None:
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.fakes.sandbox", description=__doc__.split("\n\n")[0])
    parser.add_argument("questions", nargs="+", help="questions, asked in one thread (the later ones as follow-ups)")
    parser.add_argument("--config", help="your config (default: MINERVA_CONFIG, else the bundled sample)")
    parser.add_argument("--home", help="data folder (default: `var` beside the config, as `minerva` uses)")
    parser.add_argument("--thumbs-down", action="store_true", help="click 👎 on each answer and show the reasons")
    args = parser.parse_args(argv)
    configure_logging("WARNING", "console")  # the conversation, not the app's info logs

    config = args.config or os.environ.get("MINERVA_CONFIG")
    settings = load_settings(config)
    home = Path(args.home or os.environ.get("MINERVA_HOME") or (Path(config).resolve().parent / "var" if config else "var"))
    asyncio.run(run(KnowledgeBase(settings, home), settings, args.questions, thumbs_down=args.thumbs_down))


if __name__ == "__main__":
    main()
