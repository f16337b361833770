"""Evaluate our retrieval on any BEIR-layout folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv).

The corpus is indexed with the production code (`knowledge.index.write_generation`, one chunk per BEIR
document, text = title + " " + text as in BEIR/MTEB) in a cached MINERVA_HOME under ``cache_dir``, and
searched with `knowledge.retrieval.Retriever`, so the figures describe what the bot runs. Embeddings go
through the `EmbeddingCache` in ``cache_dir/embeddings.sqlite``: a re-run, or a subset of a corpus already
embedded, embeds nothing.

Usage::

    dataset = load_beir(Path("../shared/eval/scifact"), split="test")
    report = evaluate_beir(dataset, settings, cache_dir=Path("var/eval-cache"), mode="bm25")
    report.metrics["ndcg@10"]   # 0.6791 for SciFact with BM25 (notes/retrieval.md)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from config import Settings
from knowledge.embedding import Embedder, embed_cached, load_embedder
from knowledge.errors import DatasetInvalid, IndexIncompatible, IndexNotBuilt
from knowledge.index import LoadedIndex, load_generation, write_generation
from knowledge.language import detect_language
from knowledge.metrics import evaluate_run
from knowledge.retrieval import MODES, Retriever
from knowledge.tokenize import TOKENIZER_VERSION

#: A fixed timestamp for BEIR documents (they have none; retrieval needs one per document).
_EPOCH = "2000-01-01T00:00:00+00:00"
#: Queries per `Retriever.search` call (the per-call filter mask is amortised; the progress bar moves per batch).
QUERY_BATCH = 64


@dataclass
class BeirDataset:
    """A loaded BEIR folder.

    Attributes:
        name: folder name (e.g. "scifact").
        corpus: document id → (title, text), in file order.
        queries: query id → text (every query of queries.jsonl, judged or not).
        qrels: query id → {document id: relevance} for the chosen split.
        split: qrels file stem ("test", "train", "test-sample1000", …).
    """

    name: str
    corpus: dict[str, tuple[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    split: str


@dataclass
class BeirReport:
    """What `evaluate_beir` measured.

    Attributes:
        metrics: "ndcg@10", "recall@10", "recall@100", "mrr@10" → mean over judged queries, in [0, 1].
        queries: judged queries evaluated.
        documents: corpus size searched.
        seconds: wall time of the searches (query embedding included, index build excluded).
        queries_per_second: queries / seconds.
        run: query id → ranked document ids (top ``top_k``).
    """

    dataset: str
    split: str
    mode: str
    model: str
    fusion: str
    metrics: dict[str, float]
    queries: int
    documents: int
    seconds: float
    queries_per_second: float
    run: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict:
        """The report without the run, rounded for printing (metrics 4 decimals)."""
        return {
            "dataset": self.dataset, "split": self.split, "mode": self.mode, "model": self.model,
            "fusion": self.fusion if self.mode == "hybrid" else None,
            **{k: round(v, 4) for k, v in self.metrics.items()},
            "queries": self.queries, "documents": self.documents, "seconds": round(self.seconds, 3),
            "queries_per_second": round(self.queries_per_second, 1),
        }


class NoEmbedder:
    """Stands in for a model in BM25-only evaluations: one constant 1-d vector, so no model is loaded."""

    name = "none"
    dim = 1

    def embed(self, texts: list[str], *, kind: str = "passage") -> np.ndarray:
        """A (len(texts), 1) array of ones."""
        return np.ones((len(texts), 1), dtype=np.float32)


def is_beir_folder(folder: Path) -> bool:
    """Whether ``folder`` looks like a BEIR dataset (has corpus.jsonl or queries.jsonl or qrels/)."""
    folder = Path(folder)
    return any((folder / name).exists() for name in ("corpus.jsonl", "queries.jsonl", "qrels"))


def load_beir(folder: Path, split: str = "test", *, name: str | None = None) -> BeirDataset:
    """Read a BEIR folder.

    Args:
        folder: holds ``corpus.jsonl`` ({"_id", "title", "text"} per line), ``queries.jsonl``
            ({"_id", "text"}) and ``qrels/{split}.tsv`` (query-id, corpus-id, score; a header row is allowed).
        split: the qrels file to evaluate.
        name: the dataset's name (default: the folder's name); it keys the cached index.

    Raises:
        DatasetInvalid: a file is missing (the message lists what is there), a line is not JSON or lacks a
            field, a qrels row is malformed or names an unknown query or document, or nothing is judged.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise DatasetInvalid(f"{folder} is not a folder")
    for required in ("corpus.jsonl", "queries.jsonl"):
        if not (folder / required).is_file():
            raise DatasetInvalid(f"{folder / required} not found: a BEIR folder holds corpus.jsonl, queries.jsonl "
                                 "and qrels/SPLIT.tsv")
    qrels_file = folder / "qrels" / f"{split}.tsv"
    if not qrels_file.is_file():
        available = sorted(p.stem for p in (folder / "qrels").glob("*.tsv")) if (folder / "qrels").is_dir() else []
        raise DatasetInvalid(f"{qrels_file} not found; splits in {folder / 'qrels'}: "
                             f"{', '.join(available) or 'none'}")
    corpus = {}
    for where, row in _jsonl(folder / "corpus.jsonl", required=("_id", "text")):
        if str(row["_id"]) in corpus:
            raise DatasetInvalid(f"{where}: duplicate document _id {row['_id']!r}")
        corpus[str(row["_id"])] = (str(row.get("title") or ""), str(row["text"]))
    if not corpus:
        raise DatasetInvalid(f"{folder / 'corpus.jsonl'} has no documents")
    queries = {str(row["_id"]): str(row["text"]) for _, row in _jsonl(folder / "queries.jsonl", required=("_id", "text"))}
    qrels = _read_qrels(qrels_file, queries, corpus)
    return BeirDataset(name or folder.resolve().name, corpus, queries, qrels, split)


def subset(dataset: BeirDataset, n_queries: int | None, *, distractors: int | None = None, seed: int = 13) -> BeirDataset:
    """A deterministic sample of the judged queries, optionally over a smaller corpus.

    Args:
        n_queries: judged queries to keep (``random.Random(seed).sample`` of the sorted ids); None = all.
        distractors: when given, the corpus keeps only the documents judged for the kept queries plus this
            many others (sampled with the same seed); None = the whole corpus.
        seed: sampling seed (13, as the shared datasets' sample files).
    """
    qids = sorted(dataset.qrels)
    rng = random.Random(seed)
    if n_queries is not None and n_queries < len(qids):
        qids = sorted(rng.sample(qids, n_queries))
    qrels = {q: dataset.qrels[q] for q in qids}
    corpus = dataset.corpus
    if distractors is not None:
        judged = {d for rel in qrels.values() for d in rel}
        others = sorted(set(corpus) - judged)
        keep = judged | set(rng.sample(others, min(distractors, len(others))))
        corpus = {d: v for d, v in corpus.items() if d in keep}
    return dataclasses.replace(dataset, corpus=corpus, qrels=qrels)


def build_index(
    dataset: BeirDataset,
    embedder: Embedder,
    settings: Settings,
    cache_dir: Path,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> LoadedIndex:
    """The index of ``dataset.corpus`` for ``embedder``, built once and reused from ``cache_dir``.

    The index lives in ``cache_dir/index-{name}-{corpus digest}-{model}``; it is rebuilt when the corpus,
    the model, the tokenizer version or the BM25/HNSW parameters differ from what its manifest records.

    Args:
        progress: called as ``progress(embedded_so_far, to_embed)`` while embedding.
    """
    cache_dir = Path(cache_dir)
    digest = _corpus_digest(dataset.corpus)
    home = cache_dir / f"index-{dataset.name}-{digest[:12]}-{_safe(embedder.name)}"
    wanted = {"corpus_sha256": digest, "tokenizer": TOKENIZER_VERSION}
    cfg = settings.retrieval
    try:
        index = load_generation(home, model=embedder.name, ef=cfg.hnsw_ef)
        m = index.manifest
        if (m.get("beir") == wanted and m["bm25"]["k1"] == cfg.bm25_k1 and m["bm25"]["b"] == cfg.bm25_b
                and m["hnsw"] == {"M": cfg.hnsw_m, "ef_construction": cfg.hnsw_ef_construction}):
            return index
    except (IndexNotBuilt, IndexIncompatible):
        pass
    documents, chunks = _records(dataset.corpus)
    texts = [c["embedding_text"] for c in chunks]
    if isinstance(embedder, NoEmbedder):
        vectors = embedder.embed(texts)
    else:
        vectors, _ = embed_cached(cache_dir / "embeddings.sqlite", embedder, [c["content_hash"] for c in chunks],
                                  texts, progress)
    write_generation(home, model=embedder.name, dim=embedder.dim, documents=documents, chunks=chunks,
                     vectors=vectors, retrieval=cfg, extra_manifest={"beir": wanted})
    return load_generation(home, model=embedder.name, ef=cfg.hnsw_ef)


def run_queries(
    index: LoadedIndex,
    embedder: Embedder,
    settings: Settings,
    queries: dict[str, str],
    *,
    mode: str = "hybrid",
    top_k: int = 100,
    progress: Callable[[int], None] | None = None,
) -> tuple[dict[str, list[str]], float]:
    """Search every query with `Retriever`; return (query id → ranked document ids, seconds spent).

    Each side of a hybrid search keeps at least ``top_k`` candidates (``retrieval.candidates`` is raised
    to ``top_k`` when smaller), so recall@100 is measured on a full list.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    retrieval = dataclasses.replace(settings.retrieval, candidates=max(settings.retrieval.candidates, top_k))
    retriever = Retriever(index, embedder, dataclasses.replace(settings, retrieval=retrieval))
    ids, texts = list(queries), list(queries.values())
    run: dict[str, list[str]] = {}
    seconds = 0.0
    for start in range(0, len(ids), QUERY_BATCH):
        batch = texts[start:start + QUERY_BATCH]
        started = time.perf_counter()
        results = retriever.search(batch, top_k=top_k, mode=mode)
        seconds += time.perf_counter() - started
        for qid, passages in zip(ids[start:start + QUERY_BATCH], results):
            run[qid] = list(dict.fromkeys(p.doc_id for p in passages))
        if progress:
            progress(len(batch))
    return run, seconds


def evaluate_beir(
    dataset: BeirDataset,
    settings: Settings,
    cache_dir: Path,
    *,
    mode: str = "hybrid",
    embedder: Embedder | None = None,
    top_k: int = 100,
    embed_progress: Callable[[int, int], None] | None = None,
    query_progress: Callable[[int], None] | None = None,
) -> BeirReport:
    """Index (or reuse) the corpus, search every judged query, and score the run.

    Args:
        dataset: from `load_beir` (optionally `subset`).
        settings: retrieval settings (fusion, rrf_k, dense_weight, BM25 and HNSW parameters) and the
            embedding model used when ``embedder`` is None.
        cache_dir: where indexes and the embedding cache are kept between runs.
        mode: "bm25" (no model is loaded), "dense" or "hybrid".
        embedder: an already loaded model; None loads ``settings.embedding`` (except in bm25 mode).
        top_k: ranked documents kept per query (>= 100 for recall@100).

    Raises:
        ValueError: unknown mode.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if mode == "bm25":
        embedder = NoEmbedder()
    elif embedder is None:
        embedder = load_embedder(settings.embedding)
    index = build_index(dataset, embedder, settings, cache_dir, progress=embed_progress)
    queries = {q: dataset.queries[q] for q in dataset.qrels}
    run, seconds = run_queries(index, embedder, settings, queries, mode=mode, top_k=top_k, progress=query_progress)
    return BeirReport(
        dataset=dataset.name, split=dataset.split, mode=mode, model=embedder.name if mode != "bm25" else "-",
        fusion=settings.retrieval.fusion, metrics=evaluate_run(run, dataset.qrels), queries=len(queries),
        documents=len(dataset.corpus), seconds=seconds, queries_per_second=len(queries) / seconds if seconds else 0.0,
        run=run,
    )


class QueryVectorCache:
    """An embedder that embeds a fixed set of queries once up front and then serves them from memory.

    Used where the same queries are searched many times (fitting the fusion weight, timing retrieval
    alone); passages and unknown queries go to the wrapped model.
    """

    def __init__(self, embedder: Embedder, queries: list[str]):
        self.inner = embedder
        self.name = embedder.name
        self.dim = embedder.dim
        unique = list(dict.fromkeys(queries))
        self._vectors = dict(zip(unique, embedder.embed(unique, kind="query"))) if unique else {}

    def embed(self, texts: list[str], *, kind: str = "passage") -> np.ndarray:
        """Cached vectors for known queries; anything else is embedded by the wrapped model."""
        if kind != "query" or any(t not in self._vectors for t in texts):
            return self.inner.embed(texts, kind=kind)
        return np.stack([self._vectors[t] for t in texts]) if texts else np.zeros((0, self.dim), dtype=np.float32)


#: Dense weights tried by `fit_dense_weight`: 0, 0.05, …, 1.
DENSE_WEIGHTS = tuple(round(w, 2) for w in np.linspace(0.0, 1.0, 21))


def fit_dense_weight(
    dataset: BeirDataset,
    settings: Settings,
    cache_dir: Path,
    *,
    embedder: Embedder | None = None,
    weights: tuple[float, ...] = DENSE_WEIGHTS,
    top_k: int = 100,
    progress: Callable[[int], None] | None = None,
) -> dict:
    """Grid-search the dense weight w of the convex combination on ``dataset`` (use a train split).

    The literature finds a tuned convex combination of normalised scores beats RRF (Bruch, Gai & Ingber,
    "An Analysis of Fusion Functions for Hybrid Retrieval", TOIS 2023); the weight must be fitted on
    queries that are not evaluated afterwards.

    Returns:
        {"split", "queries", "rrf": nDCG@10 of RRF (settings.retrieval.rrf_k), "convex": {w: nDCG@10},
        "best_weight": the w with the highest nDCG@10 (the smallest w on ties), "best_ndcg@10"}.
    """
    embedder = embedder or load_embedder(settings.embedding)
    index = build_index(dataset, embedder, settings, cache_dir)
    queries = {q: dataset.queries[q] for q in dataset.qrels}
    cached = QueryVectorCache(embedder, list(queries.values()))

    def ndcg(fusion: str, w: float) -> float:
        retrieval = dataclasses.replace(settings.retrieval, fusion=fusion, dense_weight=w)
        run, _ = run_queries(index, cached, dataclasses.replace(settings, retrieval=retrieval), queries,
                             mode="hybrid", top_k=top_k)
        if progress:
            progress(1)
        return evaluate_run(run, dataset.qrels)["ndcg@10"]

    convex = {w: ndcg("convex", w) for w in weights}
    best = max(convex, key=lambda w: (convex[w], -w))
    return {"split": dataset.split, "queries": len(queries), "rrf": ndcg("rrf", settings.retrieval.dense_weight),
            "convex": convex, "best_weight": best, "best_ndcg@10": convex[best]}


def convert_with_script(folder: Path, out: Path, *, sample: int | None = 1000) -> Path:
    """Run a dataset folder's own ``to_beir.py`` converter (e.g. KorQuAD's) into ``out``; return ``out``.

    Used for datasets whose licence allows only the original file to be stored (KorQuAD: CC BY-ND), so the
    BEIR files are produced at run time, in a scratch folder, and never kept.

    Raises:
        DatasetInvalid: there is no converter, or it failed (its error output is included).
    """
    script = Path(folder) / "to_beir.py"
    if not script.is_file():
        raise DatasetInvalid(f"{folder} has no to_beir.py converter")
    args = [sys.executable, str(script), str(out)] + (["--sample", str(sample)] if sample else [])
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise DatasetInvalid(f"{script} failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    return Path(out)


def _jsonl(path: Path, required: tuple[str, ...]):
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetInvalid(f"{where}: not valid JSON ({exc.msg})") from exc
            if not isinstance(row, dict):
                raise DatasetInvalid(f"{where}: expected a JSON object, got {type(row).__name__}")
            missing = [k for k in required if k not in row]
            if missing:
                raise DatasetInvalid(f"{where}: missing field {missing[0]!r} (needs {', '.join(required)})")
            yield where, row


def _read_qrels(path: Path, queries: dict, corpus: dict) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            cols = line.rstrip("\n").split("\t")
            where = f"{path}:{number}"
            if len(cols) != 3:
                raise DatasetInvalid(f"{where}: expected 3 tab-separated columns (query-id, corpus-id, score), "
                                     f"got {len(cols)}")
            qid, did, score = cols
            if number == 1 and not _is_int(score):  # the BEIR header: query-id corpus-id score
                continue
            if not _is_int(score):
                raise DatasetInvalid(f"{where}: score {score!r} is not an integer")
            if qid not in queries:
                raise DatasetInvalid(f"{where}: query id {qid!r} is not in queries.jsonl")
            if did not in corpus:
                raise DatasetInvalid(f"{where}: corpus id {did!r} is not in corpus.jsonl")
            qrels.setdefault(qid, {})[did] = int(score)
    if not any(r > 0 for rel in qrels.values() for r in rel.values()):
        raise DatasetInvalid(f"{path}: no relevant (score > 0) judgement")
    return qrels


def _records(corpus: dict[str, tuple[str, str]]) -> tuple[dict[str, dict], list[dict]]:
    """One document record and one chunk per BEIR document, in the shape `knowledge.sync` writes."""
    documents, chunks = {}, []
    for doc_id, (title, text) in corpus.items():
        body = f"{title} {text}".strip()
        documents[doc_id] = {
            "doc_id": doc_id, "collection": "beir", "rel_path": doc_id, "path": "", "title": title or doc_id,
            "url": "", "owner": "", "last_modified": _EPOCH, "indexed_at": _EPOCH, "expires_at": None,
            "visibility": "public", "stage": "active", "language": detect_language(body), "n_chunks": 1,
        }
        chunks.append({
            "chunk_id": f"{doc_id}#0", "doc_id": doc_id, "index": 0, "heading_path": [], "text": text,
            "embedding_text": body, "content_hash": hashlib.sha256(body.encode("utf-8")).hexdigest(),
        })
    return documents, chunks


def _corpus_digest(corpus: dict[str, tuple[str, str]]) -> str:
    h = hashlib.sha256()
    for doc_id, (title, text) in corpus.items():
        h.update(json.dumps([doc_id, title, text], ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[-60:]


def _is_int(value: str) -> bool:
    try:
        int(value)
    except ValueError:
        return False
    return True
