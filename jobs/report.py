"""The weekly quality report: one self-contained HTML page (charts inlined as PNG ``data:`` URIs).

Panels: key figures, firing alerts, coverage heatmap (intent × topic), freshness timeline, the 10 worst
documents by 👍 rate, citation-health trend, drift alerts, and the signal jobs' status. Each panel takes the
signal jobs' ``summarize`` output when there is one, falls back on what the feedback store and the index
hold, and otherwise says "no data yet"; the page never fails for lack of data. ``minerva report`` writes
it, ``minerva serve`` serves it at ``/dashboard``, and the weekly digest uploads its main chart.

Summary keys read here (`jobs.signals` ``summarize`` outputs; all optional, other keys ignored)::

    summaries["coverage"]  = {"cells": [{"intent", "topic" (label) or "topic_id", "n", "refusal_rate"}, ...]}
    summaries["freshness"] = {"collections": {name: {"staleness_days"}}, "timeline": [{"date", "stale"}, ...]}
    summaries["bad_docs"]  = {"worst": [{"doc_id", "title", "thumbs_up_rate", "up", "down", "citations"}, ...]}
    summaries["drift"]     = {"metrics": {metric: {"status", "n_recent", "p_value", "js_distance"}}}
    summaries[name]        = {scalar keys ...}        # the status table
"""

from __future__ import annotations

import base64
import html
import importlib
import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import structlog

from config.alerts import AlertsConfig
from feedback import alerting as alert_store
from feedback import windows
from jobs import alerts, report_charts
from jobs._common import iso
from jobs.findings import JobContext
from jobs.key_figures import KeyFigures, key_figures, weekly_series

log = structlog.get_logger(__name__)

#: DESIGN.md "Quality monitoring": bad document below a 0.3 thumbs-up rate; citation health warns under 1.5
#: citations per answer and is critical over a 10 % no-citation rate; a document is stale after 90 days
#: unless freshness.yaml says otherwise. (Coverage gaps come from `jobs.question_gaps`, as in the job.)
BAD_DOC_THRESHOLD = 0.3
MIN_CITATIONS_PER_ANSWER = 1.5
MAX_NO_CITATION_RATE = 0.10
DEFAULT_STALE_DAYS = 90
#: Votes a document needs before it is ranked (a rate on 2 votes says nothing).
MIN_VOTES = 5
#: How far back the bad-document and coverage panels look.
LOOKBACK_DAYS = 28
NO_DATA = "no data yet"


@dataclass(frozen=True)
class QualityReport:
    """A rendered report. ``charts`` maps panel name → PNG bytes; ``main_chart`` names the one Slack gets."""

    html: str
    generated_at: datetime
    charts: dict[str, bytes] = field(default_factory=dict)
    main_chart: str | None = None

    @property
    def main_chart_png(self) -> bytes | None:
        """The main chart (coverage heatmap, else citation-health trend), or None when neither has data."""
        return self.charts.get(self.main_chart) if self.main_chart else None


def collect_summaries(ctx: JobContext) -> dict[str, dict]:
    """Each signal job's ``summarize(ctx)`` output by job name; {} when `jobs.signals` does not exist yet.

    A module-level ``SUMMARIZERS`` dict in `jobs.signals` wins; otherwise each job function's module is asked
    for a ``summarize`` function. A summary that fails is logged and left out.
    """
    try:
        signals = importlib.import_module("jobs.signals")
    except ImportError:
        return {}
    summarizers = dict(getattr(signals, "SIGNAL_SUMMARIES", None) or getattr(signals, "SUMMARIZERS", None) or {})
    for name, job in (getattr(signals, "SIGNAL_JOBS", None) or {}).items():
        module = importlib.import_module(getattr(job, "__module__", "") or "jobs.signals")
        if name not in summarizers and callable(getattr(module, "summarize", None)):
            summarizers[name] = module.summarize
    found = {}
    for name, summarize in summarizers.items():
        try:
            value = summarize(ctx)
        except Exception:
            log.exception("report.summary_failed", job=name)
            continue
        if isinstance(value, dict):
            found[name] = value
    return found


def build_report(store, config: AlertsConfig, *, now: datetime, kb=None, summaries: dict[str, dict] | None = None,
                 window_days: int = 7) -> QualityReport:
    """Render the report for the ``window_days`` before ``now``.

    Args:
        store: the feedback store.
        config: alerting config (for the alert table).
        now: aware datetime.
        kb: a `knowledge.KnowledgeBase` for document titles and dates; None or an empty index is fine.
        summaries: `collect_summaries` output; None = none.
        window_days: the key figures' window.

    Returns:
        The page and its charts (CPU: about a second; call it off the event loop).
    """
    summaries = summaries or {}
    documents = _documents(kb)
    figures = key_figures(store, now=now, days=window_days)
    charts: dict[str, bytes] = {}
    panels = [
        ("Firing alerts", _alerts_panel(store, config, now)),
        ("Coverage: intent × topic", _coverage_panel(store, summaries, now, charts)),
        ("Freshness timeline", _freshness_panel(summaries, documents, now, charts)),
        ("Bad documents (top 10)", _bad_documents_panel(store, summaries, documents, now, charts)),
        ("Citation health trend", _citation_panel(store, now, charts)),
        ("Drift alerts", _drift_panel(store, summaries, now)),
        ("Signal jobs", _status_panel(summaries)),
    ]
    main = "coverage" if "coverage" in charts else ("citation_health" if "citation_health" in charts else None)
    page = _page(figures, panels, charts, now)
    return QualityReport(page, now, charts, main)


# --- panels: each returns an HTML fragment and may add a chart ---------------------------------------


def _alerts_panel(store, config: AlertsConfig, now: datetime) -> str:
    statuses = alerts.list_alerts(store, config, states=("firing",), now=now)
    if not statuses:
        return "<p>No alert is firing.</p>"
    head = ["severity", "alert", "labels", "value", "threshold", "n", "since", "fingerprint", "note"]
    body = []
    for s in statuses[:30]:
        a = s.alert
        note = "silenced" if s.silenced_until else "muted: re-index running" if s.inhibited else "acknowledged" if a.acked_at else ""
        body.append([a.severity, a.alert, _labels(a.labels), _num(a.value), _num(a.threshold), a.n,
                     _date(a.started_at), a.fingerprint, note])
    more = f"<p>… and {len(statuses) - 30} more (<code>minerva alerts</code>).</p>" if len(statuses) > 30 else ""
    return _table(head, body) + more


def _coverage_panel(store, summaries: dict, now: datetime, charts: dict[str, bytes]) -> str:
    """The intent × topic heatmap (colour: refusal rate) with the cells holding a gap's questions outlined in
    red, and the gap list. Gaps are the coverage summary's ``question_gaps`` (`jobs.question_gaps.find_gaps`,
    the same function `minerva coverage` and the scheduled job use); without a summary no cell is red."""
    summary = summaries.get("coverage") if isinstance(summaries.get("coverage"), dict) else {}
    cells = _cells_from_summary(summary) or _cells_from_store(store, now)
    gap_cells = {(str(c["intent"]), str(c.get("topic") or f"topic {c.get('topic_id')}"))
                 for c in summary.get("cells") or [] if isinstance(c, dict) and c.get("gaps")}
    gaps = summary.get("question_gaps") or []
    if not cells and not gaps:
        return _no_data("questions are not classified by intent and topic yet")
    parts = []
    if cells:
        totals = _totals(cells, 1)
        topics = sorted({t for _, t in gap_cells}, key=lambda t: -totals.get(t, 0))[:12]
        topics += [t for t, _ in sorted(totals.items(), key=lambda kv: -kv[1]) if t not in topics][:12 - len(topics)]
        intents = sorted({c[0] for c in cells if c[1] in topics})
        lookup = {(c[0], c[1]): c for c in cells}
        rates = [[lookup[i, t][3] if (i, t) in lookup else None for t in topics] for i in intents]
        counts = [[lookup[i, t][2] if (i, t) in lookup else 0 for t in topics] for i in intents]
        marked = [[(i, t) in gap_cells for t in topics] for i in intents]
        charts["coverage"] = report_charts.coverage_heatmap(intents, topics, rates, counts, metric="refusal rate",
                                                            gaps=marked)
        parts.append(_img("coverage", charts))
    parts.append(f"<p>{len(gaps)} coverage gap(s), {len(gap_cells)} cell(s) outlined in red.</p>")
    if gaps:
        body = [[g.get("label", ""), g.get("n", 0), g.get("users", 0),
                 " ".join(f"{k}:{v}" for k, v in (g.get("by_language") or {}).items()),
                 " | ".join((g.get("samples") or [])[:3]),
                 " | ".join(f"{p['doc_id']} ({p['score']:.2f})" for p in g.get("nearest") or []),
                 g.get("action_text", "")] for g in gaps]
        parts.append(_table(["gap", "questions", "users", "languages", "samples", "nearest pages", "action"], body))
    return "".join(parts)


def _freshness_panel(summaries: dict, documents: dict[str, dict], now: datetime, charts: dict[str, bytes]) -> str:
    summary = summaries.get("freshness") or {}
    days = {name: c.get("staleness_days") for name, c in (summary.get("collections") or {}).items() if isinstance(c, dict)}
    rule = "per-collection staleness (freshness.yaml)" if days else f"older than {DEFAULT_STALE_DAYS} days"
    months: dict[str, list[int]] = {}
    for d in documents.values():
        moment = _parse(d.get("last_modified"))
        if moment is None or d.get("stage", "active") != "active":
            continue
        limit = days.get(d.get("collection"), DEFAULT_STALE_DAYS)
        stale = limit is not None and limit >= 0 and (now - moment).days > limit  # -1: never stale
        key = "older" if now - moment > timedelta(days=730) else moment.strftime("%Y-%m")
        months.setdefault(key, [0, 0])[1 if stale else 0] += 1
    parts = []
    if months:
        order = sorted(months, key=lambda k: "0000" if k == "older" else k)
        charts["freshness"] = report_charts.freshness_timeline(order, [months[k][0] for k in order],
                                                               [months[k][1] for k in order], rule=rule)
        stale_n = sum(v[1] for v in months.values())
        parts.append(_img("freshness", charts) + f"<p>{stale_n} of {sum(map(sum, months.values()))} active documents "
                     f"stale ({html.escape(rule)}).</p>")
    timeline = [p for p in summary.get("timeline") or [] if isinstance(p, dict) and "date" in p and "stale" in p]
    if timeline:
        charts["stale_trend"] = report_charts.stale_trend([str(p["date"]) for p in timeline], [int(p["stale"]) for p in timeline])
        parts.append(_img("stale_trend", charts))
    parts.append(_overdue_part(summary))
    return "".join(parts) or _no_data("nothing is indexed yet")


def _overdue_part(summary: dict) -> str:
    """The pages overdue for their owner's verification (the freshness summary's ``verification_overdue``,
    issue 25 item 3): a count and a table of the most overdue; "" when no page has an interval overdue."""
    count = int(summary.get("verification_overdue_count") or 0)
    if not count:
        return ""
    body = [[e.get("title", ""), e.get("collection", ""), e.get("days_overdue", 0), e.get("state", "")]
            for e in (summary.get("verification_overdue") or [])[:10] if isinstance(e, dict)]
    return (f"<p>{count} page(s) overdue for verification by their owners.</p>"
            + _table(["page", "collection", "days overdue", "state"], body))


def _bad_documents_panel(store, summaries: dict, documents: dict[str, dict], now: datetime,
                         charts: dict[str, bytes]) -> str:
    worst = _worst_from_summary(summaries.get("bad_docs")) or _worst_from_store(store, now)
    if not worst:
        return _no_data(f"no document has {MIN_VOTES}+ votes in the last {LOOKBACK_DAYS} days")
    flagged = {a.labels.get("doc_id") for a in _alerts(store, ("firing",)) if a.alert == "bad_document"}
    titles = [r.get("title") or (documents.get(r["doc_id"]) or {}).get("title") or r["doc_id"] for r in worst]
    votes = [r["up"] + r["down"] for r in worst]
    rates = [r["up"] / n for r, n in zip(worst, votes)]
    charts["bad_documents"] = report_charts.bad_documents(titles, rates, votes, BAD_DOC_THRESHOLD)
    body = [[title, r["doc_id"], f"{rate:.0%}", n, r["cited"], "firing" if r["doc_id"] in flagged else ""]
            for title, rate, n, r in zip(titles, rates, votes, worst)]
    return _img("bad_documents", charts) + _table(["title", "doc_id", "👍 rate", "votes", "cited", "bad_document alert"], body)


def _worst_from_summary(summary) -> list[dict]:
    worst = summary.get("worst") if isinstance(summary, dict) else None
    found = []
    for r in worst or []:
        if isinstance(r, dict) and r.get("doc_id") and (r.get("up") or 0) + (r.get("down") or 0) > 0:
            found.append({"doc_id": str(r["doc_id"]), "title": r.get("title"), "up": int(r.get("up") or 0),
                          "down": int(r.get("down") or 0), "cited": int(r.get("citations") or 0)})
    return found[:10]


def _worst_from_store(store, now: datetime) -> list[dict]:
    with store.snapshot() as conn:
        per_doc = windows.document_votes(conn, iso(now - timedelta(days=LOOKBACK_DAYS)))
    ranked = [r for r in per_doc if r["up"] + r["down"] >= MIN_VOTES]
    ranked.sort(key=lambda r: (_wilson_upper(r["up"], r["up"] + r["down"]), -r["cited"]))
    return ranked[:10]


def _citation_panel(store, now: datetime, charts: dict[str, bytes]) -> str:
    series = weekly_series(store, now=now, weeks=12)
    if not any(p.answers for p in series):
        return _no_data("no answers recorded yet")
    charts["citation_health"] = report_charts.citation_trend(
        [p.week_start for p in series], [p.citations_per_answer for p in series], [p.no_citation_rate for p in series],
        [p.refused / p.answers if p.answers else None for p in series],
        min_per_answer=MIN_CITATIONS_PER_ANSWER, max_no_citation=MAX_NO_CITATION_RATE)
    last = next((p for p in reversed(series) if p.answers), series[-1])
    return _img("citation_health", charts) + (
        f"<p>Latest 7 days with answers ({_date(last.week_start)} to {_date(last.week_start + timedelta(days=7))}): "
        f"{last.answers} answers, "
        f"{_num(last.citations_per_answer)} citations per answer (warn under {MIN_CITATIONS_PER_ANSWER}), "
        f"no-citation rate {_pct(last.no_citation_rate)} (critical over {MAX_NO_CITATION_RATE:.0%}).</p>")


def _drift_panel(store, summaries: dict, now: datetime) -> str:
    cutoff = now - timedelta(days=30)
    found = sorted((a for a in _alerts(store, alerts.STATES)
                    if a.alert.startswith("drift") and a.last_evaluated_at and a.last_evaluated_at >= cutoff),
                   key=lambda a: a.last_evaluated_at, reverse=True)
    metrics = ((summaries.get("drift") or {}).get("metrics") or {}) if isinstance(summaries.get("drift"), dict) else {}
    parts = []
    if metrics:
        parts.append(_table(["metric", "verdict", "n recent", "n baseline", "p-value", "JS distance"], [
            [m, e.get("status"), e.get("n_recent"), e.get("n_baseline"), _num(e.get("p_value")), _num(e.get("js_distance"))]
            for m, e in sorted(metrics.items()) if isinstance(e, dict)]))
    if found:
        parts.append(_table(["alert", "labels", "state", "effect size", "threshold", "n", "since", "summary"], [
            [a.alert, _labels(a.labels), a.state, _num(a.value), _num(a.threshold), a.n,
             _date(a.started_at or a.first_seen_at), a.summary] for a in found[:30]]))
    elif metrics:
        parts.append("<p>No drift alert in the last 30 days.</p>")
    return "".join(parts) or _no_data("no drift alert in the last 30 days and no drift figures")


def _status_panel(summaries: dict) -> str:
    if not summaries:
        return _no_data("the signal jobs have not reported yet")
    body = []
    for name, summary in sorted(summaries.items()):
        scalars = {k: v for k, v in summary.items() if isinstance(v, (str, int, float, bool)) or v is None}
        body.append([name, "; ".join(f"{k.replace('_', ' ')}: {_status_value(v)}" for k, v in scalars.items())])
    return _table(["job", "status"], body)


def _status_value(value) -> str:
    """A job summary's value as a reader wants it: a number rounded, a timestamp as its UTC minute
    ("since: 2026-09-06T06:25:32.342676+00:00" read as noise in a newcomer's first report)."""
    if isinstance(value, float):
        return _num(value)
    if isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
        return stamp.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if stamp.tzinfo else value
    return str(value)


# --- data helpers --------------------------------------------------------------------------------------


def _documents(kb) -> dict[str, dict]:
    if kb is None:
        return {}
    try:
        return dict(kb.index().documents)
    except Exception as exc:  # no index yet, or one built by another model: the page still renders
        log.info("report.no_index", reason=str(exc))
        return {}


def _alerts(store, states) -> list[alerts.Alert]:
    """The alerts in ``states`` (any of `jobs.alerts.STATES`), through the alert store's query functions."""
    with store.snapshot() as conn:
        return [alerts.Alert.from_row(r) for r in alert_store.alerts_in_states(conn, states)]


def _cells_from_summary(summary) -> list[tuple[str, str, int, float | None]]:
    cells = (summary or {}).get("cells") if isinstance(summary, dict) else None
    found = []
    for c in cells or []:
        if not isinstance(c, dict) or "intent" not in c or not (c.get("topic") or c.get("topic_id") is not None):
            continue
        n = int(c.get("n", c.get("questions", 0)) or 0)
        rate = c.get("refusal_rate")
        topic = str(c.get("topic") or f"topic {c.get('topic_id')}")
        found.append((str(c["intent"]), topic, n, None if rate is None else float(rate)))
    return found


def _cells_from_store(store, now: datetime) -> list[tuple[str, str, int, float | None]]:
    """Cells from the question labels (``answer_labels`` + ``topics``) when the coverage summary is missing."""
    with store.snapshot() as conn:
        found = windows.labelled_cells(conn, iso(now - timedelta(days=LOOKBACK_DAYS)))
    return [(str(r["intent"]), str(r["topic"]), r["n"], r["refused"] / r["n"]) for r in found if r["n"]]


def _totals(cells, position: int) -> dict[str, int]:
    totals: dict[str, int] = {}
    for c in cells:
        totals[c[position]] = totals.get(c[position], 0) + c[2]
    return totals


def _wilson_upper(k: int, n: int, z: float = 1.96) -> float:
    """Upper end of the Wilson 95 % interval of k successes in n (n > 0)."""
    p = k / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre + spread) / (1 + z * z / n)


def _parse(text) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text) if text else None
    except (TypeError, ValueError):
        return None
    if moment is not None and moment.tzinfo is None:
        return None
    return moment


def _age_days(text, now: datetime) -> float:
    moment = _parse(text)
    return (now - moment).total_seconds() / 86400 if moment else 0.0


# --- HTML ----------------------------------------------------------------------------------------------

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1100px;color:#1f2933;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem} h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #d9e2ec}
.figures{display:flex;gap:1rem;flex-wrap:wrap}.figure{background:#f0f4f8;border-radius:6px;padding:.6rem 1rem;min-width:9rem}
.figure b{display:block;font-size:1.4rem} table{border-collapse:collapse;width:100%;font-size:13px}
td,th{border-bottom:1px solid #e4e7eb;padding:.25rem .4rem;text-align:left;vertical-align:top}
img{max-width:100%} .nodata{color:#7b8794;font-style:italic;background:#f5f7fa;padding:1.2rem;border-radius:6px}
footer{margin-top:2rem;color:#7b8794;font-size:12px}
"""


def _page(figures: KeyFigures, panels: list[tuple[str, str]], charts: dict[str, bytes], now: datetime) -> str:
    cards = [
        ("answers", str(figures.answers)),
        ("refusal rate", _pct(figures.refusal_rate) + f" of {figures.answers}"),
        ("thumbs-up rate", _pct(figures.thumbs_up_rate) + f" of {figures.votes} votes"),
        ("firing alerts", " / ".join(f"{n} {s}" for s, n in figures.firing.items())),
    ]
    card_html = "".join(f'<div class="figure">{html.escape(label)}<b>{html.escape(value)}</b></div>' for label, value in cards)
    sections = "".join(f"<section><h2>{html.escape(title)}</h2>{body}</section>" for title, body in panels)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>Minerva knowledge quality report</title><style>{_CSS}</style></head><body>"
        f"<h1>Knowledge quality report</h1><p>Generated {html.escape(now.strftime('%Y-%m-%d %H:%M UTC'))}; "
        f"key figures over the last {figures.days} days.</p><div class=\"figures\">{card_html}</div>{sections}"
        "<footer>Minerva · read-only · thresholds from docs/DESIGN.md \"Quality monitoring\" and config/alerts.yaml</footer>"
        "</body></html>\n"
    )


def _img(name: str, charts: dict[str, bytes]) -> str:
    data = base64.b64encode(charts[name]).decode("ascii")
    return f'<img alt="{html.escape(name)} chart" src="data:image/png;base64,{data}">'


def _table(head: list[str], body: list[list]) -> str:
    cells = "".join(f"<th>{html.escape(str(h))}</th>" for h in head)
    lines = "".join("<tr>" + "".join(f"<td>{html.escape('' if v is None else str(v))}</td>" for v in row) + "</tr>" for row in body)
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{lines}</tbody></table>"


def _no_data(reason: str) -> str:
    return f'<p class="nodata">{NO_DATA}: {html.escape(reason)}.</p>'


def _labels(labels: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _num(value) -> str:
    if value is None:
        return "–"
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _date(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d") if moment else "–"
