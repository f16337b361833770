"""Several real ``minerva serve`` processes (HTTP mode) on one store and one generations folder.

Used by tests/bot/test_replicas.py and benchmarks/replicas.py. Each replica is a subprocess with its own
home (its scheduler lock, its embedding cache), the shared ``MINERVA_DATABASE_URL`` and
``MINERVA_INDEX_DIR``, and its Web API calls pointed at a local fake Slack (``SLACK_API_URL``). Requests are
real signed HTTP POSTs to each replica's ``/slack/events``, as a load balancer would spread them.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import aiohttp

from tests.fakes.fixtures import signed_request_headers
from tests.fakes.slack_api import BOT_USER_ID

REPO = Path(__file__).resolve().parents[2]
MINERVA = [sys.executable, "-c", "from bot.cli import main; main()"]
SECRET = "replica-signing-secret"
FEEDBACK_ACTION = "minerva_feedback"  # bot.blocks.FEEDBACK_ACTION, kept literal: tests import no bot here


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Replica:
    """One ``minerva serve`` subprocess."""

    name: str
    port: int
    process: asyncio.subprocess.Process
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/slack/events"

    def kill(self) -> None:
        """SIGKILL: no shutdown hooks, as a crashed machine."""
        if self.process.returncode is None:
            self.process.kill()


@dataclass
class Cluster:
    """The replicas and a client session that signs and posts to them."""

    replicas: list[Replica]
    session: aiohttp.ClientSession
    _serial: itertools.count = field(default_factory=lambda: itertools.count(1))

    def next_ts(self) -> str:
        return f"1700000000.{next(self._serial):06d}"

    async def post(self, replica: Replica, body: bytes, extra_headers: dict[str, str] | None = None) -> int:
        headers = {**signed_request_headers(SECRET, body), **(extra_headers or {})}
        async with self.session.post(replica.url, data=body, headers=headers) as response:
            await response.read()
            return response.status

    def mention_envelope(self, question: str, *, user: str = "U1", channel: str = "C1") -> dict:
        ts = self.next_ts()
        event = {"type": "app_mention", "user": user, "text": f"<@{BOT_USER_ID}> {question}", "ts": ts,
                 "event_ts": ts, "channel": channel}
        return {"token": "t", "team_id": "T1", "api_app_id": "A1", "event": event, "type": "event_callback",
                "event_id": f"Ev{ts.replace('.', '')}", "event_time": int(time.time()),
                "authorizations": [{"enterprise_id": None, "team_id": "T1", "user_id": BOT_USER_ID, "is_bot": True,
                                    "is_enterprise_install": False}]}

    async def deliver(self, replica: Replica, envelope: dict, retry_num: int | None = None) -> int:
        extra = {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"} if retry_num else None
        return await self.post(replica, json.dumps(envelope).encode(), extra)

    async def click(self, replica: Replica, value: str, answer_message: dict, user: str, response_url: str) -> int:
        """A 👍/👎 (``value`` "up"/"down") click on ``answer_message`` (a recorded chat.postMessage body) by ``user``."""
        value = f"{value}:{answer_id_of(answer_message)}"  # the button's value, as bot.blocks writes it
        payload = {
            "type": "block_actions",
            "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": "T1"},
            "api_app_id": "A1", "token": "t", "trigger_id": "1.2.3",
            "container": {"type": "message", "message_ts": "1700000001.000001", "channel_id": answer_message["channel"],
                          "is_ephemeral": False, "thread_ts": answer_message["thread_ts"]},
            "team": {"id": "T1", "domain": "minerva-test"},
            "channel": {"id": answer_message["channel"], "name": "general"},
            "message": {"type": "message", "user": BOT_USER_ID, "bot_id": "BBOT", "ts": "1700000001.000001",
                        "thread_ts": answer_message["thread_ts"], "text": answer_message["text"],
                        "blocks": answer_message.get("blocks", [])},
            "response_url": response_url,
            "actions": [{"type": "feedback_buttons", "action_id": FEEDBACK_ACTION, "block_id": "fb",
                         "value": value, "action_ts": str(time.time())}],
        }
        return await self.post(replica, urlencode({"payload": json.dumps(payload)}).encode())


def answer_id_of(message: dict) -> str:
    """The answer id a posted answer carries in its 👍/👎 buttons."""
    (actions,) = [b for b in message.get("blocks") or [] if b["type"] == "context_actions"]
    return actions["elements"][0]["positive_button"]["value"].split(":", 1)[1]


async def start_replicas(count: int, *, workdir: Path, database_url: str, index_dir: Path, slack_url: str,
                         extra_env: dict[str, str] | None = None, timeout: float = 240.0) -> list[Replica]:
    """Starts ``count`` replicas at once and waits until each prints "Minerva serving".

    Raises:
        RuntimeError: a replica exited or did not get ready in ``timeout`` seconds (its log is quoted).
    """
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "MINERVA_"))}
    env = {**clean, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "SLACK_BOT_TOKEN": "xoxb-replica",
           "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": slack_url, "MINERVA_DATABASE_URL": database_url,
           "MINERVA_INDEX_DIR": str(index_dir), "MINERVA_LOG_FORMAT": "json", **(extra_env or {})}
    replicas = []
    for number in range(1, count + 1):
        home, port = workdir / f"replica-{number}", free_port()
        home.mkdir(parents=True, exist_ok=True)
        log = workdir / f"replica-{number}.log"
        process = await asyncio.create_subprocess_exec(
            *MINERVA, "--home", str(home), "serve", "--port", str(port), cwd=str(REPO), env=env,
            stdout=asyncio.subprocess.DEVNULL, stderr=log.open("wb"))
        replicas.append(Replica(f"replica-{number}", port, process, log))
    deadline = time.monotonic() + timeout
    for replica in replicas:
        while not ("Minerva serving" in replica.log.read_text(errors="replace") and _listening(replica.port)):
            if replica.process.returncode is not None or time.monotonic() > deadline:
                await stop_replicas(replicas)
                raise RuntimeError(f"{replica.name} did not start:\n{replica.log.read_text(errors='replace')[-3000:]}")
            await asyncio.sleep(0.2)
    return replicas


def _listening(port: int) -> bool:
    """True once something accepts TCP connections on 127.0.0.1:``port``."""
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


async def stop_replicas(replicas: list[Replica]) -> None:
    """Terminates every replica still running and waits for it."""
    for replica in replicas:
        if replica.process.returncode is None:
            replica.process.terminate()
    for replica in replicas:
        try:
            await asyncio.wait_for(replica.process.wait(), 20)
        except asyncio.TimeoutError:
            replica.process.kill()
            await replica.process.wait()
