"""`minerva ingest` on the user's own folders: missing sources fail, folder ingests persist, names carry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli.main import cli

PAGES = {
    "vpn.md": "# VPN\n\nConnect to the office VPN with the WireGuard client; the config file comes from the IT portal "
              "under Devices. The tunnel drops after twelve hours and must be restarted.\n",
    "laptops.md": "# Laptops\n\nEvery new employee gets a laptop on the first day. Lost laptops are reported to the "
                  "help desk within one hour so the disk can be wiped remotely.\n",
}


def write_pages(folder: Path, pages: dict[str, str] = PAGES) -> Path:
    """Write ``pages`` (relative path → text) under ``folder``; returns ``folder``."""
    for name, text in pages.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def minerva(tmp_path, embedder, monkeypatch):
    """Run the CLI in a fresh home with the session's model (no reload per command): ``minerva(*args)``."""
    monkeypatch.setattr("knowledge.service.load_embedder", lambda cfg: embedder)
    home = tmp_path / "home"

    def run(*args: str, config: Path | None = None):
        head = ["--home", str(home)] + (["--config", str(config)] if config else [])
        return CliRunner().invoke(cli, [*head, *args], catch_exceptions=False)

    run.home = home
    return run


def _config(tmp_path: Path, sources: list[tuple[str, Path]]) -> Path:
    lines = ["sources:"] + [f"  - name: {name}\n    path: {path}" for name, path in sources]
    path = tmp_path / "minerva.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_missing_source_folder_fails_the_ingest_but_the_others_still_sync(minerva, tmp_path):
    it = write_pages(tmp_path / "it")
    config = _config(tmp_path, [("it", it), ("hr", tmp_path / "no-such-folder")])

    result = minerva("ingest", config=config)

    assert result.exit_code == 1
    assert "source 'hr'" in result.output and "does not exist" in result.output
    assert "2 added" in result.output  # the other source was synced
    listed = minerva("docs", "--json", config=config)
    assert sorted(json.loads(line)["doc_id"] for line in listed.stdout.splitlines()) == ["it:laptops.md", "it:vpn.md"]


def test_a_missing_source_in_json_mode_still_prints_the_report_and_fails(minerva, tmp_path):
    config = _config(tmp_path, [("it", write_pages(tmp_path / "it")), ("hr", tmp_path / "gone")])

    result = minerva("ingest", "--json", config=config)

    assert result.exit_code == 1
    report = json.loads(result.stdout.splitlines()[0])
    assert report["missing"][0]["source"] == "hr" and "does not exist" in report["missing"][0]["reason"]


def _doc_ids(minerva, config: Path | None = None) -> list[str]:
    listed = minerva("docs", "--json", config=config)
    return sorted(json.loads(line)["doc_id"] for line in listed.stdout.splitlines())


def test_a_folder_ingest_is_recorded_and_a_later_plain_ingest_keeps_its_pages(minerva, tmp_path):
    docs = write_pages(tmp_path / "docs")
    config = _config(tmp_path, [("it", write_pages(tmp_path / "it"))])

    first = minerva("ingest", str(docs), config=config)
    assert first.exit_code == 0, first.output
    assert "recorded source 'docs'" in first.stderr and "minerva sources remove docs" in first.stderr
    assert "docs" in (minerva.home / "sources.yaml").read_text()

    plain = minerva("ingest", config=config)
    assert plain.exit_code == 0, plain.output
    assert "0 deleted" in plain.stdout
    assert _doc_ids(minerva, config) == ["docs:laptops.md", "docs:vpn.md", "it:laptops.md", "it:vpn.md"]
    assert "recorded source" not in minerva("ingest", str(docs), config=config).stderr  # recorded once


def test_a_recorded_folder_is_known_to_per_collection_commands(minerva, tmp_path):
    docs = write_pages(tmp_path / "it-handbook")
    assert minerva("ingest", str(docs)).exit_code == 0

    disabled = minerva("killswitch", "disable", "it-handbook")

    assert disabled.exit_code == 0, disabled.output
    assert "it-handbook" in minerva("sources", "list").stdout


def test_sources_remove_forgets_a_folder_and_the_next_ingest_prunes_it(minerva, tmp_path):
    docs = write_pages(tmp_path / "docs")
    config = _config(tmp_path, [("it", write_pages(tmp_path / "it"))])
    minerva("ingest", str(docs), config=config)

    removed = minerva("sources", "remove", "docs", config=config)
    plain = minerva("ingest", config=config)

    assert removed.exit_code == 0 and "forgot source 'docs'" in removed.stdout
    assert "2 deleted" in plain.stdout
    assert _doc_ids(minerva, config) == ["it:laptops.md", "it:vpn.md"]


def test_no_record_says_the_pages_will_not_be_kept(minerva, tmp_path):
    docs = write_pages(tmp_path / "docs")

    result = minerva("ingest", "--no-record", str(docs))

    assert result.exit_code == 0
    assert "not recorded" in result.stderr and not (minerva.home / "sources.yaml").exists()


def test_a_folder_whose_name_is_taken_by_another_source_is_refused_before_syncing(minerva, tmp_path):
    config = _config(tmp_path, [("docs", write_pages(tmp_path / "it"))])
    other = write_pages(tmp_path / "elsewhere" / "docs")

    result = minerva("ingest", str(other), config=config)

    assert result.exit_code == 1 and "a source named 'docs' already exists" in result.output
    assert not (minerva.home / "sources.yaml").exists()


def test_a_fresh_home_with_a_user_config_is_not_judged_by_the_sample_gap_queries(minerva, tmp_path):
    config = _config(tmp_path, [("it", write_pages(tmp_path / "it"))])

    result = minerva("ingest", "--json", config=config)

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["gaps"] is None
    assert "below expected" not in minerva("ingest", config=config).output


def test_a_folder_ingest_under_the_bundled_config_in_a_fresh_home_runs_no_sample_queries(minerva, tmp_path):
    result = minerva("ingest", str(write_pages(tmp_path / "docs")))

    assert result.exit_code == 0, result.output
    assert "gap queries" not in result.output


def test_gap_queries_naming_a_users_collection_judge_it(minerva, tmp_path):
    config = _config(tmp_path, [("it", write_pages(tmp_path / "it"))])
    (tmp_path / "gap_queries.yaml").write_text(
        "collections: [it]\nqueries:\n  - How do I connect to the office VPN?\n", encoding="utf-8")

    result = minerva("ingest", "--json", config=config)

    gaps = json.loads(result.stdout)["gaps"]
    assert [s["query"] for s in gaps["scores"]] == ["How do I connect to the office VPN?"]
    assert gaps["scores"][0]["top_doc_id"] == "it:vpn.md"


def test_without_home_the_data_lives_beside_the_config_whatever_the_working_folder(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from bot.cli.main import cli

    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "docs").mkdir()
    config = tmp_path / "team" / "minerva.yaml"
    config.write_text("sources:\n  - name: docs\n    path: docs\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    result = CliRunner().invoke(cli, ["--config", str(config), "docs"])

    assert result.exit_code != 0
    assert str(tmp_path / "team" / "var" / "index") in result.output  # not ./var of the working folder
    assert not (elsewhere / "var").exists()


def test_kept_near_copies_are_listed_where_the_ingest_says_so(minerva, tmp_path):
    """"1 partial duplicate(s) … queued for review", then `minerva review` said the queue was empty: the near
    copies kept are now named in the ingest's own output, with the values that changed."""
    text = (Path(__file__).resolve().parents[2] / "knowledge" / "sample_kb" / "runbooks" / "disk-full.md").read_text(
        encoding="utf-8")
    old, new = write_pages(tmp_path / "old", {"disk-full.md": text}), tmp_path / "new"
    config = _config(tmp_path, [("old", old), ("new", new)])
    minerva("ingest", config=config)
    write_pages(new, {"disk-full.md": text.replace("85%", "80%").replace("2026-04-22", "2026-11-01")})

    result = minerva("ingest", config=config)

    assert "queued for review" not in result.output
    assert "new:disk-full.md#" in result.output and "≈ old:disk-full.md#" in result.output
    assert "states 85% → 80%" in result.output


def test_a_copys_opening_kept_by_the_gate_says_why(minerva, tmp_path):
    """"1 kept that are close …: copy.md#0 ≈ disk-full.md#0 (similarity 1.00)" read as a gate that failed (a
    newcomer: "the docs say ≥ 0.92 is stopped"); a page's first chunk is kept so the page can still be found."""
    text = (Path(__file__).resolve().parents[2] / "knowledge" / "sample_kb" / "runbooks" / "disk-full.md").read_text(
        encoding="utf-8")
    pages = write_pages(tmp_path / "docs", {"disk-full.md": text, "disk-full-copy.md": text})
    config = _config(tmp_path, [("docs", pages)])

    result = minerva("ingest", config=config)

    assert "docs:disk-full-copy.md#0 ≈ docs:disk-full.md#0 (similarity 1.00; a duplicate, kept as the page's " \
           "opening" in result.output or "docs:disk-full.md#0 ≈ docs:disk-full-copy.md#0 (similarity 1.00; a " \
           "duplicate, kept as the page's opening" in result.output, result.output
