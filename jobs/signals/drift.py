"""Distribution drift of intents, topics, cited documents and languages (DESIGN.md "Quality monitoring",
Drift; seed 004 §7; notes/monitoring.md "Drift without false alarms").

Compares the last ``drift.recent_days`` (7) with the ``baseline_days`` (90) just before them — disjoint
windows, so the chi-square test compares independent samples. A metric drifts only when all hold:

- enough data: at least ``min_window_count`` (100) observations in each window — otherwise its status is
  "insufficient_data" and it raises nothing (the same 50/50 → 55/45 shift is p = 0.32 at n = 100 and
  p = 1e-21 at n = 100,000, so a p-value alone says more about n than about the shift);
- ``scipy.stats.chi2_contingency(correction=False)`` on the 2×K table (all-zero categories dropped, rare
  ones merged into "(other)") gives p < ``max_p_value`` (0.001);
- the Jensen–Shannon distance (base 2) is at least ``min_js_distance`` (0.1, Evidently's floor).

Smoothed KL (pseudocount 1, as Phoenix) is reported beside them. A category absent from the baseline and
seen at least ``new_category_min_count`` (10) times recently is its own "drift_new_category" event. Drift is
a reason to look, not a fault (seed 004 §13.4): findings are "info" and review items "review_drift".
Requiring the same verdict on consecutive runs is the alert layer's hysteresis (``fire_after``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from feedback import windows
from jobs._common import SignalResult, iso, monitoring_config, snapshot, status_of
from jobs.classify import label_before_signal, topic_labels
from jobs.findings import Finding, JobContext
from jobs.review import Candidate, filing_job
from jobs.stats import compare_distributions

SIGNAL = "drift"

def check(ctx: JobContext) -> SignalResult:
    """Compares the recent and baseline distributions of every configured metric.

    Returns:
        SignalResult: status {"recent": [start, end], "baseline": [start, end], "metrics": {metric: {"status":
        "drift" | "stable" | "insufficient_data", "n_baseline", "n_recent", "p_value", "js_distance",
        "kl_smoothed", "changes", "new_categories", "merged"}}}; findings "drift" and "drift_new_category"
        (info); review candidates "review_drift".
    """
    cfg = monitoring_config(ctx)
    dr = cfg.drift
    if {"intent", "topic"} & set(dr.metrics):
        label_before_signal(ctx, cfg.classification)
    split_at = ctx.now - timedelta(days=dr.recent_days)
    params = {"start": iso(split_at - timedelta(days=dr.baseline_days)), "split": iso(split_at), "until": iso(ctx.now)}
    with snapshot(ctx.store) as conn:
        counts = {m: windows.split_counts(conn, m, params["start"], params["split"], params["until"])
                  for m in dr.metrics}
        labels = topic_labels(conn) if "topic" in dr.metrics else {}
    status: dict[str, Any] = {"recent": [params["split"], params["until"]],
                              "baseline": [params["start"], params["split"]], "metrics": {}}
    findings, candidates = [], []
    for metric, found in counts.items():
        baseline = {r["category"]: r["baseline"] for r in found if r["category"] is not None}
        recent = {r["category"]: r["recent"] for r in found if r["category"] is not None}
        comparison = compare_distributions(baseline, recent, pseudocount=dr.pseudocount)
        name = (lambda c: f"{c} “{labels.get(int(c), '')}”") if metric == "topic" else str
        verdict = _verdict(comparison, dr)
        entry = {
            "status": verdict, "n_baseline": comparison.n_baseline, "n_recent": comparison.n_recent,
            "p_value": comparison.p_value, "js_distance": _round(comparison.js_distance),
            "kl_smoothed": _round(comparison.kl_smoothed), "merged": comparison.merged,
            "changes": [{**c, "name": name(c["category"])} for c in comparison.changes],
            "new_categories": [{"category": c, "name": name(c), "count": n}
                               for c, n in sorted(comparison.new_categories.items(), key=lambda kv: -kv[1])
                               if n >= dr.new_category_min_count] if verdict != "insufficient_data" else [],
        }
        status["metrics"][metric] = entry
        if verdict == "drift":
            findings.append(_drift_finding(metric, entry, dr))
            candidates.append(Candidate("drift", metric, "review_drift", 3, entry["n_recent"], findings[-1].summary,
                                        {"js_distance": entry["js_distance"], "p_value": entry["p_value"],
                                         "changes": entry["changes"]}))
        for new in entry["new_categories"]:
            findings.append(_new_category_finding(metric, new, entry, dr))
            candidates.append(Candidate("drift_new_category", f"{metric}:{new['category']}", "review_drift", 3,
                                        new["count"], findings[-1].summary, {"metric": metric, **new}))
    return SignalResult(status, findings, candidates)


#: The report's figures (see `check`), without touching the review queue.
summarize = status_of(check)
#: The scheduled job: findings for the alert layer; candidates to the review queue.
run = filing_job(SIGNAL, check)


def _verdict(comparison, dr) -> str:
    if min(comparison.n_baseline, comparison.n_recent) < dr.min_window_count:
        return "insufficient_data"
    drifted = (comparison.p_value is not None and comparison.p_value < dr.max_p_value
               and comparison.js_distance is not None and comparison.js_distance >= dr.min_js_distance)
    return "drift" if drifted else "stable"


def _drift_finding(metric: str, entry: dict, dr) -> Finding:
    moved = ", ".join(f"{c['name']} {c['baseline_share']:.0%}→{c['recent_share']:.0%}" for c in entry["changes"][:3])
    return Finding(
        alert="drift", severity="info", labels={"metric": metric},
        value=float(entry["js_distance"]), threshold=float(dr.min_js_distance), n=int(entry["n_recent"]),
        summary=(f"{metric} distribution shifted (JS distance {entry['js_distance']:.2f}, p={entry['p_value']:.1e}, "
                 f"n={entry['n_recent']} vs {entry['n_baseline']}): {moved}"),
        annotations={k: entry[k] for k in ("p_value", "kl_smoothed", "n_baseline", "changes", "merged")},
    )


def _new_category_finding(metric: str, new: dict, entry: dict, dr) -> Finding:
    share = new["count"] / entry["n_recent"] if entry["n_recent"] else 0.0
    return Finding(
        alert="drift_new_category", severity="info", labels={"metric": metric, "category": str(new["category"])},
        value=round(share, 4), threshold=0.0, n=int(new["count"]),
        summary=f"new {metric} {new['name']}: {new['count']} times in the last {dr.recent_days} days, never before",
        annotations={"recent_share": round(share, 4), "n_recent": entry["n_recent"]},
    )


def _round(x: float | None, digits: int = 4) -> float | None:
    return None if x is None else round(x, digits)
