"""Benchmark for issue 3: near-duplicate gate cost per new chunk with 10k and 100k existing chunks.

Usage:
    python benchmarks/dedup_gate.py [--sizes 10000 100000] [--new 1000]

Synthetic unit vectors (384 dims, MiniLM's size) stand in for chunk embeddings; the existing index is
built like a live generation (hnswlib cosine, M=16, ef_construction=200). Half the new chunks are
near-copies of existing ones, so both the "duplicate" and the "new" paths are timed. Prints JSON.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import hnswlib
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _output import emit  # noqa: E402
from knowledge.gate import DuplicateGate  # noqa: E402

DIM = 384


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def run(existing: int, new: int, rng: np.random.Generator) -> dict:
    vectors = unit(rng.standard_normal((existing, DIM)))
    t0 = time.perf_counter()
    index = hnswlib.Index(space="cosine", dim=DIM)
    index.init_index(max_elements=existing, M=16, ef_construction=200)
    index.add_items(vectors, np.arange(existing))
    index.set_ef(100)
    build_s = time.perf_counter() - t0
    owners = [(f"c{i}", f"d{i // 10}", "") for i in range(existing)]
    copies = vectors[rng.integers(0, existing, new // 2)] + 0.012 * rng.standard_normal((new // 2, DIM)).astype(np.float32)
    fresh = unit(np.vstack([copies, rng.standard_normal((new - new // 2, DIM))]))
    gate = DuplicateGate(index, owners, DIM, capacity=new)
    t0 = time.perf_counter()
    kinds = []
    for start in range(0, new, 10):  # documents of 10 chunks, checked then admitted, as in a sync
        decisions = gate.check(fresh[start:start + 10], f"new{start}", "")
        kinds.extend(d.kind for d in decisions)
        gate.admit(fresh[start:start + 10], [(f"n{start + i}", f"new{start}", "") for i in range(10)])
    per_chunk_ms = (time.perf_counter() - t0) / new * 1000
    return {"existing_chunks": existing, "new_chunks": new, "index_build_s": round(build_s, 2),
            "gate_ms_per_new_chunk": round(per_chunk_ms, 3),
            "duplicates": kinds.count("duplicate"), "partials": kinds.count("partial"), "new": kinds.count("new")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--new", type=int, default=1000)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    results = [run(n, args.new, rng) for n in args.sizes]
    emit(results, args.out)


if __name__ == "__main__":
    main()
