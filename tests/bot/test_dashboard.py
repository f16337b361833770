"""The dashboard is private (issue 10, item 2): off by default, on a listener of its own bound to 127.0.0.1,
behind a token, and in Socket Mode no port is opened unless it is enabled.

Real sockets and real HTTP requests; `minerva serve`'s `run` is driven against a local Slack Web API whose
``apps.connections.open`` holds the call open, so the app sits in Socket Mode while the test looks at its ports.
"""

from __future__ import annotations

import asyncio
import dataclasses
import socket
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from bot.slack.server import (
    DASHBOARD_PATH,
    UNAUTHORIZED_TEXT,
    SlackSecrets,
    create_app,
    create_dashboard_app,
    create_web_app,
    dashboard_renderer,
    run,
    runtime_of,
)
from config import DashboardConfig
from jobs.report import NO_DATA
from knowledge import KnowledgeBase

TOKEN = "dashboard-test-token-4f1c9a"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening_on(port: int) -> list[str]:
    """Local addresses with a TCP socket listening on ``port``, from /proc/net/tcp (IPv4, Linux)."""
    table = Path("/proc/net/tcp")
    if not table.exists():
        pytest.skip("needs /proc/net/tcp (Linux)")
    found = []
    for line in table.read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, hex_port = local.split(":")
        if state == "0A" and int(hex_port, 16) == port:  # 0A = LISTEN
            found.append(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return found


async def get(url: str, **kwargs) -> tuple[int, str, dict]:
    async with aiohttp.ClientSession() as session, session.get(url, **kwargs) as response:
        return response.status, await response.text(), dict(response.headers)


async def wait_until(predicate, seconds: float = 20) -> None:
    for _ in range(int(seconds / 0.05)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("timed out")


@pytest.fixture
def app(tmp_path, sample_settings, fake_slack):
    secrets = SlackSecrets("xoxb-test", "dashboard-secret", api_url=fake_slack.url)
    return create_app(sample_settings, tmp_path, secrets, kb=KnowledgeBase(sample_settings, tmp_path))


async def test_dashboard_needs_its_token_and_serves_the_report_read_only(app) -> None:
    server = TestServer(create_dashboard_app(dashboard_renderer(runtime_of(app)), TOKEN), host="127.0.0.1")
    await server.start_server()
    try:
        url = str(server.make_url(DASHBOARD_PATH))
        for refused in ({}, {"headers": {"Authorization": "Bearer wrong"}}, {"params": {"token": "wrong"}},
                        {"headers": {"Authorization": f"Basic {TOKEN}"}}, {"params": {"token": ""}}):
            status, text, headers = await get(url, **refused)
            assert (status, text) == (401, UNAUTHORIZED_TEXT), refused
            assert headers["WWW-Authenticate"].startswith("Bearer") and NO_DATA not in text
        status, page, headers = await get(url, headers={"Authorization": f"Bearer {TOKEN}"})
        assert status == 200 and headers["Content-Type"].startswith("text/html")
        assert "default-src 'none'" in headers["Content-Security-Policy"] and headers["Referrer-Policy"] == "no-referrer"
        assert "Knowledge quality report" in page and NO_DATA in page
        assert (await get(url, params={"token": TOKEN}))[0] == 200
        async with aiohttp.ClientSession() as session:
            async with session.post(url, headers={"Authorization": f"Bearer {TOKEN}"}) as response:
                assert response.status == 405
    finally:
        await server.close()


def test_dashboard_app_cannot_be_made_without_a_token() -> None:
    async def page() -> str:
        return "report"

    with pytest.raises(ValueError):
        create_dashboard_app(page, "")


def test_dashboard_is_off_and_local_by_default(sample_settings) -> None:
    assert sample_settings.dashboard == DashboardConfig(enabled=False, host="127.0.0.1")


async def test_the_public_events_listener_never_serves_the_dashboard(app) -> None:
    server = TestServer(create_web_app(app), host="127.0.0.1")
    await server.start_server()
    try:
        status, _, _ = await get(str(server.make_url(DASHBOARD_PATH)), headers={"Authorization": f"Bearer {TOKEN}"})
        assert status == 404
        assert (await get(str(server.make_url("/healthz"))))[0] == 200
    finally:
        await server.close()


async def test_http_mode_serves_the_dashboard_on_its_own_loopback_listener_when_enabled(
        tmp_path, sample_settings, fake_slack, monkeypatch) -> None:
    monkeypatch.setenv("MINERVA_DASHBOARD_TOKEN", TOKEN)
    events_port, dashboard_port = free_port(), free_port()
    settings = dataclasses.replace(sample_settings, dashboard=DashboardConfig(enabled=True, port=dashboard_port))
    secrets = SlackSecrets("xoxb-test", "dashboard-secret", api_url=fake_slack.url)
    app = create_app(settings, tmp_path, secrets, kb=KnowledgeBase(settings, tmp_path))
    task = asyncio.create_task(run(app, secrets, host="127.0.0.1", port=events_port))
    try:
        await wait_until(lambda: listening_on(dashboard_port))
        assert listening_on(dashboard_port) == ["127.0.0.1"]
        dashboard = f"http://127.0.0.1:{dashboard_port}{DASHBOARD_PATH}"
        assert (await get(dashboard))[0] == 401
        assert (await get(dashboard, headers={"Authorization": f"Bearer {TOKEN}"}))[0] == 200
        events_dashboard = f"http://127.0.0.1:{events_port}{DASHBOARD_PATH}"
        assert (await get(events_dashboard, headers={"Authorization": f"Bearer {TOKEN}"}))[0] == 404
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_enabled_dashboard_without_its_token_is_not_served(tmp_path, sample_settings, fake_slack,
                                                                monkeypatch) -> None:
    monkeypatch.delenv("MINERVA_DASHBOARD_TOKEN", raising=False)
    events_port, dashboard_port = free_port(), free_port()
    settings = dataclasses.replace(sample_settings, dashboard=DashboardConfig(enabled=True, port=dashboard_port))
    secrets = SlackSecrets("xoxb-test", "dashboard-secret", api_url=fake_slack.url)
    app = create_app(settings, tmp_path, secrets, kb=KnowledgeBase(settings, tmp_path))
    task = asyncio.create_task(run(app, secrets, host="127.0.0.1", port=events_port))
    try:
        await wait_until(lambda: listening_on(events_port))
        await asyncio.sleep(0.2)
        assert listening_on(dashboard_port) == []
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


class HeldSlack:
    """A Slack Web API on 127.0.0.1 that answers ``{"ok": true}`` but holds ``apps.connections.open`` open."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.release = asyncio.Event()
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def _api(self, request: web.Request) -> web.Response:
        if request.match_info["method"] == "apps.connections.open":
            self.opened.set()
            await self.release.wait()
            return web.json_response({"ok": False, "error": "test_over"})
        return web.json_response({"ok": True})

    async def __aenter__(self) -> "HeldSlack":
        web_app = web.Application()
        web_app.router.add_route("*", "/api/{method}", self._api)
        self.runner = web.AppRunner(web_app, access_log=None)
        await self.runner.setup()
        port = free_port()
        await web.TCPSite(self.runner, "127.0.0.1", port).start()
        self.url = f"http://127.0.0.1:{port}/api/"
        return self

    async def __aexit__(self, *exc_info) -> None:
        self.release.set()
        await self.runner.cleanup()


@pytest.mark.parametrize("enabled", [False, True], ids=["default", "enabled"])
async def test_socket_mode_opens_no_port_unless_the_dashboard_is_enabled(tmp_path, sample_settings, monkeypatch,
                                                                         enabled) -> None:
    monkeypatch.setenv("MINERVA_DASHBOARD_TOKEN", TOKEN)
    serve_port, dashboard_port = free_port(), free_port()
    settings = dataclasses.replace(sample_settings,
                                   dashboard=DashboardConfig(enabled=enabled, port=dashboard_port))
    async with HeldSlack() as slack:
        secrets = SlackSecrets("xoxb-test", "", app_token="xapp-test", api_url=slack.url)
        app = create_app(settings, tmp_path, secrets, kb=KnowledgeBase(settings, tmp_path))
        task = asyncio.create_task(run(app, secrets, host="127.0.0.1", port=serve_port))
        try:
            await asyncio.wait_for(slack.opened.wait(), timeout=20)  # in Socket Mode now, connecting
            assert listening_on(serve_port) == []
            if not enabled:
                assert listening_on(dashboard_port) == []
                return
            assert listening_on(dashboard_port) == ["127.0.0.1"]
            dashboard = f"http://127.0.0.1:{dashboard_port}{DASHBOARD_PATH}"
            assert (await get(dashboard))[0] == 401
            assert (await get(dashboard, params={"token": TOKEN}))[0] == 200
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
