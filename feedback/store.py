"""`FeedbackStore`: one SQLite file holding answers, citations, votes and Slack event keys.

Opening the store sets the connection pragmas and applies pending migrations (`feedback.migrations`).
The row logic lives in `feedback.answers`, `feedback.votes` and `feedback.events`; this module owns the
connection, the lock, the transactions and the translation of sqlite3 errors into `FeedbackError`s.

Example::

    store = FeedbackStore.open("var/feedback.db")
    store.record_answer(answer_id=answer_id, question="How many leave days?", channel="C1",
                        thread_ts="1700000000.000100", user_id="U1", retrieved=[...],
                        cited_doc_ids=["hr:leave.md"], refused=False, top_score=0.81, latency_ms=420.0)
    result = store.record_vote(answer_id, "U1", "up")   # VoteResult(changed=True, previous=None, value="up")
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

import sqlalchemy as sa
import sqlite_utils
from sqlalchemy.engine import Connection, Engine

from feedback.answers import (
    build_answer_row,
    count_hallucinations,
    fetch_answer,
    fetch_recent_languages,
    fetch_thread,
    fetch_unanswered,
    insert_answer,
)
from feedback import experts
from feedback.errors import FeedbackError, InvalidRecord, SchemaTooNew, StoreUnavailable
from feedback._time import utc_iso
from feedback.events import delete_event_keys, insert_event_key
from feedback.flags import insert_flag
from feedback.gap_scores import fetch_history, fetch_last_scores, insert_gap_scores
from feedback.db import (
    BUSY_TIMEOUT_MS,
    SQLITE_PRAGMAS,
    begin_read,
    begin_write,
    create_engine,
    is_postgres,
    redact,
)
from feedback.migrations import (
    MIGRATIONS,
    SCHEMA_LOCK_KEY,
    add_missing,
    apply_migrations,
    create_current,
    current_version,
)
from feedback.replies import due_replies, keep_undelivered, reply_delivered, reply_failed_again
from feedback.retention import apply_retention, forget_user, pseudonym, salt, user_rows
from feedback import verifications
from feedback.votes import VoteResult, count_reasons, insert_first_vote, fetch_votes, set_vote_reason, upsert_vote

#: Kept under their old names for callers of this module.
CONNECTION_PRAGMAS = SQLITE_PRAGMAS


class FeedbackStore:
    """The feedback event store on SQLite or PostgreSQL, safe to call from several threads and processes.

    Every method runs in its own transaction on a connection from the engine's pool (`transaction`,
    `snapshot`): SQLite serialises writers with ``BEGIN IMMEDIATE`` + busy_timeout and lets reads run beside
    them (WAL); PostgreSQL settles concurrent writers with ``ON CONFLICT`` upserts, row locks and, for the
    alert state, an advisory lock (`feedback.alerting.lock_alert_state`). Other processes (jobs, more bot
    replicas) open their own store on the same file or database.

    Create it with `FeedbackStore.open`, not the constructor.

    Attributes:
        target: what it was opened on: a SQLite path or a database URL (show it with `feedback.db.redact`).
        path: the SQLite file, or None on PostgreSQL.
        engine: the SQLAlchemy engine; the query modules of this package use it through `transaction` and
            `snapshot`.
        db: SQLite only (None on PostgreSQL): a sqlite-utils view of the file for SQLite-only conveniences —
            exports, ad-hoc reads in tests and the command line. Never a second query layer: the store's
            queries live in this package's modules and run on both databases.
    """

    def __init__(self, target: str | Path, engine: Engine) -> None:
        self.target = target
        self.path = None if is_postgres(engine) else Path(engine.url.database)
        self.engine = engine
        self._db: sqlite_utils.Database | None = None
        self._lock = threading.Lock()
        self._closed = False

    @property
    def db(self) -> sqlite_utils.Database | None:
        """SQLite only (None on PostgreSQL): the sqlite-utils view, opened on first use (see the class docstring)."""
        with self._lock:
            if self._db is None and self.path is not None and not self._closed:
                self._db = sqlite_utils.Database(_sqlite_connection(self.path))
            return self._db

    @classmethod
    def open(cls, target: str | Path) -> FeedbackStore:
        """Opens (creating if needed) the store at ``target`` and migrates it to the current schema.

        Idempotent: opening an up-to-date store runs no migration. A new store is created from
        `feedback.schema`; an older SQLite file runs its pending migrations (`feedback.migrations`).

        Args:
            target: a SQLite file path (missing parent directories are created) or a database URL,
                ``sqlite:///…`` or ``postgresql://user:pass@host/db`` (`feedback.db.create_engine`).

        Returns:
            An open store; call `close` when done (or use it as a context manager).

        Raises:
            SchemaTooNew: the store was migrated by a newer version of Minerva.
            StoreUnavailable: the file or server cannot be reached or created, the file is not a SQLite
                database, or it stayed locked longer than BUSY_TIMEOUT_MS.
        """
        shown = redact(target)
        try:
            engine = create_engine(target)
        except (OSError, ValueError, sa.exc.ArgumentError) as error:
            raise StoreUnavailable(f"cannot open feedback database {shown}: {error}") from error
        try:
            if _prepare(engine, shown) < len(MIGRATIONS):  # a SQLite file made by an older Minerva
                with contextlib.closing(_sqlite_connection(Path(engine.url.database))) as conn:
                    apply_migrations(sqlite_utils.Database(conn))
        except FeedbackError:
            engine.dispose()
            raise
        except (sqlite3.Error, sa.exc.SQLAlchemyError) as error:
            engine.dispose()
            raise StoreUnavailable(f"cannot open feedback database {shown}: {_reason(error)}") from error
        return cls(target, engine)

    @contextlib.contextmanager
    def transaction(self, *, one_statement: bool = False) -> Iterator[Connection]:
        """A write transaction for the store's query modules: committed on exit, rolled back on error.

        SQLite takes the write lock up front (``BEGIN IMMEDIATE``), so a read-then-write cannot fail
        half-way; PostgreSQL runs at READ COMMITTED (`feedback.db.begin_write`; ``one_statement=True``: the
        block runs one statement, in autocommit mode on PostgreSQL). Not re-entrant.

        Yields:
            A SQLAlchemy Connection, valid only inside the block; query it with `feedback.db.rows` etc.

        Raises:
            StoreUnavailable: the database failed (the transaction was rolled back) or the store is closed.
        """
        with self._translating_errors(), begin_write(self.engine, one_statement=one_statement) as conn:
            yield conn

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """A read transaction over one consistent snapshot of the store (SELECTs only).

        Jobs aggregate over it for seconds without blocking the bot's writers (SQLite WAL, PostgreSQL MVCC).

        Raises:
            StoreUnavailable: the database failed or the store is closed.
        """
        with self._translating_errors(), begin_read(self.engine) as conn:
            yield conn

    def record_answer(
        self,
        *,
        answer_id: str,
        question: str,
        channel: str | None,
        thread_ts: str | None,
        user_id: str | None,
        retrieved: list[dict],
        cited_doc_ids: list[str],
        refused: bool,
        top_score: float,
        latency_ms: float,
        language: str = "en",
        low_confidence: bool = False,
        source: str = "slack",
        visibility: list[str] | None = None,
        created_at: datetime | None = None,
        hallucination_flag: bool = False,
        generated: bool = False,
        follow_up_of: str | None = None,
        answered_from: list[str] | None = None,
    ) -> None:
        """Stores one answer (or refusal) and one `citations` row per cited document, atomically.

        Args:
            answer_id: unique id, e.g. ``uuid4().hex``; carried by the feedback buttons.
            question: the user's question text.
            channel: Slack channel id (``"C…"``/``"D…"``), None for the CLI.
            thread_ts: the thread the answer was posted in, None for the CLI.
            user_id: asker's Slack user id, None for the CLI.
            retrieved: the passages retrieved, best first; dicts with at least ``chunk_id`` (str),
                ``doc_id`` (str) and ``score`` (calibrated relevance in [0, 1]); extra JSON-serialisable
                keys are kept.
            cited_doc_ids: doc ids cited in the answer, in display order; empty for a refusal.
            refused: True when the bot declined to answer (no passage good enough).
            top_score: best calibrated score among `retrieved`, in [0, 1]; 0.0 when nothing was retrieved.
            latency_ms: time from question received to answer ready, milliseconds, >= 0.
            language: language code of the question, e.g. ``"en"``.
            low_confidence: True when the answer was shown with a low-confidence warning.
            source: ``"slack"`` or ``"cli"`` (see `feedback.answers.SOURCES`).
            visibility: visibility labels of the cited documents (``"public"``/``"restricted"``), or None.
            created_at: aware datetime; None means now. Stored as ISO-8601 UTC text.
            hallucination_flag: True when the generator wrote a sentence its cited passage does not
                support (removed by the grounding check); the accuracy signal counts it per cited document.
            generated: True when the shown direct answer was written by the generator.
            follow_up_of: answer id of the earlier answer in the same thread this question followed up on.
            answered_from: the cited doc ids the direct answer came from: the answer's votes and reports judge
                them, not the pages cited beside them (issue 26 item 4); None = every cited page.

        Raises:
            InvalidRecord: a field fails validation (see `feedback.answers.build_answer_row`).
            DuplicateAnswer: `answer_id` is already stored; nothing is written.
            StoreUnavailable: SQLite failed; nothing is written.
        """
        row = build_answer_row(
            answer_id=answer_id, question=question, channel=channel, thread_ts=thread_ts,
            user_id=user_id, retrieved=retrieved, cited_doc_ids=cited_doc_ids, refused=refused,
            top_score=top_score, latency_ms=latency_ms, language=language,
            low_confidence=low_confidence, source=source, visibility=visibility, created_at=created_at,
            hallucination_flag=hallucination_flag, generated=generated, follow_up_of=follow_up_of,
        )
        with self.transaction() as conn:
            insert_answer(conn, row, answered_from)

    def thread_answers(self, channel: str, thread_ts: str) -> list[dict[str, Any]]:
        """The answers the bot posted in one Slack thread, oldest first; [] for a thread it never answered.

        Each is ``{"answer_id", "question", "follow_up_of", "refused", "created_at"}`` (see
        `feedback.answers.fetch_thread`). Used to give a reply in the thread its earlier questions.

        Raises:
            StoreUnavailable: SQLite failed.
        """
        with self.snapshot() as conn:
            return fetch_thread(conn, channel, thread_ts)

    def recent_languages(self, user_id: str, limit: int = 5) -> list[str]:
        """The languages of ``user_id``'s last ``limit`` questions, newest first; [] for someone who never asked
        (see `feedback.answers.fetch_recent_languages`). App Home frames its labels in them.

        Raises:
            InvalidRecord: an empty ``user_id`` or a ``limit`` below 1.
            StoreUnavailable: the database failed.
        """
        if not user_id or limit < 1:
            raise InvalidRecord(f"recent_languages needs a user id and a limit >= 1; got {user_id!r}, {limit!r}")
        with self.snapshot() as conn:
            return fetch_recent_languages(conn, user_id, limit)

    def get_answer(self, answer_id: str) -> dict[str, Any] | None:
        """Returns the stored answer, JSON columns decoded, or None (see `feedback.answers.fetch_answer`).

        Raises:
            StoreUnavailable: SQLite failed.
        """
        with self.snapshot() as conn:
            return fetch_answer(conn, answer_id)

    def unanswered_questions(self, *, since: datetime, until: datetime) -> list[dict[str, Any]]:
        """Questions refused or answered with low confidence in ``[since, until)``, oldest first.

        Each is ``{"answer_id", "question", "user_id", "language", "refused", "low_confidence", "top_score",
        "created_at"}`` (see `feedback.answers.fetch_unanswered`); questions removed by retention are left out.

        Raises:
            InvalidRecord: a naive `since`/`until`.
            StoreUnavailable: SQLite failed.
        """
        bounds = utc_iso(since, field="since"), utc_iso(until, field="until")
        with self.snapshot() as conn:
            return fetch_unanswered(conn, since=bounds[0], until=bounds[1])

    def record_vote(
        self, answer_id: str, user_id: str, value: str, voted_at: datetime | None = None
    ) -> VoteResult:
        """Stores a 👍/👎 vote: one per (answer, user), last write wins, a repeat click changes nothing.

        Args:
            answer_id: id of a recorded answer (the button's value).
            user_id: the voter's Slack user id.
            value: ``"up"`` or ``"down"``.
            voted_at: aware datetime of the click; None means now.

        Returns:
            VoteResult, e.g. ``VoteResult(changed=False, previous="up", value="up")`` for a repeated click.

        Raises:
            InvalidRecord: bad `value`, empty `user_id` or naive `voted_at` (a ValueError subclass).
            UnknownAnswer: no answer with `answer_id` was recorded.
            StoreUnavailable: SQLite failed; the vote was not stored.
        """
        with self.transaction(one_statement=True) as conn:  # most clicks are a first vote: one INSERT
            first = insert_first_vote(conn, answer_id, user_id, value, voted_at)
        if first is not None:
            return first
        with self.transaction() as conn:
            return upsert_vote(conn, answer_id, user_id, value, voted_at)

    def record_vote_reason(
        self, answer_id: str, user_id: str, reason: str, at: datetime | None = None
    ) -> VoteResult:
        """Stores why the user voted 👎 (see `feedback.votes.set_vote_reason`): one row per (answer, user).

        Args:
            answer_id: id of a recorded answer (carried by the reason button).
            user_id: the voter's Slack user id.
            reason: one of ``feedback.VOTE_REASONS``: "outdated", "wrong", "incomplete", "not_what_i_asked".
            at: aware datetime of the click; None means now.

        Returns:
            VoteResult(value="down", reason=reason); ``changed=False`` when that reason was already stored.

        Raises:
            InvalidRecord: unknown `reason`, empty `user_id` or naive `at`.
            UnknownAnswer: no answer with `answer_id` was recorded.
            StoreUnavailable: SQLite failed; nothing was stored.
        """
        with self.transaction() as conn:
            return set_vote_reason(conn, answer_id, user_id, reason, at)

    def vote_reasons(
        self, *, by: str = "doc", since: datetime | None = None, until: datetime | None = None
    ) -> dict[str, dict[str, int]]:
        """Counts of 👎 reasons per cited document (``by="doc"``) or per answer (``by="answer"``).

        Args:
            by: "doc" or "answer".
            since, until: aware datetimes; only answers created in ``[since, until)`` count (None: unbounded).

        Returns:
            ``{doc_id or answer_id: {reason: count}}``, e.g. ``{"api:webhooks.md": {"outdated": 2}}``.

        Raises:
            InvalidRecord: a naive `since`/`until`.
            ValueError: unknown `by`.
            StoreUnavailable: SQLite failed.
        """
        since_iso, until_iso = _optional_bounds(since, until)
        with self.snapshot() as conn:
            return count_reasons(conn, by=by, since=since_iso, until=until_iso)

    def hallucination_counts(
        self, *, by: str = "doc", since: datetime | None = None, until: datetime | None = None
    ) -> dict[str, int]:
        """Generated answers whose grounding check removed a sentence, per cited document or per answer.

        Args:
            by: "doc" or "answer".
            since, until: aware datetimes; only answers created in ``[since, until)`` count (None: unbounded).

        Returns:
            ``{doc_id or answer_id: count}``, e.g. ``{"api:webhooks.md": 3}`` (see
            `feedback.answers.count_hallucinations`).

        Raises:
            InvalidRecord: a naive `since`/`until`.
            ValueError: unknown `by`.
            StoreUnavailable: SQLite failed.
        """
        since_iso, until_iso = _optional_bounds(since, until)
        with self.snapshot() as conn:
            return count_hallucinations(conn, by=by, since=since_iso, until=until_iso)

    def votes_for(self, answer_id: str) -> list[dict[str, Any]]:
        """Returns the votes on an answer, oldest first (see `feedback.votes.fetch_votes`); [] if none.

        Raises:
            StoreUnavailable: SQLite failed.
        """
        with self.snapshot() as conn:
            return fetch_votes(conn, answer_id)

    def record_flag(
        self, answer_id: str, user_id: str, reason: str = "", created_at: datetime | None = None
    ) -> bool:
        """Stores a "Report a wrong answer" flag: one per (answer, user); a repeated report changes nothing.

        Args:
            answer_id: id of a recorded answer (the button's value).
            user_id: the reporter's Slack user id.
            reason: optional free text (cut to 2,000 characters).
            created_at: aware datetime of the report; None means now.

        Returns:
            True when the report was stored, False when this user had already reported this answer.

        Raises:
            InvalidRecord: empty `user_id` or naive `created_at`.
            UnknownAnswer: no answer with `answer_id` was recorded.
            StoreUnavailable: SQLite failed; the report was not stored.
        """
        with self.transaction() as conn:
            return insert_flag(conn, answer_id, user_id, reason, created_at)

    def keep_undelivered_reply(self, answer_id: str, *, channel: str, thread_ts: str | None, text: str,
                               blocks: list[dict], error: str, now: datetime) -> None:
        """Stores a Slack reply that could not be posted, to post again (`feedback.replies`); its answer row
        says ``delivered`` False until it gets through.

        Raises:
            StoreUnavailable: the database failed; nothing was stored.
        """
        with self.transaction() as conn:
            keep_undelivered(conn, answer_id, channel=channel, thread_ts=thread_ts, text=text, blocks=blocks,
                             error=error, now=now)

    def due_replies(self, now: datetime) -> list[dict[str, Any]]:
        """The stored replies due to be posted again (`feedback.replies.due_replies`)."""
        with self.snapshot() as conn:
            return due_replies(conn, now)

    def reply_delivered(self, answer_id: str) -> None:
        """A stored reply got through: its answer is delivered and the stored copy goes."""
        with self.transaction() as conn:
            reply_delivered(conn, answer_id)

    def reply_failed_again(self, answer_id: str, *, error: str, now: datetime, give_up_after: int) -> bool:
        """One more failed try of a stored reply; True when it was the last (`feedback.replies`)."""
        with self.transaction() as conn:
            return reply_failed_again(conn, answer_id, error=error, now=now, give_up_after=give_up_after)

    # --- owners verifying their pages (issue 25 item 3; `feedback.verifications`) ---------------------------

    def page_verifications(self, doc_ids=None) -> dict[str, dict[str, Any]]:
        """doc_id → verification row (`feedback.verifications`) of ``doc_ids`` (None: all pages ever asked)."""
        with self.snapshot() as conn:
            return verifications.fetch(conn, doc_ids)

    def claim_verification_ask(self, doc_id: str, owner: str, *, due_at: datetime, now: datetime) -> bool:
        """True when this call asks ``owner`` about ``doc_id`` (nobody asked since ``due_at``); once per due
        date across replicas (`feedback.verifications.claim_ask`)."""
        with self.transaction() as conn:
            return verifications.claim_ask(conn, doc_id, owner, due_at=due_at, at=now)

    def release_verification_ask(self, doc_id: str, *, asked_at: str, previous: dict[str, Any] | None) -> None:
        """Undo an ask whose message was not delivered (`feedback.verifications.release_ask`)."""
        with self.transaction() as conn:
            verifications.release_ask(conn, doc_id, asked_at=asked_at, previous=previous)

    def record_verification_messages(self, doc_id: str, *, asked_at: str, posted: list[tuple[str, str]]) -> bool:
        """Keep the ``(channel, ts)`` of the messages sent for the ask made at ``asked_at`` (each group member's
        DM, or the reminders), so an answer can update every copy; False when the page was asked again since
        (`feedback.verifications.add_posted`).

        Raises:
            InvalidRecord: an empty channel or ts.
            StoreUnavailable: the database failed.
        """
        with self.transaction() as conn:
            return verifications.add_posted(conn, doc_id, asked_at=asked_at, posted=posted)

    def claim_verification_reminder(self, doc_id: str, *, asked_at: str, now: datetime) -> bool:
        """True when this call sends the one reminder of the ask made at ``asked_at``."""
        with self.transaction() as conn:
            return verifications.claim_reminder(conn, doc_id, asked_at=asked_at, at=now)

    def release_verification_reminder(self, doc_id: str, *, asked_at: str) -> None:
        """Undo a reminder whose message was not delivered."""
        with self.transaction() as conn:
            verifications.release_reminder(conn, doc_id, asked_at=asked_at)

    def answer_verification(self, doc_id: str, state: str, *, asked_at: str, by: str, now: datetime,
                            verified_until: datetime | None = None) -> bool:
        """The owner's answer; True when it changed the row (a double click changes it once;
        `feedback.verifications.answer`)."""
        with self.transaction() as conn:
            return verifications.answer(conn, doc_id, state, asked_at=asked_at, by=by, at=now,
                                        verified_until=verified_until)

    def record_gap_scores(
        self, run_id: str, scores: list[dict[str, Any]], *, generation: str, measured_at: datetime | None = None
    ) -> int:
        """Stores one run of the gap queries (see `feedback.gap_scores.insert_gap_scores`); returns rows written.

        Raises:
            InvalidRecord: an empty run id or query, a repeated query, a score outside [0, 1], a naive time.
            StoreUnavailable: SQLite failed (e.g. the run id was already stored); nothing is written.
        """
        with self.transaction() as conn:
            return insert_gap_scores(conn, run_id, scores, generation, measured_at)

    def last_gap_scores(self, before: datetime | None = None) -> dict[str, dict[str, Any]]:
        """Each gap query's latest stored score (measured before `before` when given): query → row.

        Raises:
            StoreUnavailable: SQLite failed.
        """
        with self.snapshot() as conn:
            return fetch_last_scores(conn, before)

    def gap_score_history(self, query: str, limit: int = 50) -> list[dict[str, Any]]:
        """The latest `limit` stored scores of one gap query, newest first.

        Raises:
            StoreUnavailable: SQLite failed.
        """
        with self.snapshot() as conn:
            return fetch_history(conn, query, limit)

    def claim_event(self, key: str) -> bool:
        """Claims a Slack event id (or other idempotency key) before acting on it.

        Args:
            key: Slack ``event_id``, or e.g. ``"{channel}:{ts}"``; non-empty.

        Returns:
            True the first time `key` is seen (go ahead), False on every later call (a retry: do nothing).

        Raises:
            InvalidRecord: `key` is empty.
            StoreUnavailable: SQLite failed; the key was not claimed.
        """
        with self.transaction(one_statement=True) as conn:
            return insert_event_key(conn, key)

    def claim_events(self, keys: list[str]) -> bool:
        """Claims several keys of one event at once (e.g. its event id and its channel+ts) in one transaction.

        Returns:
            True when none of ``keys`` was seen before (go ahead); False when any was (a duplicate). Every
            key is stored either way. Claiming them one by one would let a Slack retry racing its original
            win one key each, and both would then be dropped as duplicates.

        Raises:
            InvalidRecord: a key is empty.
            StoreUnavailable: SQLite failed; nothing was claimed.
        """
        with self.transaction() as conn:
            return all([insert_event_key(conn, key) for key in keys])

    def prune_events(self, older_than: datetime) -> int:
        """Forgets event keys first seen before `older_than` (aware datetime); returns how many (>= 0).

        Raises:
            InvalidRecord: `older_than` is naive.
            StoreUnavailable: SQLite failed.
        """
        with self.transaction() as conn:
            return delete_event_keys(conn, older_than)

    def apply_retention(
        self, *, questions_days: int, user_ids_days: int, user_ids: str = "hash", now: datetime | None = None
    ) -> dict[str, int]:
        """Applies the retention policy (config ``retention``; `feedback.retention.apply_retention`) in one
        transaction: question texts older than ``questions_days`` become "[removed]", user ids older than
        ``user_ids_days`` are anonymised, in the answers and in every alert, review item and note that copied
        them. Aggregated columns (refusals, votes, reports, citations) stay.

        Args:
            questions_days, user_ids_days: ages in days (>= 1) counted back from ``now``.
            user_ids: "hash" or "remove" (see `config.settings.RetentionConfig`).
            now: aware datetime; None means now.

        Returns:
            Rows changed per kind, e.g. ``{"questions": 120, "topic_labels": 2, "flag_reasons": 1,
            "answer_user_ids": 118, "vote_user_ids": 40, "flag_user_ids": 3, "copies": 2}``; zeros on a
            repeated run.

        Raises:
            InvalidRecord: a naive ``now`` or a day count < 1.
            ValueError: unknown ``user_ids``.
            StoreUnavailable: SQLite failed; nothing was changed.
        """
        if questions_days < 1 or user_ids_days < 1:
            raise InvalidRecord("retention days must be >= 1")
        moment = datetime.fromisoformat(utc_iso(now, field="now"))
        cutoffs = {name: utc_iso(moment - timedelta(days=days), field=name)
                   for name, days in (("questions_before", questions_days), ("user_ids_before", user_ids_days))}
        with self.transaction() as conn:
            return apply_retention(conn, user_ids=user_ids, now=utc_iso(moment, field="now"), **cutoffs)

    def forget_user(self, user_id: str) -> dict[str, int]:
        """Removes one person's questions, votes and reports and their id from every table, in one
        transaction (`feedback.retention.forget_user`; ``minerva forget --user``).

        Returns:
            Rows removed or changed per table, e.g. ``{"answers": 3, "citations": 4, "votes": 5, ...}``.

        Raises:
            ValueError: empty ``user_id``.
            StoreUnavailable: SQLite failed; nothing was removed.
        """
        with self.transaction() as conn:
            return forget_user(conn, user_id)

    def pseudonym(self, user_id: str) -> str:
        """The anonymised form of ``user_id`` in this store (``anon:`` + 16 hex digits; `feedback.retention`).

        Raises:
            StoreUnavailable: SQLite failed.
        """
        with self.transaction() as conn:  # the salt may have to be created
            return pseudonym(user_id.strip(), salt(conn))

    def user_rows(self, user_id: str) -> dict[str, int]:
        """What `forget_user` would act on, per ``"table.column"`` → rows: the rows holding ``user_id`` or its
        pseudonym, the topics their questions named, and the alerts, review items, switch reasons and notes
        that quote their questions or name them (`feedback.retention.user_rows`).

        Raises:
            ValueError: empty ``user_id``.
            StoreUnavailable: SQLite failed.
        """
        with self.transaction() as conn:  # the salt may have to be created
            return user_rows(conn, user_id)

    # --- "Ask an expert" (issue 25; the rows and their shapes are documented in `feedback.experts`) ---------

    def claim_expert_request(self, **request: Any) -> bool:
        """Stores an escalation unless its ``request_id`` is stored already; True for the one caller that
        created it (`feedback.experts.claim_request`, its keyword arguments). Raises InvalidRecord,
        StoreUnavailable."""
        with self.transaction(one_statement=True) as conn:
            return experts.claim_request(conn, **request)

    def set_expert_request_posted(self, request_id: str, posted: list[tuple[str, str]]) -> None:
        """Where the experts' messages of a request are, ``[(channel, ts)]``."""
        with self.transaction(one_statement=True) as conn:
            experts.set_posted(conn, request_id, posted)

    def release_expert_request(self, request_id: str) -> None:
        """Forgets an open escalation none of whose messages was posted (`feedback.experts.release_request`)."""
        with self.transaction(one_statement=True) as conn:
            experts.release_request(conn, request_id)

    def expert_request(self, request_id: str) -> dict[str, Any] | None:
        """One escalation row, or None."""
        with self.snapshot() as conn:
            return experts.fetch_request(conn, request_id)

    def resolve_expert_request(self, request_id: str, *, expert: str, answer: str, at: datetime) -> bool:
        """Marks an open escalation answered; True only for the one call that did (`feedback.experts`)."""
        with self.transaction(one_statement=True) as conn:
            return experts.resolve_request(conn, request_id, expert=expert, answer=answer, at=at)

    def record_expert_answer(self, **answer: Any) -> str | None:
        """Keeps an expert answer as knowledge; its id, or None when that request's was kept already
        (`feedback.experts.insert_expert_answer`, its keyword arguments)."""
        with self.transaction(one_statement=True) as conn:
            return experts.insert_expert_answer(conn, **answer)

    def active_expert_answers(self, now: datetime) -> list[dict[str, Any]]:
        """Expert answers neither expired nor retired by two users' 👎, newest first."""
        with self.snapshot() as conn:
            return experts.fetch_active_answers(conn, now)

    def expert_answer(self, expert_answer_id: str) -> dict[str, Any] | None:
        """One expert answer, or None."""
        with self.snapshot() as conn:
            return experts.fetch_expert_answer(conn, expert_answer_id)

    def record_expert_vote(self, expert_answer_id: str, user_id: str, value: str, at: datetime) -> bool:
        """A 👍/👎 on an expert answer; True when it changed the stored vote. Raises InvalidRecord, UnknownAnswer."""
        with self.transaction() as conn:
            return experts.upsert_expert_vote(conn, expert_answer_id, user_id, value, at)

    def add_expert_answer_wording(self, expert_answer_id: str, question: str) -> bool:
        """Keeps ``question`` as another wording of a kept answer (`feedback.experts.add_wording`); True when
        new. Raises UnknownAnswer."""
        with self.transaction() as conn:
            return experts.add_wording(conn, expert_answer_id, question)

    def claim_expert_reminders(self, *, requested_before: datetime, now: datetime) -> list[dict[str, Any]]:
        """Open escalations due their one reminder, each claimed (marked reminded) for this caller only."""
        with self.transaction() as conn:
            return experts.claim_reminders(conn, requested_before=requested_before, now=now)

    def waiting_expert_requests(self, limit: int = 5) -> tuple[int, list[dict[str, Any]]]:
        """``(count, oldest few)`` of the reminded escalations still unanswered."""
        with self.snapshot() as conn:
            return experts.fetch_waiting(conn, limit=limit)

    def close(self) -> None:
        """Closes the connections; later calls raise StoreUnavailable. Calling it twice is harmless."""
        with self._lock:
            if not self._closed:
                self._closed = True
                if self._db is not None:
                    self._db.close()
                self.engine.dispose()

    def __enter__(self) -> FeedbackStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"FeedbackStore({redact(self.target)!r})"

    @contextlib.contextmanager
    def _translating_errors(self) -> Iterator[None]:
        if self._closed:
            raise StoreUnavailable(f"feedback store {redact(self.target)} is closed")
        try:
            yield
        except (sqlite3.Error, sa.exc.DBAPIError) as error:
            raise StoreUnavailable(f"feedback database {redact(self.target)}: {_reason(error)}") from error


def _sqlite_connection(path: Path) -> sqlite3.Connection:
    """A plain sqlite3 connection with the store's pragmas, for sqlite-utils: older files' migrations (which
    issue their own BEGIN IMMEDIATE, hence the driver's autocommit mode) and the `FeedbackStore.db` view."""
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=False)
    try:
        for pragma in SQLITE_PRAGMAS:
            conn.execute(pragma)
    except BaseException:
        conn.close()
        raise
    return conn


def _prepare(engine: Engine, shown: str) -> int:
    """Creates an empty store from `feedback.schema`; refuses one made by a newer Minerva; returns the schema
    version found after that (below the newest only for a SQLite file made by an older Minerva)."""
    with begin_write(engine) as conn:
        if is_postgres(conn):
            # Replicas starting together on an empty database: one creates it, the others wait here.
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK_KEY})
        found = current_version(conn)
        if found > len(MIGRATIONS):
            raise SchemaTooNew(shown, found, len(MIGRATIONS))
        if found == 0:
            create_current(conn)
            return len(MIGRATIONS)
        if is_postgres(conn) and found < len(MIGRATIONS):  # made by an older Minerva: add what it lacks
            add_missing(conn, found)
            return len(MIGRATIONS)
        return found


def _reason(error: BaseException) -> str:
    """The driver's own message of a (wrapped) database error, without SQLAlchemy's SQL dump."""
    return str(getattr(error, "orig", None) or error).strip().splitlines()[0]


def _optional_bounds(since: datetime | None, until: datetime | None) -> tuple[str | None, str | None]:
    """``since`` and ``until`` as UTC ISO 8601 text, each None when None.

    Raises:
        InvalidRecord: a naive `since`/`until`.
    """
    return (None if since is None else utc_iso(since, field="since"),
            None if until is None else utc_iso(until, field="until"))
