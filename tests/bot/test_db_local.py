"""`minerva db local`: a PostgreSQL server on this machine from the pgserver wheel, its URL, and stopping it
(issue 28 item 4)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from bot.cli import local_postgres
from bot.cli.main import cli

MINERVA = [sys.executable, "-c", "from bot.cli.main import main; main()"]


def _run(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "MINERVA_"))}
    return subprocess.run([*MINERVA, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_db_local_starts_a_server_prints_its_url_and_stops(tmp_path):
    pytest.importorskip("pgserver", reason="pgserver is not installed: pip install 'minerva[replicas]'")
    from feedback import FeedbackStore
    from feedback.copy import describe

    folder = tmp_path / "var" / "postgres"
    try:
        started = _run("--home", "var", "db", "local", cwd=tmp_path)
        assert started.returncode == 0, started.stderr
        line = next(line for line in started.stdout.splitlines() if "export MINERVA_DATABASE_URL=" in line)
        url = line.split("=", 1)[1].strip().strip("'")
        assert url.startswith("postgresql://") and url.endswith(f"?host={folder}")  # a socket in the data folder
        assert "minerva db local --stop" in started.stdout
        assert local_postgres.is_running(folder)  # still up after the command exited

        again = _run("--home", "var", "db", "local", "--url", cwd=tmp_path)
        assert again.returncode == 0 and again.stdout.strip() == url  # found running: the same URL, alone
        with FeedbackStore.open(url):
            pass  # Minerva creates its tables there
        assert describe(url).backend == "postgresql"

        stopped = _run("--home", "var", "db", "local", "--stop", cwd=tmp_path)
        assert stopped.returncode == 0 and "stopped" in stopped.stdout, stopped.stderr
        assert not local_postgres.is_running(folder)
        assert (folder / "PG_VERSION").is_file()  # the data stays
        assert "no PostgreSQL server is running" in _run("--home", "var", "db", "local", "--stop", cwd=tmp_path).stdout
    finally:
        local_postgres.stop(folder)


def test_db_local_says_how_to_install_pgserver_when_it_is_missing(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pgserver", None)  # import pgserver raises ImportError

    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "db", "local"])

    assert result.exit_code == 1
    assert "pip install 'minerva[replicas]'" in result.output
