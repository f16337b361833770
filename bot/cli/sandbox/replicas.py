"""Several real ``minerva serve`` processes (HTTP mode, 127.0.0.1) on one store and one generations folder.

Used by ``minerva sandbox --replicas N``, tests/bot/test_replicas.py and benchmarks/replicas.py. Each replica is
a subprocess with its own home (its scheduler lock, its embedding cache), the shared ``MINERVA_DATABASE_URL``
and ``MINERVA_INDEX_DIR``, its own fake bot token (``xoxb-replica-N``: the fake Slack's records tell which
replica posted) and its Web API calls pointed at a local fake Slack (``SLACK_API_URL``). Requests are real
signed HTTP POSTs to each replica's ``/slack/events``, as a load balancer would spread them.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import aiohttp

from bot.cli.sandbox.signing import button_click, event_envelope, mention_event, signed_request_headers

#: Runs the `minerva` command line with this interpreter (the console script may not be on PATH).
MINERVA = [sys.executable, "-c", "from bot.cli.main import main; main()"]
SECRET = "replica-signing-secret"
FEEDBACK_ACTION = "minerva_feedback"  # bot.slack.blocks.FEEDBACK_ACTION (literal: bot.slack.blocks imports `knowledge`)
#: The folder holding the `bot` package: put on the replicas' PYTHONPATH, so a clone that is not installed works.
_PACKAGE_ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def replica_token(number: int) -> str:
    """The fake bot token replica ``number`` (1-based) calls the Web API with."""
    return f"xoxb-replica-{number}"


@dataclass
class Replica:
    """One ``minerva serve`` subprocess."""

    name: str
    port: int
    process: asyncio.subprocess.Process
    log: Path

    @property
    def url(self) -> str:
        """Its Events API URL, ``http://127.0.0.1:PORT/slack/events``."""
        return f"http://127.0.0.1:{self.port}/slack/events"

    @property
    def token(self) -> str:
        """The bot token it sends to the fake Slack (``Authorization: Bearer …``)."""
        return replica_token(int(self.name.rsplit("-", 1)[1]))

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
    # Slack ts values (and so the event ids made from them) are unique across runs on one persistent database
    _base: int = field(default_factory=lambda: int(time.time()))

    def next_ts(self) -> str:
        """A fresh Slack message ts, ``"<unix seconds>.<6 digits>"``, increasing."""
        return f"{self._base}.{next(self._serial):06d}"

    async def post(self, replica: Replica, body: bytes, extra_headers: dict[str, str] | None = None) -> int:
        """POSTs ``body``, signed with `SECRET`, to ``replica``; returns the HTTP status."""
        headers = {**signed_request_headers(SECRET, body), **(extra_headers or {})}
        async with self.session.post(replica.url, data=body, headers=headers) as response:
            await response.read()
            return response.status

    def mention_envelope(self, question: str, *, user: str = "U1", channel: str = "C1",
                         thread_ts: str | None = None) -> dict:
        """The ``event_callback`` of a new ``@minerva question`` by ``user`` (in ``thread_ts``'s thread when given)."""
        ts = self.next_ts()
        event = mention_event(question, ts=ts, channel=channel, user=user, thread_ts=thread_ts)
        return event_envelope(event, f"Ev{ts.replace('.', '')}")

    async def deliver(self, replica: Replica, envelope: dict, retry_num: int | None = None) -> int:
        """Sends ``envelope`` to ``replica``; with ``retry_num``, as Slack's retry (``X-Slack-Retry-Num``)."""
        extra = {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"} if retry_num else None
        return await self.post(replica, json.dumps(envelope).encode(), extra)

    async def click(self, replica: Replica, value: str, answer_message: dict, user: str, response_url: str) -> int:
        """A 👍/👎 (``value`` "up"/"down") click by ``user`` on ``answer_message``, a recorded chat.postMessage body."""
        value = f"{value}:{answer_id_of(answer_message)}"  # the button's value, as bot.slack.blocks writes it
        payload = button_click(value, message=answer_message, message_ts=self.next_ts(), user=user,
                               action_id=FEEDBACK_ACTION, response_url=response_url)
        return await self.post(replica, urlencode({"payload": json.dumps(payload)}).encode())


def answer_id_of(message: dict) -> str:
    """The answer id a posted answer carries in its 👍/👎 buttons."""
    (actions,) = [b for b in message.get("blocks") or [] if b["type"] == "context_actions"]
    return actions["elements"][0]["positive_button"]["value"].split(":", 1)[1]


async def start_replicas(count: int, *, workdir: Path, database_url: str, index_dir: Path, slack_url: str,
                         config: Path | None = None, home_sources: Path | None = None,
                         extra_env: dict[str, str] | None = None, timeout: float = 240.0) -> list[Replica]:
    """Starts ``count`` replicas at once and waits until each prints "Minerva serving".

    Args:
        count: how many ``minerva serve --host 127.0.0.1`` processes.
        workdir: an existing folder for their homes (``replica-N/``) and logs (``replica-N.log``).
        database_url: the store they share (``MINERVA_DATABASE_URL``).
        index_dir: the generations folder they share (``MINERVA_INDEX_DIR``).
        slack_url: the fake Slack's Web API base URL (``SLACK_API_URL``).
        config: the config every replica runs with (``--config``); None means the bundled sample.
        home_sources: a ``sources.yaml`` (folders recorded by ``minerva ingest FOLDER``) copied into every home.
        extra_env: more environment variables, over the defaults.
        timeout: seconds for all of them to get ready.

    Raises:
        RuntimeError: a replica exited or did not get ready in ``timeout`` seconds (its log is quoted).
    """
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "MINERVA_"))}
    pythonpath = os.pathsep.join(p for p in (str(_PACKAGE_ROOT), clean.get("PYTHONPATH", "")) if p)
    env = {**clean, "PYTHONPATH": pythonpath, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": slack_url, "MINERVA_DATABASE_URL": database_url,
           "MINERVA_INDEX_DIR": str(index_dir), "MINERVA_LOG_FORMAT": "json", **(extra_env or {})}
    options = ["--config", str(Path(config).resolve())] if config else []
    replicas = []
    for number in range(1, count + 1):
        home, port = workdir / f"replica-{number}", free_port()
        home.mkdir(parents=True, exist_ok=True)
        if home_sources is not None and Path(home_sources).is_file():
            shutil.copyfile(home_sources, home / Path(home_sources).name)
        log = workdir / f"replica-{number}.log"
        with log.open("wb") as stderr:
            process = await asyncio.create_subprocess_exec(
                *MINERVA, *options, "--home", str(home), "serve", "--host", "127.0.0.1", "--port", str(port),
                cwd=str(workdir), env={**env, "SLACK_BOT_TOKEN": replica_token(number)},
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=stderr)
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
