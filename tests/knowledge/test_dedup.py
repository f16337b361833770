"""Self-duplication report and the nearest-existing-chunk lookup (knowledge.dedup), on real sample pages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import hnswlib
import numpy as np
import pytest
from click.testing import CliRunner

from config import HygieneConfig, Settings, SourceConfig
from knowledge import KnowledgeBase
from knowledge.dedup import find_self_duplicates
from knowledge.index import LoadedIndex
from tests.conftest import SAMPLE_KB

PAGES = ("disk-full.md", "disk-full-copy.md", "webhook-failures.md")
DISK, COPY, WEBHOOKS = (f"runbooks:{p}" for p in PAGES)


@pytest.fixture(scope="module")
def runbooks(tmp_path_factory, embedder) -> KnowledgeBase:
    """Three sample runbooks (one a reworded copy of another) ingested with the near-duplicate gate off,
    so the copy's chunks reach the index the way they did before the gate existed."""
    folder = tmp_path_factory.mktemp("runbooks")
    for name in PAGES:
        shutil.copyfile(SAMPLE_KB / "runbooks" / name, folder / name)
    settings = Settings(sources=[SourceConfig(name="runbooks", path=str(folder))], hygiene=HygieneConfig(gate=False))
    kb = KnowledgeBase(settings, tmp_path_factory.mktemp("home"), embedder=embedder)
    kb.sync()
    return kb


def test_self_dedup_pairs_the_copied_runbook_chunk_for_chunk(runbooks):
    index = runbooks.index()
    pairs = find_self_duplicates(index)
    assert pairs, "disk-full-copy.md repeats disk-full.md almost word for word"
    assert {(p.doc_a, p.doc_b) for p in pairs} == {(DISK, COPY) if DISK < COPY else (COPY, DISK)}
    n_chunks = sum(1 for c in index.chunks if c["doc_id"] == DISK)
    same_position = {(p.chunk_a.split("#")[1], p.chunk_b.split("#")[1]) for p in pairs}
    assert {(str(i), str(i)) for i in range(n_chunks)} <= same_position
    assert all(0.95 <= p.cosine <= 1.0 for p in pairs)
    assert pairs == sorted(pairs, key=lambda p: -p.cosine)


def test_self_dedup_ignores_adjacent_chunks_of_one_file(runbooks):
    index = runbooks.index()
    rows = [i for i, c in enumerate(index.chunks) if c["doc_id"] == DISK]
    adjacent = [float(index.vectors[a] @ index.vectors[b]) for a, b in zip(rows, rows[1:])]
    threshold = min(adjacent) - 0.01  # low enough that every adjacent pair of disk-full.md would qualify
    pairs = find_self_duplicates(index, threshold=threshold)
    assert pairs
    assert all(p.doc_a != p.doc_b for p in pairs)


def test_self_dedup_reports_every_copy_beyond_the_first_neighbours():
    # one chunk copied into 12 files, asked with 3 neighbours: the search widens until it has them all
    dim, copies = 8, 12
    vectors = np.zeros((copies + 1, dim), dtype=np.float32)
    vectors[:copies, 0] = 1.0
    vectors[copies, 1] = 1.0  # an unrelated chunk
    pairs = find_self_duplicates(_synthetic_index(vectors), 0.95, neighbours=3)
    assert len(pairs) == copies * (copies - 1) // 2
    assert all(f"doc{copies}" not in (p.doc_a, p.doc_b) for p in pairs)


def test_cli_dedup_self_prints_json_pairs(runbooks):
    from bot.cli.main import cli

    config = Path(runbooks.home) / "minerva.yaml"
    config.write_text(f"sources:\n  - name: runbooks\n    path: {runbooks.settings.sources[0].path}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--config", str(config), "--home", str(runbooks.home), "dedup", "--self", "--json"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines and all({line["doc_a"], line["doc_b"]} == {DISK, COPY} for line in lines)
    result = CliRunner().invoke(cli, ["--config", str(config), "--home", str(runbooks.home), "dedup"])
    assert result.exit_code == 2 and "--self" in result.output


def _synthetic_index(vectors: np.ndarray) -> LoadedIndex:
    """A LoadedIndex over hand-made vectors: one chunk per document."""
    dense = hnswlib.Index(space="cosine", dim=vectors.shape[1])
    dense.init_index(max_elements=len(vectors), M=16, ef_construction=200)
    dense.add_items(vectors, np.arange(len(vectors)))
    dense.set_ef(50)
    documents = {f"doc{i}": {"doc_id": f"doc{i}", "collection": "c", "stage": "active"} for i in range(len(vectors))}
    chunks = [{"chunk_id": f"doc{i}#0", "doc_id": f"doc{i}", "text": "", "heading_path": []} for i in range(len(vectors))]
    return LoadedIndex("synthetic", {}, documents, chunks, vectors, dense, None)
