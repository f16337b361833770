"""Benchmark for issue 13: several replicas on one PostgreSQL, and the store's vote throughput there.

Usage:
    python benchmarks/replicas.py [--replicas 3] [--questions 200] [--clicks 1000] [--slots 60]
                                  [--votes 20000] [--only questions votes leases throughput] [--out result.json]

Starts a PostgreSQL server from the pgserver wheel (or uses ``MINERVA_TEST_DATABASE_URL``), builds the
bundled sample knowledge base once into a generations folder the replicas share, and measures:

- questions: ``--replicas`` real ``minerva serve`` processes (HTTP mode) behind no balancer: each of
  ``--questions`` app_mention events goes to one replica and, at the same time, its Slack retry
  (``X-Slack-Retry-Num: 1``) to the next one. Target: exactly one answer posted and stored per question.
- votes: ``--clicks`` 👍/👎 clicks by distinct users, all in flight at once, spread round-robin over the
  replicas. Target: 0 lost, 0 duplicated (votes rows == clicks, one per user).
- leases: ``--replicas`` schedulers (real APScheduler, real `jobs.runner.JobRunner`, each with its own home)
  in one process on the same database, 4 jobs every second for ``--slots`` seconds (an hour of a
  once-a-minute schedule, compressed). Target: every job runs exactly once per slot (job_runs per job and
  second), none twice.
- throughput: ``FeedbackStore.record_vote`` from 4 threads, ``--votes`` votes on 1,000 answers. Target
  >= 2,000 votes/s on PostgreSQL (SQLite measured beside it).

Prints one JSON object (and writes it to ``--out``). The machine's load average is recorded with it.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import aiohttp  # noqa: E402

from _output import emit  # noqa: E402
from _postgres import new_database, postgres_server  # noqa: E402
from feedback import FeedbackStore  # noqa: E402
from feedback.db import rows, scalar  # noqa: E402
from bot.cli.sandbox.replicas import Cluster, answer_id_of, start_replicas, stop_replicas  # noqa: E402
from bot.cli.sandbox.slack_api import FakeSlack  # noqa: E402

QUESTIONS = ["what is the API rate limit on the Pro plan?", "how do I announce a SEV1 incident?",
             "how much does the team plan cost per seat?", "what's the webhook timeout?",
             "how do I rotate an API key?", "what's the parental leave policy?", "who approves a refund?",
             "how long are logs kept?"]
VOTE_TARGET_PER_S = 2000.0


def build_index(folder: Path) -> Path:
    """The sample knowledge base ingested once; returns its generations folder."""
    from config import load_settings
    from knowledge import KnowledgeBase

    home = folder / "ingest-home"
    KnowledgeBase(load_settings(), home).sync()
    return home / "index"


def count(url: str, sql: str) -> int:
    with FeedbackStore.open(url) as store, store.snapshot() as conn:
        return int(scalar(conn, sql))


async def questions_and_votes(args, url: str, index_dir: Path, workdir: Path) -> dict:
    async with FakeSlack() as fake:
        started = time.perf_counter()
        replicas = await start_replicas(args.replicas, workdir=workdir, database_url=url, index_dir=index_dir,
                                        slack_url=fake.url)
        startup = time.perf_counter() - started
        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=200)) as session:
                cluster = Cluster(replicas, session)
                result = {"replicas": args.replicas, "startup_seconds": round(startup, 1)}
                if "questions" in args.only or "votes" in args.only:
                    result["questions"] = await _questions(cluster, fake, url, args)
                if "votes" in args.only:
                    result["votes"] = await _votes(cluster, fake, url, args)
                return result
        finally:
            await stop_replicas(replicas)


async def _questions(cluster: Cluster, fake: FakeSlack, url: str, args) -> dict:
    n = len(cluster.replicas)
    envelopes = [cluster.mention_envelope(QUESTIONS[i % len(QUESTIONS)], user=f"U{i}", channel=f"C{i % 5}")
                 for i in range(args.questions)]
    started = time.perf_counter()
    statuses = await asyncio.gather(*itertools.chain.from_iterable(
        (cluster.deliver(cluster.replicas[i % n], e), cluster.deliver(cluster.replicas[(i + 1) % n], e, retry_num=1))
        for i, e in enumerate(envelopes)))
    await fake.wait_for("chat.postMessage", count=args.questions, timeout=900)
    seconds = time.perf_counter() - started
    await asyncio.sleep(3.0)  # any duplicate would be posted by now
    posts = [c["body"] for c in fake.calls_to("chat.postMessage")]
    threads = Counter(p.get("thread_ts") for p in posts)
    return {"events": args.questions, "deliveries": len(statuses), "http_200": statuses.count(200),
            "answers_posted": len(posts), "threads_answered": len(threads),
            "threads_answered_twice": sum(1 for c in threads.values() if c > 1),
            "answers_stored": count(url, "SELECT count(*) FROM answers"), "seconds": round(seconds, 1),
            "ok": len(posts) == args.questions == len(threads) == count(url, "SELECT count(*) FROM answers")}


async def _votes(cluster: Cluster, fake: FakeSlack, url: str, args) -> dict:
    posts = [c["body"] for c in fake.calls_to("chat.postMessage")]
    answered = next(p for p in posts if "context_actions" in {b["type"] for b in p.get("blocks") or []})
    answer_id = answer_id_of(answered)
    n = len(cluster.replicas)
    started = time.perf_counter()
    statuses = await asyncio.gather(*(
        cluster.click(cluster.replicas[k % n], "down" if k % 4 == 0 else "up", answered, f"UV{k:05d}",
                      fake.response_url(f"v{k}")) for k in range(args.clicks)))
    sql = f"SELECT count(*) FROM votes WHERE answer_id = '{answer_id}'"
    deadline = time.monotonic() + 300
    while count(url, sql) < args.clicks and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
    seconds = time.perf_counter() - started
    await asyncio.sleep(2.0)
    with FeedbackStore.open(url) as store:
        votes = store.votes_for(answer_id)
    users = Counter(v["user_id"] for v in votes)
    expected_down = sum(1 for k in range(args.clicks) if k % 4 == 0)
    return {"clicks": args.clicks, "http_200": statuses.count(200), "votes_stored": len(votes),
            "lost": args.clicks - len(users), "duplicated": sum(c - 1 for c in users.values()),
            "down_stored": sum(v["value"] == "down" for v in votes), "down_clicked": expected_down,
            "seconds": round(seconds, 1), "ok": len(votes) == len(users) == args.clicks}


async def leases(args, url: str, workdir: Path) -> dict:
    """Several schedulers on one database, 4 jobs each second: runs per (job, second)."""
    from config import load_settings
    from config.alerts import ScheduleEntry, load_alerts_config
    from jobs.runner import BUILTIN_JOBS, JobEnv, JobRunner
    from jobs.scheduler import MinervaScheduler

    os.environ["MINERVA_DATABASE_URL"] = url
    ran: list[tuple[str, float]] = []
    lock = threading.Lock()

    def job(name: str):
        def run(ctx):
            with lock:
                ran.append((name, time.time()))
            return []
        return run

    names = [f"job{k}" for k in range(4)]
    schedulers = []
    for number in range(args.replicas):
        config = load_alerts_config()
        for name in names:
            config.schedule.jobs[name] = ScheduleEntry(interval_minutes=1 / 60)
        for name in BUILTIN_JOBS:
            config.schedule.jobs[name] = ScheduleEntry(cron="0 0 1 1 *")
        home = workdir / f"scheduler-{number}"
        runner = JobRunner(JobEnv(load_settings(), home, config), {name: job(name) for name in names})
        schedulers.append(MinervaScheduler(runner, config, home))
    for scheduler in schedulers:
        assert scheduler.start()
    started = time.time()
    await asyncio.sleep(args.slots + 0.5)
    for scheduler in schedulers:
        scheduler.shutdown()
    await asyncio.sleep(1.0)
    per_slot = Counter((name, int(at)) for name, at in ran)
    slots = {name: sorted({second for n, second in per_slot if n == name}) for name in names}
    with FeedbackStore.open(url) as store, store.snapshot() as conn:
        recorded = rows(conn, "SELECT job, count(*) AS n FROM job_runs WHERE job LIKE 'job%' GROUP BY job")
    return {"schedulers": args.replicas, "jobs": len(names), "seconds": round(time.time() - started, 1),
            "runs": len(ran), "slots_run_per_job": {n: len(s) for n, s in slots.items()},
            "slots_run_twice": sum(1 for c in per_slot.values() if c > 1),
            "job_runs_recorded": {r["job"]: r["n"] for r in recorded},
            "ok": all(c == 1 for c in per_slot.values()) and all(len(s) >= args.slots - 2 for s in slots.values())}


def throughput(target: str | Path, votes: int, threads: int = 4) -> dict:
    """record_vote from ``threads`` threads, each with its own store (as bot executor threads share one)."""
    with FeedbackStore.open(target) as store:
        for k in range(1000):
            store.record_answer(answer_id=f"a{k}", question="q", channel="C1", thread_ts=f"1.{k}", user_id="U1",
                                retrieved=[{"chunk_id": "d#0", "doc_id": "d", "score": 0.8}], cited_doc_ids=["d"],
                                refused=False, top_score=0.8, latency_ms=1.0)
    store = FeedbackStore.open(target)
    per_thread = votes // threads

    def worker(t: int) -> None:
        for k in range(per_thread):
            store.record_vote(f"a{k % 1000}", f"U{t}-{k // 1000}", "up" if k % 3 else "down")

    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(worker, range(threads)))
    seconds = time.perf_counter() - started
    stored = count(target, "SELECT count(*) FROM votes")
    store.close()
    return {"votes": per_thread * threads, "threads": threads, "seconds": round(seconds, 2),
            "votes_per_second": round(per_thread * threads / seconds), "stored": stored}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--clicks", type=int, default=1000)
    parser.add_argument("--slots", type=int, default=60)
    parser.add_argument("--votes", type=int, default=20000)
    parser.add_argument("--only", nargs="+", default=["questions", "votes", "leases", "throughput"])
    parser.add_argument("--out")
    args = parser.parse_args()
    import structlog

    from bot.cli.logs import configure_logging

    configure_logging(level="WARNING", fmt="console")
    structlog.get_logger().info("replicas.start")
    work = Path(tempfile.mkdtemp(prefix="minerva-replicas-"))
    server_url, server = postgres_server(work / "pg")
    result: dict = {"load_average": os.getloadavg(), "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    try:
        if {"questions", "votes"} & set(args.only):
            index_dir = build_index(work)
            result["slack"] = asyncio.run(questions_and_votes(args, new_database(server_url, "bench_slack"),
                                                              index_dir, work / "slack"))
        if "leases" in args.only:
            result["leases"] = asyncio.run(leases(args, new_database(server_url, "bench_leases"), work / "leases"))
        if "throughput" in args.only:
            result["throughput"] = {
                "postgresql": throughput(new_database(server_url, "bench_votes"), args.votes),
                "sqlite": throughput(work / "votes.sqlite", args.votes),
                "target_votes_per_second": VOTE_TARGET_PER_S,
            }
        result["load_average_after"] = os.getloadavg()
    finally:
        if server is not None:
            server.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    emit(result, args.out)


if __name__ == "__main__":
    main()
