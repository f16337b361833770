"""Benchmark for issue 26 item 1: no page leaves search on a few users' clicks; a wrong page is still proposed.

Usage:
    python benchmarks/quarantine_sim.py [--runs 1000] [--wrong-runs 200] [--seed 0]
        [--out benchmarks/results/quarantine_sim.json]

Runs the shipped jobs, not a model of them: each run is a fresh SQLite store, filled through `FeedbackStore`
with a month of a team's traffic, then the ``bad_docs`` job (`jobs.signals.bad_docs.run`, which files review
items) and the alert evaluation (`jobs.alerts.evaluate`, which holds the kill switch) with the bundled
config/monitoring.yaml and config/alerts.yaml.

- **burst on a good page** (``--runs``): a page cited by Poisson(30) answers over 30 days, each rated by one
  voter, 👍 with probability 0.8; then one answer citing it and a second page, three hours ago, reported wrong
  by five different users. The job runs twice an hour apart. Counted: runs where any page was quarantined
  (target: 0 of 1,000), runs where the burst reached a person (a ``wrong_answer_spike`` firing with the
  "Take out of search" proposal, and a review item per page).
- **a wrong page** (``--wrong-runs``): a new page whose answers get Poisson(1) votes a day, 👍 with
  probability 0.2; the job runs daily. Counted: runs where the page was proposed for quarantine (a firing
  ``bad_document`` alert, which carries the button) by the time its 25th vote was cast (target: ≥ 90 %), and
  runs where it was quarantined without a person (target: 0).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from itertools import count
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _output import emit  # noqa: E402
from config.alerts import load_alerts_config  # noqa: E402
from config.monitoring import load_monitoring_config  # noqa: E402
from feedback import FeedbackStore  # noqa: E402
from jobs import killswitch  # noqa: E402
from jobs.alerts import evaluate, list_alerts  # noqa: E402
from jobs.findings import JobContext  # noqa: E402
from jobs.page_actions import QUARANTINE, page_action  # noqa: E402
from jobs.review import items as review_items  # noqa: E402
from jobs.signals import bad_docs  # noqa: E402

PAGE, OTHER = "handbook:tock.md", "handbook:tock-old.md"
_ids = count()


def record(store, *, at: datetime, cited: tuple[str, ...], votes: list[str], reporters: int = 0) -> None:
    """One answer citing ``cited`` at ``at``, with one voter per vote and ``reporters`` distinct reporters."""
    answer_id = f"sim{next(_ids):08d}"
    store.record_answer(answer_id=answer_id, question="how do I log billable time in Tock?", channel="C1",
                        thread_ts=None, user_id="U1",
                        retrieved=[{"chunk_id": f"{d}#0", "doc_id": d, "score": 0.8} for d in cited],
                        cited_doc_ids=list(cited), refused=False, top_score=0.8, latency_ms=50.0, language="en",
                        created_at=at)
    for i, value in enumerate(votes):
        store.record_vote(answer_id, f"V{answer_id}{i}", value, voted_at=at)
    for i in range(reporters):
        store.record_flag(answer_id, f"R{i}", "wrong", created_at=at)


def run_job(store, home: Path, now: datetime, monitoring, alerting) -> list:
    """The bad_docs job then the alert evaluation at ``now``; returns the firing alerts."""
    ctx = JobContext(settings=None, home=home, store=store, now=now, kb=None, extra={"monitoring": monitoring})
    evaluate(store, alerting, "bad_docs", bad_docs.run(ctx), now=now)
    return [s.alert for s in list_alerts(store, alerting, states=("firing",), now=now)]


def burst_on_good_page(rng, folder: Path, monitoring, alerting) -> dict:
    """One run of the first scenario: what was quarantined and what reached a person."""
    now = datetime.now(timezone.utc).replace(microsecond=0)
    with FeedbackStore.open(folder / "minerva.sqlite") as store:
        for _ in range(rng.poisson(30)):
            at = now - timedelta(days=float(rng.uniform(1, 30)))
            record(store, at=at, cited=(PAGE,), votes=["up" if rng.random() < 0.8 else "down"])
        record(store, at=now - timedelta(hours=3), cited=(PAGE, OTHER), votes=[], reporters=5)
        firing = run_job(store, folder, now, monitoring, alerting)
        firing = run_job(store, folder, now + timedelta(hours=1), monitoring, alerting)
        proposed = any(page_action(a.alert, a.labels, a.annotations)[0] == QUARANTINE for a in firing
                       if a.alert == "wrong_answer_spike")
        reviewed = {i["subject"] for i in review_items(store) if i["problem"] == "wrong_answer_spike"}
        return {"quarantined": sorted(killswitch.quarantined_documents(store)), "proposed": proposed,
                "review_items": reviewed >= {PAGE, OTHER}}


def wrong_page(rng, folder: Path, monitoring, alerting, within: int = 25, days: int = 90) -> dict:
    """One run of the second scenario: the votes cast when the page was first proposed, and any quarantine."""
    start = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(days=days)
    votes_cast = 0
    with FeedbackStore.open(folder / "minerva.sqlite") as store:
        for day in range(days):
            now = start + timedelta(days=day + 1)
            for _ in range(rng.poisson(1.0)):
                record(store, at=now - timedelta(hours=float(rng.uniform(1, 23))), cited=(PAGE,),
                       votes=["up" if rng.random() < 0.2 else "down"])
                votes_cast += 1
            firing = run_job(store, folder, now, monitoring, alerting)
            if any(a.alert == "bad_document" and page_action(a.alert, a.labels, a.annotations)[0] == QUARANTINE
                   for a in firing):
                return {"proposed_at_votes": votes_cast, "quarantined": bool(killswitch.quarantined_documents(store))}
            if votes_cast > within:
                break
        return {"proposed_at_votes": None, "quarantined": bool(killswitch.quarantined_documents(store))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--wrong-runs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    monitoring, alerting = load_monitoring_config(), load_alerts_config()
    burst, wrong = [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            burst.append(burst_on_good_page(rng, Path(tmp), monitoring, alerting))
    for _ in range(args.wrong_runs):
        with tempfile.TemporaryDirectory() as tmp:
            wrong.append(wrong_page(rng, Path(tmp), monitoring, alerting))
    proposed_in_time = [w["proposed_at_votes"] is not None and w["proposed_at_votes"] <= 25 for w in wrong]
    result = {
        "burst_on_good_page": {
            "runs": args.runs, "true_thumbs_up_rate": 0.8, "reports": 5, "reporters": 5,
            "runs_with_a_quarantine": sum(bool(b["quarantined"]) for b in burst),
            "runs_proposed_to_a_person": sum(b["proposed"] for b in burst),
            "runs_with_review_items_for_both_pages": sum(b["review_items"] for b in burst)},
        "wrong_page": {
            "runs": args.wrong_runs, "true_thumbs_up_rate": 0.2,
            "proposed_within_25_votes": round(float(np.mean(proposed_in_time)), 4),
            "median_votes_at_proposal": float(np.median([w["proposed_at_votes"] for w in wrong
                                                         if w["proposed_at_votes"] is not None] or [0])),
            "runs_quarantined_without_a_person": sum(w["quarantined"] for w in wrong)},
    }
    result["targets_met"] = {
        "good page: 0 quarantines": result["burst_on_good_page"]["runs_with_a_quarantine"] == 0,
        "wrong page proposed within 25 votes >= 0.90": result["wrong_page"]["proposed_within_25_votes"] >= 0.9,
    }
    emit(result, args.out)


if __name__ == "__main__":
    main()
