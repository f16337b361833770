"""`minerva serve`: the Slack app over HTTP (Events API at /slack/events) or Socket Mode, with the scheduler.

Secrets come from the environment here and nowhere else: SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET,
SLACK_APP_TOKEN (Socket Mode when set) and SLACK_API_URL (a Web API base URL other than Slack's; tests).

`run` also starts the monitoring jobs (`jobs.scheduler.MinervaScheduler`, one per MINERVA_HOME) and serves
the read-only quality report at GET /dashboard (in Socket Mode too, on ``host:port``).
"""

from __future__ import annotations

import asyncio
import os
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import structlog
from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.app import build_app, make_client
from config import Settings
from config.alerts import AlertsConfig, alerts_config_for
from feedback import FeedbackStore
from jobs.killswitch import disabled_collections
from knowledge import KnowledgeBase

log = structlog.get_logger(__name__)
EVENTS_PATH = "/slack/events"
DASHBOARD_PATH = "/dashboard"
#: Seconds a rendered dashboard is reused: rendering costs about a second of CPU.
DASHBOARD_TTL = 60.0


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


@dataclass
class ServeRuntime:
    """What `run` needs besides the Bolt app: the scheduler's and the dashboard's collaborators."""

    settings: Settings
    home: Path
    kb: KnowledgeBase
    store: FeedbackStore
    client: AsyncWebClient
    alerts: AlertsConfig


#: The runtime of each app made by `create_app`, so `run(app, secrets)` finds it without new arguments.
_RUNTIMES: weakref.WeakKeyDictionary[AsyncApp, ServeRuntime] = weakref.WeakKeyDictionary()


def runtime_of(app: AsyncApp) -> ServeRuntime | None:
    """The `ServeRuntime` `create_app` registered for ``app``; None for apps built otherwise."""
    return _RUNTIMES.get(app)


def create_app(settings: Settings, home: Path, secrets: SlackSecrets, kb: KnowledgeBase | None = None) -> AsyncApp:
    """The Bolt app wired to the knowledge base and the feedback store under ``home``.

    Raises:
        ConfigError: the alerting config (``alerts.yaml``) is invalid.
    """
    store = FeedbackStore.open(Path(home) / "minerva.sqlite")
    kb = kb or KnowledgeBase(settings, home, disabled_collections=lambda: disabled_collections(store))
    client = make_client(secrets.bot_token, secrets.api_url or None)
    app = build_app(kb, store, settings, client=client, signing_secret=secrets.signing_secret or "socket-mode")
    _RUNTIMES[app] = ServeRuntime(settings, Path(home), kb, store, client, alerts_config_for(settings))
    return app


def create_web_app(app: AsyncApp, dashboard: Callable[[], Awaitable[str]] | None = None) -> web.Application:
    """aiohttp application: POST /slack/events (signed Slack requests), GET /healthz and GET /dashboard.

    Args:
        app: the Bolt app.
        dashboard: returns the report page; None = built from the app's `ServeRuntime` when it has one,
            else /dashboard answers 404.
    """
    web_app = app.web_app(path=EVENTS_PATH)
    runtime = runtime_of(app)
    add_read_only_routes(web_app, dashboard or (dashboard_renderer(runtime) if runtime else None))
    return web_app


def add_read_only_routes(web_app: web.Application, dashboard: Callable[[], Awaitable[str]] | None) -> None:
    """GET /healthz and GET /dashboard (the weekly quality report, rendered on request, read-only)."""

    async def healthz(_request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def show_dashboard(_request: web.Request) -> web.Response:
        if dashboard is None:
            return web.Response(status=404, text="dashboard not configured")
        try:
            page = await dashboard()
        except Exception:
            log.exception("dashboard.failed")
            return web.Response(status=500, text="the dashboard could not be rendered; see the server log")
        # Self-contained page: no scripts, images inlined as data: URIs.
        headers = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
                   "Content-Security-Policy": "default-src 'none'; img-src data:; style-src 'unsafe-inline'"}
        return web.Response(text=page, content_type="text/html", charset="utf-8", headers=headers)

    web_app.router.add_get("/healthz", healthz)
    web_app.router.add_get(DASHBOARD_PATH, show_dashboard)


def dashboard_renderer(runtime: ServeRuntime, ttl: float = DASHBOARD_TTL) -> Callable[[], Awaitable[str]]:
    """An async callable returning the report page, rendered off the event loop and reused for ``ttl`` s."""
    lock = asyncio.Lock()
    cached: list = []  # [(monotonic time, page)]

    def render() -> str:
        from jobs.findings import JobContext
        from jobs.report import build_report, collect_summaries

        now = datetime.now(timezone.utc)
        with FeedbackStore.open(runtime.home / "minerva.sqlite") as store:  # own connection for this thread
            ctx = JobContext(settings=runtime.settings, home=runtime.home, store=store, now=now, kb=runtime.kb)
            return build_report(store, runtime.alerts, now=now, kb=runtime.kb, summaries=collect_summaries(ctx),
                                window_days=runtime.alerts.digest.report_window_days).html

    async def dashboard() -> str:
        async with lock:
            if not cached or time.monotonic() - cached[0][0] > ttl:
                cached[:] = [(time.monotonic(), await asyncio.to_thread(render))]
            return cached[0][1]

    return dashboard


def start_scheduler(runtime: ServeRuntime):
    """Start the monitoring jobs for ``runtime`` (call from a coroutine); None when another process on this
    MINERVA_HOME already runs them (logged)."""
    from bot.digests import SlackNotifier
    from jobs.runner import JobEnv, JobRunner
    from jobs.scheduler import MinervaScheduler

    cfg = runtime.alerts
    notifier = SlackNotifier(runtime.client, seconds_between_posts=cfg.digest.seconds_between_posts,
                             top_items=cfg.digest.top_items)
    runner = JobRunner(JobEnv(runtime.settings, runtime.home, cfg, kb=runtime.kb, notifier=notifier))
    scheduler = MinervaScheduler(runner, cfg, runtime.home)
    return scheduler if scheduler.start() else None


async def run(app: AsyncApp, secrets: SlackSecrets, *, host: str = "0.0.0.0", port: int = 3000,
              runtime: ServeRuntime | None = None) -> None:
    """Run until cancelled: Socket Mode when an app token is set, else HTTP on ``host:port``.

    The monitoring scheduler starts here, on the running loop, when ``runtime`` (default: the one
    `create_app` registered) is known; /dashboard and /healthz are served on ``host:port`` in both modes.
    """
    runtime = runtime or runtime_of(app)
    scheduler = start_scheduler(runtime) if runtime else None
    if runtime is None:
        log.info("serve.no_scheduler", reason="app not made by create_app: no monitoring jobs, no dashboard")
    if secrets.app_token:
        web_app = web.Application()
        add_read_only_routes(web_app, dashboard_renderer(runtime) if runtime else None)
    else:
        web_app = create_web_app(app)
    runner = web.AppRunner(web_app)
    try:
        await runner.setup()
        try:
            await web.TCPSite(runner, host, port).start()
        except OSError as exc:
            if not secrets.app_token:
                raise  # HTTP mode cannot work without its port
            log.warning("serve.dashboard_unavailable", port=port, error=str(exc),
                        fix="pass another --port to serve /dashboard next to Socket Mode")
        if secrets.app_token:
            from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler

            handler = AsyncSocketModeHandler(app, secrets.app_token)
            log.info("serve.socket_mode", dashboard=f"http://{host}:{port}{DASHBOARD_PATH}")
            await handler.start_async()
            return
        log.info("serve.http", url=f"http://{host}:{port}{EVENTS_PATH}", dashboard=f"http://{host}:{port}{DASHBOARD_PATH}")
        await asyncio.Event().wait()
    finally:
        if scheduler is not None:
            scheduler.shutdown()
        await runner.cleanup()
