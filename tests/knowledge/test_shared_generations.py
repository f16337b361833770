"""Generations shared by replicas: MINERVA_INDEX_DIR names one folder for several homes, a replica switches
to a new generation without a restart, and a half-copied generation is never loaded (the old one keeps serving)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from knowledge import KnowledgeBase, service
from knowledge.errors import IndexNotBuilt
from knowledge.index import INDEX_DIR_ENV, current_generation, index_root

QUESTION = "what's the API rate limit for Pro customers?"


@pytest.fixture
def shared(tmp_path: Path, sample_home: Path, monkeypatch) -> Path:
    """A shared generations folder holding a copy of the sample index, named by MINERVA_INDEX_DIR."""
    folder = tmp_path / "shared-index"
    shutil.copytree(sample_home / "index", folder)
    monkeypatch.setenv(INDEX_DIR_ENV, str(folder))
    return folder


def publish_copy(folder: Path, name: str, *, truncate: str | None = None) -> Path:
    """Copy the live generation under a new name (as rsync into a shared volume would) and name it CURRENT."""
    live = folder / (folder / "CURRENT").read_text().strip()
    target = folder / name
    shutil.copytree(live, target)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["name"] = name
    (target / "manifest.json").write_text(json.dumps(manifest))
    if truncate:
        path = target / truncate
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    (folder / "CURRENT").write_text(name)
    return target


def test_two_homes_serve_the_generation_in_the_shared_folder(shared, tmp_path, sample_settings, embedder) -> None:
    first = KnowledgeBase(sample_settings, tmp_path / "replica-1", embedder=embedder)
    second = KnowledgeBase(sample_settings, tmp_path / "replica-2", embedder=embedder)
    assert index_root(tmp_path / "replica-1") == shared
    assert first.index().name == second.index().name == current_generation(tmp_path / "replica-1")
    assert not first.ask(QUESTION).refused
    publish_copy(shared, "gen-29990101T000000-aaaaaa")
    assert first.index().name == second.index().name == "gen-29990101T000000-aaaaaa"  # no restart


def test_a_half_copied_generation_is_never_loaded(shared, tmp_path, sample_settings, embedder, monkeypatch) -> None:
    kb = KnowledgeBase(sample_settings, tmp_path / "replica", embedder=embedder)
    serving = kb.index().name
    target = publish_copy(shared, "gen-29990101T000000-bbbbbb", truncate="vectors.npy")
    assert kb.index().name == serving  # the copy is incomplete: the old generation keeps serving
    assert not kb.ask(QUESTION).refused
    monkeypatch.setattr(service, "RELOAD_RETRY_SECONDS", 0.0)
    shutil.copyfile(shared / serving / "vectors.npy", target / "vectors.npy")  # the copy finishes
    assert kb.index().name == "gen-29990101T000000-bbbbbb"


def test_a_new_replica_refuses_an_incomplete_only_generation(shared, tmp_path, sample_settings, embedder) -> None:
    publish_copy(shared, "gen-29990101T000000-cccccc", truncate="chunks.json")
    with pytest.raises(IndexNotBuilt, match="incomplete"):
        KnowledgeBase(sample_settings, tmp_path / "fresh", embedder=embedder).index()
