"""Minerva's feedback event store: answers, citations, 👍/👎 votes, reports, Slack event keys, alert state,
review queue, kill switch and job leases, on SQLite (one file, the default) or PostgreSQL (several replicas).

`feedback` owns every table (`feedback.schema`) and every query over them; `jobs` and `bot` call its
functions. It knows nothing about Slack payloads or retrieval (it imports neither `bot` nor `knowledge`);
callers pass plain values. The store and its errors are re-exported here::

    from feedback import FeedbackStore, FeedbackError, UnknownAnswer, VoteResult

    store = FeedbackStore.open("var/minerva.sqlite")        # or "postgresql://minerva@db/minerva"
    if store.claim_event(event_id):          # False on a Slack retry: do nothing
        ...
"""

from feedback._time import parse_utc, utc_iso, utcnow
from feedback.answers import SOURCES
from feedback.errors import (
    DuplicateAnswer,
    FeedbackError,
    InvalidRecord,
    SchemaTooNew,
    StoreUnavailable,
    UnknownAnswer,
)
from feedback.migrations import MIGRATIONS
from feedback.store import FeedbackStore
from feedback.votes import VOTE_REASONS, VOTE_VALUES, VoteResult

__all__ = [
    "MIGRATIONS",
    "SOURCES",
    "VOTE_REASONS",
    "VOTE_VALUES",
    "DuplicateAnswer",
    "FeedbackError",
    "FeedbackStore",
    "InvalidRecord",
    "SchemaTooNew",
    "StoreUnavailable",
    "UnknownAnswer",
    "VoteResult",
    "parse_utc",
    "utc_iso",
    "utcnow",
]
