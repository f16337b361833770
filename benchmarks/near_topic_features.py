"""Can one more evidence feature refuse near-topic questions? (issue 9: plausible questions no page answers.)

Usage:
    python benchmarks/near_topic_features.py --sample-home var --real-home var-real [--out FILE]

Homes as for ``benchmarks/fit_confidence.py`` (the sample knowledge base, and the real corpora ingested with
config/real-corpora.yaml). English dev questions only (kb-dev: 45 answerable + 5 no-answer; the sample set:
23 + 4), never a test set. For each candidate feature, added to the profile's evidence
(`config.settings.EVIDENCE_FEATURES`), the combination and its bands are fitted as `minerva calibrate` does
(`knowledge.calibration.fit_confidence`) and a question counts as answered when any of its 10 retrieved
passages scores >= 0.3 (what `knowledge.answering.compose_answer` does). Reported: answered / refused on
both sets with the fit on both, and each set with the fit on the other set only (out of sample).

Candidates (the ideas in issue 9's follow-up):

- ``unit_coverage``: IDF-weighted share of the question's words in the passage's best answer unit (its
  3 best units by cosine, with the passage's title and headings): "the specific words are not in the unit
  that answers, only generic ones match";
- ``missing_known``: IDF-weighted share of the question's words that the corpus uses somewhere but this
  passage does not ("Denver" is in the corpus, not in the per-diem FAQ);
- ``answer_type``: 1 unless the question asks for an amount, a duration or a date (how much/many/long,
  when, cost, per diem, …) and none of the passage's 2 best units states a number, a number word, a month
  or a weekday;
- ``unit_gap``: how far the best unit's cosine falls below the passage's cosine (>= 0); ``unit_excess``
  the other way round (one sentence looks like the question, its section does not); ``unit_delta`` signed.

Measured 2026-12-01 (benchmarks/results/near_topic_features.json): no candidate refuses dev-046 (Denver
per diem) or dev-050 (telework days on a compressed schedule): their best passages carry the evidence of
right answers. ``unit_gap`` refuses dev-049 (protobuf) in and out of sample but refuses the answerable
dev-010 instead; the runtime keeps the five features.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import regex

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import config.settings as config_settings  # noqa: E402
from _output import emit  # noqa: E402
from fit_confidence import dev_set_arguments  # noqa: E402
from config import load_settings  # noqa: E402
from knowledge import KnowledgeBase  # noqa: E402
from knowledge.calibration import CalibrationSample, fit_confidence, load_questions  # noqa: E402
from knowledge.scoring import evidence_score, lexical_coverage  # noqa: E402
from knowledge.tokenize import tokenize  # noqa: E402

SHARED = ROOT.parent / "shared"
BASE = ("cosine", "unit_cosine", "coverage", "bm25_share", "agreement")
CANDIDATES = ("unit_coverage", "missing_known", "answer_type", "unit_gap", "unit_excess", "unit_delta")
_ASKS_VALUE = regex.compile(r"\b(how (much|many|long|often|soon|far|old|big|large)|what time|what date|when|deadline|"
                            r"cost|price|fee|per diem|budget|salary|stipend|allowance|amount)\b", regex.I)
_LEAD = regex.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_VALUE = regex.compile(r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
                       r"thirty|forty|fifty|sixty|ninety|hundred|once|twice|half|daily|weekly|monthly|annually|"
                       r"yearly|january|february|march|april|may|june|july|august|september|october|november|"
                       r"december|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", regex.I)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    dev_set_arguments(parser)
    args = parser.parse_args()

    sample = KnowledgeBase(load_settings(args.config_sample), Path(args.sample_home))
    real = KnowledgeBase(load_settings(args.config_real), Path(args.real_home), embedder=sample.embedder)
    sets = {
        "sample": (sample, load_questions(ROOT / "knowledge" / "sample_kb_questions.jsonl"),
                   ROOT / "knowledge" / "sample_kb"),
        "kb-dev": (real, load_questions(Path(args.kb_dev) / "questions.jsonl"), SHARED / "corpus"),
    }
    rows = {name: _questions(kb, qs, root) for name, (kb, qs, root) in sets.items()}
    # the candidates are not runtime features: let CalibrationConfig accept them for this measurement only
    config_settings.EVIDENCE_FEATURES = BASE + CANDIDATES
    report = {"command": "python benchmarks/near_topic_features.py " + " ".join(sys.argv[1:]), "features": {}}
    for extra in ((),) + tuple((c,) for c in CANDIDATES):
        entry = {}
        both = fit_confidence([s for _, s in rows["sample"] + rows["kb-dev"]], "candidate", features=BASE + extra)
        entry["weights"] = both.weights
        for name in sets:
            other = "kb-dev" if name == "sample" else "sample"
            entry[name] = {"fitted_on_both": _measure(rows[name], both),
                           f"fitted_on_{other}_only": _measure(rows[name], fit_confidence(
                               [s for _, s in rows[other]], "candidate", features=BASE + extra))}
        report["features"]["+".join(extra) or "base"] = entry
    emit(report, args.out)


def _questions(kb: KnowledgeBase, questions: list[dict], root: Path) -> list[tuple[str, CalibrationSample]]:
    """(id, sample) per English question: every retrieved passage's evidence plus the candidate features."""
    index = kb.index()
    retriever = kb._retriever()
    vocabulary = index.bm25.vocab_dict
    root = root.resolve()

    def path(doc_id: str) -> str:
        try:
            return Path(index.documents[doc_id]["path"]).resolve().relative_to(root).as_posix()
        except ValueError:
            return index.documents[doc_id]["path"]

    out = []
    for q in questions:
        if q.get("lang", "en") != "en":
            continue
        gold = set(q.get("gold") or [])
        weights = retriever.term_weights(tokenize(q["question"]))
        total = sum(weights.values()) or 1.0
        passages = []
        for p in kb.search([q["question"]], top_k=10)[0]:
            context = set(tokenize(" ".join((p.title, *p.heading_path))))
            best_units = sorted(p.unit_scores, key=lambda u: -u[2])
            own = context | set(tokenize(p.text))
            evidence = dict(p.evidence)
            evidence["unit_coverage"] = max(
                (lexical_coverage(set(weights), context | set(tokenize(p.text[a:b])), weights.get)
                 for a, b, _ in best_units[:3]), default=evidence["coverage"])
            evidence["missing_known"] = sum(w for t, w in weights.items() if t in vocabulary and t not in own) / total
            evidence["answer_type"] = 1.0 if not _ASKS_VALUE.search(q["question"]) or any(
                _VALUE.search(_LEAD.sub("", p.text[a:b])) for a, b, _ in best_units[:2]) else 0.0
            best_unit = max((u[2] for u in best_units), default=p.evidence["cosine"])
            evidence["unit_gap"] = max(0.0, p.evidence["cosine"] - best_unit)
            evidence["unit_excess"] = max(0.0, best_unit - p.evidence["cosine"])
            evidence["unit_delta"] = p.evidence["cosine"] - best_unit
            passages.append((evidence, path(p.doc_id) in gold))
        out.append((q.get("id", ""), CalibrationSample(0.0, bool(q.get("answerable", True)), False, "en", passages)))
    return out


def _measure(rows: list[tuple[str, CalibrationSample]], calibration) -> dict:
    ids, samples = [i for i, _ in rows], [s for _, s in rows]
    best = [max((evidence_score(ev, calibration) for ev, _ in s.passages), default=0.0) for s in samples]
    answerable = [b for b, s in zip(best, samples) if s.answerable]
    no_answer = [b for b, s in zip(best, samples) if not s.answerable]
    return {"answered": f"{sum(b >= 0.3 for b in answerable)}/{len(answerable)}",
            "refused_no_answer": f"{sum(b < 0.3 for b in no_answer)}/{len(no_answer)}",
            "wrong": [i for i, b, s in zip(ids, best, samples) if (b >= 0.3) != s.answerable]}


if __name__ == "__main__":
    main()
