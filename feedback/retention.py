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
``votes.user_id``, ``flags.user_id``) and of operators who acked, silenced or flipped the kill switch
(``alerts.acked_by``, ``silences.created_by``, ``kill_switch.changed_by``, and ``"by"`` in
``alert_events.detail``). A topic's label is the text of the question that founded it (`jobs.classify`), so
it goes with that question.

What the monitoring jobs aggregate is never touched by retention: ``answers.refused/top_score/created_at/
language/low_confidence``, citations, answer_passages, answer_labels, ``votes.value/reason`` and the rows
of votes and flags themselves (jobs/signals/*.py count them per answer, and count distinct reporters per
answer; a salted hash keeps those distinct).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from typing import Any

from sqlalchemy import text as sql_text
from sqlalchemy.engine import Connection

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
OPERATOR_COLUMNS = (("alerts", "acked_by"), ("silences", "created_by"), ("kill_switch", "changed_by"))
#: Shortest question text searched for in alert and review-queue texts by `forget_user` (shorter texts
#: would match unrelated words).
MIN_SCRUB_CHARS = 12
#: How many characters of a question `jobs.signals.bad_docs` quotes in a summary.
SUMMARY_QUOTE_CHARS = 80

#: Primary key of the tables whose changed rows `forget_user` counts.
_KEYS = {"alerts": "fingerprint", "silences": "silence_id", "kill_switch": "change_id",
         "alert_events": "event_id", "review_queue": "item_id"}
#: Rows with a user id not yet anonymised (``:anon`` is ``ANON_PREFIX + "%"``).
_FRESH = "user_id IS NOT NULL AND user_id NOT LIKE :anon"
#: Tables holding a user id whose rows `apply_retention` anonymises: table → (time column, key columns).
_USER_TABLES = {"answers": ("created_at", ("answer_id",)),
                "votes": ("voted_at", ("answer_id", "user_id")),
                "flags": ("created_at", ("answer_id", "user_id"))}


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

    Returns:
        Rows changed per kind: ``{"questions", "topic_labels", "flag_reasons", "answer_user_ids",
        "vote_user_ids", "flag_user_ids"}``; a second run with the same cut-offs returns zeros.

    Raises:
        ValueError: unknown ``user_ids`` mode.
        sqlalchemy.exc.DBAPIError: the database failed (the store rolls the transaction back and raises
            StoreUnavailable).
    """
    if user_ids not in ("hash", "remove"):
        raise ValueError(f"user_ids must be 'hash' or 'remove', not {user_ids!r}")
    counts: dict[str, int] = {}
    founded = _founded_topics(conn, "a.created_at < :before AND a.redacted_at IS NULL",
                              {"before": questions_before})
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
    for table, kind in (("answers", "answer_user_ids"), ("votes", "vote_user_ids"), ("flags", "flag_user_ids")):
        if table == "answers" and user_ids == "remove":
            counts[kind] = run(conn, f"UPDATE answers SET user_id = NULL WHERE created_at < :before AND {_FRESH}",
                               before=user_ids_before, anon=ANON_PREFIX + "%").rowcount
            continue
        counts[kind] = _anonymise(conn, table, user_ids_before,
                                  (lambda u: pseudonym(u, key)) if user_ids == "hash" else _random_token)
    return counts


def forget_user(conn: Connection, user_id: str) -> dict[str, int]:
    """Removes one person: their questions (answer rows), votes and reports, and their id everywhere else.

    Rows are found by the Slack id and by its pseudonym (rows anonymised earlier with ``user_ids: hash``);
    rows anonymised with ``"remove"`` no longer link to anyone and are not found. Deleting an answer also
    deletes, through ``ON DELETE CASCADE``, its citations, retrieved passages, label, and the votes and
    reports of others on it; those are counted under their own table names. Other answers that followed up
    on a deleted one lose that link. The question texts are also scrubbed from alert and review-queue texts
    (bad-document evidence quotes questions), and a topic founded by one of them loses its label. Operator
    columns (`OPERATOR_COLUMNS`) and ``"by"`` in alert events read `FORGOTTEN` instead of the id (or its
    pseudonym): the action stays, nobody is named.

    Args:
        conn: a connection inside a write transaction.
        user_id: the Slack user id, e.g. ``"U012AB3CD"``; non-empty.

    Returns:
        Rows removed or changed per table, e.g. ``{"answers": 3, "citations": 4, "answer_passages": 12,
        "answer_labels": 3, "votes": 5, "flags": 1, "follow_ups_unlinked": 0, "topics": 1, "alerts": 0,
        "alert_events": 0, "silences": 0, "kill_switch": 0, "review_queue": 0}`` (every key always present).

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
    questions = [r["question"] for r in rows(conn, "SELECT question FROM answers WHERE user_id IN :ids", ids=ids)]
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
    changed = _scrub_texts(conn, questions)  # table → keys of the rows changed, so a row counts once
    for table, column in OPERATOR_COLUMNS:
        key = _KEYS[table]
        changed.setdefault(table, set()).update(r[key] for r in rows(
            conn, f"UPDATE {table} SET {column} = :forgotten WHERE {column} IN :ids RETURNING {key}",
            forgotten=FORGOTTEN, ids=ids))
    for who in ids:
        changed.setdefault("alert_events", set()).update(
            _replace_in(conn, "alert_events", "detail", json.dumps(who), json.dumps(FORGOTTEN)))
    counts.update({table: len(keys) for table, keys in changed.items()})
    return counts


def user_rows(conn: Connection, user_id: str) -> dict[str, int]:
    """How many rows hold ``user_id`` (or its pseudonym) per user column: answers, votes, flags and the
    operator columns (``"table.column"`` → count). Reads only, but needs a write transaction because the
    salt may have to be made (`salt`); what `forget_user` would act on."""
    ids = [user_id, pseudonym(user_id, salt(conn))]
    columns = [("answers", "user_id"), ("votes", "user_id"), ("flags", "user_id"), *OPERATOR_COLUMNS]
    return {f"{t}.{c}": scalar(conn, f"SELECT COUNT(*) FROM {t} WHERE {c} IN :ids", ids=ids) for t, c in columns}


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


def _replace_in(conn: Connection, table: str, column: str, old: str, new: str) -> list[Any]:
    """Replaces every occurrence of ``old`` in ``table.column`` with ``new``; returns the keys of the rows
    changed. ``replace(c, :old, '') <> c`` finds the rows: case-sensitive on both databases (LIKE is not
    on SQLite) and needs no escaping of ``%``/``_`` (SQLite's ``instr`` does not exist on PostgreSQL)."""
    key = _KEYS[table]
    return [r[key] for r in rows(
        conn, f"UPDATE {table} SET {column} = replace({column}, :old, :new) "
              f"WHERE replace({column}, :old, '') <> {column} RETURNING {key}",
        old=old, new=new,
    )]


def _scrub_texts(conn: Connection, questions: list[str]) -> dict[str, set]:
    """Replaces ``questions`` (whole, JSON-escaped, and as the first 80 characters a summary quotes) with
    "[removed]" in alert summaries and annotations and in review-queue reasons and details; returns the
    keys of the rows changed per table (``{"alerts": {fingerprint, …}, "review_queue": {item_id, …}}``)."""
    variants = set()
    for text in questions:
        if text == REMOVED:
            continue
        for variant in (text, json.dumps(text, ensure_ascii=False)[1:-1], text[:SUMMARY_QUOTE_CHARS]):
            if len(variant) >= MIN_SCRUB_CHARS:
                variants.add(variant)
    changed: dict[str, set] = {"alerts": set(), "review_queue": set()}
    for variant in sorted(variants, key=len, reverse=True):  # whole texts before their prefixes
        for table, columns in (("alerts", ("summary", "annotations")), ("review_queue", ("reason", "details"))):
            for column in columns:
                changed[table].update(_replace_in(conn, table, column, variant, REMOVED))
    return changed
