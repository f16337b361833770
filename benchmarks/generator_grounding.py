"""Benchmark for issue 9 item 4: what the generator path costs besides the model, and how the grounding check judges.

Usage:
    python benchmarks/generator_grounding.py [--repeat 50] [--out benchmarks/results/generator_grounding.json]

Hand-written generator replies (grounded, and with an invented value, code or claim; English, Korean,
Japanese) about real sample-KB sections are judged by `knowledge.grounding.check_grounding`; the labels are
the author's. Not a held-out measure: the set is small and the "said of something else" rule was added after
its first run missed two invented claims whose numbers occur elsewhere in the passage (15/17 → 17/17). Measures the check's time per reply (cold: the first Korean/Japanese reply loads the analyzers;
warm: afterwards) and `improve_answer`'s whole overhead against a local OpenAI-compatible fake over real HTTP
(tests/fakes/openai_api.py, instant replies): prompt building, one HTTP round trip, JSON, the check.

A real small model was not measured: PyPI serves llama-cpp-python only as a source package (its llama.cpp build
takes the machine's 2 shared cores for many minutes), and the only GGUF model package in the PyPI index here is
a 7B model split into parts (gigabytes, about a token per second on 2 cores). Point ``generator.base_url`` at
any OpenAI-compatible server to use one.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _output import emit  # noqa: E402
from bot.cli.logs import configure_logging  # noqa: E402
from config import GeneratorConfig  # noqa: E402
from knowledge.generator import improve_answer  # noqa: E402
from knowledge.grounding import check_grounding  # noqa: E402
from knowledge.types import Answer, Citation, Passage  # noqa: E402
from tests.fakes.openai_api import FakeOpenAI  # noqa: E402

KB = ROOT / "knowledge" / "sample_kb"


def section(relative: str, heading: str) -> str:
    text = (KB / relative).read_text(encoding="utf-8")
    start = text.index(f"## {heading}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


PASSAGES = {
    1: section("api/rate-limits.md", "Limits by plan") + "\n\n" + section("api/rate-limits.md", "When the limit is exceeded"),
    2: section("api/webhooks.md", "Delivery"),
    3: (KB / "plans/refund-policy.ko.md").read_text(encoding="utf-8"),
    4: (KB / "plans/support-hours.ja.md").read_text(encoding="utf-8"),
}
#: (reply sentence, supported?) — the author's judgement against the passage it cites.
LABELLED = [
    ("The Pro plan allows 600 requests per minute with a burst of 100 [1].", True),
    ("Over the limit the API answers HTTP 429 with a Retry-After header [1].", True),
    ("The SDKs retry a 429 up to 3 times with exponential backoff starting at 1 second [1].", True),
    ("Keys that keep ignoring Retry-After are blocked for 15 minutes [1].", True),
    ("Webhook delivery times out after 30 seconds [2].", True),
    ("Pro 플랜은 분당 600개의 요청을 허용합니다 [1].", True),
    ("연간 결제는 결제일로부터 14일 이내에 해지하면 전액 환불됩니다 [3].", True),
    ("Proプランは毎分600リクエストです[1]。", True),
    ("The Pro plan allows 900 requests per minute [1].", False),
    ("Webhook delivery times out after 30 minutes [2].", False),
    ("The SDKs retry a 429 up to 5 times [1].", False),
    ("Blocked keys stay blocked for 24 hours [1].", False),
    ("Over the limit the API returns the error code `quota_exceeded` [1].", False),
    ("Webhook delivery times out after 30 seconds.", False),
    ("Customers should ask their account manager for a discount on annual billing [1].", False),
    ("연간 결제는 결제일로부터 60일 이내에 해지하면 전액 환불됩니다 [3].", False),
    ("Enterprise는 분당 9,000개의 요청을 허용합니다 [1].", False),
]


def judge() -> dict:
    rows, cold_ms = [], None
    for sentence, label in LABELLED:
        started = time.perf_counter()
        (check,) = check_grounding(sentence, PASSAGES).checks
        ms = (time.perf_counter() - started) * 1000
        if cold_ms is None or ms > cold_ms:
            cold_ms = max(cold_ms or 0.0, ms)
        rows.append({"sentence": sentence, "label": label, "supported": check.supported, "reason": check.reason})
    tp = sum(r["label"] and r["supported"] for r in rows)
    tn = sum(not r["label"] and not r["supported"] for r in rows)
    return {"sentences": len(rows), "agree": tp + tn, "grounded_kept": f"{tp}/{sum(r['label'] for r in rows)}",
            "unsupported_removed": f"{tn}/{sum(not r['label'] for r in rows)}", "slowest_first_pass_ms": round(cold_ms, 1),
            "rows": rows}


def warm_check_ms(repeat: int) -> dict:
    reply = " ".join(s for s, _ in LABELLED)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        check_grounding(reply, PASSAGES)
        times.append((time.perf_counter() - started) * 1000)
    per_sentence = statistics.median(times) / len(LABELLED)
    return {"reply_sentences": len(LABELLED), "median_ms": round(statistics.median(times), 2),
            "p95_ms": round(sorted(times)[int(0.95 * (len(times) - 1))], 2), "per_sentence_ms": round(per_sentence, 3)}


def answer() -> Answer:
    moment = datetime(2026, 7, 1, tzinfo=timezone.utc)
    passage = Passage("api:rate-limits.md#1", "api:rate-limits.md", "api", "API rate limits", "https://x/api/rate-limits",
                      ("API rate limits", "Limits by plan"), PASSAGES[1], 0.8, 0.6, 7.0, moment, "high")
    return Answer("a" * 32, "what is the API rate limit on the Pro plan?", False, "…", passages=[passage],
                  citation_numbers=[1], quotes=[PASSAGES[1]],
                  citations=[Citation(1, passage.doc_id, passage.title, passage.url, "Limits by plan", 0.8, moment)],
                  direct_answer="Plan: Pro · Requests per minute: 600 [1]")


async def overhead_ms(repeat: int) -> dict:
    async with FakeOpenAI(default="The Pro plan allows 600 requests per minute with a burst of 100 [1].") as fake:
        cfg = GeneratorConfig(base_url=fake.url, model="fake", timeout_s=5)
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            result = await improve_answer(answer(), "what is the API rate limit on the Pro plan?", cfg)
            times.append((time.perf_counter() - started) * 1000)
            assert result.generated
    return {"calls": repeat, "median_ms": round(statistics.median(times), 2),
            "p95_ms": round(sorted(times)[int(0.95 * (len(times) - 1))], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--out")
    args = parser.parse_args()
    configure_logging("WARNING")
    verdicts = judge()
    emit({
        "benchmark": "generator_grounding",
        "verdicts": verdicts,
        "check_warm": warm_check_ms(args.repeat),
        "improve_answer_overhead_fake_endpoint": asyncio.run(overhead_ms(args.repeat)),
        "real_model": "not measured: llama-cpp-python is a source-only package here (llama.cpp compile on 2 shared "
                      "cores), and no small GGUF model package is in the PyPI index; see the module docstring",
    }, args.out)


if __name__ == "__main__":
    main()
