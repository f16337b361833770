"""Fit the answer confidence of an embedding profile on the dev questions, and measure the answers (issue 9).

Usage:
    python benchmarks/fit_confidence.py --sample-home var --real-home var-real \
        [--config-sample config/minerva.yaml] [--config-real config/real-corpora.yaml] [--out FILE] [--answers FILE]

Both homes must be ingested with the same embedding model (``minerva ingest`` and ``minerva --config
config/real-corpora.yaml --home var-real ingest``). The fit uses kb-dev (../shared/eval/kb-dev, questions
about the real corpora) and the sample knowledge base's set together (`knowledge.calibration.fit_confidence`),
on the question languages the model reads; the entry it prints belongs in `config/calibrations.py`.

It then reports, with the fitted calibration: recall@5 per language, answerable answered, no-answer refused,
direct-answer length, and each set measured with weights fitted on the *other* set only (an out-of-sample
check: the in-sample figures are optimistic). ``--answers`` writes every direct answer beside the question's
answer hint, for reading by hand.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _output import emit  # noqa: E402
from config import load_settings  # noqa: E402
from knowledge import KnowledgeBase  # noqa: E402
from knowledge.calibration import fit_confidence, load_questions  # noqa: E402
from knowledge.embedding_profiles import dense_languages  # noqa: E402
from knowledge.kbeval import calibration_samples, evaluate, summarize  # noqa: E402

SHARED = ROOT.parent / "shared"
#: Questions written for this check, never fitted on (benchmarks/data/README.md).
NEAR_TOPIC = ROOT / "benchmarks" / "data" / "near_topic_dev.jsonl"


def dev_set_arguments(parser: argparse.ArgumentParser) -> None:
    """The two dev sets' homes and configs, kb-dev's folder and --out (shared with near_topic_features.py)."""
    parser.add_argument("--sample-home", default="var")
    parser.add_argument("--real-home", default="var-real")
    parser.add_argument("--config-sample", default=None)
    parser.add_argument("--config-real", default=str(ROOT / "config" / "real-corpora.yaml"))
    parser.add_argument("--kb-dev", default=str(SHARED / "eval" / "kb-dev"))
    parser.add_argument("--out", default=None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    dev_set_arguments(parser)
    parser.add_argument("--answers", default=None, help="write question, hint and direct answer per line (JSONL)")
    args = parser.parse_args()

    sets = {
        "sample": (KnowledgeBase(load_settings(args.config_sample), Path(args.sample_home)),
                   load_questions(ROOT / "knowledge" / "sample_kb_questions.jsonl"), ROOT / "knowledge" / "sample_kb"),
        "kb-dev": (KnowledgeBase(load_settings(args.config_real), Path(args.real_home)),
                   load_questions(Path(args.kb_dev) / "questions.jsonl"), SHARED / "corpus"),
    }
    validation = {"near-topic": (sets["kb-dev"][0], load_questions(NEAR_TOPIC), SHARED / "corpus")}
    first_kb = sets["sample"][0]
    sets["kb-dev"][0]._embedder = first_kb.embedder  # one model in memory
    model = first_kb.settings.embedding.model
    readable = dense_languages(model, first_kb.settings.embedding.languages)

    def samples(results):
        return calibration_samples(results, set(readable) if readable else None)

    first = {name: evaluate(kb, qs, root) for name, (kb, qs, root) in sets.items()}
    fitted = fit_confidence(samples(first["sample"]) + samples(first["kb-dev"]), model)
    only = {name: fit_confidence(samples(first[name]), model) for name in sets}
    report = {"model": model, "fitted": dataclasses.asdict(fitted), "sets": {}}
    lines = []
    for name, (kb, qs, root) in sets.items():
        other = "kb-dev" if name == "sample" else "sample"
        entry = {}
        for label, calibration in (("fitted_on_both", fitted), (f"fitted_on_{other}_only", only[other])):
            kb.settings.answer = dataclasses.replace(kb.settings.answer, calibration=calibration)
            results = evaluate(kb, qs, root)
            entry[label] = _summary(results, qs, name, lines if label == "fitted_on_both" else None)
        report["sets"][name] = entry
    for name, (kb, qs, root) in validation.items():  # never fitted on: a check of the fit
        kb.settings.answer = dataclasses.replace(kb.settings.answer, calibration=fitted)
        report["sets"][name] = {"fitted_on_both": _summary(evaluate(kb, qs, root), qs, name, lines)}
    if args.answers:
        Path(args.answers).write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", encoding="utf-8")
    emit(report, args.out)


def _summary(results, questions: list[dict], set_name: str, lines: list | None) -> dict:
    """`summarize` plus direct-answer length and how often the first citation is on a gold page; each
    question's answer appended to ``lines`` (for --answers) unless None."""
    summary = summarize(results)
    lengths = [len(r.direct_answer) for r in results if not r.refused]
    summary["direct_answer_chars"] = {"median": float(np.median(lengths)) if lengths else None,
                                      "max": max(lengths, default=0)}
    by_id = {q.get("id"): q for q in questions}
    led = [r.cited[0] in set(by_id[r.id].get("gold") or []) for r in results
           if r.answerable and not r.refused and r.cited]
    summary["first_citation_gold"] = round(float(np.mean(led)), 4) if led else None
    for r in results if lines is not None else ():
        q = by_id.get(r.id, {})
        lines.append({"set": set_name, "id": r.id, "lang": r.lang, "answerable": r.answerable, "refused": r.refused,
                      "top_score": round(r.top_score, 3), "question": q.get("question"), "hint": q.get("answer_hint"),
                      "direct_answer": r.direct_answer, "cited": r.cited})
    return summary


if __name__ == "__main__":
    main()
