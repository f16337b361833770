"""CLI for alerting, the kill switch, the scheduler's jobs and the weekly report.

    minerva alerts [--all] [--json]            firing and pending alerts (--all: resolved too)
    minerva silence FINGERPRINT --hours 24     mute an alert's notifications until then
    minerva unsilence FINGERPRINT              end its silences now
    minerva killswitch list|enable COLLECTION|disable COLLECTION|quarantine DOC_ID|release DOC_ID
    minerva jobs list | minerva jobs run NAME  the monitoring jobs; a run is recorded like a scheduled one
    minerva jobs preview [daily|weekly]      the digest and owners' messages as Slack would show them, unposted
    minerva report [--out report.html] [--no-signals]   the weekly quality report as one HTML page

Each command opens the store, calls one library function and prints; a `config.MinervaError` becomes ``Error: …``
(`bot.cli.main.MinervaGroup`).
"""

from __future__ import annotations

import asyncio
import json
import os
from datetime import datetime, timezone
from pathlib import Path

import click

from bot.cli.monitoring import now_option


def register(cli: click.Group) -> None:
    """Add this module's commands to ``cli``."""
    for command in (alerts_command, silence, unsilence, killswitch, jobs, report):
        cli.add_command(command)


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _alerts_config(obj):
    from config.alerts import alerts_config_for

    return alerts_config_for(obj.settings)


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M") if moment else "-"


@click.command("alerts")
@click.option("--all", "show_all", is_flag=True, help="Include resolved alerts.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per alert.")
@click.pass_obj
def alerts_command(obj, show_all: bool, as_json: bool) -> None:
    """List firing and pending alerts, most severe first (with --all, resolved ones too)."""
    from jobs.alerts import STATES, list_alerts

    states = STATES if show_all else ("pending", "firing")
    statuses = list_alerts(obj.store, _alerts_config(obj), states=states, now=_now())
    for s in statuses:
        a = s.alert
        note = (f"silenced until {_when(s.silenced_until)}" if s.silenced_until else
                "muted: re-index running" if s.inhibited else f"acked by {a.acked_by}" if a.acked_at else "")
        if as_json:
            click.echo(json.dumps({
                "fingerprint": a.fingerprint, "alert": a.alert, "severity": a.severity, "state": a.state,
                "labels": a.labels, "value": a.value, "threshold": a.threshold, "n": a.n, "summary": a.summary,
                "since": a.started_at.isoformat() if a.started_at else None, "note": note,
            }, ensure_ascii=False))
            continue
        labels = ",".join(f"{k}={v}" for k, v in sorted(a.labels.items()))
        # a measured rate against its limit says something; a finding that fires as itself (value = threshold,
        # a contradiction's "1.0 vs 1.0", issue 28) says it in its summary, printed below
        measured = f"value {a.value:g} vs {a.threshold:g}  " if None not in (a.value, a.threshold) \
            and a.value != a.threshold else ""
        click.echo(f"{a.fingerprint}  {a.state:<8} {a.severity:<8} {a.alert}  {labels}  {measured}"
                   f"since {_when(a.started_at or a.first_seen_at)}" + (f"  [{note}]" if note else ""))
        if a.summary:
            click.echo(f"    {' '.join(a.summary.split())[:200]}")
    if not statuses and not as_json:
        click.echo("No alerts." if show_all else "No firing or pending alerts (see --all).")


@click.command()
@click.argument("fingerprint")
@click.option("--hours", default=24.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="How long to silence it.")
@click.option("--comment", default="", help="Why (kept with the silence).")
@click.pass_obj
def silence(obj, fingerprint: str, hours: float, comment: str) -> None:
    """Silence the alert FINGERPRINT (or a unique prefix of it) for --hours."""
    from jobs.silences import add_silence

    try:
        made = add_silence(obj.store, fingerprint, hours=hours, by="cli", now=_now(), comment=comment)
    except ValueError as exc:  # hours out of range (an unknown fingerprint is a MinervaError)
        raise click.ClickException(str(exc)) from exc
    click.echo(f"silenced {made.fingerprint} until {_when(made.expires_at)} UTC")


@click.command()
@click.argument("fingerprint")
@click.pass_obj
def unsilence(obj, fingerprint: str) -> None:
    """End every active silence of the alert FINGERPRINT now."""
    from jobs.silences import remove_silences

    ended = remove_silences(obj.store, fingerprint, by="cli", now=_now())
    click.echo(f"ended {ended} silence(s)")


@click.group()
def killswitch() -> None:
    """Content taken out of search: documents quarantined after a wrong-answer spike, and collections an owner
    (or a signal users cannot cause) disabled. Every change is announced in the alert channel."""


@killswitch.command("list")
@click.pass_obj
def killswitch_list(obj) -> None:
    """Every collection and document that was ever switched, with its current state and the last change."""
    from jobs.killswitch import list_quarantine, list_states

    states, docs = list_states(obj.store), list_quarantine(obj.store)
    for s in states:
        state = "DISABLED" if s.disabled else "enabled"
        click.echo(f"{s.collection}  {state}  since {_when(s.changed_at)} by {s.changed_by}: {s.reason}")
    for d in docs:
        state = "QUARANTINED" if d.quarantined else "released"
        click.echo(f"{d.doc_id}  {state}  since {_when(d.changed_at)} by {d.changed_by}: {d.reason}")
    if not states and not docs:
        click.echo("No collection has been disabled and no document quarantined.")


@killswitch.command("disable")
@click.argument("collection")
@click.option("--reason", default="disabled by hand", show_default=True)
@click.pass_obj
def killswitch_disable(obj, collection: str, reason: str) -> None:
    """Take COLLECTION out of search (an owner's or admin's decision; announced in the alert channel)."""
    from jobs.killswitch import disable, enable_command

    obj.settings.source(collection)  # an unknown name is a ConfigError listing the known ones
    changed = disable(obj.store, collection, reason=reason, changed_by="cli", now=_now())
    if changed:
        _announce_taken_out(obj, {"collection": collection}, f"collection {collection}", reason,
                            enable_command(collection))
    click.echo(f"{collection}: disabled (out of search); put it back with `{enable_command(collection)}`"
               if changed else f"{collection} was already disabled")


@killswitch.command("enable")
@click.argument("collection")
@click.option("--reason", default="enabled by hand", show_default=True)
@click.pass_obj
def killswitch_enable(obj, collection: str, reason: str) -> None:
    """Put COLLECTION back into search (releases the kill switch)."""
    from jobs.killswitch import enable

    changed = enable(obj.store, collection, reason=reason, changed_by="cli", now=_now())
    if changed:
        _announce_put_back(obj, {"collection": collection})
    click.echo(f"{collection}: enabled (back in search)" if changed else f"{collection} was not disabled")


@killswitch.command("quarantine")
@click.argument("doc_id")
@click.option("--reason", default="quarantined by hand", show_default=True)
@click.pass_obj
def killswitch_quarantine(obj, doc_id: str, reason: str) -> None:
    """Take one document (DOC_ID, "collection:path") out of search; announced in the alert channel."""
    from jobs.page_actions import take_out

    changed = _change_document(take_out, obj, doc_id, reason)
    click.echo(f"{doc_id}: quarantined (out of search)" if changed else f"{doc_id} was already quarantined")


@killswitch.command("release")
@click.argument("doc_id")
@click.option("--reason", default="released by hand", show_default=True)
@click.pass_obj
def killswitch_release(obj, doc_id: str, reason: str) -> None:
    """Put a quarantined document back into search."""
    from jobs.page_actions import put_back

    changed = _change_document(put_back, obj, doc_id, reason)
    click.echo(f"{doc_id}: released (back in search)" if changed else f"{doc_id} was not quarantined")


def _announce_taken_out(obj, subject: dict[str, str], what: str, reason: str, command: str) -> None:
    """Announce in the alert channel that ``subject`` left search by hand, with the command that puts it back."""
    from jobs.alerts import announce
    from jobs.killswitch import announcement

    announce(obj.store, _alerts_config(obj), announcement(what=what, subject=subject, why=reason, command=command,
                                                          by="cli"), now=_now())


def _announce_put_back(obj, subject: dict[str, str]) -> None:
    """Resolve the announcement of ``subject`` (it is back in search)."""
    from jobs.alerts import resolve_announcement

    resolve_announcement(obj.store, _alerts_config(obj), subject, now=_now())


def _change_document(change, obj, doc_id: str, reason: str) -> bool:
    """Run ``change`` (`jobs.page_actions.take_out` or ``put_back``) on DOC_ID for the CLI; returns whether it
    changed anything. A DOC_ID that is not "collection:path" is a usage error (click.ClickException)."""
    try:
        return bool(change(obj.store, _alerts_config(obj), [doc_id], by="cli", reason=reason, now=_now()))
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc


@click.group()
def jobs() -> None:
    """The monitoring jobs that `minerva serve` schedules."""


def _runner(obj, *, with_slack: bool, now: datetime | None = None):
    from jobs.runner import JobEnv, JobRunner

    cfg = _alerts_config(obj)
    notifier = None
    token = os.environ.get("SLACK_BOT_TOKEN", "")
    if with_slack and token:
        from bot.slack.app import make_client
        from bot.slack.digests import SlackNotifier

        notifier = SlackNotifier(make_client(token, os.environ.get("SLACK_API_URL") or None),
                                 seconds_between_posts=cfg.digest.seconds_between_posts, top_items=cfg.digest.top_items)
    env = JobEnv(obj.settings, obj.home, cfg, kb=obj.kb, notifier=notifier)
    if now is not None:  # --now: the job and everything it records run as of that moment
        env.clock = lambda: now
    return JobRunner(env)


@jobs.command("list")
@click.pass_obj
def jobs_list(obj) -> None:
    """Each job with its schedule, last run and outcome."""
    from jobs.runs import last_runs

    runner = _runner(obj, with_slack=False)
    last = last_runs(obj.store)
    schedule = runner.env.config.schedule
    click.echo(f"{'job':<24} {'schedule':<22} {'last run (UTC)':<17} outcome")
    for name in runner.job_names():
        run = last.get(name)
        outcome = (run.outcome + (f": {run.error[:80]}" if run.error else "")) if run else "never run"
        click.echo(f"{name:<24} {schedule.entry(name).describe():<22} {_when(run.started_at if run else None):<17} {outcome}")


@jobs.command("run")
@click.argument("name")
@now_option
@click.pass_obj
def jobs_run(obj, name: str, now: datetime | None) -> None:
    """Run job NAME now (or as of --now), recorded like a scheduled run (posts to Slack when SLACK_BOT_TOKEN is set)."""
    runner = _runner(obj, with_slack=True, now=now)
    result = asyncio.run(runner.run(name, trigger="manual"))
    if result.outcome != "ok":
        raise click.ClickException(f"job {name} failed (run #{result.run_id}, counted by the job_failed alert; "
                                   f"`minerva jobs list` shows its runs): {result.error}")
    found = f", {result.findings} finding(s)" if result.findings is not None else ""
    click.echo(f"job {name}: ok (run #{result.run_id}{found})")
    routing = runner.env.config.routing
    channel = {"daily_digest": routing.daily_digest_channel, "weekly_digest": routing.weekly_digest_channel}
    if name in channel and (not channel[name] or runner.env.notifier is None):
        why = "no digest channel is set" if not channel[name] else "SLACK_BOT_TOKEN is not set"
        click.echo(f"  nothing was posted: {why}; `minerva jobs preview {name.split('_')[0]}` prints what it would "
                   "post, and to each page owner")


def _never_run_hint(store) -> None:
    """Say so when no monitoring job has run yet: an empty digest then means "not looked", not "all healthy"."""
    from jobs.runs import last_runs

    if not last_runs(store):
        click.echo("  no monitoring job has run yet on this home, so nothing was looked at: `minerva jobs run NAME` "
                   "runs one now (`minerva jobs list` names them), `minerva serve` runs them on schedule")


@jobs.command("preview")
@click.argument("kind", type=click.Choice(["daily", "weekly"]), default="daily")
@now_option
@click.pass_obj
def jobs_preview(obj, kind: str, now: datetime | None) -> None:
    """Print the KIND digest and each page owner's direct message as Slack would show them, posting and recording
    nothing (no Slack token needed): what `jobs run daily_digest` would send now."""
    from bot.cli.sandbox.conversation import render
    from bot.slack.digest_blocks import digest_messages
    from bot.slack.owner_blocks import owner_message
    from jobs import owners
    from jobs.digest import build_digest

    cfg = _alerts_config(obj)
    now = now or _now()
    digest = build_digest(obj.store, cfg, kind=kind, now=now)
    channel = cfg.routing.daily_digest_channel if kind == "daily" else cfg.routing.weekly_digest_channel
    click.echo(f"### {kind} digest to {channel or '(no channel set: slack.digest_channel in your config)'}")
    if digest.empty and kind == "daily":
        click.echo("(nothing to post: an empty daily digest is not posted)")
    else:
        messages = digest_messages(digest, top_items=cfg.digest.top_items)
        click.echo(render({"blocks": messages.main.blocks, "text": messages.main.text}))
        for reply in messages.thread:
            click.echo("  ↳ in its thread:")
            click.echo(render({"blocks": reply.blocks, "text": reply.text}))
    if digest.empty:
        _never_run_hint(obj.store)
    if kind != "daily":
        return
    try:
        documents = obj.kb.index().documents
    except Exception as exc:  # no index yet: no pages, no owners
        click.echo(f"(no page owners' messages: {exc})")
        return
    for report in owners.collect(obj.store, cfg, documents, owners.source_owners(obj.settings), now=now):
        message = owner_message(report)
        click.echo(f"\n### direct message to {report.owner}")
        click.echo(render({"blocks": message.blocks, "text": message.text}))


@click.command()
@click.option("--out", default="report.html", show_default=True, type=click.Path(dir_okay=False),
              help="Where to write the HTML page.")
@click.option("--days", default=None, type=click.IntRange(1, 365), help="Key-figure window (default: config, 7).")
@click.option("--signals/--no-signals", "with_signals", default=True, show_default=True,
              help="Ask the signal jobs for their figures (labelling new questions loads the embedding model); "
                   "without, panels use the feedback store and the index only.")
@now_option
@click.pass_obj
def report(obj, out: str, days: int | None, with_signals: bool, now: datetime | None) -> None:
    """Write the weekly quality report: one self-contained HTML page with its charts."""
    from jobs.findings import JobContext
    from jobs.report import build_report, collect_summaries

    cfg = _alerts_config(obj)
    now = now or _now()
    ctx = JobContext(settings=obj.settings, home=obj.home, store=obj.store, now=now, kb=obj.kb)
    made = build_report(obj.store, cfg, now=now, kb=obj.kb, summaries=collect_summaries(ctx) if with_signals else {},
                        window_days=days or cfg.digest.report_window_days)
    path = Path(out)
    try:
        path.write_text(made.html, encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot write {path}: {exc.strerror or exc}") from exc
    click.echo(f"wrote {path} ({len(made.charts)} chart(s): {', '.join(sorted(made.charts)) or 'no data yet'})")
