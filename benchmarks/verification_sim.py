"""Owners verifying their pages over 8 compressed weeks (issue 25 item 3 target: "every due verification is
asked once and reminded at most once").

About 40 real handbook pages (``../shared/corpus/tts-handbook/2025-02``, else the sample knowledge base) get
a 21-day interval and one of 8 owners. Each simulated day the ``verification`` job (`jobs.verification.
run_verification`, on a real SQLite store) runs twice, as two replicas would; 5 % of messages fail (Slack
refuses them), and are undone and asked again. Owners answer on time (within 2 days), late (after the reminder)
or never. Counted per due episode (a page and the date it fell due): how many asks and reminders it got.
Assert-free: it reports; ``--out`` writes the JSON (default ``benchmarks/results/verification_sim.json``).

    python benchmarks/verification_sim.py
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import sys
import tempfile
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from _output import emit  # noqa: E402
from config import Settings, SourceConfig  # noqa: E402
from config.alerts import load_alerts_config  # noqa: E402
from feedback import FeedbackStore  # noqa: E402
from jobs.notify import Delivery  # noqa: E402
from jobs.verification import due_at, run_verification  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus" / "tts-handbook" / "2025-02"
START = datetime(2027, 1, 4, 9, 30, tzinfo=timezone.utc)
DAYS = 56
INTERVAL = 21
PAGES = 40
OWNERS = [f"U0OWNER{i}" for i in range(8)]
#: Owner behaviour: on time, late (after the 7-day reminder), never.
PROFILES = ("prompt", "prompt", "prompt", "late", "late", "late", "never", "never")
FAIL_RATE = 0.05


class SimNotifier:
    """Records each message; refuses `FAIL_RATE` of them as Slack would (``ratelimited``)."""

    paused = None

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.sent: list = []
        self.refused = 0

    async def post_verification(self, owner: str, ask) -> list[Delivery]:
        if self.rng.random() < FAIL_RATE:
            self.refused += 1
            return [Delivery(owner, error="ratelimited")]
        self.sent.append(ask)
        return [Delivery(owner, ts=str(len(self.sent)))]


def pages(rng: random.Random) -> dict[str, dict]:
    """~40 page records as the index holds them, indexed 0–40 days before the start."""
    root = CORPUS if CORPUS.is_dir() else REPO / "knowledge" / "sample_kb"
    files = sorted(p for p in root.rglob("*.md"))[:PAGES]
    docs = {}
    for i, path in enumerate(files):
        doc_id = f"handbook:{path.relative_to(root).as_posix()}"
        docs[doc_id] = {"doc_id": doc_id, "collection": "handbook", "title": path.stem, "url": "",
                        "owner": OWNERS[i % len(OWNERS)], "stage": "active", "language": "en",
                        "indexed_at": (START - timedelta(days=rng.randint(0, 40))).isoformat()}
    return docs


def answer_day(profile: str, asked: datetime, rng: random.Random) -> datetime | None:
    if profile == "prompt":
        return asked + timedelta(days=rng.randint(0, 2))
    if profile == "late":
        return asked + timedelta(days=rng.randint(8, 12))
    return None


async def simulate(seed: int) -> dict:
    rng = random.Random(seed)
    docs = pages(rng)
    settings = Settings(sources=[SourceConfig(name="handbook", path=str(CORPUS), verify_days=INTERVAL)])
    config = load_alerts_config()
    notifier = SimNotifier(rng)
    episodes: set[tuple[str, str]] = set()
    answers: dict[tuple[str, str], datetime | None] = {}
    with tempfile.TemporaryDirectory() as tmp, FeedbackStore.open(Path(tmp) / "sim.sqlite") as store:
        for day in range(DAYS):
            now = START + timedelta(days=day)
            rows = store.page_verifications()
            for doc_id, doc in docs.items():  # every episode due by now, asked or not
                due = due_at(doc, rows.get(doc_id), INTERVAL)
                if due <= now:
                    episodes.add((doc_id, due.isoformat()))
            for replica in range(2):  # two replicas run the same slot
                await run_verification(store, settings, config, docs, notifier, now=now + timedelta(minutes=replica))
            _answer(store, docs, answers, now, rng)
    return _figures(notifier, episodes)


def _answer(store, docs: dict[str, dict], answers: dict, now: datetime, rng: random.Random) -> None:
    """Owners whose answer day has come press "Still correct" (a tenth of them "Needs an update")."""
    for doc_id, row in store.page_verifications().items():
        if row["state"] != "due":
            continue
        key = (doc_id, row["asked_at"])
        if key not in answers:
            profile = PROFILES[OWNERS.index(docs[doc_id]["owner"])]
            answers[key] = answer_day(profile, datetime.fromisoformat(row["asked_at"]), rng)
        when = answers[key]
        if when is not None and when <= now:
            state = "needs_update" if rng.random() < 0.1 else "verified"
            store.answer_verification(doc_id, state, asked_at=row["asked_at"], by=row["owner"], now=now,
                                      verified_until=now + timedelta(days=INTERVAL) if state == "verified" else None)


def _figures(notifier: SimNotifier, episodes: set[tuple[str, str]]) -> dict:
    asks = Counter((a.doc_id, a.due_at.isoformat()) for a in notifier.sent if not a.reminder)
    reminders = Counter((a.doc_id, a.asked_at) for a in notifier.sent if a.reminder)
    once = sum(1 for e in episodes if asks.get(e, 0) == 1)
    never = sorted(e for e in episodes if asks.get(e, 0) == 0)
    return {
        "pages": PAGES, "days": DAYS, "interval_days": INTERVAL, "runs": DAYS * 2,
        "due_episodes": len(episodes), "asked_exactly_once": once, "asked_more_than_once": sum(
            1 for n in asks.values() if n > 1), "not_asked_yet": len(never),
        "share_asked_exactly_once": round(once / len(episodes), 4) if episodes else None,
        "reminders": sum(reminders.values()), "reminded_more_than_once": sum(1 for n in reminders.values() if n > 1),
        "share_reminded_at_most_once": round(
            sum(1 for n in reminders.values() if n <= 1) / len(reminders), 4) if reminders else 1.0,
        "messages_refused_and_retried": notifier.refused,
        "not_asked_examples": [list(e) for e in never[:5]],
    }


def main() -> None:
    import structlog

    # the per-ask log lines would bury the figures; warnings still show
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "verification_sim.json"))
    args = parser.parse_args()
    emit({"benchmark": "verification_sim", "seed": args.seed, **asyncio.run(simulate(args.seed))}, args.out)


if __name__ == "__main__":
    main()
