"""Benchmark for issue 11 item 1: does the bad-document rule decide at tens of votes within its false-alarm budget?

Usage:
    python benchmarks/accuracy_gate_sim.py [--runs 4000] [--docs 500] [--repeats 10] [--seed 0]
        [--out benchmarks/results/accuracy_gate_sim.json]

The rule is the job's own (`jobs.signals.bad_docs.decide` with the bundled config/monitoring.yaml): for every
number of votes n, the largest 👍 count it flags is read from `decide`, so the simulation runs the shipped
decision, vectorised. Each simulated document gets Poisson votes at a rate drawn uniformly from 10–60 a month
("tens of votes per page per month"), each vote 👍 with the document's true rate; the job runs once a day on
the votes of the last ``window_days``.

- **detection**: a document at a true 👍 rate of 0.2, new (no votes before day 1), judged daily for 120 days;
  success when it is flagged by the time its 25th vote was cast (votes cast up to the end of the flagging
  day <= 25). Target >= 90 % of ``--runs`` documents.
- **false alarms**: ``--repeats`` × ``--docs`` documents at a true rate of 0.6, judged daily for 90 days;
  the share flagged at least once. Target < 1 %. Two cases: steady state (a full window of earlier votes,
  the usual page) and new pages (no votes before day 1, the worst case: early looks at few votes).
- the same for "watch" items (never alerts: reported for the review queue's volume), and for the report rate:
  a page whose answers are reported wrong 3 % of the time (the feedback generator's good pages) at 10–200
  citations a month, vs one at 40 %.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _output import emit  # noqa: E402
from config.monitoring import load_monitoring_config  # noqa: E402
from jobs.signals.bad_docs import decide  # noqa: E402

MAX_N = 400


def thumbs_table(bd, verdict: str) -> np.ndarray:
    """K[n] = the largest 👍 count of n votes that `decide` gives ``verdict`` (or worse) to; -1 = none."""
    table = np.full(MAX_N + 1, -1)
    worse = {"bad": ("bad",), "watch": ("bad", "watch")}[verdict]
    for n in range(1, MAX_N + 1):
        for up in range(n, -1, -1):  # decide is monotone in up: fewer 👍 never looks better
            if decide(up, n - up, 0, 0, bd)["verdict"] in worse:  # no citations: only the thumbs can decide
                table[n] = up
                break
    return table


def reports_table(bd) -> np.ndarray:
    """R[n] = the fewest reported answers of n citing answers that `decide` flags for the report rate."""
    table = np.full(MAX_N + 1, MAX_N + 1)
    for n in range(1, MAX_N + 1):
        for r in range(0, n + 1):
            if "report_rate" in decide(0, 0, n, r, bd)["reasons"]:
                table[n] = r
                break
    return table


def _daily(rng, docs: int, days: int, monthly: tuple[float, float], p: float) -> tuple[np.ndarray, np.ndarray]:
    lam = rng.uniform(*monthly, size=docs) / 30
    n = rng.poisson(lam[:, None], (docs, days))
    k = rng.binomial(n, p)
    return n, k


def _windows(n: np.ndarray, k: np.ndarray, window: int, start: int):
    """Yields (day, votes in window, successes in window, votes cast so far) for days start..end."""
    cn = np.hstack([np.zeros((len(n), 1), int), np.cumsum(n, 1)])
    ck = np.hstack([np.zeros((len(k), 1), int), np.cumsum(k, 1)])
    for d in range(start, n.shape[1]):
        lo = max(0, d + 1 - window)
        yield d, cn[:, d + 1] - cn[:, lo], ck[:, d + 1] - ck[:, lo], cn[:, d + 1]


def thumbs_flags(table, wn, wk) -> np.ndarray:
    return (wn > 0) & (wk <= table[np.minimum(wn, MAX_N)])


def detection(rng, table, bd, runs: int, p: float, within: int) -> dict:
    n, k = _daily(rng, runs, 120, (10, 60), p)
    flagged_at = np.full(runs, -1)
    for _, wn, wk, cast in _windows(n, k, bd.window_days, 0):
        new = thumbs_flags(table, wn, wk) & (flagged_at < 0)
        flagged_at[new] = cast[new]
    ok = (flagged_at >= 0) & (flagged_at <= within)
    return {"true_rate": p, "runs": runs, f"flagged_within_{within}_votes": round(float(ok.mean()), 4),
            "median_votes_at_flag": float(np.median(flagged_at[flagged_at >= 0])) if (flagged_at >= 0).any() else None}


def false_alarms(rng, table, bd, docs: int, repeats: int, p: float, warm: bool) -> dict:
    shares = []
    for _ in range(repeats):
        lead = bd.window_days if warm else 0
        n, k = _daily(rng, docs, lead + 90, (10, 60), p)
        hit = np.zeros(docs, bool)
        for _, wn, wk, _ in _windows(n, k, bd.window_days, lead):
            hit |= thumbs_flags(table, wn, wk)
        shares.append(hit.mean())
    return {"true_rate": p, "documents": docs, "repeats": repeats, "days": 90,
            "history": "a full window of earlier votes" if warm else "none (new page)",
            "share_flagged": round(float(np.mean(shares)), 5), "worst_repeat": round(float(np.max(shares)), 5)}


def report_rate(rng, rtable, bd, docs: int, rate: float, monthly: tuple[float, float]) -> dict:
    n, k = _daily(rng, docs, bd.window_days + 90, monthly, rate)
    hit = np.zeros(docs, bool)
    for _, wn, wk, _ in _windows(n, k, bd.window_days, bd.window_days):
        hit |= (wn >= 1) & (wk >= rtable[np.minimum(wn, MAX_N)])
    return {"report_rate": rate, "citations_per_month": list(monthly), "documents": docs, "days": 90,
            "share_flagged": round(float(hit.mean()), 5)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4000)
    parser.add_argument("--docs", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    bd = load_monitoring_config().bad_docs
    rng = np.random.default_rng(args.seed)
    bad, watch = thumbs_table(bd, "bad"), thumbs_table(bd, "watch")
    rtable = reports_table(bd)
    result = {
        "rule": {k: getattr(bd, k) for k in ("window_days", "max_thumbs_up_rate", "prior_up", "prior_down", "min_votes",
                                             "alert_probability", "watch_probability", "watch_min_votes",
                                             "max_report_rate", "min_answers", "report_probability")},
        "flagged_when_thumbs_up_at_most": {str(n): int(bad[n]) for n in (5, 10, 15, 20, 25, 30, 45, 60, 90)},
        "watch_when_thumbs_up_at_most": {str(n): int(watch[n]) for n in (3, 5, 10, 15, 25)},
        "flagged_when_reported_at_least": {str(n): int(rtable[n]) for n in (10, 20, 50, 130, 300)},
        "detection": detection(rng, bad, bd, args.runs, 0.2, 25),
        "false_alarms_steady": false_alarms(rng, bad, bd, args.docs, args.repeats, 0.6, warm=True),
        "false_alarms_new_pages": false_alarms(rng, bad, bd, args.docs, args.repeats, 0.6, warm=False),
        "watch_items_at_0.6_steady": false_alarms(rng, watch, bd, args.docs, args.repeats, 0.6, warm=True),
        "report_rate_good_page": report_rate(rng, rtable, bd, args.docs * args.repeats, 0.03, (10, 200)),
        "report_rate_bad_page": report_rate(rng, rtable, bd, args.runs, 0.4, (10, 60)),
    }
    result["targets_met"] = {
        "detection >= 0.90": result["detection"]["flagged_within_25_votes"] >= 0.90,
        "false alarms < 0.01 (steady)": result["false_alarms_steady"]["share_flagged"] < 0.01,
        "false alarms < 0.01 (new pages)": result["false_alarms_new_pages"]["share_flagged"] < 0.01,
    }
    emit(result, args.out)


if __name__ == "__main__":
    main()
