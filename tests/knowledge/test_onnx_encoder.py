"""The dense model run by onnxruntime (knowledge/onnx_encoder.py): int8 vectors close to torch's, a cache that is
exported again when the package or the format changes, a fallback that never stops a question."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
import structlog.testing

from config import ChunkingConfig, EmbeddingConfig, Settings, SourceConfig
from knowledge import KnowledgeBase, onnx_encoder
from knowledge.embedding import SentenceTransformerEmbedder, load_embedder
from knowledge.onnx_encoder import OnnxEmbedder
from tests.conftest import CORPUS, copy_pages, needs_shared

TEXTS = ["How do I roll back a deployment?", "KubeletDown: monitoring cannot reach any kubelet for 15 minutes.",
         "연차는 언제까지 사용해야 하나요?", "出張の精算はいつまでに申請しますか？", "x" * 3000]
#: Least cosine between the shipped int8 export's vector and torch's for one text. Measured by
#: benchmarks/onnx_int8.py (results/onnx_int8.json, "onnx int8 shipped"): minimum 0.96 over 600 real chunks,
#: their units and 300 SciFact questions; these bounds leave a margin below it.
MIN_COSINE = 0.95
#: ... and the least mean cosine over a set of texts (measured mean 0.99).
MIN_MEAN_COSINE = 0.98


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """(cache folder, export path, torch embedder): the model exported once for the module's tests, by its first
    use (int8 is the default runtime: `load_embedder` exports when nothing is exported yet)."""
    cache = tmp_path_factory.mktemp("models")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MINERVA_MODEL_CACHE", str(cache))
        assert onnx_encoder.load(EmbeddingConfig()) is None  # nothing exported yet, and load alone exports nothing
        assert isinstance(load_embedder(EmbeddingConfig()), OnnxEmbedder)
        path = onnx_encoder.exported_path(EmbeddingConfig())
    return cache, path, SentenceTransformerEmbedder(EmbeddingConfig())


def _cosines(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    return np.sum(ours * theirs, axis=1)


def test_an_exported_model_gives_vectors_close_to_torchs(exported, monkeypatch):
    cache, path, torch_embedder = exported
    monkeypatch.setenv("MINERVA_MODEL_CACHE", str(cache))

    assert path is not None and path.parent == cache and path.exists()
    assert path.name.endswith(f"-{onnx_encoder.EXPORT_FORMAT}.onnx")
    assert not list(cache.glob("*.part"))  # written under temporary names, then renamed
    loaded = load_embedder(EmbeddingConfig())
    assert isinstance(loaded, onnx_encoder.OnnxEmbedder)
    assert loaded.name == torch_embedder.name and loaded.dim == torch_embedder.dim
    for kind in ("query", "passage"):
        ours, theirs = loaded.embed(TEXTS, kind=kind), torch_embedder.embed(TEXTS, kind=kind)
        assert ours.shape == theirs.shape and ours.dtype == np.float32
        assert np.allclose(np.linalg.norm(ours, axis=1), 1, atol=1e-5)
        assert _cosines(ours, theirs).min() >= MIN_COSINE  # the 3,000-character text is cut at the same 256 tokens
    assert onnx_encoder.export_for(EmbeddingConfig()) == path  # once per machine
    assert loaded.embed([]).shape == (0, loaded.dim)


def test_a_texts_vector_does_not_depend_on_the_texts_embedded_with_it(exported, monkeypatch):
    """int8 activations are scaled per run, so each text runs alone: the same vector in any company and whichever
    worker runs it, rows in the order given (a re-sync then equals a sync from nothing)."""
    cache, path, _ = exported
    monkeypatch.setenv("MINERVA_MODEL_CACHE", str(cache))
    texts = ["a much longer text about rolling back a deployment " * 5, "short", "medium length text here", "tiny",
             *(f"runbook step {i}: check the kubelet on node {i}" for i in range(12))]
    alone = np.vstack([OnnxEmbedder(EmbeddingConfig(), path, workers=1).embed([t]) for t in texts])

    for workers in (1, 2, 3):
        together = OnnxEmbedder(EmbeddingConfig(batch_size=2), path, workers=workers).embed(texts)
        assert np.abs(together - alone).max() < 1e-6, workers
    assert np.abs(load_embedder(EmbeddingConfig()).embed(texts[::-1])[::-1] - alone).max() < 1e-6


@needs_shared
def test_an_int8_re_sync_of_one_changed_page_embeds_only_its_chunks_and_units(exported, monkeypatch, tmp_path):
    """Issue 24's target: a re-sync after one changed page embeds only that page's chunks and units (main model
    and cross-lingual alike, the two run side by side), and its generation equals a sync from nothing."""
    cache, _, _ = exported
    monkeypatch.setenv("MINERVA_MODEL_CACHE", str(cache))
    embedder = load_embedder(EmbeddingConfig())
    assert isinstance(embedder, OnnxEmbedder)
    pages = {"zoom.md": CORPUS / "tts-handbook/2025-02/tools/zoom.md",
             "figma.md": CORPUS / "tts-handbook/2025-02/tools/figma.md",
             "KubePodCrashLooping.md": CORPUS / "prometheus-runbooks/runbooks/kubernetes/KubePodCrashLooping.md"}
    src = copy_pages(tmp_path / "src", pages)
    settings = Settings(sources=[SourceConfig(name="docs", path=str(src))])
    kb = KnowledgeBase(settings, tmp_path / "home", embedder=embedder)
    first = kb.sync()
    xl_before = _cached(tmp_path / "home", "usem3")
    zoom = src / "zoom.md"
    zoom.write_text(zoom.read_text(encoding="utf-8") + "\n\nEvery zoom room host logs the quarterly fire drill in "
                    "the facilities tracker.\n", encoding="utf-8")

    report = kb.sync()

    index = kb.index()
    zoom_rows = [row for row, c in enumerate(index.chunks) if c["doc_id"] == "docs:zoom.md"]
    zoom_units = sum(len(index.units.of_row(row)[0]) for row in zoom_rows)
    assert report.changed == ["docs:zoom.md"] and 1 <= report.chunks_embedded <= len(zoom_rows)
    assert 1 <= report.units_embedded <= 2 * zoom_units < first.units_embedded  # a list item: alone, after its lead-in
    assert index.xl_vectors is not None  # the cross-lingual vectors: only the new chunks and units read again
    assert 1 <= _cached(tmp_path / "home", "usem3") - xl_before <= len(zoom_rows) + zoom_units
    fresh = KnowledgeBase(settings, tmp_path / "fresh", embedder=embedder)
    fresh.sync()
    rebuilt = fresh.index()
    order = {c["chunk_id"]: row for row, c in enumerate(rebuilt.chunks)}
    assert sorted(order) == sorted(c["chunk_id"] for c in index.chunks)
    for row, chunk in enumerate(index.chunks):
        other = order[chunk["chunk_id"]]
        assert np.abs(index.vectors[row] - rebuilt.vectors[other]).max() < 1e-6, chunk["chunk_id"]
        assert np.abs(index.units.of_row(row)[1] - rebuilt.units.of_row(other)[1]).max() < 1e-6, chunk["chunk_id"]
        assert np.abs(index.xl_vectors[row] - rebuilt.xl_vectors[other]).max() < 1e-6, chunk["chunk_id"]


def _cached(home, model: str) -> int:
    """Vectors of ``model`` in the home's embedding cache."""
    with sqlite3.connect(home / "embeddings.sqlite") as db:
        return db.execute("SELECT COUNT(*) FROM embeddings WHERE model = ?", [model]).fetchone()[0]


def test_minerva_onnx_0_runs_torch_even_with_an_export(exported, monkeypatch):
    cache, _, _ = exported
    monkeypatch.setenv("MINERVA_MODEL_CACHE", str(cache))
    monkeypatch.setenv("MINERVA_ONNX", "0")

    assert onnx_encoder.load(EmbeddingConfig()) is None and onnx_encoder.export_for(EmbeddingConfig()) is None
    assert isinstance(load_embedder(EmbeddingConfig()), SentenceTransformerEmbedder)


@needs_shared
def test_on_real_corpus_text_the_int8_vectors_stay_close_to_torchs(exported, monkeypatch):
    from knowledge.chunking import chunk_document, embedding_text
    from knowledge.parsing import parse_document
    from knowledge.sentences import embedding_inputs

    cache, _, torch_embedder = exported
    monkeypatch.setenv("MINERVA_MODEL_CACHE", str(cache))
    loaded = load_embedder(EmbeddingConfig())
    chunks = []
    for name in ("prometheus-runbooks/runbooks/kubernetes/KubePodCrashLooping.md",
                 "tts-handbook/2025-02/tools/zoom.md"):
        path = CORPUS / name
        parsed = parse_document(path.read_text(encoding="utf-8"), path.name)
        chunks += [(embedding_text(parsed.title, c.heading_path, c.text), c.text)
                   for c in chunk_document(parsed.title, parsed.body, ChunkingConfig())]
    units = [text for _, chunk in chunks for _, text in embedding_inputs(chunk)]
    for texts in ([t for t, _ in chunks], units):
        cosines = _cosines(loaded.embed(texts), torch_embedder.embed(texts))
        assert cosines.min() >= MIN_COSINE and cosines.mean() >= MIN_MEAN_COSINE


def test_a_cache_from_another_release_or_format_is_exported_again_not_read(exported, monkeypatch):
    cache, path, _ = exported
    monkeypatch.setenv("MINERVA_MODEL_CACHE", str(cache))
    cfg = EmbeddingConfig()
    assert onnx_encoder.exported_path(cfg) == path

    monkeypatch.setattr(onnx_encoder, "_package_version", lambda: "99.0")
    upgraded = onnx_encoder.exported_path(cfg)
    assert upgraded != path and onnx_encoder.load(cfg) is None  # the old release's file is not read
    monkeypatch.setattr(onnx_encoder, "EXPORT_FORMAT", "other1")
    assert onnx_encoder.exported_path(cfg) not in (path, upgraded)

    rebuilt = onnx_encoder.export_for(cfg)

    assert rebuilt == onnx_encoder.exported_path(cfg) and rebuilt.exists() and path.exists()
    assert isinstance(onnx_encoder.load(cfg), onnx_encoder.OnnxEmbedder)


def test_without_an_export_or_with_a_damaged_one_torch_answers(tmp_path, monkeypatch):
    monkeypatch.setenv("MINERVA_MODEL_CACHE", str(tmp_path))
    cfg = EmbeddingConfig()
    assert onnx_encoder.load(cfg) is None  # nothing exported yet

    path = onnx_encoder.exported_path(cfg)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a model")
    with structlog.testing.capture_logs() as logs:
        assert onnx_encoder.load(cfg) is None
    assert any(e["event"] == "onnx.load_failed" for e in logs)
    assert isinstance(load_embedder(cfg), SentenceTransformerEmbedder)


def test_a_model_of_another_layout_is_not_exported(tmp_path, monkeypatch):
    monkeypatch.setenv("MINERVA_MODEL_CACHE", str(tmp_path))
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "tokenizer.json").write_text("{}")

    assert onnx_encoder.exported_path(EmbeddingConfig(model=str(tmp_path / "model"))) is None  # no modules.json
    assert onnx_encoder.exported_path(EmbeddingConfig(model="sentence-transformers/some-hub-name")) is None
