"""`minerva sandbox`: try the Slack bot on your own pages in a fake Slack workspace on this machine.

    minerva sandbox [--thumbs-down] [--report] [--channel ID] [--separate] [--ask-expert ANSWER] [--home] QUESTION…
    minerva sandbox --replicas 2 [--database-url URL] [--thumbs-down] QUESTION…

The questions are asked in one thread (the later ones as follow-ups) as signed Slack events, and what the bot
posts is printed as Slack shows it (`bot.cli.sandbox.conversation`). The index is the one ``minerva`` reads for this
``--config``/``--home``. With one replica the real app runs in this process against a throwaway store; with
``--replicas N`` real ``minerva serve`` processes share the PostgreSQL database ``--database-url`` (default:
``MINERVA_DATABASE_URL`` or ``database.url``; ``minerva db local`` starts one) and each event also reaches the
other replicas as Slack's retry. No token, no network, nothing listens beyond 127.0.0.1.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click


def register(cli: click.Group) -> None:
    """Add the `sandbox` command to ``cli``."""
    cli.add_command(sandbox)


@click.command()
@click.argument("questions", nargs=-1, required=True)
@click.option("--thumbs-down", is_flag=True, help="Click 👎 on each answer, show the private reason picker and "
                                                  "click its \"Wrong\".")
@click.option("--report", is_flag=True, help="Click \"Report a wrong answer\" on each answer and show the private "
                                             "confirmation.")
@click.option("--channel", metavar="ID", default="CSANDBOX", show_default=True,
              help="Ask in this channel: one of your config's `channels:` ids applies its settings (collections, "
                   "private replies, experts, language).")
@click.option("--separate", is_flag=True, help="Ask each question as its own message, not as replies in one thread.")
@click.option("--ask-expert", "ask_expert", metavar="ANSWER", default=None,
              help="Click \"Ask an expert\" on the first reply, answer it with ANSWER as the expert (experts.ask, or a "
                   "stand-in), then ask the first question again to see the kept answer.")
@click.option("--home", "show_home", is_flag=True, help="Print the App Home tab at the end.")
@click.option("--replicas", type=click.IntRange(1, 5), default=1, show_default=True,
              help="1: the app in this process, throwaway store. 2 or more: real `minerva serve` processes on one "
                   "PostgreSQL database; each event goes to one and, as Slack's retry, to the others.")
@click.option("--database-url", metavar="URL", default=None,
              help="With --replicas: the PostgreSQL database they share (default: MINERVA_DATABASE_URL or "
                   "database.url; `minerva db local` starts one). Their answers and votes stay in it.")
@click.pass_context
def sandbox(ctx: click.Context, questions: tuple[str, ...], thumbs_down: bool, report: bool, channel: str,
            separate: bool, ask_expert: str | None, show_home: bool, replicas: int, database_url: str | None) -> None:
    """Ask the Slack bot QUESTIONS in a fake Slack workspace on this machine and print what Slack would show.

    No Slack app or token is needed: each question is sent as a signed mention (the later ones as follow-ups in
    the first one's thread) and the bot's replies are printed with their quotes, source lines and buttons.
    Answers come from the index of this --config/--home (run `minerva ingest` first). Exit code 1 when a
    question with --replicas was answered other than once.
    """
    import asyncio

    from knowledge.index import config_mismatch, current_generation, index_root

    obj = ctx.obj
    if replicas == 1 and database_url:
        raise click.UsageError("--database-url is for --replicas 2 or more (one replica uses a throwaway store)")
    if replicas > 1 and (channel != "CSANDBOX" or separate or ask_expert is not None or show_home or report):
        raise click.UsageError("--channel, --separate, --ask-expert, --home and --report are for one replica")
    shared = _shared_database(obj, database_url, replicas) if replicas > 1 else None
    if current_generation(obj.home) is None:
        click.echo(f"warning: no index in {index_root(obj.home)} yet: run `minerva ingest` first, or every answer "
                   "says \"not ready\"", err=True)
    elif warning := config_mismatch(obj.home, obj.settings):
        click.echo(f"warning: {warning}", err=True)
    if replicas == 1:
        from bot.cli.sandbox.conversation import run
        from knowledge import KnowledgeBase

        try:
            asyncio.run(run(KnowledgeBase(obj.settings, obj.home), obj.settings, list(questions),
                            thumbs_down=thumbs_down, channel=channel, separate=separate, expert_answer=ask_expert,
                            home=show_home, report=report))
        except TimeoutError as exc:
            raise click.ClickException(str(exc)) from exc
        return
    _sandbox_replicas(ctx, list(questions), replicas, shared, thumbs_down)


def _shared_database(obj, database_url: str | None, count: int) -> str:
    """The PostgreSQL URL the replicas share: ``--database-url``, else the store's own when it is PostgreSQL."""
    from feedback.db import is_url, redact

    url = database_url or (str(obj.database) if is_url(obj.database) else None)
    if not url or url.split("://", 1)[0].lower() not in ("postgresql", "postgres", "postgresql+psycopg"):
        shown = f" ({redact(url)} is not PostgreSQL)" if url else ""
        raise click.UsageError(f"--replicas {count} needs a PostgreSQL database they share{shown}: start one with "
                               "`minerva db local` and pass its URL with --database-url (or MINERVA_DATABASE_URL)")
    return url


def _sandbox_replicas(ctx: click.Context, questions: list[str], count: int, url: str, thumbs_down: bool) -> None:
    import asyncio

    from bot.cli.sandbox.conversation import run_replicas
    from config.home_sources import home_sources_path
    from feedback.db import redact
    from knowledge.index import index_root

    obj = ctx.obj
    config = ctx.find_root().params.get("config_path")
    try:
        wrong = asyncio.run(run_replicas(
            questions, count=count, database_url=url, index_dir=index_root(obj.home).resolve(),
            config=Path(config) if config else None, home_sources=home_sources_path(obj.home),
            thumbs_down=thumbs_down))
    except (RuntimeError, TimeoutError) as exc:
        raise click.ClickException(str(exc)) from exc
    if wrong:
        click.echo(f"Error: {wrong} of {len(questions)} question(s) were answered more than once", err=True)
        sys.exit(1)
    click.echo(f"\nevery question was answered once by {count} replicas on {redact(url)}", err=True)
