"""Real dates (front matter, else the last commit in a Git source, else mtime) and links of versioned folders."""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

import knowledge.git_source
from bot.cli.main import cli
from config import Settings, SourceConfig
from knowledge import KnowledgeBase
from knowledge.sync import document_url

COMMITTED = "2023-05-01T10:00:00+00:00"
PAGES = {
    "vpn.md": "# VPN\n\nConnect to the office VPN with the WireGuard client; the tunnel drops after twelve hours.\n",
    "laptops.md": "# Laptops\n\nLost laptops are reported to the help desk within one hour so the disk is wiped.\n",
    "dated.md": "---\nupdated: 2024-02-03\n---\n# Parking\n\nThe garage under building B has forty spaces for "
                "visitors; book one a day ahead at the front desk.\n",
}


def _git(folder: Path, *args: str, date: str = COMMITTED) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True, env=env)


@pytest.fixture
def repo(tmp_path) -> Path:
    """A real Git repository: the pages under ``docs/``, committed on 2023-05-01, ``laptops.md`` re-committed
    on 2024-07-09; a later ``draft.md`` left untracked."""
    root = tmp_path / "repo"
    docs = root / "docs"
    docs.mkdir(parents=True)
    _git(root, "init", "-q")
    for name, text in PAGES.items():
        (docs / name).write_text(text, encoding="utf-8")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "pages")
    (docs / "laptops.md").write_text(PAGES["laptops.md"] + "\nSpare chargers are at the help desk.\n")
    _git(root, "commit", "-qam", "chargers", date="2024-07-09T08:30:00+00:00")
    (docs / "draft.md").write_text("# Draft\n\nThe new coffee machine on floor three takes oat milk cartons.\n")
    return docs


def _sync(source: SourceConfig, home: Path, embedder):
    kb = KnowledgeBase(Settings(sources=[source]), home, embedder=embedder)
    report = kb.sync()
    return report, kb.index().documents


@pytest.mark.parametrize("git_flag", [False, True])
def test_dates_come_from_front_matter_then_git_history_then_mtime(repo, tmp_path, embedder, git_flag):
    report, docs = _sync(SourceConfig("docs", str(repo), git=git_flag), tmp_path / "home", embedder)

    assert docs["docs:dated.md"]["last_modified"] == "2024-02-03T00:00:00+00:00"
    assert docs["docs:dated.md"]["date_source"] == "front matter"
    assert docs["docs:vpn.md"]["last_modified"] == COMMITTED and docs["docs:vpn.md"]["date_source"] == "git"
    assert docs["docs:laptops.md"]["last_modified"] == "2024-07-09T08:30:00+00:00"
    if git_flag:  # a git source syncs committed files only
        assert "docs:draft.md" not in docs and report.dates == {"front matter": 1, "git": 2}
    else:  # an untracked file in a work tree has no history: its mtime
        assert docs["docs:draft.md"]["date_source"] == "mtime"
        assert report.dates == {"front matter": 1, "git": 2, "mtime": 1}


def test_uncommitted_edits_keep_the_file_mtime(repo, tmp_path, embedder):
    (repo / "vpn.md").write_text(PAGES["vpn.md"] + "\nThe VPN also works on phones.\n")
    _, docs = _sync(SourceConfig("docs", str(repo)), tmp_path / "home", embedder)
    assert docs["docs:vpn.md"]["date_source"] == "mtime"
    assert docs["docs:vpn.md"]["last_modified"][:10] == datetime.now(timezone.utc).date().isoformat()


def test_history_is_read_with_one_git_log_per_sync_not_per_file(repo, tmp_path, embedder, monkeypatch):
    calls = []
    real_run = subprocess.run

    def counting(args, *a, **kw):
        calls.append(args)
        return real_run(args, *a, **kw)

    monkeypatch.setattr(knowledge.git_source.subprocess, "run", counting)
    for i in range(20):
        (repo / f"extra{i}.md").write_text(f"# Extra {i}\n\nRoom {i} on floor {i % 4} seats {i + 4} people.\n")
    _git(repo.parent, "add", ".")
    _git(repo.parent, "commit", "-qm", "rooms")

    _sync(SourceConfig("docs", str(repo)), tmp_path / "home", embedder)

    assert sum(1 for c in calls if "log" in c) == 1


def test_a_folder_outside_git_uses_mtime(tmp_path, embedder):
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "vpn.md").write_text(PAGES["vpn.md"])
    os.utime(folder / "vpn.md", (1_600_000_000, 1_600_000_000))
    report, docs = _sync(SourceConfig("plain", str(folder)), tmp_path / "home", embedder)
    assert docs["plain:vpn.md"]["last_modified"] == "2020-09-13T12:26:40+00:00" and report.dates == {"mtime": 1}


def test_the_sync_report_says_where_dates_came_from(repo, tmp_path, embedder, monkeypatch):
    monkeypatch.setattr("knowledge.service.load_embedder", lambda cfg: embedder)
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "home"), "ingest", "--no-record", str(repo)])
    assert "dates: 1 from front matter, 2 from git history, 1 from file mtime" in result.stdout


# --- links -----------------------------------------------------------------------------------------------


def test_versioned_folders_drop_the_version_folder_from_the_link():
    source = SourceConfig("hb", "x", url_base="https://github.com/org/hb/blob/main/", versions="folders")
    assert document_url(source, "2025-02/tools/x.md") == "https://github.com/org/hb/blob/main/tools/x.md"


def test_a_version_placeholder_takes_the_version_folder():
    source = SourceConfig("pd", "x", url_base="https://docs.example/{version}/", versions="folders")
    assert document_url(source, "v2.13.4/concepts/models.md") == "https://docs.example/v2.13.4/concepts/models.md"


def test_unversioned_sources_link_the_whole_relative_path():
    assert document_url(SourceConfig("a", "x", url_base="https://w.example/a/"), "b/c.md") == "https://w.example/a/b/c.md"
    assert document_url(SourceConfig("a", "x"), "b/c.md") == "b/c.md"


def test_a_synced_versioned_page_links_without_its_version_folder(tmp_path, embedder):
    folder = tmp_path / "hb"
    for version in ("2024-06", "2025-02"):
        (folder / version / "tools").mkdir(parents=True)
        (folder / version / "tools" / "vpn.md").write_text(PAGES["vpn.md"].replace("twelve", version))
    source = SourceConfig("hb", str(folder), url_base="https://github.com/org/hb/blob/main/", versions="folders")
    _, docs = _sync(source, tmp_path / "home", embedder)
    assert docs["hb:2025-02/tools/vpn.md"]["url"] == "https://github.com/org/hb/blob/main/tools/vpn.md"
