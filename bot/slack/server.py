"""`minerva serve`: the Slack app over HTTP (Events API at /slack/events) or Socket Mode, with the scheduler.

Secrets come from the environment here and nowhere else: SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET,
SLACK_APP_TOKEN (Socket Mode when set), SLACK_API_URL (a Web API base URL other than Slack's; tests) and the
dashboard token (the variable named by ``dashboard.token_env``).

`run` also starts the monitoring jobs (`jobs.scheduler.MinervaScheduler`, one per MINERVA_HOME). The
read-only quality report at GET /dashboard carries users' question texts, so it is private (issue 10): served
only when ``dashboard.enabled``, on a listener of its own (127.0.0.1:3001 by default, never the public events
listener), behind a token. In Socket Mode nothing listens unless the dashboard is enabled.
"""

from __future__ import annotations

import asyncio
import hmac
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

from bot.slack.app import build_app, make_client
from bot.slack.check import SlackIdentity
from bot.slack.gate import APP_ID_FIX, GatedApp
from config import DashboardConfig, Settings
from config.alerts import AlertsConfig, alerts_config_for
from config.errors import MinervaError
from feedback import FeedbackStore
from feedback.db import database_target
from jobs.killswitch import disabled_collections, quarantined_documents
from knowledge import KnowledgeBase

log = structlog.get_logger(__name__)
EVENTS_PATH = "/slack/events"
DASHBOARD_PATH = "/dashboard"
#: Seconds a rendered dashboard is reused: rendering costs about a second of CPU.
DASHBOARD_TTL = 60.0
#: The 401 answer of /dashboard without its token.
UNAUTHORIZED_TEXT = "the dashboard needs its token: send 'Authorization: Bearer <token>' or add ?token=<token>"


class MissingSecret(MinervaError):
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
            raise MissingSecret("SLACK_BOT_TOKEN is not set (the bot token, xoxb-…; see docs/slack.md)")
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


def create_app(settings: Settings, home: Path, secrets: SlackSecrets, kb: KnowledgeBase | None = None,
               identity: SlackIdentity | None = None) -> AsyncApp:
    """The Bolt app wired to the knowledge base and the feedback store under ``home``.

    ``identity`` (``auth.test`` at start) names the workspace whose requests are answered when the config's
    ``slack.workspaces`` is empty (see `bot.slack.app.build_app`).

    Raises:
        ConfigError: the alerting config (``alerts.yaml``) is invalid.
    """
    store = FeedbackStore.open(database_target(Path(home), settings.database.url))
    kb = kb or KnowledgeBase(settings, home, disabled_collections=lambda: disabled_collections(store),
                             quarantined_documents=lambda: quarantined_documents(store))
    client = make_client(secrets.bot_token, secrets.api_url or None)
    app = build_app(kb, store, settings, client=client, signing_secret=secrets.signing_secret or "socket-mode",
                    identity=identity)
    _RUNTIMES[app] = ServeRuntime(settings, Path(home), kb, store, client, alerts_config_for(settings))
    return app


def create_web_app(app: AsyncApp) -> web.Application:
    """aiohttp application for HTTP mode: POST /slack/events (signed Slack requests) and GET /healthz.

    It faces the internet, so it never serves /dashboard (see `create_dashboard_app`).
    """
    web_app = app.web_app(path=EVENTS_PATH)
    web_app.router.add_get("/healthz", _healthz)
    return web_app


def create_dashboard_app(dashboard: Callable[[], Awaitable[str]], token: str) -> web.Application:
    """aiohttp application: GET /dashboard (the weekly quality report, read-only) behind ``token``, and GET /healthz.

    Args:
        dashboard: returns the report page (see `dashboard_renderer`).
        token: the secret a request must carry, as ``Authorization: Bearer <token>`` or ``?token=<token>``;
            any other request gets 401 and nothing is rendered.

    Raises:
        ValueError: ``token`` is empty (an open dashboard would show every user's questions).
    """
    if not token:
        raise ValueError("the dashboard needs a token")
    expected = token.encode()

    async def show_dashboard(request: web.Request) -> web.Response:
        if not hmac.compare_digest(_given_token(request).encode(), expected):
            return web.Response(status=401, text=UNAUTHORIZED_TEXT,
                                headers={"WWW-Authenticate": 'Bearer realm="minerva"', "Cache-Control": "no-store"})
        try:
            page = await dashboard()
        except Exception:
            log.exception("dashboard.failed")
            return web.Response(status=500, text="the dashboard could not be rendered; see the server log")
        # Self-contained page: no scripts, images inlined as data: URIs; no Referer (the URL may hold the token).
        headers = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
                   "Content-Security-Policy": "default-src 'none'; img-src data:; style-src 'unsafe-inline'"}
        return web.Response(text=page, content_type="text/html", charset="utf-8", headers=headers)

    web_app = web.Application()
    web_app.router.add_get("/healthz", _healthz)
    web_app.router.add_get(DASHBOARD_PATH, show_dashboard)
    return web_app


def _given_token(request: web.Request) -> str:
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" else request.query.get("token", "")


async def _healthz(_request: web.Request) -> web.Response:
    return web.json_response({"ok": True})


def dashboard_token(cfg: DashboardConfig, env: dict | None = None) -> str:
    """The dashboard token: the value of the environment variable ``cfg.token_env``, "" when unset."""
    env = os.environ if env is None else env
    return env.get(cfg.token_env, "").strip()


def dashboard_renderer(runtime: ServeRuntime, ttl: float = DASHBOARD_TTL) -> Callable[[], Awaitable[str]]:
    """An async callable returning the report page, rendered off the event loop and reused for ``ttl`` s."""
    lock = asyncio.Lock()
    cached: list = []  # [(monotonic time, page)]

    def render() -> str:
        from jobs.findings import JobContext
        from jobs.report import build_report, collect_summaries

        now = datetime.now(timezone.utc)
        target = database_target(runtime.home, runtime.settings.database.url)
        with FeedbackStore.open(target) as store:  # own connection for this thread
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
    from bot.slack.digests import SlackNotifier
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
    `create_app` registered) is known. /dashboard is served only as `start_dashboard` decides; in Socket
    Mode with the dashboard off, no port is opened at all. In HTTP mode without ``slack.app_id`` the app a
    request names cannot be checked (Slack names the app only to a Socket Mode connection): logged at start
    as ``slack.app_id_unchecked``, with the fix.

    Raises:
        OSError: HTTP mode cannot listen on ``host:port``.
    """
    runtime = runtime or runtime_of(app)
    scheduler = start_scheduler(runtime) if runtime else None
    if runtime is None:
        log.info("serve.no_scheduler", reason="app not made by create_app: no monitoring jobs, no dashboard")
    runners = []
    try:
        if not secrets.app_token:
            runners.append(await _listen(create_web_app(app), host, port))  # HTTP mode cannot work without it
            log.info("serve.http", url=f"http://{host}:{port}{EVENTS_PATH}")
            if isinstance(app, GatedApp) and not app.origin.app_id:  # Socket Mode learns it from the connection
                log.warning("slack.app_id_unchecked", reason="slack.app_id is not set", fix=APP_ID_FIX)
        dashboard = await start_dashboard(runtime) if runtime else None
        runners += [dashboard] if dashboard else []
        if secrets.app_token:
            from bot.slack.socket_mode import GatedSocketModeHandler

            handler = GatedSocketModeHandler(app, secrets.app_token)
            log.info("serve.socket_mode")
            await handler.start_async()
            return
        await asyncio.Event().wait()
    finally:
        if scheduler is not None:
            scheduler.shutdown()
        for runner in runners:
            await runner.cleanup()


async def start_dashboard(runtime: ServeRuntime, env: dict | None = None) -> web.AppRunner | None:
    """Serve /dashboard on ``dashboard.host:port`` when the config enables it and its token is set.

    Returns:
        The running listener (call ``cleanup()`` to stop it), or None when the dashboard is off, has no
        token (logged at error level, with the fix) or its port is taken (logged as a warning).
    """
    cfg = runtime.settings.dashboard
    if not cfg.enabled:
        log.info("serve.dashboard_off", fix="set dashboard.enabled: true and a token to serve /dashboard")
        return None
    token = dashboard_token(cfg, env)
    if not token:
        log.error("serve.dashboard_no_token", env=cfg.token_env,
                  fix=f"export {cfg.token_env}=<a long random string> (e.g. openssl rand -hex 32) and restart")
        return None
    try:
        # No access log: a ?token= query string would be written to it.
        runner = await _listen(create_dashboard_app(dashboard_renderer(runtime), token), cfg.host, cfg.port,
                               access_log=None)
    except OSError as exc:
        log.warning("serve.dashboard_unavailable", host=cfg.host, port=cfg.port, error=str(exc),
                    fix="set dashboard.port to a free port")
        return None
    log.info("serve.dashboard", url=f"http://{cfg.host}:{cfg.port}{DASHBOARD_PATH}")
    return runner


async def _listen(web_app: web.Application, host: str, port: int, **runner_options) -> web.AppRunner:
    """Start serving ``web_app`` on ``host:port``; raises OSError (port taken, …) after cleaning up."""
    runner = web.AppRunner(web_app, **runner_options)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError:
        await runner.cleanup()
        raise
    return runner
