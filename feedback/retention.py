"""Questions are personal data (issue 10 item 6): the retention policy and "forget this person".

Every function here runs on a connection the caller has already put in a ``BEGIN IMMEDIATE`` transaction
(`feedback.store.FeedbackStore.apply_retention` / `forget_user`); none commits. This module is the one owner
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

import sqlite_utils

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


def salt(db: sqlite_utils.Database) -> bytes:
    """The store's pseudonym salt (32 random bytes made by the migration that added `store_meta`)."""
    row = db.execute("SELECT value FROM store_meta WHERE key = ?", [SALT_KEY]).fetchone()
    if row is None:  # a store_meta emptied by hand: make a new salt (old pseudonyms no longer match)
        value = secrets.token_hex(32)
        db.execute("INSERT INTO store_meta (key, value) VALUES (?, ?)", [SALT_KEY, value])
        return bytes.fromhex(value)
    return bytes.fromhex(row[0])


def pseudonym(user_id: str, key: bytes) -> str:
    """``anon:`` + the first 16 hex digits of HMAC-SHA256(key, user_id): stable per store, not reversible
    without the salt. An id that is already a pseudonym is returned unchanged."""
    if user_id.startswith(ANON_PREFIX):
        return user_id
    return ANON_PREFIX + hmac.new(key, user_id.encode("utf-8"), hashlib.sha256).hexdigest()[:16]


def apply_retention(
    db: sqlite_utils.Database, *, questions_before: str, user_ids_before: str, user_ids: str, now: str
) -> dict[str, int]:
    """Removes question texts and anonymises user ids of rows older than the cut-offs.

    Args:
        db: a database inside a ``BEGIN IMMEDIATE`` transaction.
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
        sqlite3.Error: SQLite failed (the store rolls the transaction back).
    """
    if user_ids not in ("hash", "remove"):
        raise ValueError(f"user_ids must be 'hash' or 'remove', not {user_ids!r}")
    counts: dict[str, int] = {}
    founded = _founded_topics(db, "a.created_at < ? AND a.redacted_at IS NULL", [questions_before])
    counts["questions"] = db.execute(
        "UPDATE answers SET question = ?, redacted_at = ? WHERE created_at < ? AND redacted_at IS NULL",
        [REMOVED, now, questions_before],
    ).rowcount
    counts["topic_labels"] = _remove_topic_labels(db, founded)
    counts["flag_reasons"] = db.execute(
        "UPDATE flags SET reason = '' WHERE created_at < ? AND reason != ''", [questions_before]
    ).rowcount
    if user_ids == "hash":
        key = salt(db)
        db.conn.create_function("minerva_pseudonym", 1, lambda u: None if u is None else pseudonym(u, key),
                                deterministic=True)
        answer_value = vote_value = "minerva_pseudonym(user_id)"
    else:
        answer_value = "NULL"
        vote_value = f"'{ANON_PREFIX}' || lower(hex(randomblob(8)))"
    fresh = f"user_id IS NOT NULL AND user_id NOT LIKE '{ANON_PREFIX}%'"
    counts["answer_user_ids"] = db.execute(
        f"UPDATE answers SET user_id = {answer_value} WHERE created_at < ? AND {fresh}", [user_ids_before]
    ).rowcount
    counts["vote_user_ids"] = db.execute(
        f"UPDATE votes SET user_id = {vote_value} WHERE voted_at < ? AND {fresh}", [user_ids_before]
    ).rowcount
    counts["flag_user_ids"] = db.execute(
        f"UPDATE flags SET user_id = {vote_value} WHERE created_at < ? AND {fresh}", [user_ids_before]
    ).rowcount
    return counts


def forget_user(db: sqlite_utils.Database, user_id: str) -> dict[str, int]:
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
        db: a database inside a ``BEGIN IMMEDIATE`` transaction.
        user_id: the Slack user id, e.g. ``"U012AB3CD"``; non-empty.

    Returns:
        Rows removed or changed per table, e.g. ``{"answers": 3, "citations": 4, "answer_passages": 12,
        "answer_labels": 3, "votes": 5, "flags": 1, "follow_ups_unlinked": 0, "topics": 1, "alerts": 0,
        "alert_events": 0, "silences": 0, "kill_switch": 0, "review_queue": 0}`` (every key always present).

    Raises:
        ValueError: empty ``user_id``.
        sqlite3.Error: SQLite failed (the store rolls the transaction back).
    """
    if not user_id or not user_id.strip():
        raise ValueError("user_id must be a non-empty Slack user id, e.g. U012AB3CD")
    user_id = user_id.strip()
    alias = pseudonym(user_id, salt(db))
    ids = [user_id, alias]
    mine = "SELECT answer_id FROM answers WHERE user_id IN (?, ?)"
    counts: dict[str, int] = {}
    questions = [r[0] for r in db.execute(f"SELECT question FROM answers WHERE answer_id IN ({mine})", ids)]
    founded = _founded_topics(db, "a.user_id IN (?, ?)", ids)
    # Votes and flags of the person on anyone's answers, then what hangs off their own answers (cascaded).
    counts["votes"] = db.execute("DELETE FROM votes WHERE user_id IN (?, ?)", ids).rowcount
    counts["flags"] = db.execute("DELETE FROM flags WHERE user_id IN (?, ?)", ids).rowcount
    for table in ("citations", "answer_passages", "answer_labels"):
        counts[table] = db.execute(f"SELECT COUNT(*) FROM {table} WHERE answer_id IN ({mine})", ids).fetchone()[0]
    counts["votes"] += db.execute(f"SELECT COUNT(*) FROM votes WHERE answer_id IN ({mine})", ids).fetchone()[0]
    counts["flags"] += db.execute(f"SELECT COUNT(*) FROM flags WHERE answer_id IN ({mine})", ids).fetchone()[0]
    counts["follow_ups_unlinked"] = db.execute(
        f"UPDATE answers SET follow_up_of = NULL WHERE follow_up_of IN ({mine}) "
        "AND (user_id IS NULL OR user_id NOT IN (?, ?))",
        ids + ids,
    ).rowcount
    counts["topics"] = _remove_topic_labels(db, founded)
    counts["answers"] = db.execute("DELETE FROM answers WHERE user_id IN (?, ?)", ids).rowcount
    for table, column in OPERATOR_COLUMNS:
        counts[table] = db.execute(f"UPDATE {table} SET {column} = ? WHERE {column} IN (?, ?)",
                                   [FORGOTTEN, *ids]).rowcount
    counts["alert_events"] = 0
    for who in ids:
        counts["alert_events"] += db.execute(
            "UPDATE alert_events SET detail = replace(detail, ?, ?) WHERE instr(detail, ?) > 0",
            [json.dumps(who), json.dumps(FORGOTTEN), json.dumps(who)],
        ).rowcount
    scrubbed = _scrub_texts(db, questions)
    counts["alerts"] += scrubbed["alerts"]
    counts["review_queue"] = scrubbed["review_queue"]
    return counts


def user_rows(db: sqlite_utils.Database, user_id: str) -> dict[str, int]:
    """How many rows hold ``user_id`` (or its pseudonym) per user column: answers, votes, flags and the
    operator columns (``"table.column"`` → count). Read only; what `forget_user` would act on."""
    ids = [user_id, pseudonym(user_id, salt(db))]
    columns = [("answers", "user_id"), ("votes", "user_id"), ("flags", "user_id"), *OPERATOR_COLUMNS]
    return {f"{t}.{c}": db.execute(f"SELECT COUNT(*) FROM {t} WHERE {c} IN (?, ?)", ids).fetchone()[0]
            for t, c in columns}


def _founded_topics(db: sqlite_utils.Database, where: str, params: list[Any]) -> list[int]:
    """Topics whose label came from a selected answer's question: `jobs.classify` labels a topic once, with
    the question that created it, i.e. the topic's first labelled answer (lowest rowid)."""
    return [r[0] for r in db.execute(
        f"""
        SELECT l.topic_id FROM answer_labels l JOIN answers a ON a.answer_id = l.answer_id
        WHERE l.rowid IN (SELECT MIN(rowid) FROM answer_labels GROUP BY topic_id) AND {where}
        """,
        params,
    )]


def _remove_topic_labels(db: sqlite_utils.Database, topic_ids: list[int]) -> int:
    """Replaces the labels of ``topic_ids`` with "[removed] topic N" (the heatmap still has a name)."""
    changed = 0
    for topic_id in topic_ids:
        changed += db.execute(
            "UPDATE topics SET label = ? WHERE topic_id = ? AND label NOT LIKE ?",
            [f"{REMOVED} topic {topic_id}", topic_id, f"{REMOVED}%"],
        ).rowcount
    return changed


def _scrub_texts(db: sqlite_utils.Database, questions: list[str]) -> dict[str, int]:
    """Replaces ``questions`` (whole, JSON-escaped, and as the first 80 characters a summary quotes) with
    "[removed]" in alert summaries and annotations and in review-queue reasons and details."""
    variants = set()
    for text in questions:
        if text == REMOVED:
            continue
        for variant in (text, json.dumps(text, ensure_ascii=False)[1:-1], text[:SUMMARY_QUOTE_CHARS]):
            if len(variant) >= MIN_SCRUB_CHARS:
                variants.add(variant)
    changed = {"alerts": set(), "review_queue": set()}
    for variant in sorted(variants, key=len, reverse=True):  # whole texts before their prefixes
        for table, key, columns in (("alerts", "fingerprint", ("summary", "annotations")),
                                    ("review_queue", "item_id", ("reason", "details"))):
            for column in columns:
                for (row_key,) in db.execute(f"SELECT {key} FROM {table} WHERE instr({column}, ?) > 0", [variant]):
                    changed[table].add(row_key)
                db.execute(f"UPDATE {table} SET {column} = replace({column}, ?, ?) WHERE instr({column}, ?) > 0",
                           [variant, REMOVED, variant])
    return {table: len(keys) for table, keys in changed.items()}
