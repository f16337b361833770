"""Pytest fixtures and helpers for tests that talk to a fake Slack.

Use in a test module with ``from tests.fakes.fixtures import fake_slack`` (pytest finds fixtures imported
into a module), or register the module once in the root conftest with
``pytest_plugins = ["tests.fakes.fixtures"]``. The request helpers live in the package
(`bot.cli.sandbox.signing`, shared with `minerva sandbox`) and are re-exported here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from bot.cli.sandbox.signing import button_click, event_envelope, mention_event, signed_request_headers
from bot.cli.sandbox.slack_api import FakeSlack

__all__ = ["fake_slack", "signed_request_headers", "event_envelope", "mention_event", "button_click"]


@pytest_asyncio.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    """A started FakeSlack on 127.0.0.1; stopped after the test."""
    fake = FakeSlack()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()
