"""Command groups that live in their own modules, added to the `minerva` CLI in one place."""

from __future__ import annotations

import importlib

import click

#: Modules that define ``register(cli: click.Group) -> None``; each adds its own commands.
PLUGIN_MODULES = ("bot.cli_monitoring", "bot.cli_alerts", "bot.cli_retrieval", "bot.cli_hygiene", "bot.cli_setup",
                  "bot.cli_privacy", "bot.cli_doctor", "bot.cli_db", "bot.cli_sandbox")


def register_all(cli: click.Group) -> None:
    """Import each plugin module and let it add its commands."""
    for name in PLUGIN_MODULES:
        importlib.import_module(name).register(cli)
