"""Warm `ask` latency against embedding the question alone, in one run (issue 22 target: p95 ≤ 3×, reader included;
issue 24: the search's overhead beyond the encoder ≤ 0.25× the encoder's time).

Usage:
    python benchmarks/ask_latency.py [--config config/real-corpora.yaml] [--home var-real] [--rounds 3] [--out FILE]

Loads the knowledge base once, warms it up, then for every kb-dev question (rounds times, interleaved so a
busy machine slows all alike) times ``embedder.embed([question])``, the search alone (``Retriever.search`` with
the candidates `ask` reads; it embeds the question itself) and ``kb.ask(question)``. Prints p50/p95 of each in
milliseconds, the ratios of ask to the embedding, and the search's overhead beyond the embedding as a share of it. The machine is shared: compare the ratio, not the figures.
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

from _output import emit  # noqa: E402
from config import load_settings  # noqa: E402
from knowledge import KnowledgeBase, crosslingual  # noqa: E402
from knowledge.service import ANSWER_CANDIDATES  # noqa: E402
from knowledge.calibration import load_questions  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "config" / "real-corpora.yaml"))
    parser.add_argument("--home", default="var-real")
    parser.add_argument("--questions", default=str(ROOT.parent / "shared" / "eval" / "kb-dev" / "questions.jsonl"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    # each round asks the same questions: the cross-lingual model's memory of recent questions would answer rounds
    # 2 and 3 from memory; keep only the question being asked (the reader and the kept-answer match share it)
    crosslingual.RECENT_QUESTIONS = 1
    kb = KnowledgeBase(load_settings(args.config), Path(args.home))
    kb.warm_up()
    questions = [q["question"] for q in load_questions(Path(args.questions))]
    for q in questions[:5]:
        kb.ask(q)
    embed_ms, search_ms, ask_ms = [], [], []
    retriever = kb._retriever()
    for _ in range(args.rounds):
        for q in questions:
            started = time.perf_counter()
            kb.embedder.embed([q], kind="query")
            embed_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            retriever.search([q], top_k=ANSWER_CANDIDATES)
            search_ms.append((time.perf_counter() - started) * 1000)
            retriever.search(["(another question, so that ask embeds its own)"], top_k=1)
            started = time.perf_counter()
            kb.ask(q)
            ask_ms.append((time.perf_counter() - started) * 1000)

    def pct(values: list[float], p: int) -> float:
        return round(float(np.percentile(values, p)), 2)

    emit({
        "questions": len(questions), "rounds": args.rounds, "chunks": len(kb.index().chunks),
        "embed_question_ms": {"p50": pct(embed_ms, 50), "p95": pct(embed_ms, 95)},
        "search_ms": {"p50": pct(search_ms, 50), "p95": pct(search_ms, 95)},
        "search_overhead_p50": round((pct(search_ms, 50) - pct(embed_ms, 50)) / pct(embed_ms, 50), 2),
        "ask_ms": {"p50": pct(ask_ms, 50), "p95": pct(ask_ms, 95)},
        "ratio_p95": round(pct(ask_ms, 95) / pct(embed_ms, 95), 2),
        "ratio_p50": round(pct(ask_ms, 50) / pct(embed_ms, 50), 2),
        "load_1m_after": round(os.getloadavg()[0], 2),  # the machine is shared: how busy it was
    }, args.out)


if __name__ == "__main__":
    main()
