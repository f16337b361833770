"""Benchmark for issue 4: time and peak memory of each monitoring job at 10k and 100k answers.

Usage:
    python benchmarks/monitoring_jobs.py [--sizes 10000,100000] [--out benchmarks/results/monitoring_jobs.json]
    python benchmarks/monitoring_jobs.py --postgres --sizes 1000000 [--warm] [--out …]   # issue 13: <= 10 s, <= 1 GB

With ``--postgres`` the stores are databases on a PostgreSQL server (``MINERVA_TEST_DATABASE_URL``, or one
started from the pgserver wheel) and the jobs reach them through ``MINERVA_DATABASE_URL``, as replicas do.

Builds the bundled sample knowledge base once (real model), then for each size a fresh MINERVA_HOME with a
copy of that index and a store filled by `feedback_generator` (labelled answers, ~3 votes each). Each job
(`jobs.signals.SIGNAL_JOBS`, i.e. ``run(ctx)`` as the scheduler calls it) runs in its own subprocess, warm as
in the scheduler (modules imported before the clock starts; with ``--warm`` the knowledge base warmed too —
models loaded, index open — as `minerva serve` hands its warm knowledge base to the jobs), so its peak RSS is
its own: the kernel's high-water mark ``VmHWM`` of that process (ru_maxrss would carry the parent's peak across fork/exec), covering imports,
the index load where the job needs one, and the job. Also timed: labelling 1,000 unlabelled answers with the
real model (``minerva classify``). The load average is recorded: other work on the machine slows the figures.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _output import emit  # noqa: E402
from _postgres import new_database, postgres_server  # noqa: E402

#: Issue 4's targets on SQLite (100k answers) and issue 13's on PostgreSQL (1,000,000 answers).
TARGETS = {"sqlite": (5.0, 500.0), "postgresql": (10.0, 1024.0)}


def run_one(job: str, home: Path, warm: bool = False) -> dict:
    """In the subprocess: run one job once on ``home`` and report seconds and peak RSS."""
    from datetime import datetime, timezone

    from config import load_settings
    from config.monitoring import monitoring_config_for
    from feedback import FeedbackStore
    from jobs.findings import JobContext
    from jobs.signals import SIGNAL_JOBS
    from knowledge import KnowledgeBase

    import scipy.spatial.distance  # noqa: F401 - imported once by a running scheduler, not per run
    import scipy.stats  # noqa: F401

    from feedback.db import database_target

    settings = load_settings()
    rss_before = _peak_rss_mb()
    with FeedbackStore.open(database_target(home, None)) as store:  # MINERVA_DATABASE_URL when --postgres
        kb = KnowledgeBase(settings, home)
        if warm:  # `minerva serve` hands its warm knowledge base to the jobs: models loaded, index open
            kb.warm_up()
        rss_warm = _peak_rss_mb()
        ctx = JobContext(settings=settings, home=home, store=store, now=datetime.now(timezone.utc), kb=kb,
                         extra={"monitoring": monitoring_config_for(settings)})
        started = time.perf_counter()
        if job == "classify":
            from jobs.classify import label_pending

            kb.embedder  # noqa: B018 - the model load is not the job
            started = time.perf_counter()
            report = label_pending(store, kb.embedder, ctx.extra["monitoring"].classification, now=ctx.now)
            findings = report.labelled
        else:
            findings = len(SIGNAL_JOBS[job](ctx))
        seconds = time.perf_counter() - started
    return {"job": job, "seconds": round(seconds, 3), "findings": findings,
            "rss_after_imports_mb": rss_before, "peak_rss_mb": _peak_rss_mb(),
            "job_mb": round(max(0.0, _peak_rss_mb() - rss_warm), 1)}


def _peak_rss_mb() -> float:
    """This process's peak resident set size (VmHWM), MiB; ru_maxrss where /proc is missing."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _subprocess(job: str, home: Path, database_url: str | None = None, warm: bool = False) -> dict:
    env = {**os.environ, **({"MINERVA_DATABASE_URL": database_url} if database_url else {})}
    out = subprocess.run([sys.executable, __file__, "--one", job, "--home", str(home)] + (["--warm"] if warm else []),
                         check=True,
                         capture_output=True, text=True, cwd=ROOT, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--out", default=None, help="also write the JSON here")
    parser.add_argument("--postgres", action="store_true", help="stores on a PostgreSQL server instead of SQLite")
    parser.add_argument("--warm", action="store_true",
                        help="load the models before the clock, as in `minerva serve` (the memory target is then the "
                             "job's own: job_mb, above the warm process's peak)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--home", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, Path(args.home), args.warm)))
        return

    from bot.cli.logs import configure_logging
    from config import load_settings
    from feedback import FeedbackStore
    from feedback_generator import generate
    from jobs.signals import SIGNAL_JOBS
    from knowledge import KnowledgeBase

    configure_logging("WARNING", "console")  # keep stdout for the JSON
    work = Path(tempfile.mkdtemp(prefix="minerva-monitoring-bench-"))
    backend = "postgresql" if args.postgres else "sqlite"
    target_seconds, target_mb = TARGETS[backend]
    server_url, server = postgres_server(work / "pg") if args.postgres else (None, None)
    result: dict = {"backend": backend, "warm": args.warm, "cpus": os.cpu_count(),
                    "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
                    "targets": {"seconds": target_seconds, "peak_rss_mb": target_mb}, "sizes": {}}
    try:
        index_home = work / "index-home"
        kb = KnowledgeBase(load_settings(), index_home)
        kb.sync()
        doc_ids = sorted(kb.index().documents)
        for size in [int(s) for s in args.sizes.split(",")]:
            home = work / f"home-{size}"
            shutil.copytree(index_home / "index", home / "index")
            url = new_database(server_url, f"bench_{size}") if args.postgres else None
            with FeedbackStore.open(url or home / "minerva.sqlite") as store:
                generated = generate(store, size, doc_ids, seed=size)
            entry = {"generated": generated, "jobs": {}}
            if not args.postgres:
                entry["db_mb"] = round((home / "minerva.sqlite").stat().st_size / 2**20, 1)
            for job in SIGNAL_JOBS:
                entry["jobs"][job] = _subprocess(job, home, url, args.warm)
            result["sizes"][str(size)] = entry
        classify_home = work / "classify-home"
        shutil.copytree(index_home / "index", classify_home / "index")
        with FeedbackStore.open(classify_home / "minerva.sqlite") as store:
            generate(store, 1000, doc_ids, labelled=False, seed=1)
        result["classify_1000_unlabelled"] = _subprocess("classify", classify_home)
    finally:
        if server is not None:
            server.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    result["within_targets"] = all(
        j["seconds"] <= target_seconds and j["job_mb" if args.warm else "peak_rss_mb"] <= target_mb
        for s in result["sizes"].values() for j in s["jobs"].values()
    )
    emit(result, args.out, indent=1)


if __name__ == "__main__":
    main()
