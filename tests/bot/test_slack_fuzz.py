"""Property-based tests of the Slack edge (hypothesis, 2,000 generated inputs per invariant).

The invariants and strategies live in `tests/bot/slack_properties.py`; `benchmarks/fuzz_slack.py` runs all four
(splitter, renderer, HTTP with foreign workspaces and apps, Socket Mode envelopes of any payload) with 100,000
inputs each (`benchmarks/results/fuzz_slack.json`).
"""

from __future__ import annotations

import pytest
import structlog.testing
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bot.slack.blocks import answer_blocks, split_graphemes
from tests.bot.slack_properties import (
    LiveApp,
    answers,
    as_mrkdwn,
    bodies,
    check_ack,
    check_blocks,
    check_refused,
    check_split,
    check_status,
    document_text,
    envelopes,
)

CI = settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@CI
@given(text=document_text, quoted=st.booleans(), limit=st.one_of(st.just(3000), st.integers(min_value=8, max_value=400)))
@example(text="\u0600\u0600&", quoted=True, limit=8)  # a prepended mark joins the entity's "&" into one cluster
def test_split_graphemes_cuts_only_between_clusters_and_outside_markup(text: str, quoted: bool, limit: int) -> None:
    mrkdwn = as_mrkdwn(text, quoted)
    check_split(mrkdwn, limit, split_graphemes(mrkdwn, limit))


@CI
@given(answer=answers)
def test_answer_blocks_stay_within_limits_and_never_ping(answer) -> None:
    check_blocks(answer_blocks(answer))


@pytest.fixture(scope="module")
def live_app(sample_settings, tmp_path_factory):
    app = LiveApp(sample_settings, tmp_path_factory.mktemp("fuzz-home"), socket=True)
    yield app
    app.close()


@CI
@given(body=bodies)
def test_every_signed_payload_gets_an_answer_without_a_500(live_app: LiveApp, body: bytes) -> None:
    with structlog.testing.capture_logs() as logs:
        status = live_app.post(body)
    check_status(body, status)
    check_refused(body, logs)


@CI
@given(envelope=envelopes)
def test_every_socket_mode_envelope_is_acked_whatever_its_payload(live_app: LiveApp, envelope) -> None:
    envelope_type, payload = envelope
    with structlog.testing.capture_logs() as logs:
        ack = live_app.envelope(envelope_type, payload)
    check_ack(payload, ack, logs)
