"""Setting Minerva up on the user's own documents.

    minerva sources list             configured sources and folders recorded by `minerva ingest FOLDER`
    minerva sources remove NAME      forget a recorded folder (the next plain ingest prunes its pages)
"""

from __future__ import annotations

import click

from config import ConfigError


def register(cli: click.Group) -> None:
    """Add this module's commands to ``cli``."""
    cli.add_command(sources)


@click.group()
def sources() -> None:
    """The sources a plain `minerva ingest` syncs: the config's and the folders recorded by `ingest FOLDER`."""


@sources.command("list")
@click.pass_obj
def sources_list(obj) -> None:
    """One line per source: name, path, and where it comes from (config file or HOME/sources.yaml)."""
    from config.home_sources import home_sources_path, load_home_sources

    try:
        recorded = {s.name for s in load_home_sources(obj.home)}
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    for source in obj.settings.sources:
        origin = home_sources_path(obj.home) if source.name in recorded else (obj.settings.path or "config")
        click.echo(f"{source.name}\t{source.path}\t({origin})")


@sources.command("remove")
@click.argument("name")
@click.pass_obj
def sources_remove(obj, name: str) -> None:
    """Forget the folder NAME recorded by `minerva ingest FOLDER`; the next plain ingest prunes its pages."""
    from config.home_sources import remove_home_source

    try:
        removed = remove_home_source(obj.home, name)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"forgot source {removed.name!r} ({removed.path}); the next `minerva ingest` removes its pages")
