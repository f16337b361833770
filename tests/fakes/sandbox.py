"""The sandbox moved into the package: `minerva sandbox` (`bot.cli_sandbox`, `bot.sandbox.conversation`)."""

from bot.sandbox.conversation import render, run, run_replicas  # noqa: F401
