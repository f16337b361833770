"""The retention job: questions and who asked, voted and reported are personal data (issue 10 item 6).

Runs daily from the scheduler (``retention`` in config/alerts.yaml, a built-in job of `jobs.runner`) and on
demand with ``minerva retention [--now ISO]``. The policy is the ``retention`` section of the main config
(`config.settings.RetentionConfig`); the rows are changed by the store (`FeedbackStore.apply_retention`,
SQL in `feedback.retention`), never here. What the monitoring signals aggregate stays, so coverage and
bad-document figures are the same before and after a run.

    counts = apply(store, settings.retention, now=datetime.now(timezone.utc))
    forgotten = forget(store, "U012AB3CD")
"""

from __future__ import annotations

from datetime import datetime

import structlog

log = structlog.get_logger(__name__)


def apply(store, policy, *, now: datetime) -> dict[str, int]:
    """Apply ``policy`` (`RetentionConfig`) to ``store`` as of ``now`` and log what changed.

    Returns:
        Rows changed per kind (`FeedbackStore.apply_retention`), or {} when ``policy.enabled`` is false.

    Raises:
        StoreUnavailable: SQLite failed; nothing was changed.
    """
    if not policy.enabled:
        log.info("retention.disabled", reason="retention.enabled is false in the config")
        return {}
    counts = store.apply_retention(questions_days=policy.questions_days, user_ids_days=policy.user_ids_days,
                                   user_ids=policy.user_ids, now=now)
    log.info("retention.applied", now=now.isoformat(), questions_days=policy.questions_days,
             user_ids_days=policy.user_ids_days, user_ids=policy.user_ids, **counts)
    return counts


def forget(store, user_id: str) -> dict[str, int]:
    """Remove one person from ``store`` (`FeedbackStore.forget_user`) and log the counts.

    The log line names the person by pseudonym only, so the log does not keep the id it was asked to forget.

    Returns:
        Rows removed or changed per table.

    Raises:
        ValueError: empty ``user_id``.
        StoreUnavailable: SQLite failed; nothing was removed.
    """
    counts = store.forget_user(user_id)
    log.warning("retention.user_forgotten", user=store.pseudonym(user_id), removed=sum(counts.values()), **counts)
    return counts
