"""The ``expert_reminders`` job: an "Ask an expert" request nobody answered is reminded once (issue 25 item 1).

A request open for ``experts.remind_after_hours`` gets one reminder, posted as a reply under each of its
experts' messages (where the "Answer" button is). The store claims each reminder with one conditional update
(`FeedbackStore.claim_expert_reminders`), so a request is reminded once however often the job runs and on
however many replicas. After that it waits in the daily digest's "Waiting for an expert" (`jobs.digest`).
"""

from __future__ import annotations

from datetime import datetime, timedelta

import structlog

from knowledge.messages import message

log = structlog.get_logger(__name__)


async def remind(store, settings, notifier, *, now: datetime) -> int:
    """Remind the requests due and return how many were reminded.

    Args:
        store: the feedback store.
        settings: `config.Settings` (``experts.remind_after_hours``).
        notifier: a `jobs.notify.Notifier` (its ``post_reply``); None = Slack is not configured: nothing is
            claimed, so the reminders stay due for a run that can post them.
        now: aware time of the run.
    """
    if notifier is None:
        log.warning("experts.reminders_deferred", reason="no Slack client (SLACK_BOT_TOKEN unset)")
        return 0
    due = store.claim_expert_reminders(
        requested_before=now - timedelta(hours=settings.experts.remind_after_hours), now=now)
    for request in due:
        text = message("expert.reminder", asker=f"<@{request['asker']}>", question=request["question"][:300])
        for channel, ts in request["posted"]:
            delivery = await notifier.post_reply(channel, ts or None, text, [])
            if not delivery.ok:
                log.warning("experts.reminder_failed", request_id=request["request_id"], channel=channel,
                            error=delivery.error)
        log.info("experts.reminded", request_id=request["request_id"], whom=request["whom"])
    return len(due)
