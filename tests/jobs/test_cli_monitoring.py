"""The monitoring verbs through the `minerva` CLI runner, on a copy of the sample index and a real store."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
from feedback import FeedbackStore, job_runs
from tests.jobs.monitoring_helpers import add_answer, label

VERBS = ("coverage", "freshness", "bad-docs", "citations", "drift", "reindex", "review", "classify")


@pytest.fixture
def home(tmp_path, sample_home):
    target = tmp_path / "home"
    shutil.copytree(sample_home / "index", target / "index")
    with FeedbackStore.open(target / "minerva.sqlite") as store:
        for i in range(30):
            label(store, add_answer(store, question="disk full?", cited=("runbooks:disk-full.md",),
                                    votes=("down" if i % 10 else "up",)), "troubleshooting", 1)
    return target


def invoke(home, *args):
    return CliRunner().invoke(cli, ["--home", str(home), *args], catch_exceptions=False)


def test_bad_docs_then_review_then_done(home) -> None:
    result = invoke(home, "bad-docs", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert [f["labels"] for f in out["findings"]] == [{"doc_id": "runbooks:disk-full.md"}]
    assert out["status"]["bad"][0]["citations"] == 30
    listed = invoke(home, "review")
    assert "runbooks:disk-full.md" in listed.output and "#1" in listed.output
    assert invoke(home, "review", "--done", "1").exit_code == 0
    assert "the review queue is empty" in invoke(home, "review").output
    (item,) = [json.loads(line) for line in invoke(home, "review", "--all", "--json").output.splitlines()]
    assert item["status"] == "done"


@pytest.mark.parametrize("verb,key", [("coverage", "cells"), ("freshness", "collections"), ("citations", "trend"),
                                      ("drift", "metrics"), ("reindex", "queue")])
def test_every_signal_verb_prints_json(home, verb, key) -> None:
    result = invoke(home, verb, "--json")
    assert result.exit_code == 0, result.output
    assert key in json.loads(result.output)["status"]


def test_text_output(home) -> None:
    assert "runbooks:" in invoke(home, "freshness").output
    assert "queue:" in invoke(home, "reindex").output
    assert "intent" in invoke(home, "drift").output


def test_errors_are_one_line(tmp_path, home) -> None:
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "empty"), "freshness"])
    assert (result.exit_code, result.output) == (1, "Error: no index yet: run `minerva ingest` first\n")
    result = invoke(home, "review", "--done", "42")
    assert result.exit_code == 1 and "no review item 42" in result.output


@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_is_documented(verb) -> None:
    result = CliRunner().invoke(cli, [verb, "--help"])
    assert result.exit_code == 0 and "--json" in result.output
    assert cli.commands[verb].help


# --- --now (issue 11 item 8) ----------------------------------------------------------------------------


def test_now_moves_a_collection_across_its_freshness_threshold(home) -> None:
    from datetime import datetime, timedelta

    from knowledge.index import load_generation

    docs = [d for d in load_generation(home).documents.values() if d["collection"] == "plans" and d["stage"] == "active"]
    newest = max(datetime.fromisoformat(d["last_modified"]) for d in docs)
    oldest = min(datetime.fromisoformat(d["last_modified"]) for d in docs)

    def plans(now) -> dict:
        result = invoke(home, "freshness", "--json", "--now", now.isoformat())
        assert result.exit_code == 0, result.output
        return json.loads(result.output)["status"]["collections"]["plans"]

    days = plans(newest)["staleness_days"]
    assert plans(oldest + timedelta(days=days - 1))["stale"] == 0
    late = plans(newest + timedelta(days=days + 1))
    assert late["stale"] == late["active"] > 0


def test_jobs_run_and_report_take_now(home, tmp_path) -> None:
    result = invoke(home, "jobs", "run", "bad_docs", "--now", "2026-03-01T08:00")
    assert result.exit_code == 0, result.output
    with FeedbackStore.open(home / "minerva.sqlite") as store, store.snapshot() as conn:
        (run,) = job_runs.recent_runs(conn, "bad_docs")
    assert run["started_at"].isoformat().startswith("2026-03-01T08:00:00")
    out = tmp_path / "r.html"
    assert invoke(home, "report", "--no-signals", "--out", str(out), "--now", "2026-03-01").exit_code == 0
    assert out.exists()
    bad = CliRunner().invoke(cli, ["--home", str(home), "drift", "--now", "yesterday"])
    assert bad.exit_code == 2 and "not an ISO date" in bad.output


def test_jobs_preview_prints_the_digest_slack_would_get_and_posts_nothing(home) -> None:
    """A newcomer without Slack could not see a digest: `jobs run daily_digest` logged "no channel" and said ok.
    Before any job ran, an empty preview says nothing was looked at (it had read as "all healthy")."""
    before = invoke(home, "jobs", "preview", "--now", "2029-03-01T07:00")
    weekly = invoke(home, "jobs", "preview", "weekly", "--now", "2029-03-01T07:00")
    assert "no monitoring job has run yet on this home" in before.output
    assert "no monitoring job has run yet on this home" in weekly.output  # its "Nothing firing ✅" is no all-clear
    assert invoke(home, "jobs", "run", "freshness", "--now", "2029-03-01T08:00").exit_code == 0  # every page stale
    ran = invoke(home, "jobs", "run", "daily_digest", "--now", "2029-03-01T09:00")
    assert "nothing was posted: no digest channel is set; `minerva jobs preview daily`" in ran.output

    shown = invoke(home, "jobs", "preview", "--now", "2029-03-01T09:00")

    assert shown.exit_code == 0, shown.output
    assert shown.output.startswith("### daily digest to (no channel set")
    assert "== Minerva daily digest · 2029-03-01 ==" in shown.output and "stale_document" in shown.output
    assert "[Ack] [Silence 24h]" in shown.output
    assert "### direct message to S0PLATFORM" in shown.output  # a page owner's, from the sample's front matter
    again = invoke(home, "jobs", "preview", "--now", "2029-03-01T09:00")
    assert again.output == shown.output  # nothing was recorded as delivered
