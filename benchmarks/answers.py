"""What a reader sees first, measured on questions with machine-checkable keys (issue 22).

Usage:
    python benchmarks/answers.py [--real-home var-real] [--sample-home var] [--out answers.jsonl] [--report FILE]

Asks kb-dev-v2 (../shared/eval/kb-dev-v2: 111 questions on the real corpora, each with ``must_contain`` keys)
with the configuration a user gets (config/real-corpora.yaml) and reports, per part of its one split by page
(`knowledge.kbeval.split_by_page`: the reader is fitted on ``fitting`` only; ``validation`` is the figure to
quote) and per language:

- ``direct_holds``: answerable questions whose direct answer holds the fact (every ``must_contain`` group);
- ``early_holds``: … whose first 200 characters as Slack shows them (a link is its label;
  `knowledge.reader_fit.GLANCE_CHARS`, what a reader takes in at a glance) already hold it;
- ``reply_holds``: answerable questions whose whole reply (direct answer, quotes) holds it;
- ``answered``: answerable questions not refused; ``refused_no_answer``: near-topic questions refused;
- calibration: per confidence label (high / low), how many replies there are and the share whose direct
  answer holds the fact (a reply to a no-answer question is never right), and the expected calibration
  error (ECE, 10 equal-width bins) of ``Answer.confidence`` as the probability of "right".

The old kb-dev (no keys) and the sample set are a second check through a proxy: of the answered questions
whose hint names a value (a number, a `code` span, an identifier), how many direct answers state one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from tqdm import tqdm

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _output import emit  # noqa: E402
from config import load_settings  # noqa: E402
from knowledge import KnowledgeBase  # noqa: E402
from knowledge.calibration import load_questions  # noqa: E402
from knowledge.kbeval import as_seen, hint_values, holds_fact, split_by_page  # noqa: E402
from knowledge.reader_fit import GLANCE_CHARS  # noqa: E402
from fit_reader import keyed_questions  # noqa: E402

SHARED = ROOT.parent / "shared"
V2 = SHARED / "eval" / "kb-dev-v2" / "questions.jsonl"
def states_any(values: set[str], text: str) -> bool:
    """Whether ``text`` holds one of ``values`` as a whole token."""
    text = text.lower()
    return any(re.search(r"(?<![\w])" + re.escape(v) + r"(?![\d])", text) for v in values)


def keyed_line(q: dict, answer) -> dict:
    """One question's outcome on a keyed set: what was shown and whether it holds the fact."""
    key = q.get("must_contain") or []
    reply = "\n".join([answer.direct_answer, *answer.quotes])
    return {"id": q["id"], "lang": q["lang"], "kind": q.get("kind"), "answerable": q["answerable"],
            "question": q["question"], "hint": q.get("answer_hint", ""), "refused": answer.refused,
            "confidence": round(getattr(answer, "confidence", 0.0), 3), "label": confidence_label(answer),
            "direct_holds": q["answerable"] and not answer.refused and holds_fact(answer.direct_answer, key),
            "early_holds": q["answerable"] and not answer.refused and holds_fact(as_seen(answer.direct_answer)[:GLANCE_CHARS], key),
            "reply_holds": q["answerable"] and not answer.refused and holds_fact(reply, key),
            "direct_answer": answer.direct_answer, "quotes": answer.quotes,
            "cited": [c.doc_id for c in answer.citations], "gold": q.get("gold", [])}


def confidence_label(answer) -> str:
    """The label the asker sees: ``refused``, ``low``, ``high`` or ``none`` (an older Answer: not low is high)."""
    label = getattr(answer, "confidence_label", None)
    if label is None:
        return "refused" if answer.refused else ("low" if answer.low_confidence else "high")
    return label or "none"


def summary(lines: list[dict]) -> dict:
    """The issue 22 figures of ``lines`` (`keyed_line`)."""
    answerable = [x for x in lines if x["answerable"]]
    no_answer = [x for x in lines if not x["answerable"]]
    out = {"questions": len(lines), "answerable": len(answerable), "no_answer": len(no_answer),
           "direct_holds": _share([x["direct_holds"] for x in answerable]),
           "early_holds": _share([x["early_holds"] for x in answerable]),
           "reply_holds": _share([x["reply_holds"] for x in answerable]),
           "answered": _share([not x["refused"] for x in answerable]),
           "refused_no_answer": _share([x["refused"] for x in no_answer])}
    shown = [x for x in lines if not x["refused"]]
    out["by_label"] = {label: {"replies": len(group), "right": _share([x["direct_holds"] for x in group])}
                       for label in ("high", "none", "low") for group in [[x for x in shown if x["label"] == label]]}
    out["ece"] = expected_calibration_error([x["confidence"] for x in shown], [x["direct_holds"] for x in shown])
    return out


def expected_calibration_error(confidence: list[float], right: list[bool], bins: int = 10) -> float | None:
    """ECE: the replies' weighted mean gap between confidence and the share right, over ``bins`` equal-width
    bins of confidence in [0, 1] (Guo et al. 2017, "On Calibration of Modern Neural Networks", §2)."""
    if not confidence:
        return None
    total = 0.0
    for b in range(bins):
        inside = [i for i, c in enumerate(confidence) if b / bins <= c < (b + 1) / bins or (b == bins - 1 and c == 1.0)]
        if inside:
            gap = abs(sum(confidence[i] for i in inside) / len(inside) - sum(right[i] for i in inside) / len(inside))
            total += gap * len(inside) / len(confidence)
    return round(total, 4)


def _share(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 3) if flags else None


def keyed_report(kb: KnowledgeBase, questions: list[dict]) -> tuple[dict, list[dict]]:
    """Every question asked once, the questions split as one set; figures per ``set`` (the questions' own
    field), per part of the split and per language."""
    fitting, validation = split_by_page(questions)
    part_of = {q["id"]: "fitting" for q in fitting} | {q["id"]: "validation" for q in validation}
    lines = []
    for q in tqdm(questions, desc="asking", unit="question", disable=None):
        line = {"set": q["set"]} | keyed_line(q, kb.ask(q["question"]))
        line["part"] = part_of[q["id"]]
        lines.append(line)
    report: dict[str, dict] = {}
    for name in dict.fromkeys(x["set"] for x in lines):
        for part in ("validation", "fitting"):
            mine = [x for x in lines if x["part"] == part and x["set"] == name]
            report.setdefault(name, {})[part] = summary(mine) | {"by_language": {
                lang: summary([x for x in mine if x["lang"] == lang]) for lang in ("en", "ko", "ja")}}
    return report, lines


def proxy_report(name: str, kb: KnowledgeBase, path: Path) -> tuple[dict, list[dict]]:
    """The value proxy on a set without keys (old kb-dev, the sample set)."""
    counts = {"answerable": 0, "answered": 0, "no_answer": 0, "refused": 0, "with_value": 0,
              "value_in_direct_answer": 0, "value_in_passages": 0}
    lines = []
    for q in load_questions(path):
        answer = kb.ask(q["question"])
        hint = q.get("answer_hint") or ""
        values = hint_values(hint) if q["answerable"] and not answer.refused else set()
        counts["answerable" if q["answerable"] else "no_answer"] += 1
        counts["answered"] += q["answerable"] and not answer.refused
        counts["refused"] += not q["answerable"] and answer.refused
        if values:
            counts["with_value"] += 1
            counts["value_in_direct_answer"] += states_any(values, answer.direct_answer)
            counts["value_in_passages"] += states_any(values, " ".join(p.text for p in answer.passages))
        lines.append({"set": name, "id": q.get("id"), "lang": q.get("lang"), "answerable": q["answerable"],
                      "question": q["question"], "hint": hint, "refused": answer.refused,
                      "confidence": round(getattr(answer, "confidence", 0.0), 3), "direct_answer": answer.direct_answer,
                      "quotes": answer.quotes, "cited": [c.doc_id for c in answer.citations]})
    return counts, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real-home", default="var-real")
    parser.add_argument("--sample-home", default="var")
    parser.add_argument("--config-real", default=str(ROOT / "config" / "real-corpora.yaml"))
    parser.add_argument("--config-sample", default=str(ROOT / "config" / "minerva.yaml"))
    parser.add_argument("--out", default=None, help="write one JSON line per question")
    parser.add_argument("--report", default=None, help="write the figures (JSON), e.g. benchmarks/results/answers.json")
    args = parser.parse_args()
    if not V2.exists():
        sys.exit(f"{V2} is missing: this benchmark reads the shared evaluation sets")

    real = KnowledgeBase(load_settings(args.config_real), Path(args.real_home))
    sample = KnowledgeBase(load_settings(args.config_sample), Path(args.sample_home))
    real.ask("warm-up question")
    report, lines = keyed_report(real, keyed_questions(V2))
    for name, kb, path in [("kb-dev", real, SHARED / "eval" / "kb-dev" / "questions.jsonl"),
                           ("sample", sample, ROOT / "knowledge" / "sample_kb_questions.jsonl")]:
        report[name], more = proxy_report(name, kb, path)
        lines += more
    if args.out:
        Path(args.out).write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", encoding="utf-8")
    emit(report, args.report)


if __name__ == "__main__":
    main()
