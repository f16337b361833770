"""The CLI's one error mapping (`bot.cli.main.MinervaGroup`, issue 24 item 6): a `MinervaError` raised anywhere under
`minerva` is ``Error: <message>`` on stderr with its exit code and no traceback; any other exception is a bug
and keeps its traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from bot.cli.main import cli

#: A `minerva` with one more command, `fail KIND`, that raises what KIND names (run in its own process, so
#: the traceback, or its absence, is the one a user would see).
SCRIPT = """
import sys

from bot.cli.main import cli
from config import MinervaError


class Unfixable(MinervaError):
    exit_code = 3
    hint = "ask the operator"


@cli.command("fail")
def fail():
    if sys.argv[2] == "user":
        raise Unfixable("the thing is broken; fix the thing")
    raise RuntimeError("the statistics exploded")


cli(["--home", sys.argv[1], "fail"], prog_name="minerva")
"""


def _run_failing(home, kind: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT, str(home), kind], capture_output=True, text=True,
                          timeout=120)


def test_a_minerva_error_is_one_error_line_with_its_exit_code(tmp_path) -> None:
    done = _run_failing(tmp_path, "user")

    assert done.returncode == 3, done.stderr
    assert done.stderr == "Error: the thing is broken; fix the thing\n  → ask the operator\n"


def test_a_bug_keeps_its_traceback(tmp_path) -> None:
    done = _run_failing(tmp_path, "bug")

    assert done.returncode == 1
    assert "Traceback (most recent call last)" in done.stderr
    assert done.stderr.rstrip().endswith("RuntimeError: the statistics exploded")
    assert not any(line.startswith("Error:") for line in done.stderr.splitlines())


@pytest.mark.parametrize("args, message", [
    # from the group callback (the config), a command of a subgroup, and a command of the jobs package
    (["--config", "{broken}", "docs"], "unknown key 'colour'"),
    (["sources", "remove", "nope"], "no recorded source named 'nope'"),
    (["killswitch", "disable", "nope"], "no source named 'nope'; configured:"),
    (["jobs", "run", "nope"], "no job named 'nope'; known jobs:"),
])
def test_errors_from_every_level_are_mapped_the_same_way(tmp_path, args, message) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("colour: blue\n", encoding="utf-8")

    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "home"),
                                      *[a.format(broken=broken) for a in args]])

    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)  # click's clean exit, not an escaped exception
    assert result.stderr.startswith("Error: ") and message in result.stderr
