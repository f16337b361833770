"""The fakes' local aiohttp server, re-exported from the package (`bot.sandbox.local_server`)."""

from bot.sandbox.local_server import LocalServer  # noqa: F401
