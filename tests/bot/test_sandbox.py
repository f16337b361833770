"""`minerva sandbox`: the README's way to try the Slack bot on your own pages without Slack, from any folder, in
one process or over two replicas on one PostgreSQL database (issue 28 item 4)."""

from __future__ import annotations

import ast
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli.sandbox.conversation import run, run_replicas

REPO = Path(__file__).resolve().parents[2]
SAMPLE_KB = REPO / "knowledge" / "sample_kb"


async def test_the_sandbox_asks_in_one_thread_and_shows_what_slack_would(sample_kb, sample_settings):
    out = io.StringIO()

    await run(sample_kb, sample_settings, ["what's the webhook timeout?", "and for retries?"], thumbs_down=True,
              out=out, report=True)

    shown = out.getvalue()
    assert shown.count("### you: @minerva") == 2 and shown.count("[👍] [👎]") == 2
    assert "seconds" in shown.split("### you clicked")[0]  # the first answer, as Slack renders it
    assert "[Outdated] [Wrong] [Incomplete] [Not what I asked]" in shown  # the private reason picker
    # a newcomer could not try "Report a wrong answer" offline
    from knowledge.messages import message

    assert shown.count("### you clicked Report a wrong answer; only you see:") == 2
    assert message("flag.thanks") in shown
    assert shown.count("### you clicked Wrong; only you see:") == 2  # a reason, as the 👎 picker offers
    assert message("vote_reason.thanks", label="Wrong") in shown


async def test_the_sandbox_tries_a_channels_settings_an_expert_and_the_home_tab(sample_kb, sample_settings):
    """A newcomer could not try the issue 25 features offline: a private runbooks-only channel, "Ask an expert"
    answered through the form, the kept answer shown to the next asker, and App Home, all from one command."""
    import copy

    from config import ChannelConfig

    settings = copy.deepcopy(sample_settings)
    settings.channels = {"CRUNBOOKS": ChannelConfig(collections=["runbooks"], private=True)}
    out = io.StringIO()

    await run(sample_kb, settings, ["how do I announce a SEV1 incident?"], thumbs_down=False, out=out,
              channel="CRUNBOOKS", expert_answer="Post in #incidents with @here.", home=True)

    shown = out.getvalue()
    assert "stand-in expert" in shown and "(asking in channel CRUNBOOKS (its settings apply); replies are private)" in shown
    assert "(only you see this)" in shown and "incident-response.md" in shown and "plans/" not in shown
    assert "### the experts see" in shown and "[Answer]" in shown and "a form opens" in shown
    assert "*Answered by @USANDBOXEXPERT:*\nPost in #incidents with @here." in shown
    assert "in your thread (only you see it)" in shown  # a private channel's answers stay private
    asked_again = shown.split("### you: @minerva")[2]
    assert "Answered by @USANDBOXEXPERT on" in asked_again and "Post in #incidents" in asked_again
    assert "== Channel settings ==" in shown and "#CRUNBOOKS" in shown and "<#" not in shown and "<https://" not in shown


def _minerva() -> list[str]:
    """The installed console script beside this interpreter (as a user runs it), else the same entry point."""
    script = shutil.which("minerva", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-c", "from bot.cli.main import main; main()"]


def test_minerva_sandbox_runs_from_a_folder_outside_the_clone(tmp_path, sample_home):
    # a user's folder: their config (the sample pages, by absolute path) and the index beside it in ./var
    config = (REPO / "config" / "minerva.yaml").read_text(encoding="utf-8")
    (tmp_path / "minerva.yaml").write_text(config.replace("../knowledge/sample_kb", str(SAMPLE_KB)), encoding="utf-8")
    shutil.copytree(sample_home, tmp_path / "var")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "MINERVA_")) and k != "PYTHONPATH"}

    done = subprocess.run([*_minerva(), "--config", "minerva.yaml", "sandbox", "--thumbs-down",
                           "what's the webhook timeout?"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)

    assert done.returncode == 0, done.stderr[-3000:]
    assert "No module named" not in done.stderr
    assert "### you: @minerva what's the webhook timeout?" in done.stdout and "[👍] [👎]" in done.stdout
    assert "60 seconds" in done.stdout
    assert "[Outdated] [Wrong] [Incomplete] [Not what I asked]" in done.stdout


def test_the_package_never_imports_the_tests():
    offences = []
    for path in sorted((REPO / "bot").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else [])
            offences += [f"{path.relative_to(REPO)}:{node.lineno} imports {n}" for n in names
                         if n.split(".")[0] == "tests"]
    assert offences == []


def test_the_replicas_feedback_action_is_the_bots():
    from bot.slack.blocks import FEEDBACK_ACTION
    from bot.cli.sandbox import replicas

    assert replicas.FEEDBACK_ACTION == FEEDBACK_ACTION


@pytest.mark.slow
async def test_the_sandbox_drives_two_replicas_and_each_retry_is_answered_once(postgres_url, sample_home):
    out, status = io.StringIO(), io.StringIO()

    wrong = await run_replicas(["what's the webhook timeout?", "and for retries?"], count=2,
                               database_url=postgres_url, index_dir=sample_home / "index", thumbs_down=True,
                               out=out, status=status)

    shown = out.getvalue()
    assert wrong == 0, shown
    assert shown.count("answered once, by replica-") == 2 and "answered 2 times" not in shown
    assert "sent to replica-1, its Slack retry to replica-2" in shown  # then the other way round
    assert "sent to replica-2, its Slack retry to replica-1" in shown
    assert "60 seconds" in shown and shown.count("[Outdated] [Wrong] [Incomplete] [Not what I asked]") == 2
    assert "127.0.0.1" in status.getvalue()


def test_the_sandbox_prints_slack_markup_as_slack_shows_it():
    """A newcomer read the raw `<https://…|title>` of the sandbox as what Slack prints."""
    from bot.cli.sandbox.conversation import as_seen

    assert as_seen("([1] <https://x.example/a|Leave> › Types) ask <@U1> or <!subteam^S06|@ops> in <#C1|ops>: "
                   "a &lt; b &amp; <mailto:it@x.example|it@x.example>") == (
        "([1] Leave (https://x.example/a) › Types) ask @U1 or @S06 in #C1: a < b & it@x.example (mailto:it@x.example)")
    # the digest's severity dots, not their codes (a newcomer read ":red_circle:" in `jobs preview`)
    assert as_seen(":red_circle: *0* critical · :large_orange_circle: *3* warning at 10:30:00 :nope:") == (
        "🔴 *0* critical · 🟠 *3* warning at 10:30:00 :nope:")
