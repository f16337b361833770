"""CLI for the knowledge-quality signals, the re-index queue, the review queue and question labelling.

    minerva coverage [--all] [--json]      coverage gaps: refused questions grouped by meaning (--all: cells too)
    minerva freshness [--json]             stale, stale-and-cited, unreachable and changed documents
    minerva bad-docs [--json]              documents whose answers get thumbs-down or wrong-answer reports
    minerva citations [--json]             citation health: citations per answer, Gini, no-citation rate, ...
    minerva drift [--json]                 intent, topic, cited-document and language drift
    minerva reindex [--execute] [--json]   the auto-reindex score queue; --execute syncs those collections
    minerva review [--all] [--json]        the review queue; --done/--dismiss/--reopen ID to work it
    minerva classify [--limit N] [--json]  label unlabelled answers with an intent and a topic

Each signal command runs the same evaluation as its scheduled job (review candidates are filed too) and
prints it; ``--json`` prints ``{"status": …, "findings": […]}``. A `config.MinervaError` becomes ``Error: …``
(`bot.cli.main.MinervaGroup`).
``--now 2026-11-30`` (ISO date or date/time; naive means UTC) runs it as of that moment, to replay a window
or check a threshold (issue 11 item 8); `minerva jobs run` and `minerva report` take it too.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict
from datetime import datetime, timezone

import click


def register(cli: click.Group) -> None:
    """Add this module's commands to ``cli``."""
    for command in (coverage, freshness, bad_docs, citations, drift, reindex, review, classify):
        cli.add_command(command)


class IsoMoment(click.ParamType):
    """A click parameter: an ISO-8601 date (``2026-11-30`` = midnight UTC) or date/time (``2026-11-30T08:00``,
    ``…+09:00``); naive values are UTC. Converts to an aware `datetime`."""

    name = "ISO date/time"

    def convert(self, value, param, ctx):
        if isinstance(value, datetime):
            moment = value
        else:
            try:
                moment = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
            except ValueError:
                self.fail(f"{value!r} is not an ISO date or date/time (e.g. 2026-11-30 or 2026-11-30T08:00Z)", param, ctx)
        return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def now_option(command):
    """Add ``--now`` (`IsoMoment`, default: the real time) to a command."""
    return click.option("--now", "now", type=IsoMoment(), default=None,
                        help="Run as of this moment (ISO date or date/time, UTC unless an offset is given).")(command)


def _context(obj, now: datetime | None = None):
    """A JobContext from the CLI's Context, with the monitoring config loaded once; ``now`` = the clock."""
    from config.monitoring import monitoring_config_for
    from jobs.findings import JobContext

    cfg = monitoring_config_for(obj.settings)
    return JobContext(settings=obj.settings, home=obj.home, store=obj.store, now=now or datetime.now(timezone.utc),
                      kb=obj.kb, extra={"monitoring": cfg})


def _run(obj, name: str, now: datetime | None = None):
    """Run signal ``name`` (filing its review candidates)."""
    from jobs.signals import run_signal

    return run_signal(name, _context(obj, now))


def _echo_json(result) -> None:
    click.echo(json.dumps({"status": result.status, "findings": [asdict(f) for f in result.findings]},
                          ensure_ascii=False, default=str))


def _echo_findings(result) -> None:
    for f in result.findings:
        click.echo(f"  [{f.severity}] {f.alert}: {f.summary}")


def _signal_command(job: str):
    """Make ``printer(status, **options)`` the text output of a `minerva` command that runs signal ``job``.

    The command takes ``--json`` (prints ``{"status", "findings"}``); without it the printer's lines come
    first, then one line per finding. The printer's docstring is the command's help; its name the command's.
    """
    def wrap(printer):
        @click.option("--json", "as_json", is_flag=True, help="Print {status, findings} as JSON.")
        @now_option
        @click.pass_obj
        @functools.wraps(printer)
        def command(obj, as_json: bool, now: datetime | None, **options) -> None:
            result = _run(obj, job, now)
            if as_json:
                return _echo_json(result)
            printer(result.status, **options)
            _echo_findings(result)

        return click.command(printer.__name__.replace("_", "-"))(command)
    return wrap


@click.option("--all", "show_all", is_flag=True, help="Also print every evaluated intent × topic cell.")
@_signal_command("coverage")
def coverage(s: dict, show_all: bool) -> None:
    """Coverage gaps: refused / low-confidence questions grouped by meaning (jobs.question_gaps)."""
    rule, scan = s["gap_rule"], s["scan"]
    click.echo(f"{s['gaps']} gaps (>= {rule['min_questions']} questions from >= {rule['min_users']} users in "
               f"{rule['window_days']} days) among {scan['questions']} refused/low-confidence questions "
               f"({scan['groups']} groups, model {scan['model'] or '-'}, cosine >= {scan['similarity']:g}"
               + (f", {scan['unreadable']} in languages no model reads" if scan["unreadable"] else "") + ")")
    for g in s["question_gaps"]:
        languages = " ".join(f"{lang}:{n}" for lang, n in g["by_language"].items())
        click.echo(f"  {g['label']}  n={g['n']} users={g['users']} [{languages}]  → {g['action_text']}")
        for sample in g["samples"][:3]:
            click.echo(f"      “{sample}”")
        for page in g["nearest"]:
            click.echo(f"      {page['score']:.2f}  {page['doc_id']}")
    if show_all:
        click.echo(f"intent × topic cells with >= {s['min_questions']} questions in {s['window_days']} days "
                   f"({s['unlabelled']} answers unlabelled):")
        for c in (c for c in s["cells"] if c["evaluated"] or c["gaps"]):
            thumbs = "-" if c["thumbs_up_rate"] is None else f"{c['thumbs_up_rate']:.0%}"
            mark = f"  GAP {', '.join(c['gaps'])}" if c["gaps"] else ""
            click.echo(f"  {c['intent']:<15} {c['topic_id']:>5} {c['topic'][:50]:<50} n={c['n']:<6} refused "
                       f"{c['refusal_rate']:.0%}  docs {c['avg_retrieved']:.1f}  👍 {thumbs}{mark}")


@_signal_command("freshness")
def freshness(s: dict) -> None:
    """Stale documents per collection, stale-and-cited ones, unreachable sources, sources changed since indexing."""
    if s["status"] == "no_index":
        raise click.ClickException("no index yet: run `minerva ingest` first")
    for name, c in s["collections"].items():
        days = "never" if c["staleness_days"] is None else f"{c['staleness_days']} days"
        click.echo(f"{name}: {c['stale']} of {c['active']} active documents stale (after {days})")
        for entry in c.get("oldest", []):  # which ones: a count alone sends the owner searching
            click.echo(f"  {entry['doc_id']}  ({entry['age_days']} days since it changed)")


@_signal_command("bad_docs")
def bad_docs(s: dict) -> None:
    """Documents cited in badly rated answers (thumbs-up rate, wrong-answer reports), and report spikes."""
    click.echo(f"{len(s['bad'])} bad of {s['evaluated']} documents cited often enough ({s['documents_cited']} cited "
               f"in {s['window_days']} days)")
    for r in s["worst"]:
        rate = "-" if r["thumbs_up_rate"] is None else f"{r['thumbs_up_rate']:.0%}"
        mark = " BAD" if r["reasons"] else ""
        click.echo(f"  {r['doc_id']:<45} cited {r['citations']:<6} 👍 {rate:<5} flags {r['flags']}{mark}")


@_signal_command("citation_health")
def citations(s: dict) -> None:
    """Citation health: citations per answer, Gini concentration, no-citation rate, chunk-level ratio, reuse."""
    click.echo(f"{s['status']}: {s['answered']} answered of {s['answers']} questions in {s['window_days']} days")
    for key in ("avg_citations", "gini", "top5_share", "no_citation_rate", "chunk_level_ratio", "reuse"):
        if key in s:
            click.echo(f"  {key:<18} {_num(s[key])}")


@_signal_command("drift")
def drift(s: dict) -> None:
    """Drift of intents, topics, cited documents and languages: the last 7 days vs the 90 before."""
    for metric, m in s["metrics"].items():
        click.echo(f"{metric:<10} {m['status']:<18} n={m['n_recent']} vs {m['n_baseline']}  p={_num(m['p_value'])}  "
                   f"JS={_num(m['js_distance'])}  KL={_num(m['kl_smoothed'])}")


@click.command()
@click.option("--execute", is_flag=True, help="Sync the collections of the high and normal priority documents.")
@click.option("--json", "as_json", is_flag=True, help="Print {status, findings[, executed]} as JSON.")
@now_option
@click.pass_obj
def reindex(obj, execute: bool, as_json: bool, now: datetime | None) -> None:
    """The auto-reindex queue (stale +3, low quality +2, chunking drift +1, source modified +5)."""
    from jobs import reindex as reindexing

    executed = None
    if execute:
        executed, result = reindexing.execute_queue(_context(obj, now))
    else:
        result = _run(obj, "reindex", now)
    if as_json:
        click.echo(json.dumps({"status": result.status, "findings": [asdict(f) for f in result.findings],
                               "executed": executed}, ensure_ascii=False, default=str))
        return
    if result.status["status"] == "no_index":
        raise click.ClickException("no index yet: run `minerva ingest` first")
    if executed is not None:
        click.echo(f"re-indexed: {', '.join(executed['collections']) or 'nothing queued'}")
    counts = result.status["counts"]
    click.echo(f"queue: {counts['high']} high, {counts['normal']} normal, {counts['review']} for human review")
    for item in result.status["queue"]:
        click.echo(f"  {item['priority']:<7} {item['score']:>2}  {item['doc_id']:<45} {', '.join(item['reasons'])}")


@click.command()
@click.option("--all", "show_all", is_flag=True, help="Include done and dismissed items.")
@click.option("--done", "done_id", type=int, help="Mark item ID done.")
@click.option("--dismiss", "dismiss_id", type=int, help="Mark item ID dismissed (it will not come back).")
@click.option("--reopen", "reopen_id", type=int, help="Open item ID again.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per item.")
@click.pass_obj
def review(obj, show_all: bool, done_id: int | None, dismiss_id: int | None, reopen_id: int | None,
           as_json: bool) -> None:
    """The review queue: treatment candidates from every signal, most urgent first."""
    from jobs.review import close, items

    for item_id, status in ((done_id, "done"), (dismiss_id, "dismissed"), (reopen_id, "open")):
        if item_id is not None:
            close(obj.store, item_id, status, now=datetime.now(timezone.utc))
            click.echo(f"item {item_id}: {status}", err=True)
    found = items(obj.store, status=None if show_all else "open")
    for item in found:
        if as_json:
            click.echo(json.dumps(item, ensure_ascii=False))
            continue
        state = "" if item["status"] == "open" else f" [{item['status']}]"
        click.echo(f"#{item['item_id']:<4} P{item['priority']} {item['action']:<24} {item['subject']}{state}\n"
                   f"      {item['reason']}")
    if not found and not as_json:
        click.echo("the review queue is empty")


@click.command()
@click.option("--limit", type=click.IntRange(1), help="Label at most this many answers (oldest first).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
def classify(obj, limit: int | None, as_json: bool) -> None:
    """Label unlabelled answers with an intent and a stable topic (loads the embedding model)."""
    from jobs.classify import label_pending

    ctx = _context(obj)
    report = label_pending(ctx.store, obj.kb.embedder, ctx.extra["monitoring"].classification, now=ctx.now,
                           limit=limit)
    if as_json:
        click.echo(json.dumps(report.to_json()))
        return
    intents = ", ".join(f"{k} {v}" for k, v in sorted(report.intents.items(), key=lambda kv: -kv[1]))
    click.echo(f"labelled {report.labelled} answers ({intents or 'none'}); {report.new_topics} new topics"
               + (f"; {report.pending_left} left" if report.pending_left else ""))


def _num(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1e-3 and value else f"{value:.3f}"
    return str(value)
