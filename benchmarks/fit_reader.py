"""Fit the shipped answer reader (knowledge/reader_model.json) on the fitting parts of the labelled sets.

Usage:
    python benchmarks/fit_reader.py [--real-home var-real] [--sample-home var] [--report benchmarks/results/reader_fit.json]

Sets (each split once by page, `knowledge.kbeval.split_by_page`; only the fitting parts are read):
kb-dev-v2 with benchmarks/data/kb-extra (``must_contain`` keys; split as one set, so that a page both ask about
lands in one part) and benchmarks/data/near_topic_dev.jsonl on the real corpora, and the sample
set on the bundled knowledge base (both keyed by their hints' values, `knowledge.kbeval.question_key`). The old
kb-dev is never read here: it stays a second validation set. Report on the validation parts with
benchmarks/answers.py. ``minerva fit-reader FILE`` does the same for one set on a user's own knowledge base.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _output import emit  # noqa: E402
from config import load_settings  # noqa: E402
from knowledge import KnowledgeBase  # noqa: E402
from knowledge.calibration import load_questions  # noqa: E402
from knowledge.reader import MODEL_PATH  # noqa: E402
from knowledge.reader_fit import fit_reader  # noqa: E402

SHARED = ROOT.parent / "shared"
EXTRA = ROOT / "benchmarks" / "data" / "kb-extra" / "questions.jsonl"


def keyed_questions(v2: Path) -> list[dict]:
    """kb-dev-v2's questions (at ``v2``) then kb-extra's, each marked with its ``set``: the real corpora's keyed
    questions, to be split as one set (`knowledge.kbeval.split_by_page`)."""
    return ([q | {"set": "kb-dev-v2"} for q in load_questions(v2)]
            + [q | {"set": "kb-extra"} for q in load_questions(EXTRA)])


def labelled_sets(real_home: str, sample_home: str) -> list[tuple[str, object, list[dict]]]:
    """The labelled sets the reader is fitted on, each with the knowledge base it is asked on:
    ``[(name, knowledge base, questions)]`` for kb-dev-v2, the near-topic set and the sample set.

    Raises:
        SystemExit: the shared evaluation sets are missing."""
    v2 = SHARED / "eval" / "kb-dev-v2" / "questions.jsonl"
    if not v2.exists():
        sys.exit(f"{v2} is missing: this benchmark reads the shared evaluation sets")
    real = KnowledgeBase(load_settings(ROOT / "config" / "real-corpora.yaml"), Path(real_home))
    sample = KnowledgeBase(load_settings(ROOT / "config" / "minerva.yaml"), Path(sample_home))
    return [("kb-dev-v2+kb-extra", real, keyed_questions(v2)),
            ("near-topic", real, load_questions(ROOT / "benchmarks" / "data" / "near_topic_dev.jsonl")),
            ("sample", sample, load_questions(ROOT / "knowledge" / "sample_kb_questions.jsonl"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real-home", default="var-real")
    parser.add_argument("--sample-home", default="var")
    parser.add_argument("--out", default=str(MODEL_PATH))
    parser.add_argument("--report", default=None)
    args = parser.parse_args()
    model, report = fit_reader([(kb, questions) for _, kb, questions in labelled_sets(args.real_home, args.sample_home)])
    model.save(Path(args.out))
    emit(report | {"model": model.to_json()}, args.report)


if __name__ == "__main__":
    main()
