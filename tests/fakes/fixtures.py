"""Pytest fixtures and helpers for tests that talk to a fake Slack.

Use in a test module with ``from tests.fakes.fixtures import fake_slack`` (pytest finds fixtures imported
into a module), or register the module once in the root conftest with
``pytest_plugins = ["tests.fakes.fixtures"]``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest_asyncio
from slack_sdk.signature import SignatureVerifier

from tests.fakes.slack_api import FakeSlack


@pytest_asyncio.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    """A started FakeSlack on 127.0.0.1; stopped after the test."""
    fake = FakeSlack()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


def signed_request_headers(secret: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
    """Headers that make `body` a validly signed Slack request for the app's ``/slack/events`` route.

    Args:
        secret: the app's signing secret.
        body: the exact raw request body (JSON for events, ``payload=<json>`` form for interactivity,
            form fields for slash commands).
        timestamp: Unix seconds for ``X-Slack-Request-Timestamp``; None means now. Slack apps reject
            timestamps more than 5 minutes from their clock, so pass an old one to test that.

    Returns:
        ``X-Slack-Request-Timestamp``, ``X-Slack-Signature`` (``"v0=<hex hmac-sha256>"``) and a
        ``Content-Type`` guessed from the body: ``application/json`` when it starts with ``{``, else
        ``application/x-www-form-urlencoded``.
    """
    timestamp = int(time.time()) if timestamp is None else timestamp
    signature = SignatureVerifier(secret).generate_signature(timestamp=str(timestamp), body=body)
    is_json = body.lstrip().startswith(b"{")
    return {
        "X-Slack-Request-Timestamp": str(timestamp),
        "X-Slack-Signature": signature,
        "Content-Type": "application/json" if is_json else "application/x-www-form-urlencoded",
    }
