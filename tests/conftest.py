"""Shared fixtures: the bundled sample knowledge base indexed once per session, real corpus paths, a clean env.

Tests use real parts: SQLite files in tmp_path, real hnswlib/bm25s indexes on disk, the packaged MiniLM model.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

pytest_plugins = ["tests.fakes.fixtures", "tests.postgres"]

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
EVAL = SHARED / "eval"
SAMPLE_KB = REPO / "knowledge" / "sample_kb"

needs_shared = pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the real corpora are not here ({CORPUS} is missing: it exists only in the development checkout)"
)


@pytest.fixture(autouse=True)
def _clean_slack_env(monkeypatch):
    """No test sees the developer's Slack secrets or config (bolt-python's remove_os_env_temporarily)."""
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "SLACK_API_URL", "MINERVA_CONFIG",
                 "MINERVA_HOME", "MINERVA_DASHBOARD_TOKEN"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def embedder():
    """The packaged all-MiniLM-L6-v2, loaded once per session (a few seconds)."""
    from config import EmbeddingConfig
    from knowledge.embedding import load_embedder

    return load_embedder(EmbeddingConfig())


@pytest.fixture(scope="session")
def sample_settings():
    """The bundled config: the sample knowledge base as three collections."""
    from config import load_settings

    return load_settings()


@pytest.fixture(scope="session")
def sample_home(tmp_path_factory, sample_settings, embedder) -> Path:
    """A MINERVA_HOME with the sample knowledge base ingested (built once per session; do not modify)."""
    from knowledge import KnowledgeBase

    home = tmp_path_factory.mktemp("sample-home")
    KnowledgeBase(sample_settings, home, embedder=embedder).sync()
    return home


@pytest.fixture(scope="session")
def sample_kb(sample_settings, sample_home, embedder):
    """A KnowledgeBase over the sample knowledge base (read-only use)."""
    from knowledge import KnowledgeBase

    return KnowledgeBase(sample_settings, sample_home, embedder=embedder)


def copy_pages(dest: Path, pages: dict[str, Path]) -> Path:
    """Copy real corpus pages into ``dest`` (name → source path); returns ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name, src in pages.items():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
    return dest


def synced_kb(tmp: Path, pages: dict[str, Path], settings, embedder):
    """A KnowledgeBase over copies of real ``pages`` (name → source path) as one source "docs", synced into
    ``tmp / "home"`` with ``settings`` otherwise (a module fixture's few-page knowledge base)."""
    return _synced(copy_pages(tmp / "docs", pages), tmp, settings, embedder)


def written_kb(tmp: Path, pages: dict[str, str], settings, embedder):
    """A KnowledgeBase over pages written here (file name → Markdown text) as one source "docs", synced into
    ``tmp / "home"``: a page shaped like one a user reported, where no corpus page has that shape."""
    folder = tmp / "docs"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in pages.items():
        (folder / name).write_text(text, encoding="utf-8")
    return _synced(folder, tmp, settings, embedder)


def _synced(folder: Path, tmp: Path, settings, embedder):
    from dataclasses import replace

    from config import SourceConfig
    from knowledge import KnowledgeBase

    kb = KnowledgeBase(replace(settings, sources=[SourceConfig(name="docs", path=str(folder))]), tmp / "home",
                       embedder=embedder)
    kb.sync()
    return kb
