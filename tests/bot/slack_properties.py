"""Fuzzing the Slack edge: input strategies, invariant checks and a live app, shared by the CI property tests
(`tests/bot/test_slack_fuzz.py`, 2,000 examples per invariant) and the long run (`benchmarks/fuzz_slack.py`).

Invariants (issue 10 item 7):

- `check_split`: `bot.slack.blocks.split_graphemes` keeps every piece within its limit, loses nothing, and cuts only
  between grapheme clusters and outside entities and links (except inside a cluster or link longer than
  the limit, or an entity whose clusters together are, which cannot be kept whole);
- `check_blocks`: every text of `bot.slack.blocks.answer_blocks` is <= 3,000 characters of valid UTF-8, with no
  broken entity or link and no live ``<!channel>``/``<!here>``/``<@U…>`` from document text;
- `LiveApp.post`: any signed request body gets an answer other than 5xx from the real app over HTTP, and one
  naming another workspace or app is refused (`check_refused`, issue 27);
- `LiveApp.envelope`: any Socket Mode envelope is acked at once, whatever its payload (a list, a text, null …),
  and one naming another workspace or app is refused (`check_ack`).
"""

from __future__ import annotations

import asyncio
import copy
import hmac
import json
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from hashlib import sha256
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
import regex
from aiohttp import web
from hypothesis import strategies as st
from slack_bolt.request.internals import parse_body

from bot.slack.app import build_app, make_client
from bot.slack.blocks import (
    BLOCK_LIMIT,
    FEEDBACK_ACTION,
    QUOTE_MARKER,
    REPORT_WRONG_ACTION,
    SECTION_LIMIT,
    VOTE_DOWN_ACTION,
    VOTE_UP_ACTION,
    to_mrkdwn,
)
from bot.slack.digest_blocks import (ALERT_ACK_ACTION, ALERT_QUARANTINE_ACTION, ALERT_RELEASE_ACTION,
                                     ALERT_SILENCE_ACTION)
from bot.slack.server import EVENTS_PATH, create_web_app
from bot.slack.socket_mode import GatedSocketModeHandler
from feedback import FeedbackStore
from knowledge.types import Answer, Citation
from tests.fakes.slack_api import FakeSlack

SECRET = "fuzz-signing-secret"

# --- text strategies -----------------------------------------------------------------------------------------

#: Pieces that have broken Slack renderers: clusters of many code points, Slack's control characters, its
#: special commands and mentions, Markdown the renderer turns into links, line structure.
TRICKY = [
    "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466", "\U0001F44D\U0001F3FD", "\U0001F1F0\U0001F1F7",
    "1\uFE0F\u20E3", "\u1100\u1161\u11A8", "한국어", "障害対応", "e\u0301", "Z" + "\u0336" * 40, "\u0600", "\r\n",
    "&", "&amp;", "<", ">", "|", "<!channel>", "<!here>", "<!everyone>", "<@U12345>", "<#C1|general>", "<@W1|x>",
    "[the guide](https://wiki.example/a?b=1&c=2)", "[x|y](http://h/p)", "**bold**", "# Heading", "> quoted",
    "\n", "\n\n", " ", "  ", "x" * 50, "word ", "`code`",
]
fragments = st.one_of(st.sampled_from(TRICKY), st.text(max_size=20))
#: Document-like text, up to ~10,000 characters: a fragment list, sometimes repeated to pass the limits.
document_text = st.builds(lambda parts, times: "".join(parts) * times,
                          st.lists(fragments, max_size=30), st.sampled_from([1, 1, 1, 3, 10, 40]))
#: Passages for whole answers (several per answer): shorter on average, still past 3,000 characters at times.
passage_text = st.builds(lambda parts, times: "".join(parts) * times,
                         st.lists(fragments, max_size=30), st.sampled_from([1, 1, 1, 2, 12]))


# --- the splitter ----------------------------------------------------------------------------------------

_ATOM = regex.compile(r"&[A-Za-z]{2,8};|&#[0-9]{1,7};|<[^<>\n]*>")


def check_split(text: str, limit: int, pieces: list[str]) -> None:
    """Assert `split_graphemes(text, limit)` → ``pieces`` keeps the splitter's promises (module docstring)."""
    room = limit - len(QUOTE_MARKER)  # what a continuation piece can hold besides its marker
    boundaries, oversized = {0}, set()
    for cluster in regex.finditer(r"\X", text):
        boundaries.add(cluster.end())
        if cluster.end() - cluster.start() > room:  # cannot be kept whole: cutting inside is allowed
            oversized.update(range(cluster.start() + 1, cluster.end()))
    protected = set()
    clusters = [(c.start(), c.end()) for c in regex.finditer(r"\X", text)]
    for atom in _ATOM.finditer(text):
        # with the clusters it touches (U+0600 before "&" is one cluster with it): kept whole only if all fit
        start = min([atom.start()] + [a for a, b in clusters if a < atom.start() < b])
        end = max([atom.end()] + [b for a, b in clusters if a < atom.end() < b])
        if end - start <= room:
            protected.update(range(start + 1, end))
    position = 0
    for index, piece in enumerate(pieces):
        assert 0 < len(piece) <= limit and piece.strip(), (index, piece)
        start, body = _locate(text, position, piece, continued=index > 0)
        end = start + len(body)
        for cut in (start, end):
            assert cut in boundaries or cut in oversized, f"cut inside a grapheme at {cut}"
            assert cut not in protected, f"cut inside an entity or link at {cut}: {text[cut - 5:cut + 5]!r}"
        position = end
    assert not text[position:].strip(), "text lost at the end"


def _locate(text: str, position: int, piece: str, *, continued: bool) -> tuple[int, str]:
    """Where ``piece`` sits in ``text`` at or after ``position`` (skipping dropped whitespace), without a quote
    marker the splitter added; returns (start, the piece's text from the source)."""
    j = position
    while True:
        if text.startswith(piece, j):
            return j, piece
        if continued and piece.startswith(QUOTE_MARKER) and j > 0 and text[j - 1] != "\n" \
                and text.startswith(piece[len(QUOTE_MARKER):], j):
            return j, piece[len(QUOTE_MARKER):]
        assert j < len(text) and text[j].isspace(), f"piece not found in order: {piece[:40]!r} at {position}"
        j += 1


# --- the renderer ----------------------------------------------------------------------------------------

NOW = datetime.now(timezone.utc)
#: What a link we build looks like: ``<http(s)://…|label>`` with no ``<``, ``>`` or newline inside.
_OUR_LINK = regex.compile(r"<https?://[^<>|\s]*\|[^<>\n]*>")


REFUSAL = "I couldn't find this in the knowledge base."


def hostile_answer(quotes: list[str], direct: str, title: str, url: str, refused: bool, low: bool,
                   language: str = "en") -> Answer:
    """An answer whose every text comes from a document (so from the fuzzer), but its refusal sentence.

    Titles and headings are single lines here: `_citation_line` puts them in a link label as they are, and a
    line break there breaks the link (found by this fuzzer; reported to the owner of the citation layout).
    """
    title = " ".join(title.splitlines())
    citation = Citation(1, "c:doc.md", title, url, title[:40], 0.8, NOW - timedelta(days=3))
    text = REFUSAL if refused else "\n\n".join(quotes) or direct
    return Answer(answer_id="a" * 32, question="q?", refused=refused, text=text,
                  quotes=quotes, citation_numbers=[1] * len(quotes), citations=[citation], low_confidence=low,
                  direct_answer=direct, language=language)


answers = st.builds(hostile_answer, st.lists(passage_text, max_size=3), passage_text, st.text(max_size=60),
                    st.one_of(st.just("https://wiki.example/a b|c>d"), st.text(max_size=30)), st.booleans(),
                    st.booleans(), st.sampled_from(["en", "ko", "ja"]))  # framed in the asker's language


def texts_of(blocks: list[dict]) -> list[str]:
    """Every mrkdwn / plain text in ``blocks`` (sections, section fields, context elements)."""
    found = []
    for block in blocks:
        if isinstance(block.get("text"), dict):
            found.append(block["text"]["text"])
        for element in block.get("elements", []):
            if isinstance(element, dict) and isinstance(element.get("text"), str):
                found.append(element["text"])
    return found


def check_blocks(blocks: list[dict]) -> None:
    """Assert the renderer's promises for one message's blocks (module docstring)."""
    assert 0 < len(blocks) <= BLOCK_LIMIT
    for text in texts_of(blocks):
        assert 0 < len(text) <= SECTION_LIMIT
        text.encode("utf-8")  # raises on a lone surrogate: not valid UTF-8
        assert regex.search(r"&(?!amp;|lt;|gt;)", text) is None, f"broken entity in {text[:80]!r}"
        rest = _OUR_LINK.sub("", text)
        assert "<" not in rest, f"a broken or foreign <…> in {text[:120]!r}"
        assert regex.search(r"(?<!^)(?<!\n)>", rest) is None, f"a stray > in {rest[:120]!r}"  # only quote markers
        for live in ("<!channel>", "<!here>", "<!everyone>", "<@U", "<@W", "<#C"):
            assert live not in text


# --- the live app --------------------------------------------------------------------------------------------

ACTION_IDS = [FEEDBACK_ACTION, VOTE_UP_ACTION, VOTE_DOWN_ACTION, REPORT_WRONG_ACTION, ALERT_ACK_ACTION,
              ALERT_SILENCE_ACTION, ALERT_QUARANTINE_ACTION, ALERT_RELEASE_ACTION, "minerva_retired"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=5)
#: Top-level fields Bolt or the listeners read; the fuzzer replaces or removes some of them.
FIELDS = ["type", "user", "team", "channel", "container", "message", "actions", "event", "event_id", "authorizations",
          "enterprise", "response_url", "response_urls", "view", "text", "command", "user_id", "channel_id",
          "team_id", "api_app_id", "is_ext_shared_channel", "is_enterprise_install", "function_data", "item"]


def _mutated(base: dict, replace: dict, remove: set, extra: dict) -> dict:
    """``base`` with fields replaced by arbitrary JSON, removed, or unknown fields added."""
    return {**{k: v for k, v in base.items() if k not in remove}, **replace, **extra}


def mutations_of(base: st.SearchStrategy[dict]) -> st.SearchStrategy[dict]:
    return st.builds(_mutated, base, st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=2),
                     st.sets(st.sampled_from(FIELDS), max_size=2),
                     st.dictionaries(st.text(max_size=6), json_values, max_size=1))


#: The live app's own workspace (the fake's auth.test) and app (`LiveApp`'s ``slack.app_id``), and others': the
#: app installed in a second workspace, or another app.
OWN_TEAM, OWN_APP = "T1", "A1"
FOREIGN_TEAMS, FOREIGN_APPS = ("T2", "E9"), ("A2",)
team_ids = st.sampled_from([OWN_TEAM, OWN_TEAM, OWN_TEAM, *FOREIGN_TEAMS])
app_ids = st.sampled_from([OWN_APP, OWN_APP, OWN_APP, *FOREIGN_APPS])


def _click(action_id: str, value, user, channel, team_id: str, app_id: str) -> dict:
    return {"type": "block_actions", "user": user, "team": {"id": team_id}, "api_app_id": app_id,
            "channel": channel, "container": {"channel_id": "C1", "message_ts": "1.000001"},
            "message": {"ts": "1.000001", "thread_ts": "1.000001"},
            "actions": [{"action_id": action_id, "value": value, "type": "button"}]}


def _event(event_type: str, event_id: str, user, text, channel, team_id: str, app_id: str) -> dict:
    return {"type": "event_callback", "team_id": team_id, "api_app_id": app_id, "event_id": event_id,
            "event": {"type": event_type, "user": user, "channel": channel, "ts": "1.1", "text": text}}


_ids = st.sampled_from(["U1", "C1", "D1"]) | json_values
clicks = mutations_of(st.builds(_click, st.sampled_from(ACTION_IDS), json_values | st.text(max_size=40),
                                st.builds(lambda i: {"id": i}, _ids) | _ids, st.builds(lambda i: {"id": i}, _ids) | _ids,
                                team_ids, app_ids))
events = mutations_of(st.builds(_event, st.sampled_from(["app_mention", "app_home_opened", "tokens_revoked", "reaction_added", "message"]),
                                st.text(min_size=1, max_size=10), _ids, json_values, _ids, team_ids, app_ids))
commands = mutations_of(st.fixed_dictionaries({"command": st.sampled_from(["/ask", "/other"]), "text": st.text(max_size=30),
                                               "user_id": st.just("U2"), "channel_id": st.just("C2"),
                                               "team_id": team_ids, "api_app_id": app_ids}))


def _form(payload) -> bytes:
    return urlencode({"payload": json.dumps(payload)}).encode()


#: Signed request bodies: clicks (form), events (JSON), slash commands (form), and arbitrary text.
bodies = st.one_of(
    clicks.map(_form), json_values.map(_form),
    events.map(lambda e: json.dumps(e).encode()), json_values.map(lambda v: json.dumps(v).encode()),
    commands.map(lambda c: urlencode({k: json.dumps(v) if not isinstance(v, str) else v for k, v in c.items()}).encode()),
    st.text(max_size=200).map(str.encode), st.binary(max_size=50),
)
#: Socket Mode envelopes (type, payload): what `bodies` carries as objects, and payloads that are not objects
#: at all (a list, a text, a number, null …: ``json_values``).
envelopes = st.tuples(st.sampled_from(["events_api", "interactive", "slash_commands"]),
                      st.one_of(events, clicks, commands, json_values))


class LiveApp:
    """The real app (Bolt behind `bot.slack.server.create_web_app`) and a fake Slack on their own event loop in a
    thread, so synchronous hypothesis tests can send requests; `post` signs and sends one body.

    The knowledge base has no index (questions get "not ready" at once): the fuzz is about the Slack edge. Its
    workspace is the fake's (T1, from auth.test) and its app ``slack.app_id`` = `OWN_APP`. With ``socket``, the
    app is also connected to the fake over Socket Mode (`bot.slack.socket_mode.GatedSocketModeHandler`): `envelope`
    sends one envelope there.
    """

    def __init__(self, settings, home: Path | None = None, *, socket: bool = False) -> None:
        self.home = Path(home or tempfile.mkdtemp(prefix="minerva-fuzz-"))
        self.settings = copy.deepcopy(settings)
        self.settings.slack.app_id = OWN_APP
        self.socket = socket
        self.handler: GatedSocketModeHandler | None = None
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="fuzz-loop", daemon=True)
        self.thread.start()
        self._call(self._start())

    def post(self, body: bytes, *, signed: bool = True) -> int:
        """POST ``body`` to /slack/events (signed with the app's secret when ``signed``); the HTTP status."""
        return self._call(self._post(body, signed))

    def envelope(self, envelope_type: str, payload) -> dict:
        """Send one Socket Mode envelope (needs ``socket=True``); its ack (`FakeSocketMode.wait_for_ack`).

        Raises:
            TimeoutError: no ack within 10 s.
        """
        return self._call(self._envelope(envelope_type, payload))

    def close(self) -> None:
        self._call(self._stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)

    def _call(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=30)

    async def _start(self) -> None:
        from knowledge import KnowledgeBase

        self.fake = FakeSlack()
        await self.fake.start()
        self.store = FeedbackStore.open(self.home / "minerva.sqlite")
        self.executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="fuzz")
        app = build_app(KnowledgeBase(self.settings, self.home / "empty"), self.store, self.settings,
                        client=make_client("xoxb-test", self.fake.url), signing_secret=SECRET, executor=self.executor)
        self.runner = web.AppRunner(create_web_app(app), access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        host, port = self.runner.addresses[0][:2]
        self.url = f"http://{host}:{port}{EVENTS_PATH}"
        self.session = aiohttp.ClientSession()
        if self.socket:
            self.handler = GatedSocketModeHandler(app, "xapp-1-A1-1-fuzz")
            await self.handler.connect_async()
            await self.fake.socket.wait_for_connections(1)

    async def _envelope(self, envelope_type: str, payload) -> dict:
        return await self.fake.socket.wait_for_ack(self.fake.socket.send(envelope_type, payload), timeout=5.0)

    async def _post(self, body: bytes, signed: bool) -> int:
        headers = {"Content-Type": "application/json" if body.lstrip().startswith(b"{")
                   else "application/x-www-form-urlencoded"}
        if signed:
            timestamp = str(int(time.time()))
            digest = hmac.new(SECRET.encode(), b"v0:" + timestamp.encode() + b":" + body, sha256).hexdigest()
            headers.update({"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": f"v0={digest}"})
        async with self.session.post(self.url, data=body, headers=headers) as response:
            await response.read()
            return response.status

    async def _stop(self) -> None:
        await asyncio.sleep(0.1)  # let the last listeners finish
        if self.handler is not None:
            await self.handler.close_async()
        await self.session.close()
        await self.runner.cleanup()
        await self.fake.stop()
        self.executor.shutdown(wait=False)
        self.store.close()


def check_status(body: bytes, status: int) -> None:
    """A signed body gets 200; one that is not UTF-8 (it cannot even be verified as text) gets 400."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        assert status == 400, status
        return
    assert status == 200, (status, body[:200])


def sent_payload(body: bytes):
    """The payload the app reads from a signed request ``body`` (JSON, or a form with or without a ``payload``
    field), as slack_bolt parses it; None when it is not UTF-8 or does not parse."""
    try:
        text = body.decode("utf-8")
        return parse_body(text, "application/json" if text.lstrip().startswith("{") else "application/x-www-form-urlencoded")
    except Exception:  # not UTF-8, not JSON, nested too deep: refused before the origin is read
        return None


def names_foreign(payload) -> bool:
    """True when ``payload`` is an object naming another workspace or app at the top level (``team_id``,
    ``team.id``, ``api_app_id``) and is not one of Slack's URL checks. (The app refuses more than this; what
    this says must be refused.)"""
    if not isinstance(payload, dict) or payload.get("type") == "url_verification" or "ssl_check" in payload:
        return False
    team = payload.get("team")
    return (payload.get("team_id") in FOREIGN_TEAMS or (isinstance(team, dict) and team.get("id") in FOREIGN_TEAMS)
            or isinstance(team, str) and team in FOREIGN_TEAMS or payload.get("api_app_id") in FOREIGN_APPS)


def _logged(logs: list[dict], event: str, **fields) -> bool:
    return any(e["event"] == event and e.items() >= fields.items() for e in logs)


def check_refused(body: bytes, logs: list[dict]) -> None:
    """A signed request naming another workspace or app was refused (``slack.foreign_workspace``, logged before
    the app answered the request); ``logs`` are the structlog entries captured while it was posted."""
    if names_foreign(sent_payload(body)):
        assert _logged(logs, "slack.foreign_workspace", mode="http"), (body[:200], [e["event"] for e in logs])


def check_ack(payload, ack: dict, logs: list[dict]) -> None:
    """An envelope was acked (``ack``: `LiveApp.envelope` waits 5 s for it); one whose payload is not an object
    was logged as malformed (and acked without reaching the SDK), one naming another workspace or app was
    refused."""
    assert ack["envelope_id"], ack
    if not isinstance(payload, dict):
        assert _logged(logs, "slack.malformed_payload", mode="socket_mode"), (payload, [e["event"] for e in logs])
    elif names_foreign(payload):
        assert _logged(logs, "slack.foreign_workspace", mode="socket_mode"), (payload, [e["event"] for e in logs])


def as_mrkdwn(text: str, quoted: bool) -> str:
    """Document text as the renderer hands it to `split_graphemes`: mrkdwn, optionally quoted line by line."""
    mrkdwn = to_mrkdwn(text)
    if not quoted:
        return mrkdwn
    return "\n".join(QUOTE_MARKER + line if line.strip() else ">" for line in mrkdwn.splitlines())
