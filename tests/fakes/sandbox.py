"""The sandbox moved into the package: `minerva sandbox` (`bot.cli.sandbox_command`, `bot.cli.sandbox.conversation`)."""

from bot.cli.sandbox.conversation import render, run, run_replicas  # noqa: F401
