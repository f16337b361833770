"""The dense model run by onnxruntime (knowledge/onnx_encoder.py): the same vectors as torch, a fallback that
never stops a question."""

from __future__ import annotations

import numpy as np
import structlog.testing

from config import EmbeddingConfig
from knowledge import onnx_encoder
from knowledge.embedding import SentenceTransformerEmbedder, load_embedder

TEXTS = ["How do I roll back a deployment?", "KubeletDown: monitoring cannot reach any kubelet for 15 minutes.",
         "연차는 언제까지 사용해야 하나요?", "出張の精算はいつまでに申請しますか？", "x" * 3000]


def test_an_exported_model_gives_the_vectors_torch_gives(tmp_path, monkeypatch):
    monkeypatch.setenv("MINERVA_MODEL_CACHE", str(tmp_path))
    cfg = EmbeddingConfig()
    embedder = SentenceTransformerEmbedder(cfg)

    path = onnx_encoder.export_for(cfg)

    assert path is not None and path.parent == tmp_path and path.exists()
    assert not list(tmp_path.glob("*.part"))  # written under a temporary name, then renamed
    loaded = load_embedder(cfg)
    assert isinstance(loaded, onnx_encoder.OnnxEmbedder) and loaded.name == embedder.name and loaded.dim == embedder.dim
    for kind in ("query", "passage"):
        ours, theirs = loaded.embed(TEXTS, kind=kind), embedder.embed(TEXTS, kind=kind)
        assert ours.shape == theirs.shape and ours.dtype == np.float32
        assert np.abs(ours - theirs).max() < 1e-4  # the 3,000-character text is cut at the same 256 tokens
    assert onnx_encoder.export_for(cfg) == path  # once per machine


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
