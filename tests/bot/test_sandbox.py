"""`python -m tests.fakes.sandbox`: the README's way to try the Slack bot on your own pages without Slack."""

from __future__ import annotations

import io

from tests.fakes.sandbox import run


async def test_the_sandbox_asks_in_one_thread_and_shows_what_slack_would(sample_kb, sample_settings):
    out = io.StringIO()

    await run(sample_kb, sample_settings, ["what's the webhook timeout?", "and for retries?"], thumbs_down=True,
              out=out)

    shown = out.getvalue()
    assert shown.count("### you: @minerva") == 2 and shown.count("[👍] [👎]") == 2
    assert "seconds" in shown.split("### you clicked")[0]  # the first answer, as Slack renders it
    assert "[Outdated] [Wrong] [Incomplete] [Not what I asked]" in shown  # the private reason picker
