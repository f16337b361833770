"""`minerva serve` fails fast on bad Slack credentials, checked against the fake Slack Web API over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import sys
import time

import pytest

from bot.slack.check import SlackCredentialError, check_credentials

MINERVA = [sys.executable, "-c", "from bot.cli.main import main; main()"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def serve(tmp_path, env: dict[str, str], timeout: float = 30.0) -> tuple[int, str, float]:
    """Run `minerva serve` in a subprocess (the fake answers on this test's loop); (exit code, stderr, seconds)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
    started = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *MINERVA, "--home", str(tmp_path / "home"), "serve", "--port", str(free_port()),
        env={**clean, "HF_HUB_OFFLINE": "1", **env}, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    try:
        _, err = await asyncio.wait_for(proc.communicate(), timeout)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    return proc.returncode, err.decode(), time.perf_counter() - started


async def test_a_rejected_bot_token_exits_within_five_seconds_with_one_line(fake_slack, tmp_path):
    fake_slack.fail_next("auth.test", error="invalid_auth")

    code, err, seconds = await serve(tmp_path, {"SLACK_BOT_TOKEN": "xoxb-revoked", "SLACK_SIGNING_SECRET": "s",
                                                "SLACK_API_URL": fake_slack.url})

    assert code == 1 and seconds < 5, (code, seconds, err)
    (line,) = err.strip().splitlines()
    assert line.startswith("Error: SLACK_BOT_TOKEN was rejected by Slack (invalid_auth)")
    assert "OAuth & Permissions" in line
    assert fake_slack.calls_to("auth.test")[0]["headers"]["Authorization"] == "Bearer xoxb-revoked"


async def test_an_app_token_in_the_bot_token_variable_is_named(fake_slack, tmp_path):
    code, err, seconds = await serve(tmp_path, {"SLACK_BOT_TOKEN": "xapp-1-A1-2-abc", "SLACK_APP_TOKEN": "xapp-1-A1-2-abc",
                                                "SLACK_API_URL": fake_slack.url})

    assert code == 1 and seconds < 5
    assert "SLACK_BOT_TOKEN holds an app-level token (xapp-…)" in err and len(err.strip().splitlines()) == 1


async def test_http_mode_without_a_signing_secret_is_an_error(fake_slack, tmp_path):
    code, err, _ = await serve(tmp_path, {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_API_URL": fake_slack.url})

    assert code == 1 and "needs SLACK_SIGNING_SECRET" in err and "Signing Secret" in err


async def test_a_rejected_app_token_is_named(fake_slack, tmp_path):
    fake_slack.fail_next("apps.connections.open", error="invalid_auth")

    code, err, _ = await serve(tmp_path, {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-revoked",
                                          "SLACK_API_URL": fake_slack.url})

    assert code == 1 and "SLACK_APP_TOKEN was rejected by Slack (invalid_auth)" in err


async def test_an_unreachable_api_is_reported_not_retried_forever(tmp_path):
    code, err, seconds = await serve(tmp_path, {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s",
                                                "SLACK_API_URL": "http://127.0.0.1:9/api/"})

    assert code == 1 and seconds < 5 and "cannot reach the Slack Web API" in err


async def test_good_credentials_give_the_bots_identity(fake_slack):
    env = {"SLACK_BOT_TOKEN": "xoxb-good", "SLACK_APP_TOKEN": "xapp-good", "SLACK_API_URL": fake_slack.url}

    identity = await asyncio.to_thread(check_credentials, env)

    assert identity.bot_id == "BBOT" and identity.socket_mode and "chat:write" in identity.scopes
    assert [c["method"] for c in fake_slack.calls] == ["auth.test", "apps.connections.open"]


async def test_a_user_token_answering_without_bot_id_is_refused(fake_slack, monkeypatch):
    env = {"SLACK_BOT_TOKEN": "xoxb-looks-right", "SLACK_SIGNING_SECRET": "s", "SLACK_API_URL": fake_slack.url}
    original = fake_slack._answer
    monkeypatch.setattr(fake_slack, "_answer", lambda method, body: {**original(method, body), "bot_id": None})

    with pytest.raises(SlackCredentialError, match="not to a bot"):
        await asyncio.to_thread(check_credentials, env)


async def test_the_server_start_prints_no_bolt_token_warning(fake_slack, tmp_path, sample_home):
    """A good start gets past the check; Bolt's "`token` will be unused" warning is gone. The workspace auth.test
    named is the one answered; HTTP mode without slack.app_id says that the app is not checked (issue 27)."""
    home = shutil.copytree(sample_home, tmp_path / "home")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
    proc = await asyncio.create_subprocess_exec(
        *MINERVA, "--home", str(home), "serve", "--port", str(free_port()), stderr=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
        env={**clean, "HF_HUB_OFFLINE": "1", "SLACK_BOT_TOKEN": "xoxb-good", "SLACK_SIGNING_SECRET": "s",
             "SLACK_API_URL": fake_slack.url, "MINERVA_LOG_LEVEL": "INFO", "MINERVA_LOG_FORMAT": "json"})
    lines = []
    try:
        while True:
            line = (await asyncio.wait_for(proc.stderr.readline(), 120)).decode()
            lines.append(line)
            if not line or "slack.app_id_unchecked" in line:  # logged once HTTP mode listens
                break
    finally:
        proc.terminate()
        await proc.wait()
    text = "".join(lines)
    assert "Minerva serving" in text and "Slack: workspace 'Minerva Test' as @minerva (BBOT)" in text
    assert "will be unused" not in text
    assert all(_json_or_none(line) for line in lines if line.strip()), text  # JSON asked: every line JSON (issue 28)
    logged = {entry["event"]: entry for entry in map(_json_or_none, lines) if entry}
    assert logged["slack.allowed_origin"]["allowed_workspaces"] == ["T1"]  # from the start's auth.test, not asked again
    assert "slack.app_id" in logged["slack.app_id_unchecked"]["fix"]
    assert [c["method"] for c in fake_slack.calls] == ["auth.test"]


def _json_or_none(line: str) -> dict | None:
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None
