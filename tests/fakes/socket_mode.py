"""Slack's Socket Mode, faked; re-exported from the package (`bot.sandbox.socket_mode`)."""

from bot.sandbox.socket_mode import Envelope, FakeSocketMode  # noqa: F401
