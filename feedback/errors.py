"""Exceptions raised by the feedback store.

Every exception leaving `feedback` derives from `FeedbackError` (a `config.errors.MinervaError`); sqlite3
errors are translated where the store touches SQLite and chained with ``from``, so callers never need to
import sqlite3::

    FeedbackError
     ├── UnknownAnswer        a vote names an answer id that was never recorded (also a LookupError)
     ├── DuplicateAnswer      record_answer() was called twice with the same answer id
     ├── InvalidRecord        a field has a value the store does not accept (also a ValueError)
     ├── SchemaTooNew         the file was migrated by a newer Minerva than this one
     └── StoreUnavailable     SQLite could not open, read or write the file (locked, unreadable, disk full)

User-facing wording belongs to the caller (the Slack listener or the CLI); the messages here are for logs.
`StoreUnavailable.hint` says what to check, printed under the CLI's one-line error and by `minerva doctor`.
"""

from __future__ import annotations

from config.errors import MinervaError


class FeedbackError(MinervaError):
    """Base class of every error raised by the `feedback` package."""


class UnknownAnswer(FeedbackError, LookupError):
    """No answer with this id was recorded, e.g. a vote button on a message from another database.

    Attributes:
        answer_id: the id that was looked up.
    """

    def __init__(self, answer_id: str) -> None:
        super().__init__(f"no answer with id {answer_id!r} was recorded")
        self.answer_id = answer_id


class DuplicateAnswer(FeedbackError):
    """An answer with this id is already stored; answer ids must be unique (use a fresh UUID per answer).

    Attributes:
        answer_id: the id that was recorded twice.
    """

    def __init__(self, answer_id: str) -> None:
        super().__init__(f"an answer with id {answer_id!r} is already recorded")
        self.answer_id = answer_id


class InvalidRecord(FeedbackError, ValueError):
    """A field has a value the store does not accept (bad vote value, naive datetime, missing key, ...).

    Subclasses ValueError, so ``except ValueError`` at a call site keeps working.
    """


class SchemaTooNew(FeedbackError):
    """The database's ``PRAGMA user_version`` is higher than the newest migration this code knows.

    Attributes:
        found: the file's schema version.
        supported: the newest version this code can migrate to.
    """

    def __init__(self, path: str, found: int, supported: int) -> None:
        super().__init__(
            f"{path} has schema version {found}, but this Minerva only knows versions up to {supported}; "
            "upgrade Minerva or point it at another feedback database"
        )
        self.found = found
        self.supported = supported


class StoreUnavailable(FeedbackError):
    """SQLite failed: the file could not be opened, stayed locked past the busy timeout, or a write failed."""

    # the store is reached through a setting the code that fails never sees: say which one to check
    hint = ("check MINERVA_DATABASE_URL (or database.url in the config): the server must be reachable and the "
            "user allowed to connect")
