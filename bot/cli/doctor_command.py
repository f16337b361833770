"""`minerva doctor`: is this deployment ready? One ✓/✗ line per check, with what to fix (`bot.cli.doctor`)."""

from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    """Add `doctor` to ``cli``."""
    cli.add_command(doctor)


@click.command()
@click.option("--json", "as_json", is_flag=True, help='Print {"ok": bool, "checks": [{name, status, detail, fix}]}.')
@click.option("--no-slack", is_flag=True, help="Skip the Slack checks (tokens, scopes, channels): a CLI-only setup.")
@click.option("--manifest", type=click.Path(dir_okay=False), default=None,
              help="Slack app manifest whose bot scopes the token needs (default: the repository's manifest.yml).")
@click.pass_obj
def doctor(obj, as_json: bool, no_slack: bool, manifest: str | None) -> None:
    """Check the deployment end to end and print what to fix; exit 1 when anything must be fixed.

    Checks: the config loads; every source folder exists, is readable and holds pages; the index exists,
    was built with the configured model and has answer-unit vectors; the feedback store opens and its
    schema is current; SLACK_BOT_TOKEN (and SLACK_APP_TOKEN / SLACK_SIGNING_SECRET) are of the right type
    and accepted; the token has every scope manifest.yml asks for; the bot is a member of each alert and
    digest channel.
    """
    from bot.cli.doctor import MANIFEST, exit_code, render, run_checks, to_json

    checks = run_checks(obj.settings, obj.home, config_error=obj.config_error, manifest=manifest or MANIFEST,
                        slack=not no_slack)
    click.echo(to_json(checks) if as_json else render(checks))
    raise SystemExit(exit_code(checks))
