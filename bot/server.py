"""`minerva serve`: the Slack app over HTTP (Events API at /slack/events) or Socket Mode.

Secrets come from the environment here and nowhere else: SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET,
SLACK_APP_TOKEN (Socket Mode when set) and SLACK_API_URL (a Web API base URL other than Slack's; tests).
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

import structlog
from aiohttp import web
from slack_bolt.async_app import AsyncApp

from bot.app import build_app, make_client
from config import Settings
from feedback import FeedbackStore
from knowledge import KnowledgeBase

log = structlog.get_logger(__name__)
EVENTS_PATH = "/slack/events"


class MissingSecret(Exception):
    """A required Slack secret is not set in the environment."""


@dataclass(frozen=True)
class SlackSecrets:
    """Slack credentials read from the environment (see `SlackSecrets.from_env`)."""

    bot_token: str
    signing_secret: str
    app_token: str = ""
    api_url: str = ""

    @classmethod
    def from_env(cls, env: dict | None = None) -> "SlackSecrets":
        """Read SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, SLACK_APP_TOKEN, SLACK_API_URL.

        Raises:
            MissingSecret: no bot token, or HTTP mode (no app token) without a signing secret.
        """
        env = os.environ if env is None else env
        secrets = cls(env.get("SLACK_BOT_TOKEN", ""), env.get("SLACK_SIGNING_SECRET", ""),
                      env.get("SLACK_APP_TOKEN", ""), env.get("SLACK_API_URL", ""))
        if not secrets.bot_token:
            raise MissingSecret("SLACK_BOT_TOKEN is not set (the bot token, xoxb-…; see README 'Slack app setup')")
        if not secrets.app_token and not secrets.signing_secret:
            raise MissingSecret("HTTP mode needs SLACK_SIGNING_SECRET (or set SLACK_APP_TOKEN for Socket Mode)")
        return secrets


def create_app(settings: Settings, home: Path, secrets: SlackSecrets, kb: KnowledgeBase | None = None) -> AsyncApp:
    """The Bolt app wired to the knowledge base and the feedback store under ``home``."""
    kb = kb or KnowledgeBase(settings, home)
    store = FeedbackStore.open(Path(home) / "minerva.sqlite")
    client = make_client(secrets.bot_token, secrets.api_url or None)
    return build_app(kb, store, settings, client=client, signing_secret=secrets.signing_secret or "socket-mode")


def create_web_app(app: AsyncApp) -> web.Application:
    """aiohttp application: POST /slack/events (signed Slack requests) and GET /healthz."""
    web_app = app.web_app(path=EVENTS_PATH)

    async def healthz(_request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    web_app.router.add_get("/healthz", healthz)
    return web_app


async def run(app: AsyncApp, secrets: SlackSecrets, *, host: str = "0.0.0.0", port: int = 3000) -> None:
    """Run until cancelled: Socket Mode when an app token is set, else HTTP on ``host:port``."""
    if secrets.app_token:
        from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler

        handler = AsyncSocketModeHandler(app, secrets.app_token)
        log.info("serve.socket_mode")
        await handler.start_async()
        return
    runner = web.AppRunner(create_web_app(app))
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    log.info("serve.http", url=f"http://{host}:{port}{EVENTS_PATH}")
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
