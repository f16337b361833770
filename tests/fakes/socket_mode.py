"""Slack's Socket Mode, faked; re-exported from the package (`bot.cli.sandbox.socket_mode`)."""

from bot.cli.sandbox.socket_mode import Envelope, FakeSocketMode  # noqa: F401
