"""Benchmark for issue 3: `minerva dedup --self` time on an existing index (hnswlib k-NN, no n×n matrix).

Usage:
    python benchmarks/self_dedup.py HOME [HOME ...] [--threshold 0.95] [--repeat 3] [--exact]

For each MINERVA_HOME, loads the live generation and times `find_self_duplicates` (median of ``--repeat``
runs, index loading excluded). ``--exact`` also counts the pairs a full n×n cosine matrix finds, to report
the k-NN search's recall. Prints one JSON object per home.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from knowledge.dedup import find_self_duplicates  # noqa: E402
from knowledge.index import load_generation  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("homes", nargs="+")
    parser.add_argument("--threshold", type=float, default=0.95)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--exact", action="store_true", help="also count pairs with a full n×n matrix")
    args = parser.parse_args()
    for home in args.homes:
        index = load_generation(Path(home))
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            pairs = find_self_duplicates(index, args.threshold)
            times.append(time.perf_counter() - started)
        out = {"home": home, "chunks": len(index.chunks), "documents": len(index.documents), "pairs": len(pairs),
               "median_s": round(statistics.median(times), 3)}
        if args.exact:
            out["exact_pairs"] = _exact_pairs(index, args.threshold)
        print(json.dumps(out))


def _exact_pairs(index, threshold: float) -> int:
    import numpy as np

    docs = np.array([c["doc_id"] for c in index.chunks])
    active = np.array([index.documents[d].get("stage", "active") == "active" for d in docs])
    sims = index.vectors @ index.vectors.T
    upper = np.triu(np.ones_like(sims, dtype=bool), 1)
    keep = upper & (sims >= threshold) & (docs[:, None] != docs[None, :]) & active[:, None] & active[None, :]
    return int(keep.sum())


if __name__ == "__main__":
    main()
