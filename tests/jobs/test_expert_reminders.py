"""The ``expert_reminders`` job (`jobs.escalations`) and the daily digest's "Waiting for an expert" (issue 25)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from bot.slack.digest_blocks import digest_messages
from bot.slack.experts import GAP_ANSWER_ACTION
from config import load_settings
from config.alerts import load_alerts_config
from feedback import FeedbackStore
from jobs.alerts import evaluate
from jobs.digest import build_digest
from jobs.escalations import remind
from jobs.findings import Finding
from jobs.notify import Delivery
from jobs.runner import JobEnv, JobRunner

NOW = datetime(2026, 12, 4, 9, 0, tzinfo=timezone.utc)


class Replies:
    """A `jobs.notify.Notifier`'s ``post_reply``, recorded."""

    def __init__(self) -> None:
        self.posted: list[tuple[str, str | None, str]] = []

    async def post_reply(self, channel, thread_ts, text, blocks) -> Delivery:
        self.posted.append((channel, thread_ts, text))
        return Delivery(channel, ts="1.1")


def ask(store, request_id: str, hours_ago: float) -> None:
    store.claim_expert_request(request_id=request_id, question=f"question {request_id}?", attempt="", asker="U1",
                               channel="C1", thread_ts="1.0", whom="UEXPERT", doc_ids=[], language="en",
                               requested_at=NOW - timedelta(hours=hours_ago))
    store.set_expert_request_posted(request_id, [("DEXPERT", f"5.{request_id}")])


async def test_an_unanswered_request_is_reminded_once_then_waits_in_the_daily_digest(tmp_path) -> None:
    settings = load_settings()  # experts.remind_after_hours: 24
    with FeedbackStore.open(tmp_path / "m.sqlite") as store:
        ask(store, "old", 30)
        ask(store, "new", 2)
        replies = Replies()
        assert await remind(store, settings, replies, now=NOW) == 1
        assert replies.posted == [("DEXPERT", "5.old", "Still waiting for an answer: <@U1> asked “question old?”.")]
        assert await remind(store, settings, replies, now=NOW + timedelta(hours=48)) == 1  # "new" now; "old" never again
        assert [p[1] for p in replies.posted] == ["5.old", "5.new"]
        assert await remind(store, settings, None, now=NOW) == 0

        digest = build_digest(store, load_alerts_config(), kind="daily", now=NOW)
        assert digest.experts_waiting == 2 and not digest.empty
        text = str(digest_messages(digest).main.blocks)
        assert "Waiting for an expert* — 2 unanswered" in text and "question old?" in text
        store.resolve_expert_request("old", expert="UEXPERT", answer="Done.", at=NOW)
        assert build_digest(store, load_alerts_config(), kind="daily", now=NOW).experts_waiting == 1
        assert build_digest(store, load_alerts_config(), kind="weekly", now=NOW).experts_waiting == 0


def test_the_job_is_known_to_the_runner_and_the_schedule(tmp_path) -> None:
    config = load_alerts_config()
    runner = JobRunner(JobEnv(load_settings(), tmp_path, config), signal_jobs={})
    assert "expert_reminders" in runner.job_names()
    assert config.schedule.entry("expert_reminders").cron == "30 * * * *"


def test_a_coverage_gap_in_the_digest_carries_answer_this_once(tmp_path) -> None:
    config = load_alerts_config()
    gap = Finding(alert="coverage_gap", severity="warning", labels={"gap": "g1"}, value=6.0, threshold=5.0, n=6,
                  summary="6 questions on pet insurance were refused", link="",
                  annotations={"question": "do we get pet insurance?"})
    with FeedbackStore.open(tmp_path / "m.sqlite") as store:
        for k in range(3):  # past the rule's fire_after
            evaluate(store, config, "coverage", [gap], now=NOW - timedelta(hours=3 - k))
        digest = build_digest(store, config, kind="daily", now=NOW)
    buttons = [e for b in digest_messages(digest).main.blocks if b["type"] == "actions" for e in b["elements"]]
    assert [b["text"]["text"] for b in buttons if b["action_id"] == GAP_ANSWER_ACTION] == ["Answer this once"]
