"""Command groups that live in their own modules, added to the `minerva` CLI in one place."""

from __future__ import annotations

import importlib

import click

#: Modules that define ``register(cli: click.Group) -> None``; each adds its own commands.
PLUGIN_MODULES = ("bot.cli.monitoring", "bot.cli.alerts", "bot.cli.retrieval", "bot.cli.hygiene", "bot.cli.sources",
                  "bot.cli.privacy", "bot.cli.doctor_command", "bot.cli.db", "bot.cli.sandbox_command")


def register_all(cli: click.Group) -> None:
    """Import each plugin module and let it add its commands."""
    for name in PLUGIN_MODULES:
        importlib.import_module(name).register(cli)
