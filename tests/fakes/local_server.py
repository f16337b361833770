"""The fakes' local aiohttp server, re-exported from the package (`bot.cli.sandbox.local_server`)."""

from bot.cli.sandbox.local_server import LocalServer  # noqa: F401
