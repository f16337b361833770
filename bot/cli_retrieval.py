"""CLI commands (filled in by the issue that owns them)."""

from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    """Add this module's commands to ``cli``."""
