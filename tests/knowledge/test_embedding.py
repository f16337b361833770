"""EmbeddingCache: vectors are keyed by (model, content hash), so a text is embedded once."""

from __future__ import annotations

import hashlib

import numpy as np

from knowledge.embedding import EmbeddingCache


class CountingEmbedder:
    """The real MiniLM embedder, counting the texts it is asked to embed."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.texts: list[str] = []

    def embed(self, texts, *, kind="passage"):
        self.texts.extend(texts)
        return self.inner.embed(texts, kind=kind)


def _h(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_same_text_is_embedded_once_across_calls(tmp_path, embedder):
    counting = CountingEmbedder(embedder)
    cache = EmbeddingCache(tmp_path / "embeddings.sqlite")
    a, b, c = "Rotate API keys every 90 days.", "Disk full on a worker node.", "Webhooks retry five times."

    first, n_first = cache.embed(counting, [_h(a), _h(b), _h(a)], [a, b, a])
    second, n_second = cache.embed(counting, [_h(b), _h(c)], [b, c])

    assert (n_first, n_second) == (2, 1)
    assert counting.texts == [b, a, c]  # each text once; within a call the shortest first (less padding)
    assert first.shape == (3, embedder.dim) and first.dtype == np.float32
    np.testing.assert_array_equal(first[0], first[2])
    np.testing.assert_array_equal(first[1], second[0])  # b came from the cache, bit for bit
    np.testing.assert_allclose(np.linalg.norm(second, axis=1), 1.0, rtol=1e-5)
    cache.close()


def test_cache_survives_reopening_and_is_per_model(tmp_path, embedder):
    text = "Escalate to the secondary on-call after 10 minutes."
    cache = EmbeddingCache(tmp_path / "embeddings.sqlite")
    cache.embed(embedder, [_h(text)], [text])
    cache.close()

    reopened = EmbeddingCache(tmp_path / "embeddings.sqlite")
    counting = CountingEmbedder(embedder)
    _, n_same_model = reopened.embed(counting, [_h(text)], [text])
    counting.name = "another-model"
    _, n_other_model = reopened.embed(counting, [_h(text)], [text])

    assert (n_same_model, n_other_model) == (0, 1)
    assert counting.texts == [text]
    reopened.close()


def test_empty_input_embeds_nothing(tmp_path, embedder):
    cache = EmbeddingCache(tmp_path / "embeddings.sqlite")

    vectors, n = cache.embed(embedder, [], [])

    assert n == 0 and vectors.shape == (0, embedder.dim)
    cache.close()


class _Counting:
    """A tiny embedder of our own: a text's vector is its length in one of 4 dimensions (no model needed)."""

    def __init__(self, name: str):
        self.name, self.dim = name, 4

    def embed(self, texts: list[str], *, kind: str = "passage") -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        out[np.arange(len(texts)), [len(t) % 4 for t in texts]] = 1.0
        return out


def test_two_threads_write_one_cache_file_through_their_own_connections(tmp_path):
    """A sync writes the main model's vectors and the cross-lingual ones from two threads at once
    (`knowledge.sync.warm_crosslingual`): neither may meet "database is locked"."""
    from concurrent.futures import ThreadPoolExecutor

    path = tmp_path / "embeddings.sqlite"

    def fill(model: str) -> int:
        cache = EmbeddingCache(path)
        try:
            texts = [f"{model} text {i}" for i in range(3000)]
            return cache.embed(_Counting(model), [hashlib.sha256(t.encode()).hexdigest() for t in texts], texts,
                               batch=8)[1]
        finally:
            cache.close()

    with ThreadPoolExecutor(max_workers=4) as pool:
        embedded = list(pool.map(fill, ["a", "b", "c", "d"]))

    assert embedded == [3000] * 4
