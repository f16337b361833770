"""Minerva's feedback event store: answers, citations, 👍/👎 votes and Slack event keys in one SQLite file.

`feedback` knows nothing about Slack payloads or retrieval (it imports neither `bot` nor `knowledge`);
callers pass plain values. Everything public is re-exported here::

    from feedback import FeedbackStore, FeedbackError, UnknownAnswer, VoteResult

    store = FeedbackStore.open("var/feedback.db")
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
