"""Log lines: with JSON asked for, the standard library's loggers (APScheduler, aiohttp's access log) are JSON
too, not plain text beside structlog's (issue 28 item 5)."""

from __future__ import annotations

import json
import logging

import pytest
import structlog

from bot.cli.logs import configure_logging, say


@pytest.fixture(autouse=True)
def _restore_logging():
    """Leaves no handler bound to this test's captured stderr behind."""
    yield
    logging.root.handlers.clear()
    structlog.reset_defaults()


def _lines(capfd) -> list[str]:
    return [line for line in capfd.readouterr().err.splitlines() if line.strip()]


def test_every_line_is_json_when_json_is_asked(capfd):
    configure_logging("INFO", "json")
    structlog.get_logger("minerva.test").info("ask.answered", latency_ms=12)
    logging.getLogger("apscheduler.scheduler").info("Scheduler started")
    logging.getLogger("aiohttp.access").info('127.0.0.1 "POST /slack/events HTTP/1.1" 200')
    try:
        raise ValueError("bad")
    except ValueError:
        logging.getLogger("apscheduler.executors.default").exception("Job raised")
    say("Minerva serving (HTTP on 127.0.0.1:3000); Ctrl-C to stop", "serve.listening")
    structlog.get_logger().debug("not shown at INFO")
    entries = [json.loads(line) for line in _lines(capfd)]
    assert [e["event"] for e in entries] == ["ask.answered", "Scheduler started",
                                             '127.0.0.1 "POST /slack/events HTTP/1.1" 200', "Job raised",
                                             "serve.listening"]
    assert entries[0]["latency_ms"] == 12 and entries[0]["level"] == "info"
    assert entries[1]["logger"] == "apscheduler.scheduler"
    assert "ValueError: bad" in entries[3]["exception"] and entries[3]["level"] == "error"
    assert "Minerva serving" in entries[4]["message"]


def test_a_terminal_gets_readable_lines(capfd):
    configure_logging("INFO", "console")
    logging.getLogger("apscheduler.scheduler").info("Scheduler started")
    say("Minerva serving (Socket Mode); Ctrl-C to stop", "serve.listening")
    lines = _lines(capfd)
    assert "Scheduler started" in lines[0] and not lines[0].startswith("{")
    assert lines[1] == "Minerva serving (Socket Mode); Ctrl-C to stop"


def test_the_start_lines_are_printed_whatever_the_level(capfd):
    configure_logging("WARNING", "json")  # replicas and `serve` run at WARNING by default
    structlog.get_logger().info("not shown")
    say("Minerva serving (Socket Mode); Ctrl-C to stop", "serve.listening", mode="Socket Mode")
    (line,) = _lines(capfd)
    assert json.loads(line)["message"].startswith("Minerva serving") and json.loads(line)["mode"] == "Socket Mode"


def test_an_ingest_asked_for_json_logs_prints_no_progress_bar(tmp_path):
    """A newcomer's ``--log-format json ingest`` printed tqdm bars, one glued to a JSON record (issue 28)."""
    import subprocess
    import sys

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "vpn.md").write_text("# VPN\n\nConnect with the company client before you open the wiki.\n",
                                 encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "bot.cli", "--home", str(tmp_path / "var"), "--log-format", "json",
                           "--log-level", "INFO", "ingest", str(docs)], capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines and all(line.startswith("{") and json.loads(line) for line in lines), lines[:5]


def test_a_piped_one_shot_command_prints_readable_lines(tmp_path):
    """A newcomer's ``minerva ingest 2>&1 | head`` showed its warnings as JSON records among plain lines: only a
    server (`minerva serve`) logs JSON by itself when its stderr is no terminal."""
    import subprocess
    import sys

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "vpn.md").write_text("# VPN\n\nConnect with the company client before you open the wiki.\n",
                                 encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "bot.cli", "--home", str(tmp_path / "var"), "--log-level", "INFO",
                           "ingest", str(docs)], capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines and not [line for line in lines if line.startswith("{")], lines[:5]
