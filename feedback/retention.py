"""Questions are personal data (issue 10 item 6): the retention policy and "forget this person".

Every function here runs on a connection the caller has already put in a write transaction
(`feedback.store.FeedbackStore.transaction`: ``BEGIN IMMEDIATE`` on SQLite, READ COMMITTED on PostgreSQL,
via `FeedbackStore.apply_retention` / `forget_user`); none commits. The SQL is written once for both
databases: pseudonyms and random tokens are computed in Python and written by primary key, text is searched
with ``replace()`` (case-sensitive on both, unlike LIKE on SQLite), and a topic's founding answer is found
with a window function instead of SQLite's ``rowid``. This module is the one owner
of the SQL that removes or anonymises personal data; jobs and the CLI call the store.

What is personal: the question text (``answers.question``), the free text of a wrong-answer report
(``flags.reason``), and the Slack user ids of askers, voters, reporters (``answers.user_id``,
``votes.user_id``, ``flags.user_id``) and of operators who acked, silenced or flipped a switch
(``alerts.acked_by``, ``silences.created_by``, ``kill_switch.changed_by``, ``quarantine.changed_by``, and
``"by"`` in ``alert_events.detail``). A topic's label is the text of the question that founded it
(`jobs.classify`), so it goes with that question. Copies count too (issue 27, "Nothing leaks"): the monitoring
jobs quote questions and name askers in what they write (`COPY_COLUMNS`: a coverage gap's example, samples and
``by_user`` counts, a bad page's evidence, the alert summary a kill switch keeps as its reason), and operators'
notes and job errors are free text (`NOTE_COLUMNS`). A copy goes when its original goes: `forget_user` scrubs
the person's question texts and ids from all of them; `apply_retention` scrubs the question texts it removes
from all of them and the ids it anonymises from the copies (an operator's id is not an asker's; retention
leaves operators' columns alone). The other columns of `feedback.schema` hold ids of answers, documents,
alerts and channels, times, counts and states, never a question or a person (gap queries are written by
admins, `knowledge.gaps`); ``reply_retries`` rows go with their answer (``ON DELETE CASCADE``).

What the monitoring jobs aggregate is never touched by retention: ``answers.refused/top_score/created_at/
language/low_confidence``, citations, answer_passages, answer_labels, ``votes.value/reason`` and the rows
of votes and flags themselves (jobs/signals/*.py count them per answer, and count distinct reporters per
answer; a salted hash keeps those distinct).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text as sql_text
from sqlalchemy.engine import Connection

from feedback.alerting import json_text
from feedback.db import rows, run, scalar

#: What a removed question (and a removed topic label) reads as.
REMOVED = "[removed]"
#: What an operator column (`OPERATOR_COLUMNS`) reads as after `forget_user`: nothing links it to anyone.
FORGOTTEN = "[forgotten]"
#: Prefix of every anonymised user id; Slack ids never start with it, so a second run skips these rows.
ANON_PREFIX = "anon:"
#: Key of the per-store salt in `store_meta`.
SALT_KEY = "pseudonym_salt"
#: Tables and columns holding a Slack user id of an operator's action: set to `FORGOTTEN` by `forget_user`,
#: never deleted (deleting a kill-switch or silence row would change what is switched off or silenced).
OPERATOR_COLUMNS = (("alerts", "acked_by"), ("silences", "created_by"), ("kill_switch", "changed_by"),
                    ("quarantine", "changed_by"), ("expert_requests", "answered_by"), ("expert_answers", "expert"),
                    ("page_verifications", "verified_by"), ("page_verifications", "answered_by"))
#: Columns the monitoring jobs fill from the answers: an alert's summary and annotations (a coverage gap's
#: example question, samples and ``by_user`` counts; a bad page's evidence questions), a review item's reason
#: and details (the same), and the reason of a kill-switch or quarantine change an alert made (its summary).
COPY_COLUMNS = (("alerts", "summary"), ("alerts", "annotations"), ("review_queue", "reason"),
                ("review_queue", "details"), ("kill_switch", "reason"), ("quarantine", "reason"))
#: Free text written by operators and by failures (an alert event's detail, a silence's comment, a job's
#: error): it may quote a question or name a person.
NOTE_COLUMNS = (("alert_events", "detail"), ("silences", "comment"), ("job_runs", "error"))
#: Those of the columns above that hold JSON. They are parsed, not searched as text: an id that is a key
#: (``by_user``) is folded into its replacement (counts added, so they still sum to the gap's size), and a
#: question quoted in a JSON string is found whatever its escaping.
JSON_COLUMNS = frozenset({("alerts", "annotations"), ("review_queue", "details"), ("alert_events", "detail")})
#: Shortest question text replaced inside a longer text (shorter texts would match unrelated words); a
#: shorter one is still replaced where it stands whole (a JSON string) or between the “quotes” summaries use.
MIN_SCRUB_CHARS = 12
#: Shortest user id replaced inside a longer text (Slack ids have 9 or 11 characters); shorter ones (the
#: by_user key "cli", ids made up in tests) only where they stand whole, as a JSON key or string.
MIN_ID_CHARS = 8
#: How many characters of a question the jobs quote: 80 in a bad page's summary (`jobs.signals.bad_docs`),
#: 60 as the label of a coverage gap without label words (`jobs.question_gaps`).
QUOTED_PREFIXES = (80, 60)

#: Primary key of the tables whose changed rows `forget_user` and `apply_retention` count.
_KEYS = {"alerts": "fingerprint", "silences": "silence_id", "kill_switch": "change_id", "quarantine": "change_id",
         "alert_events": "event_id", "review_queue": "item_id", "job_runs": "run_id",
         "expert_requests": "request_id", "expert_answers": "expert_answer_id", "page_verifications": "doc_id"}
#: Rows with a user id not yet anonymised (``:anon`` is ``ANON_PREFIX + "%"``).
_FRESH = "user_id IS NOT NULL AND user_id NOT LIKE :anon"
#: Tables holding a user id whose rows `apply_retention` anonymises: table → (time column, key columns).
_USER_TABLES = {"answers": ("created_at", ("answer_id",)),
                "votes": ("voted_at", ("answer_id", "user_id")),
                "flags": ("created_at", ("answer_id", "user_id")),
                "expert_answer_votes": ("voted_at", ("expert_answer_id", "user_id"))}


def salt(conn: Connection) -> bytes:
    """The store's pseudonym salt: 32 random bytes kept as hex in `store_meta`.

    Made by the SQLite migration that added `store_meta`; a store created from `feedback.schema` (or a
    ``store_meta`` emptied by hand) gets one on first use. Two replicas making it at once agree: the insert
    does nothing on conflict and the stored value is read back.

    Args:
        conn: a connection inside a write transaction.
    """
    value = scalar(conn, "SELECT value FROM store_meta WHERE key = :key", key=SALT_KEY)
    if value is None:  # old pseudonyms no longer match a new salt; nothing to do about that
        run(conn, "INSERT INTO store_meta (key, value) VALUES (:key, :value) ON CONFLICT (key) DO NOTHING",
            key=SALT_KEY, value=secrets.token_hex(32))
        value = scalar(conn, "SELECT value FROM store_meta WHERE key = :key", key=SALT_KEY)
    return bytes.fromhex(value)


def pseudonym(user_id: str, key: bytes) -> str:
    """``anon:`` + the first 16 hex digits of HMAC-SHA256(key, user_id): stable per store, not reversible
    without the salt. An id that is already a pseudonym is returned unchanged."""
    if user_id.startswith(ANON_PREFIX):
        return user_id
    return ANON_PREFIX + hmac.new(key, user_id.encode("utf-8"), hashlib.sha256).hexdigest()[:16]


def apply_retention(
    conn: Connection, *, questions_before: str, user_ids_before: str, user_ids: str, now: str
) -> dict[str, int]:
    """Removes question texts and anonymises user ids of rows older than the cut-offs.

    Args:
        conn: a connection inside a write transaction.
        questions_before: ISO-8601 UTC text; answers created before it lose their question text (and the
            topics they founded lose their label), reports made before it lose their free text.
        user_ids_before: ISO-8601 UTC text; answers created, votes cast (``voted_at``) and reports made
            before it lose their user id.
        user_ids: ``"hash"`` (salted pseudonym, see `pseudonym`) or ``"remove"`` (answers: NULL; votes and
            reports: a random ``anon:`` token per row, because the column is part of their primary key).
        now: ISO-8601 UTC text stored in ``answers.redacted_at``.

    Replies of those answers still waiting to be posted (``reply_retries``) are dropped. The questions
    removed are also scrubbed from every copy and note (`COPY_COLUMNS`, `NOTE_COLUMNS`), and
    the ids anonymised from the copies (a coverage gap's ``by_user`` reads the same pseudonym, or a random
    token per person with ``"remove"``), in the same transaction: no copy outlives its original. A text
    another person also asked, word for word, goes from the copies with it.

    Returns:
        Rows changed per kind: ``{"undelivered_replies", "questions", "topic_labels", "flag_reasons",
        "answer_user_ids", "vote_user_ids", "flag_user_ids", "copies"}`` (``undelivered_replies``: replies
        of those answers still waiting to be posted, dropped; ``copies``: rows of alerts, review items,
        switch changes, events, silences and job runs changed); a second run with the same cut-offs returns
        zeros.

    Raises:
        ValueError: unknown ``user_ids`` mode.
        sqlalchemy.exc.DBAPIError: the database failed (the store rolls the transaction back and raises
            StoreUnavailable).
    """
    if user_ids not in ("hash", "remove"):
        raise ValueError(f"user_ids must be 'hash' or 'remove', not {user_ids!r}")
    counts: dict[str, int] = {}
    where = "a.created_at < :before AND a.redacted_at IS NULL"
    founded = _founded_topics(conn, where, {"before": questions_before})
    removed = _questions(conn, where, {"before": questions_before})
    # A reply still waiting to be posted when its question goes is never posted: days late and without its
    # question it helps nobody, and it is the last copy of what was said to that person.
    counts["undelivered_replies"] = run(
        conn, "DELETE FROM reply_retries WHERE answer_id IN (SELECT answer_id FROM answers a WHERE "
              f"{where})", before=questions_before,
    ).rowcount
    counts["questions"] = run(
        conn, "UPDATE answers SET question = :removed, redacted_at = :now "
              "WHERE created_at < :before AND redacted_at IS NULL",
        removed=REMOVED, now=now, before=questions_before,
    ).rowcount
    counts["topic_labels"] = _remove_topic_labels(conn, founded)
    counts["flag_reasons"] = run(
        conn, "UPDATE flags SET reason = '' WHERE created_at < :before AND reason <> ''", before=questions_before
    ).rowcount
    key = salt(conn) if user_ids == "hash" else b""
    replacement = (lambda u: pseudonym(u, key)) if user_ids == "hash" else _random_token
    anonymised = {user: replacement(user) for user in _fresh_ids(conn, user_ids_before)}
    counts["expert_requests"] = _age_expert_requests(conn, questions_before, user_ids_before, replacement)
    for table, kind in (("answers", "answer_user_ids"), ("votes", "vote_user_ids"), ("flags", "flag_user_ids"),
                        ("expert_answer_votes", "expert_vote_user_ids")):
        if table == "answers" and user_ids == "remove":
            counts[kind] = run(conn, f"UPDATE answers SET user_id = NULL WHERE created_at < :before AND {_FRESH}",
                               before=user_ids_before, anon=ANON_PREFIX + "%").rowcount
            continue
        counts[kind] = _anonymise(conn, table, user_ids_before, replacement)
    changed = _scrub_copies(conn, removed, anonymised, ids_in_notes=False)
    counts["copies"] = sum(len(keys) for keys in changed.values())
    return counts


def forget_user(conn: Connection, user_id: str) -> dict[str, int]:
    """Removes one person: their questions (answer rows), votes and reports, and their id everywhere else.

    Rows are found by the Slack id and by its pseudonym (rows anonymised earlier with ``user_ids: hash``);
    rows anonymised with ``"remove"`` no longer link to anyone and are not found. Deleting an answer also
    deletes, through ``ON DELETE CASCADE``, its citations, retrieved passages, label, and the votes and
    reports of others on it; those are counted under their own table names. Other answers that followed up
    on a deleted one lose that link. A topic founded by one of their questions loses its label. The question
    texts become `REMOVED` and the id (or its pseudonym) `FORGOTTEN` wherever the jobs copied them or a
    note holds them (`COPY_COLUMNS`, `NOTE_COLUMNS`: alert summaries and annotations — a coverage gap's
    samples and ``by_user`` —, review items, switch reasons, ``"by"`` in alert events, silence comments, job
    errors), and operator columns (`OPERATOR_COLUMNS`: also who answered an escalation, kept an expert answer
    or verified a page) read `FORGOTTEN`: the action stays, nobody is named. Their escalations ("Ask an
    expert") and their votes on kept answers go; a kept answer quoting their question loses the question.

    Args:
        conn: a connection inside a write transaction.
        user_id: the Slack user id, e.g. ``"U012AB3CD"``; non-empty.

    Returns:
        Rows removed or changed per table, e.g. ``{"answers": 3, "citations": 4, "answer_passages": 12,
        "answer_labels": 3, "votes": 5, "flags": 1, "follow_ups_unlinked": 0, "topics": 1, "alerts": 0,
        "review_queue": 0, "kill_switch": 0, "quarantine": 0, "alert_events": 0, "silences": 0,
        "job_runs": 0}`` (every key always present).

    Raises:
        ValueError: empty ``user_id``.
        sqlalchemy.exc.DBAPIError: the database failed (the store rolls the transaction back).
    """
    if not user_id or not user_id.strip():
        raise ValueError("user_id must be a non-empty Slack user id, e.g. U012AB3CD")
    user_id = user_id.strip()
    ids = [user_id, pseudonym(user_id, salt(conn))]
    mine = "SELECT answer_id FROM answers WHERE user_id IN :ids"
    counts: dict[str, int] = {}
    questions = _questions(conn, "a.user_id IN :ids", {"ids": ids})
    founded = _founded_topics(conn, "a.user_id IN :ids", {"ids": ids})
    # Votes and flags of the person on anyone's answers, then what hangs off their own answers (cascaded).
    counts["votes"] = run(conn, "DELETE FROM votes WHERE user_id IN :ids", ids=ids).rowcount
    counts["flags"] = run(conn, "DELETE FROM flags WHERE user_id IN :ids", ids=ids).rowcount
    for table in ("citations", "answer_passages", "answer_labels"):
        counts[table] = scalar(conn, f"SELECT COUNT(*) FROM {table} WHERE answer_id IN ({mine})", ids=ids)
    counts["votes"] += scalar(conn, f"SELECT COUNT(*) FROM votes WHERE answer_id IN ({mine})", ids=ids)
    counts["flags"] += scalar(conn, f"SELECT COUNT(*) FROM flags WHERE answer_id IN ({mine})", ids=ids)
    counts["follow_ups_unlinked"] = run(
        conn, f"UPDATE answers SET follow_up_of = NULL WHERE follow_up_of IN ({mine}) "
              "AND (user_id IS NULL OR user_id NOT IN :ids)",
        ids=ids,
    ).rowcount
    counts["topics"] = _remove_topic_labels(conn, founded)
    counts["answers"] = run(conn, "DELETE FROM answers WHERE user_id IN :ids", ids=ids).rowcount
    escalations, kept_changed = _forget_in_escalations(conn, ids, questions)
    counts.update(escalations)
    # table → keys of the rows changed, so a row changed in two columns counts once
    changed = _scrub_copies(conn, questions, dict.fromkeys(ids, FORGOTTEN), ids_in_notes=True)
    changed["expert_answers"] = kept_changed
    for table, column in OPERATOR_COLUMNS:
        key = _KEYS[table]
        changed.setdefault(table, set()).update(r[key] for r in rows(
            conn, f"UPDATE {table} SET {column} = :forgotten WHERE {column} IN :ids RETURNING {key}",
            forgotten=FORGOTTEN, ids=ids))
    counts.update({table: counts.get(table, 0) + len(keys) for table, keys in changed.items()})
    return counts


def _forget_in_escalations(conn: Connection, ids: list[str], questions: list[str]) -> tuple[dict[str, int], set]:
    """`forget_user`'s part in the "Ask an expert" tables (issue 25): the person's votes on kept answers go,
    their escalations go, an expert answer kept from one of them loses the question it quoted (it stays as
    knowledge but no longer matches, since the question was the asker's words), and their ``questions`` leave
    the wordings kept answers learnt from 👍 (``also_asked``). Kept answers are knowledge an expert wrote:
    retention by age leaves them (and their wordings) as they are.

    Returns:
        (rows deleted per table, ids of the ``expert_answers`` rows changed).
    """
    mine = "SELECT request_id FROM expert_requests WHERE asker IN :ids"
    gone = {" ".join(q.split()).casefold() for q in questions}
    changed = set()
    for row in rows(conn, "SELECT expert_answer_id, also_asked FROM expert_answers WHERE also_asked <> '[]'"):
        wordings = json.loads(row["also_asked"])
        kept = [w for w in wordings if " ".join(w.split()).casefold() not in gone]
        if len(kept) != len(wordings):
            run(conn, "UPDATE expert_answers SET also_asked = :w WHERE expert_answer_id = :id",
                w=json.dumps(kept, ensure_ascii=False), id=row["expert_answer_id"])
            changed.add(row["expert_answer_id"])
    changed.update(r["expert_answer_id"] for r in rows(
        conn, f"UPDATE expert_answers SET question = :removed WHERE request_id IN ({mine}) "
              "RETURNING expert_answer_id", removed=REMOVED, ids=ids))
    return {
        "expert_answer_votes": run(conn, "DELETE FROM expert_answer_votes WHERE user_id IN :ids", ids=ids).rowcount,
        "expert_requests": run(conn, "DELETE FROM expert_requests WHERE asker IN :ids", ids=ids).rowcount,
    }, changed


def _age_expert_requests(conn: Connection, questions_before: str, user_ids_before: str, replacement) -> int:
    """`apply_retention` on escalations: the question and the bot's attempt of those older than
    ``questions_before`` become `REMOVED`; the asker of those older than ``user_ids_before`` is replaced by
    ``replacement(asker)``. Returns the rows changed (a row changed twice counts once)."""
    changed = {r["request_id"] for r in rows(
        conn, "UPDATE expert_requests SET question = :removed, attempt = :removed "
              "WHERE requested_at < :before AND question <> :removed RETURNING request_id",
        removed=REMOVED, before=questions_before)}
    found = rows(conn, "SELECT request_id, asker FROM expert_requests WHERE requested_at < :before "
                       "AND asker NOT LIKE :anon", before=user_ids_before, anon=ANON_PREFIX + "%")
    for row in found:
        run(conn, "UPDATE expert_requests SET asker = :new WHERE request_id = :id",
            new=replacement(row["asker"]), id=row["request_id"])
    return len(changed | {r["request_id"] for r in found})


def user_rows(conn: Connection, user_id: str) -> dict[str, int]:
    """What `forget_user` would act on, per ``"table.column"`` → rows (every key always present, most 0):
    the rows holding ``user_id`` or its pseudonym in a user or operator column, the topics their questions
    named (``"topics.label"``), and the rows of every copy and note column (`COPY_COLUMNS`, `NOTE_COLUMNS`)
    that quote their questions or name them. Reads only, but needs a write transaction because the salt may
    have to be made (`salt`).

    Raises:
        ValueError: empty ``user_id``.
    """
    if not user_id or not user_id.strip():
        raise ValueError("user_id must be a non-empty Slack user id, e.g. U012AB3CD")
    user_id = user_id.strip()
    ids = [user_id, pseudonym(user_id, salt(conn))]
    columns = [("answers", "user_id"), ("votes", "user_id"), ("flags", "user_id"), ("expert_requests", "asker"),
               ("expert_answer_votes", "user_id"), *OPERATOR_COLUMNS]
    counts = {f"{t}.{c}": scalar(conn, f"SELECT COUNT(*) FROM {t} WHERE {c} IN :ids", ids=ids) for t, c in columns}
    founded = _founded_topics(conn, "a.user_id IN :ids", {"ids": ids})
    counts["topics.label"] = scalar(conn, "SELECT COUNT(*) FROM topics WHERE topic_id IN :t AND label NOT LIKE :r",
                                    t=founded, r=f"{REMOVED}%") if founded else 0
    scrub = _Scrub.of(_questions(conn, "a.user_id IN :ids", {"ids": ids}), dict.fromkeys(ids, FORGOTTEN))
    for table, column in COPY_COLUMNS + NOTE_COLUMNS:
        counts[f"{table}.{column}"] = len(_scrubbed_rows(conn, table, column, scrub))
    return counts


def _random_token(_user_id: str) -> str:
    """``anon:`` + 16 random hex digits: an id that links to nobody (``user_ids: remove``)."""
    return ANON_PREFIX + secrets.token_hex(8)


def _anonymise(conn: Connection, table: str, before: str, replacement) -> int:
    """Replaces the user id of ``table``'s rows older than ``before`` (not yet anonymised) with
    ``replacement(user_id)``, row by row through the primary key; returns how many rows changed.

    The new ids are computed in Python (HMAC or random), so no database function is needed on either side.
    """
    time_column, keys = _USER_TABLES[table]
    found = rows(conn, f"SELECT {', '.join(dict.fromkeys((*keys, 'user_id')))} FROM {table} "
                       f"WHERE {time_column} < :before AND {_FRESH}",
                 before=before, anon=ANON_PREFIX + "%")
    if not found:
        return 0
    where = " AND ".join(f"{k} = :old_{k}" for k in keys)
    params = [{**{f"old_{k}": row[k] for k in keys}, "new": replacement(row["user_id"])} for row in found]
    if "user_id" in keys:
        # The person voted (or reported) again on an answer whose earlier row was already anonymised: the
        # newer row replaces it under the pseudonym, as a changed vote replaces the old one (last write wins).
        taken = " AND ".join("user_id = :new" if k == "user_id" else f"{k} = :old_{k}" for k in keys)
        conn.execute(sql_text(f"DELETE FROM {table} WHERE {taken}"), params)
    conn.execute(sql_text(f"UPDATE {table} SET user_id = :new WHERE {where}"), params)  # executemany
    return len(found)


def _founded_topics(conn: Connection, where: str, params: dict[str, Any]) -> list[int]:
    """Topics whose label came from a selected answer's question.

    `jobs.classify` labels a topic once, with the question that created it: the topic's first labelled
    answer. Labels are written oldest answer first, one ``labelled_at`` per run, so that answer is the first
    by (``labelled_at``, ``created_at``, ``answer_id``) — a portable stand-in for SQLite's insertion order.
    """
    return [r["topic_id"] for r in rows(
        conn,
        f"""
        SELECT f.topic_id FROM (
            SELECT topic_id, answer_id,
                   ROW_NUMBER() OVER (PARTITION BY topic_id ORDER BY labelled_at, created_at, answer_id) AS n
            FROM answer_labels
        ) f JOIN answers a ON a.answer_id = f.answer_id
        WHERE f.n = 1 AND {where}
        """,
        **params,
    )]


def _remove_topic_labels(conn: Connection, topic_ids: list[int]) -> int:
    """Replaces the labels of ``topic_ids`` with "[removed] topic N" (the heatmap still has a name)."""
    changed = 0
    for topic_id in topic_ids:
        changed += run(
            conn, "UPDATE topics SET label = :label WHERE topic_id = :topic_id AND label NOT LIKE :removed",
            label=f"{REMOVED} topic {topic_id}", topic_id=topic_id, removed=f"{REMOVED}%",
        ).rowcount
    return changed


def _questions(conn: Connection, where: str, params: dict[str, Any]) -> list[str]:
    """The distinct question texts of the answers ``a`` matching ``where`` (``[removed]`` ones left out)."""
    return [r["question"] for r in rows(
        conn, f"SELECT DISTINCT a.question AS question FROM answers a WHERE {where} AND a.question <> :removed",
        removed=REMOVED, **params)]


def _fresh_ids(conn: Connection, before: str) -> list[str]:
    """The user ids (not yet anonymised) of the answers, votes and reports older than ``before``: the ones
    `apply_retention` anonymises."""
    found: set[str] = set()
    for table, (time_column, _) in _USER_TABLES.items():
        found.update(r["user_id"] for r in rows(
            conn, f"SELECT DISTINCT user_id FROM {table} WHERE {time_column} < :before AND {_FRESH}",
            before=before, anon=ANON_PREFIX + "%"))
    return sorted(found)


@dataclass(frozen=True)
class _Scrub:
    """What to take out of a copy or note, each mapped to its replacement.

    Attributes:
        whole: a string that is all of a value (a JSON string, or the column's whole text) equal to a
            question, a quoted prefix of one (`QUOTED_PREFIXES`), or an id, at any length.
        keys: a JSON key equal to an id (a coverage gap's ``by_user``). Question texts are never matched as
            whole keys: a short question such as "en" would hit ``by_language``.
        texts: question texts replaced inside longer strings, longest first: those of at least
            `MIN_SCRUB_CHARS`, and at any length between the “quotes” the summaries put around them.
        ids: ids (of at least `MIN_ID_CHARS`) replaced inside longer strings where they stand as a word, so
            ``U012AB3CD`` is not found inside ``U012AB3CDEF``.
    """

    whole: dict[str, str]
    keys: dict[str, str]
    texts: dict[str, str]
    ids: dict[str, str]

    @classmethod
    def of(cls, questions: list[str], ids: dict[str, str]) -> _Scrub:
        """The scrub of ``questions`` (→ `REMOVED`) and ``ids`` (id → its replacement)."""
        whole: dict[str, str] = {}
        texts: dict[str, str] = {}
        for question in filter(None, questions):  # an empty text would match every empty string
            for quoted in {question, *(question[:n] for n in QUOTED_PREFIXES)}:
                whole[quoted] = REMOVED
                texts[f"“{quoted}”"] = f"“{REMOVED}”"
                if len(quoted) >= MIN_SCRUB_CHARS:
                    texts[quoted] = REMOVED
        whole.update(ids)
        return cls(whole, dict(ids), dict(sorted(texts.items(), key=lambda kv: -len(kv[0]))),
                   {old: new for old, new in ids.items() if len(old) >= MIN_ID_CHARS})

    @property
    def empty(self) -> bool:
        return not self.whole

    def found_in(self, strings: list[str]) -> _Scrub:
        """The same, with only the texts and ids found somewhere in ``strings``: one search per text over all
        of them instead of one per text and string (a first retention run may remove thousands of questions)."""
        haystack = "\0".join(strings)
        return _Scrub(self.whole, self.keys, {t: r for t, r in self.texts.items() if t in haystack},
                      {i: r for i, r in self.ids.items() if i in haystack})

    def text(self, value: str) -> str:
        """``value`` with what this scrub takes out replaced."""
        if value in self.whole:
            return self.whole[value]
        return self._parts(value)

    def key(self, value: str) -> str:
        """A JSON key with what this scrub takes out replaced (ids whole, texts and ids inside)."""
        return self.keys[value] if value in self.keys else self._parts(value)

    def _parts(self, value: str) -> str:
        for old, new in self.texts.items():
            value = value.replace(old, new)
        for old, new in self.ids.items():
            value = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(old)}(?![A-Za-z0-9_])", lambda _: new, value)
        return value


def _scrub_copies(conn: Connection, questions: list[str], ids: dict[str, str], *, ids_in_notes: bool
                  ) -> dict[str, set]:
    """Replaces ``questions`` with `REMOVED` and ``ids`` (id → replacement) in `COPY_COLUMNS`, and the
    questions (with ``ids_in_notes``, the ids too) in `NOTE_COLUMNS`.

    Returns:
        The keys of the rows changed per table, every table of both lists present:
        ``{"alerts": {fingerprint, …}, "review_queue": {item_id, …}, "kill_switch": set(), …}``.
    """
    changed: dict[str, set] = {table: set() for table, _ in COPY_COLUMNS + NOTE_COLUMNS}
    copies = _Scrub.of(questions, ids)
    notes = copies if ids_in_notes else _Scrub.of(questions, {})
    for columns, scrub in ((COPY_COLUMNS, copies), (NOTE_COLUMNS, notes)):
        if scrub.empty:
            continue
        for table, column in columns:
            found = _scrubbed_rows(conn, table, column, scrub)
            if found:
                conn.execute(sql_text(f"UPDATE {table} SET {column} = :value WHERE {_KEYS[table]} = :key"),
                             [{"key": key, "value": value} for key, value in found])  # executemany
            changed[table].update(key for key, _ in found)
    return changed


def _scrubbed_rows(conn: Connection, table: str, column: str, scrub: _Scrub) -> list[tuple[Any, str]]:
    """``(primary key, new text)`` of the rows of ``table.column`` that ``scrub`` changes; reads only.

    The tables are small (one row per alert, review item, switch change, silence, event or job run), so each
    column is read whole and changed in Python: the same on both databases, and JSON columns
    (`JSON_COLUMNS`) are parsed, so escaping cannot hide a text and an id that is a key can be folded.
    """
    if scrub.empty:
        return []
    found = rows(conn, f"SELECT {_KEYS[table]} AS row_key, {column} AS value FROM {table} "
                       f"WHERE {column} IS NOT NULL AND {column} <> ''")
    values = [_parsed(r["value"], (table, column) in JSON_COLUMNS) for r in found]
    present = scrub.found_in([s for value, _ in values for s in _strings(value)])
    changed = []
    for row, (value, is_json) in zip(found, values):
        new = _scrubbed(value, present)
        if new != value:
            changed.append((row["row_key"], json_text(new) if is_json else new))
    return changed


def _parsed(text: str, as_json: bool) -> tuple[Any, bool]:
    """``(value, is_json)``: the decoded JSON of a JSON column, else (or when it does not parse) the text."""
    if as_json:
        try:
            return json.loads(text), True
        except ValueError:
            pass
    return text, False


def _strings(value: Any) -> Iterator[str]:
    """Every string in a decoded JSON value (keys too), or the value itself when it is a string."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)


def _scrubbed(value: Any, scrub: _Scrub) -> Any:
    """``value`` (a string or decoded JSON) with ``scrub`` applied to every string and key. Two keys that
    become one (two forgotten askers in one ``by_user``) are folded: numbers added, else the first kept."""
    if isinstance(value, str):
        return scrub.text(value)
    if isinstance(value, list):
        return [_scrubbed(item, scrub) for item in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            key, item = scrub.key(key), _scrubbed(item, scrub)
            out[key] = _folded(out[key], item) if key in out else item
        return out
    return value


def _folded(first: Any, second: Any) -> Any:
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (first, second))
    return first + second if numbers else first
