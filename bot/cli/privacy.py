"""Questions are personal data (issue 10 item 6): the retention policy and forgetting one person.

    minerva retention [--now ISO] [--json]     apply config `retention` now (the daily job does the same)
    minerva forget --user U… [--dry-run] [--json]   remove one person's questions, votes and reports

Both call `jobs.retention`, which asks the feedback store (`FeedbackStore.apply_retention`, `forget_user`);
no SQL here.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import click

from bot.cli.monitoring import now_option


def register(cli: click.Group) -> None:
    """Add this module's commands to ``cli``."""
    cli.add_command(retention)
    cli.add_command(forget)


@click.command()
@now_option
@click.option("--json", "as_json", is_flag=True, help="Print the counts as one JSON object.")
@click.pass_obj
def retention(obj, now: datetime | None, as_json: bool) -> None:
    """Remove question texts and anonymise user ids older than the config's `retention` policy.

    Questions older than retention.questions_days become "[removed]"; user ids older than
    retention.user_ids_days become a salted pseudonym (user_ids: hash) or nothing (user_ids: remove). The
    counts the monitoring jobs use (refusals, votes, reports, citations) stay.
    """
    from jobs.retention import apply

    now = now or datetime.now(timezone.utc)
    policy = obj.settings.retention
    counts = apply(obj.store, policy, now=now)
    if as_json:
        click.echo(json.dumps({"now": now.isoformat(), "enabled": policy.enabled, "changed": counts}))
        return
    if not policy.enabled:
        click.echo("Retention is off (retention.enabled: false): nothing changed.")
        return
    click.echo(f"Retention as of {now.isoformat(timespec='seconds')}: questions older than {policy.questions_days} "
               f"days, user ids older than {policy.user_ids_days} days ({policy.user_ids}).")
    for name, n in counts.items():
        click.echo(f"  {name}: {n}")


@click.command()
@click.option("--user", "user_id", required=True, metavar="U…", help="The Slack user id to forget.")
@click.option("--dry-run", is_flag=True,
              help="Only count, per table.column, the rows that hold the id or quote their questions; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the counts as one JSON object.")
@click.pass_obj
def forget(obj, user_id: str, dry_run: bool, as_json: bool) -> None:
    """Remove one person's questions, votes and wrong-answer reports, and their id from every table.

    Their answers are deleted with what hangs off them (citations, passages, labels, others' votes on
    them); their votes and reports on other answers are deleted; their questions and id are scrubbed from
    alerts (a coverage gap's samples and by_user), review items, switch reasons, silence comments and job
    errors; operator columns (acks, silences, kill switch, quarantine) keep the action as "[forgotten]".
    Prints the rows removed or changed per table.
    """
    from jobs.retention import forget as forget_user

    user_id = user_id.strip()
    if not user_id:
        raise click.BadParameter("give a Slack user id, e.g. U012AB3CD", param_hint="--user")
    try:
        counts = obj.store.user_rows(user_id) if dry_run else forget_user(obj.store, user_id)
    except ValueError as exc:  # an id the store does not accept
        raise click.ClickException(str(exc)) from exc
    if as_json:
        click.echo(json.dumps({"user": user_id, "dry_run": dry_run,
                               ("found" if dry_run else "removed"): counts}))
        return
    verb = "would act on" if dry_run else "removed or anonymised"
    click.echo(f"{user_id}: {sum(counts.values())} row(s) {verb}.")
    for name, n in counts.items():
        if n or not dry_run:
            click.echo(f"  {name}: {n}")
