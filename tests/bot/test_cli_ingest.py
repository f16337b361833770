"""`minerva ingest` on the user's own folders: missing sources fail, folder ingests persist, names carry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import cli

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
