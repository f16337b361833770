"""`minerva sandbox`: ask the Slack bot questions in a fake workspace on this machine, and see what Slack would show.

`run`: the real app (`bot.slack.app.build_app`, `bot.slack.server.create_web_app`) runs in this process on
127.0.0.1; each question is sent to it as a signed ``app_mention`` event (a follow-up question goes in the first
one's thread),
and what the bot posts to the fake Slack Web API (`bot.cli.sandbox.slack_api.FakeSlack`) is printed as a reader
would see it: sections, quotes, context lines and buttons. With ``thumbs_down`` it also clicks 👎 on each
answer and prints the private reason picker that follows. ``channel`` asks in a channel of the config's
``channels:`` (its collections, private replies and language apply); ``separate`` asks each question as its own
message instead of one thread; ``expert_answer`` clicks "Ask an expert" on the first reply, answers it as the
expert through the form, and asks the first question again to show the kept answer; ``home`` prints the App
Home tab at the end. Answers and votes go to a throwaway store.

`run_replicas`: the same conversation with several real ``minerva serve`` processes (`bot.cli.sandbox.replicas`) on
one shared database; each event goes to one replica and, at the same time, its Slack retry to the others, and
the output says whether it was answered once and by which replica. 👎 clicks go to a replica that did not
answer. No token, no network, no open port beyond 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TextIO
from urllib.parse import urlencode

import aiohttp
from aiohttp.test_utils import TestServer

from bot.cli.sandbox.replicas import Cluster, Replica, start_replicas, stop_replicas
from bot.cli.sandbox.signing import button_click, event_envelope, mention_event, signed_request_headers
from bot.cli.sandbox.slack_api import FakeSlack
from bot.slack.blocks import REPORT_WRONG_ACTION

SECRET = "sandbox-signing-secret"
CHANNEL, USER = "CSANDBOX", "USANDBOX"
#: Who answers "Ask an expert" in the sandbox when the config names nobody to ask.
STAND_IN_EXPERT = "USANDBOXEXPERT"
#: Slack's own markup in mrkdwn (`as_seen`): a link with an optional label, and a user, user group or channel.
_SLACK_LINK = re.compile(r"<((?:https?|mailto):[^|>\s]+)(?:\|([^>]*))?>")
_SLACK_MENTION = re.compile(r"<(@|!subteam\^|#)([A-Z0-9]+)(?:\|[^>]*)?>")
#: Seconds to wait for the bot's reply to one question (the first loads the model).
REPLY_SECONDS = 120.0
#: Seconds to wait after a replica's answer for a second one (a retry answered twice would be posted by then).
DUPLICATE_SECONDS = 2.0


def render(body: dict) -> str:
    """A posted message (chat.postMessage or response_url body) as lines a reader sees in Slack: links as their
    label and address, mentions as @name or #channel, entities as their character (`as_seen`)."""
    return as_seen(_render_blocks(body))


def as_seen(mrkdwn: str) -> str:
    """Slack mrkdwn as Slack shows it, in plain text: ``<url|label>`` → ``label (url)``, ``<@U1>`` → ``@U1``,
    ``<!subteam^S1>`` → ``@S1``, ``<#C1>`` → ``#C1``, the emoji codes Minerva posts as their emoji
    (`EMOJI`), ``&lt;`` ``&gt;`` ``&amp;`` → ``<`` ``>`` ``&``. A newcomer read the raw ``<https://…|title>``,
    another the digest's ``:red_circle:``, as what Slack would print."""
    text = _SLACK_LINK.sub(lambda m: f"{m.group(2)} ({m.group(1)})" if m.group(2) else m.group(1), mrkdwn)
    text = _SLACK_MENTION.sub(lambda m: ("#" if m.group(1) == "#" else "@") + m.group(2), text)
    text = _EMOJI_CODE.sub(lambda m: EMOJI.get(m.group(1), m.group(0)), text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


#: The emoji codes Minerva's own messages use, as Slack draws them.
EMOJI = {"red_circle": "🔴", "large_orange_circle": "🟠", "large_blue_circle": "🔵", "warning": "⚠️", "new": "🆕",
         "white_check_mark": "✅", "rotating_light": "🚨", "robot_face": "🤖", "lock": "🔒", "hourglass": "⌛",
         "bust_in_silhouette": "👤", "thumbsup": "👍"}
_EMOJI_CODE = re.compile(r":([a-z_]+):")


def _render_blocks(body: dict) -> str:
    """The message's blocks as lines of mrkdwn (`render`)."""
    lines = []
    for block in body.get("blocks") or []:
        kind = block["type"]
        if kind == "header":
            lines.append(f"== {block['text']['text']} ==")
        elif kind == "section":
            if block.get("text"):
                lines.append(block["text"]["text"])
            lines += [f"  {f['text']}" for f in block.get("fields", [])]
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


def _mention(question: str, ts: str, thread_ts: str | None, channel: str = CHANNEL) -> bytes:
    event = mention_event(question, ts=ts, channel=channel, user=USER, thread_ts=thread_ts)
    return json.dumps(event_envelope(event, f"Ev{ts.replace('.', '')}")).encode()


def _thumbs_down(answer: dict, ts: str, response_url: str) -> bytes:
    from bot.slack.blocks import FEEDBACK_ACTION

    payload = button_click(_down_value(answer), message=answer, message_ts=ts, user=USER,
                           action_id=FEEDBACK_ACTION, response_url=response_url)
    return urlencode({"payload": json.dumps(payload)}).encode()


def _down_value(answer: dict) -> str:
    for block in answer.get("blocks") or []:
        for element in block.get("elements", []):
            if element.get("type") == "feedback_buttons":
                return element["negative_button"]["value"]
    raise ValueError("the answer has no 👍/👎 buttons")


async def run(kb, settings, questions: list[str], *, thumbs_down: bool, out: TextIO = sys.stdout,
              channel: str = CHANNEL, separate: bool = False, expert_answer: str | None = None,
              home: bool = False, report: bool = False) -> None:
    """Starts the fake Slack and the app in this process, asks ``questions`` in one thread, prints every reply.

    Args:
        kb: the `knowledge.KnowledgeBase` to answer from.
        settings: the `config.Settings` the app runs with.
        questions: asked in order, the later ones as replies in the first one's thread (``separate``: each on
            its own).
        thumbs_down: also click 👎 on each answer and print the private reason picker.
        out: where the conversation is printed.
        channel: the channel asked in (a key of ``settings.channels`` applies its settings).
        expert_answer: escalate the first reply and answer it with this text as the expert (the config's,
            else `STAND_IN_EXPERT`), then ask the first question again.
        home: print the asker's App Home tab at the end.
        report: also click "Report a wrong answer" on each answer and print the private confirmation.

    Raises:
        TimeoutError: the bot posted no reply within `REPLY_SECONDS`.
    """
    import copy

    from bot.slack.app import build_app, make_client
    from feedback import FeedbackStore

    if expert_answer is not None and not settings.experts.ask:
        settings = copy.deepcopy(settings)
        settings.experts.ask = STAND_IN_EXPERT
        print(f"(no experts.ask configured: the sandbox asks a stand-in expert, {STAND_IN_EXPERT})", file=out)
    fake = FakeSlack()
    await fake.start()
    with tempfile.TemporaryDirectory(prefix="minerva-sandbox-") as scratch, \
            ThreadPoolExecutor(max_workers=2, thread_name_prefix="sandbox") as executor:
        store = FeedbackStore.open(Path(scratch) / "feedback.sqlite")
        app = build_app(kb, store, settings, client=make_client("xoxb-sandbox", fake.url), signing_secret=SECRET,
                        executor=executor)
        from bot.slack.server import EVENTS_PATH, create_web_app

        server = TestServer(create_web_app(app), host="127.0.0.1")
        await server.start_server()
        try:
            async with aiohttp.ClientSession() as session:
                talk = _Talk(fake, session, str(server.make_url(EVENTS_PATH)), settings, channel, out)
                first = await talk.ask_all(questions, thumbs_down=thumbs_down, separate=separate, report=report)
                if expert_answer is not None and first is not None:
                    await talk.escalate(first, expert_answer)
                    await talk.ask_all(questions[:1], thumbs_down=False, separate=True)
                if home:
                    await talk.home()
        finally:
            await asyncio.sleep(0.05)  # Bolt's listeners finish before the fake stops
            await server.close()
            store.close()
            await fake.stop()


class _Talk:
    """One sandbox conversation: sends signed events and clicks to the app, prints what the fake Slack got."""

    def __init__(self, fake: FakeSlack, session: aiohttp.ClientSession, url: str, settings, channel: str,
                 out: TextIO):
        self.fake, self.session, self.url, self.channel, self.out = fake, session, url, channel, out
        self.private = settings.channel(channel).private
        self.serial = 0
        where = f"channel {channel}" + (" (its settings apply)" if channel in settings.channels else "")
        print(f"(asking in {where}{'; replies are private' if self.private else ''})", file=out)

    def _ts(self) -> str:
        self.serial += 1
        return f"{int(time.time())}.{self.serial:06d}"

    async def _next(self, method: str, before: int) -> dict:
        (*_, call) = await self.fake.wait_for(method, count=before + 1, timeout=REPLY_SECONDS)
        return call["body"]

    async def ask_all(self, questions: list[str], *, thumbs_down: bool, separate: bool,
                      report: bool = False) -> dict | None:
        """Asks ``questions`` (one thread unless ``separate``); returns the first reply. ``thumbs_down`` and
        ``report`` click 👎 (then its "Wrong" reason) and "Report a wrong answer" on each reply and print what only
        the asker sees."""
        thread, first = None, None
        method = "chat.postEphemeral" if self.private else "chat.postMessage"
        for question in questions:
            ts = self._ts()
            print(f"\n### you: @minerva {question}", file=self.out)
            before = len(self.fake.calls_to(method))
            await _post(self.session, self.url, _mention(question, ts, thread, self.channel))
            answer = await self._next(method, before)
            answer.setdefault("ts", ts + "1")
            print(("(only you see this)\n" if self.private else "") + render(answer), file=self.out)
            first = first or answer
            thread = None if separate else (thread or ts)
            if thumbs_down and _has_buttons(answer):
                private = len(self.fake.calls_to("chat.postEphemeral"))
                await _post(self.session, self.url, _thumbs_down(answer, f"{ts}1", self.fake.response_url("vote")))
                picker = await self._next("chat.postEphemeral", private)
                print("\n### you clicked 👎; only you see:\n" + render(picker), file=self.out)
                await self._reason(picker, "wrong")
            if report and (button := _button(answer, REPORT_WRONG_ACTION)) is not None:
                private = len(self.fake.calls_to("chat.postEphemeral"))
                await self._click(answer | {"ts": f"{ts}1"}, REPORT_WRONG_ACTION, button["value"], USER)
                thanks = await self._next("chat.postEphemeral", private)
                print("\n### you clicked Report a wrong answer; only you see:\n" + render(thanks), file=self.out)
        return first

    async def escalate(self, reply: dict, text: str) -> None:
        """"Ask an expert" on ``reply``, the expert's "Answer", the form submitted with ``text``; prints each
        step as the asker and the expert see it."""
        from bot.slack.experts import (ANSWER_BLOCK, ANSWER_INPUT, ASK_EXPERT_ACTION, EXPERT_ANSWER_ACTION,
                                       EXPERT_MODAL, PAGE_BLOCK, PAGE_INPUT)
        from bot.cli.sandbox.signing import view_submission

        ask = _button(reply, ASK_EXPERT_ACTION)
        if ask is None:
            print("\n(no \"Ask an expert\" button: this channel's experts are off)", file=self.out)
            return
        posted, private = len(self.fake.calls_to("chat.postMessage")), len(self.fake.calls_to("chat.postEphemeral"))
        await self._click(reply, ASK_EXPERT_ACTION, ask["value"], USER)
        print("\n### you clicked Ask an expert; only you see:\n" + render(await self._next("chat.postEphemeral",
                                                                                         private)), file=self.out)
        request = await self._next("chat.postMessage", posted)
        expert = request["channel"]
        print(f"\n### the experts see (in {expert}):\n" + render(request), file=self.out)
        answer = _button(request, EXPERT_ANSWER_ACTION)
        opened = len(self.fake.calls_to("views.open"))
        await self._click(request | {"ts": request.get("ts") or self._ts()}, EXPERT_ANSWER_ACTION, answer["value"],
                          expert if expert.startswith("U") else STAND_IN_EXPERT)
        view = await self._next("views.open", opened)
        view = json.loads(view["view"]) if isinstance(view["view"], str) else view["view"]
        print(f"\n### the expert clicked Answer; a form opens: {view['title']['text']}", file=self.out)
        values = {ANSWER_BLOCK: {ANSWER_INPUT: {"type": "plain_text_input", "value": text}},
                  PAGE_BLOCK: {PAGE_INPUT: {"type": "checkboxes", "selected_options": []}}}
        method = "chat.postEphemeral" if self.private else "chat.postMessage"
        posted = len(self.fake.calls_to(method))
        payload = view_submission(EXPERT_MODAL, view["private_metadata"], values,
                                  user=expert if expert.startswith("U") else STAND_IN_EXPERT)
        await _post(self.session, self.url, urlencode({"payload": json.dumps(payload)}).encode())
        where = "in your thread (only you see it)" if self.private else "in your thread"
        print(f"\n### they wrote \"{text}\"; {where}:\n" + render(await self._next(method, posted)), file=self.out)

    async def home(self) -> None:
        """The asker opens the App Home tab."""
        before = len(self.fake.calls_to("views.publish"))
        ts = self._ts()
        event = {"type": "app_home_opened", "user": USER, "channel": "DSANDBOX", "tab": "home", "event_ts": ts}
        await _post(self.session, self.url, json.dumps(event_envelope(event, f"EvHome{ts.replace('.', '')}")).encode())
        view = (await self._next("views.publish", before))["view"]
        view = json.loads(view) if isinstance(view, str) else view
        print("\n### you open Minerva's Home tab:\n" + render(view), file=self.out)

    async def _reason(self, picker: dict, reason: str) -> None:
        """Clicks the ``reason`` button of the private 👎 picker and prints the confirmation that replaces it
        (sent to the click's ``response_url``, as Slack does)."""
        from bot.slack.vote_reasons import VOTE_REASON_ACTION

        button = _button(picker, f"{VOTE_REASON_ACTION}:{reason}")
        if button is None:
            return
        before = len(self.fake.calls_to("response_url"))
        await self._click(picker | {"ts": picker.get("ts") or self._ts()}, button["action_id"], button["value"], USER)
        thanks = await self._next("response_url", before)
        print(f"\n### you clicked {button['text']['text']}; only you see:\n" + render(thanks), file=self.out)

    async def _click(self, message: dict, action_id: str, value: str, user: str) -> None:
        payload = button_click(value, message=message, message_ts=message.get("ts") or self._ts(), user=user,
                               action_id=action_id, response_url=self.fake.response_url("click"))
        payload["actions"][0]["type"] = "button"
        await _post(self.session, self.url, urlencode({"payload": json.dumps(payload)}).encode())


def _button(message: dict, action_id: str) -> dict | None:
    return next((e for b in message.get("blocks") or [] for e in b.get("elements") or []
                 if e.get("action_id") == action_id), None)


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
