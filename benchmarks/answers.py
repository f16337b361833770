"""Every dev question's direct answer with the shipped configuration, and how many hold the hint's key (issue 9).

Usage:
    python benchmarks/answers.py [--real-home var-real] [--sample-home var] [--out answers.jsonl] [--report FILE]

Asks kb-dev (../shared/eval/kb-dev), the near-topic validation set (benchmarks/data/near_topic_dev.jsonl) and
the sample set with the configuration a user gets (config/real-corpora.yaml, config/minerva.yaml: the
shipped calibration, not a refit as in fit_confidence.py) and writes one JSON line per question: question,
answer hint, refused, direct answer, quotes, cited pages. The hand check (benchmarks/results/handcheck_30.jsonl)
reads these lines.

It also prints a proxy of answer quality that needs no reader: of the answered questions whose hint names a
value (a number, a `code` span, an identifier such as snake_case, camelCase, #channel or @decorator), how many
direct answers state one of those values, and how many quoted passages do. A value in the passages but not
in the direct answer is a sentence-choice miss; a value in neither is a retrieval miss. It is a proxy: a
hint's value may be worded otherwise ("Service Now" for "ServiceNow").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _output import emit  # noqa: E402
from config import load_settings  # noqa: E402
from knowledge import KnowledgeBase  # noqa: E402
from knowledge.calibration import load_questions  # noqa: E402

SHARED = ROOT.parent / "shared"
#: A hint's words about an outdated page ("(2021 page: …)") name values the answer must NOT give.
_OLD_PAGE = re.compile(r"\((?:2021|old|v1)[^)]*\)|\bold page\b|\b2021 page\b")


def hint_values(hint: str) -> set[str]:
    """The values a hint names, lower-cased: numbers ("$75", "35th"), `code`, and identifiers."""
    hint = _OLD_PAGE.split(hint)[0]
    values = set(re.findall(r"(?<![\w.])\$?\d[\d,.]*(?:th|st|nd|rd)?", hint))
    values |= set(re.findall(r"`([^`]+)`", hint))
    values |= {w for w in re.findall(r"[#@]?[A-Za-z_][\w\-.]*", hint)
               if "_" in w or w[0] in "#@" or re.search(r"[a-z][A-Z]", w)}
    return {v.strip(".,").lower() for v in values if v.strip(".,")}


def states_any(values: set[str], text: str) -> bool:
    """Whether ``text`` holds one of ``values`` as a whole token."""
    text = text.lower()
    return any(re.search(r"(?<![\w])" + re.escape(v) + r"(?![\d])", text) for v in values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real-home", default="var-real")
    parser.add_argument("--sample-home", default="var")
    parser.add_argument("--config-real", default=str(ROOT / "config" / "real-corpora.yaml"))
    parser.add_argument("--config-sample", default=str(ROOT / "config" / "minerva.yaml"))
    parser.add_argument("--out", default=None, help="write one JSON line per question")
    parser.add_argument("--report", default=None, help="write the counts (JSON), e.g. benchmarks/results/answers.json")
    args = parser.parse_args()

    real = KnowledgeBase(load_settings(args.config_real), Path(args.real_home))
    sample = KnowledgeBase(load_settings(args.config_sample), Path(args.sample_home))
    sets = [("kb-dev", real, SHARED / "eval" / "kb-dev" / "questions.jsonl"),
            ("near-topic", real, ROOT / "benchmarks" / "data" / "near_topic_dev.jsonl"),
            ("sample", sample, ROOT / "knowledge" / "sample_kb_questions.jsonl")]
    lines, report = [], {}
    for name, kb, path in sets:
        counts = {"answerable": 0, "answered": 0, "no_answer": 0, "refused": 0,
                  "with_value": 0, "value_in_direct_answer": 0, "value_in_passages": 0}
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
                          "direct_answer": answer.direct_answer, "quotes": answer.quotes,
                          "cited": [c.doc_id for c in answer.citations]})
        report[name] = counts
    if args.out:
        Path(args.out).write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", encoding="utf-8")
    emit(report, args.report)


if __name__ == "__main__":
    main()
