"""Benchmark for issue 3: contradictions between the two TTS handbook snapshots, count and hand-checked precision.

Usage:
    python benchmarks/contradictions.py [--home /tmp/minerva-bench-handbooks] [--out benchmarks/results/contradictions.json]

Ingests ../shared/corpus/tts-handbook/2021-12 and 2025-02 as two separate, unversioned collections with the
near-duplicate gate off (the gate would drop 2025 chunks that differ from 2021 only in their numbers), into
``--home`` (reused when it already holds them: the first ingest embeds ~4,500 chunks, minutes on 2 CPUs).
Then runs `find_contradictions` across the two collections at the defaults, between any two documents at
the defaults, and between any two documents at a looser setting (its findings, a superset, are the
hand-checked sample of 20), and scores each run's first 20 findings against the hand judgements below
(each checked against both pages). Prints one JSON object: counts, seconds, precision, and the sample with
a verdict for each finding.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _output import emit  # noqa: E402
from bot.cli.logs import configure_logging  # noqa: E402
from config import HygieneConfig, Settings, SourceConfig  # noqa: E402
from knowledge import KnowledgeBase  # noqa: E402
from knowledge.contradictions import find_contradictions  # noqa: E402

HANDBOOK = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "tts-handbook"
SNAPSHOTS = ("2021-12", "2025-02")
#: The looser setting whose findings (a superset of the defaults') make the hand-checked sample of 20.
LOOSE = {"threshold": 0.6, "statement_threshold": 0.75, "neighbours": 20}

_TOCK = ("hb2021:tools/tock.md", "hb2025:tools/tock.md")
_RAISED = "true: 2025 lowered the 18F billable expectation from 90 % (36 h) to 80 % (32 h) of a 40-hour week"
#: (doc_a, doc_b, value_a, value_b, start of sentence_a) → (is it a real contradiction?, why). Checked by
#: reading both pages.
JUDGEMENTS: dict[tuple[str, str, str, str, str], tuple[bool, str]] = {
    (*_TOCK, "36 hours", "32 hours", "So for most people"): (True, _RAISED),
    (*_TOCK, "36 billable hours", "32 billable hours", "Working more than"): (True, _RAISED),
    (*_TOCK, "90%", "80%", "Then you’ll need to spend"): (True, _RAISED + " (partial weeks)"),
    (*_TOCK, "90%", "80%", "For 18F, if you’re an individual"): (True, _RAISED),
    (*_TOCK, "10%", "20%", "That leaves up to 10%"): (True, "true: non-billable allowance rose from 10 % to 20 %"),
    (*_TOCK, "36 hours", "32 hours", "5 days, Billable"): (True, "true: table row 5 days, 90 % vs 80 % of 40 h"),
    (*_TOCK, "29 hours", "25.5 hours", "4 days, Billable"): (True, "true: table row 4 days, 90 % vs 80 % of 32 h"),
    (*_TOCK, "21.5 hours", "19 hours", "3 days, Billable"): (True, "true: table row 3 days, 90 % vs 80 % of 24 h"),
    (*_TOCK, "14.5 hours", "13 hours", "2 days, Billable"): (True, "true: table row 2 days, 90 % vs 80 % of 16 h"),
    (*_TOCK, "7 hours", "6.5 hours", "1 days, Billable"): (True, "true: table row 1 day, 90 % vs 80 % of 8 h"),
    (*_TOCK, "4 hours", "8 hours", "5 days, Non-billable"): (True, "true: non-billable cap, 5-day week"),
    (*_TOCK, "3 hours", "6.5 hours", "4 days, Non-billable"): (True, "true: non-billable cap, 4-day week"),
    (*_TOCK, "2.5 hours", "5 hours", "3 days, Non-billable"): (True, "true: non-billable cap, 3-day week"),
    (*_TOCK, "1.5 hours", "3 hours", "2 days, Non-billable"): (True, "true: non-billable cap, 2-day week"),
    (*_TOCK, "1 hours", "1.5 hours", "1 days, Non-billable"): (True, "true: non-billable cap, 1-day week"),
    ("hb2021:office-of-acquisition/index.md", "hb2021:office-of-acquisition/management-reviews-of-procurement-actions.md",
     "$10,000", "$25,000", "If you are within TTS"): (False, "false: micro-purchase threshold vs the top of a review tier"),
    ("hb2021:office-of-acquisition/index.md", "hb2025:office-of-acquisition/management-reviews-of-procurement-actions.md",
     "$10,000", "$25,000", "If you are within TTS"): (False, "false: micro-purchase threshold vs the top of a review tier"),
    ("hb2021:office-of-acquisition/management-reviews-of-procurement-actions.md", "hb2025:office-of-acquisition/index.md",
     "$25,000", "$10,000", "For procurements between"): (False, "false: the top of a review tier vs the micro-purchase threshold"),
    ("hb2025:office-of-acquisition/index.md", "hb2025:office-of-acquisition/management-reviews-of-procurement-actions.md",
     "$10,000", "$25,000", "If you are within TTS"): (False, "false: micro-purchase threshold vs the top of a review tier"),
    ("hb2021:travel-and-leave/leave.md", "hb2025:travel-and-leave/paid-parental-leave.md",
     "480 hour", "12 weeks", "If they previously used"): (False, "false: the same entitlement, 12 administrative workweeks = 480 hours"),
    ("hb2021:travel-and-leave/leave.md", "hb2025:travel-and-leave/fmla.md",
     "12 months", "13 days", "Once you've been an employee"): (False, "false: FMLA eligibility tenure vs sick leave used up"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", default="/tmp/minerva-bench-handbooks", help="MINERVA_HOME for the two snapshots")
    parser.add_argument("--out", default=None, help="also write the JSON here")
    args = parser.parse_args()
    configure_logging("ERROR", "console")  # the JSON alone on stdout

    sources = [SourceConfig(name=f"hb{s[:4]}", path=str(HANDBOOK / s)) for s in SNAPSHOTS]
    kb = KnowledgeBase(Settings(sources=sources, hygiene=HygieneConfig(gate=False)), Path(args.home))
    sync = kb.sync()
    index = kb.index()
    kb.embedder  # noqa: B018 - load the model outside the timed runs
    result: dict = {"documents": len(index.documents), "chunks": len(index.chunks), "sync_seconds": round(sync.seconds, 1)}
    runs = {  # across the two snapshots, then between any two documents (also within one snapshot)
        "default": {"across_collections": True},
        "default_all_pairs": {},
        "loose_all_pairs": LOOSE,
    }
    findings = {}
    for name, params in runs.items():
        started = time.perf_counter()
        findings[name] = find_contradictions(index, kb.embedder, **params)
        result[name] = {"params": params or "defaults", "count": len(findings[name]),
                        "seconds": round(time.perf_counter() - started, 2)}
    for name in runs:
        judged = [_verdict(c) for c in findings[name][:20]]
        known = [v for v, _ in judged if v is not None]
        result[name]["judged"] = len(known)
        result[name]["precision"] = round(sum(known) / len(known), 3) if known else None
    result["sample"] = [{**c.to_json(), "real": v, "why": why}
                        for c, (v, why) in ((c, _verdict(c)) for c in findings["loose_all_pairs"][:20])]
    emit(result, args.out)


def _verdict(c) -> tuple[bool | None, str]:
    for (doc_a, doc_b, value_a, value_b, start), verdict in JUDGEMENTS.items():
        if (c.doc_a, c.doc_b, c.value_a, c.value_b) == (doc_a, doc_b, value_a, value_b) and c.sentence_a.startswith(start):
            return verdict
    return None, "not judged"


if __name__ == "__main__":
    main()
