"""Window aggregates for the monitoring signals: per document, per intent × topic cell, per week.

Every function reads answers created in a window ``[since, until)`` (ISO-8601 UTC text as the store writes it,
`feedback._time.utc_iso`) and aggregates in the database (GROUP BY), never by loading answers into Python; the
signals in `jobs.signals` turn the figures into findings. Call them with a connection from
`FeedbackStore.snapshot()` so every query of one job run sees the same data::

    with store.snapshot() as conn:
        per_doc = windows.document_quality(conn, since, until, weights=(1.0, 1.0, 1.0))
        cited = windows.citations_per_document(conn, since, until)

The SQL is portable (SQLite >= 3.35 and PostgreSQL): booleans are summed with CASE, weeks are bucketed by
comparing ISO text with boundaries computed in Python (no julianday), and a collection is a doc id's prefix up
to ":" compared with ``substr`` (no instr).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.engine import Connection

from feedback._time import utc_iso
from feedback.db import first, is_postgres, rows

#: Ids per ``IN :ids`` query: SQLite binds at most 32,766 variables per statement; PostgreSQL 65,535.
IN_CHUNK = 10_000
#: SQLite page cache of a connection that aggregates, KiB: a job's queries touch the same index pages
#: again and again (the default 2 MiB cache made bad_docs' two window queries ~25 % slower at 100k answers).
AGGREGATE_CACHE_KIB = 64 * 1024


@contextlib.contextmanager
def aggregate_snapshot(store) -> Iterator[Connection]:
    """`FeedbackStore.snapshot()` for a job's window aggregates: one read transaction, and on SQLite a page
    cache of `AGGREGATE_CACHE_KIB` (a per-connection setting with no PostgreSQL counterpart: there the server's
    shared buffers serve every connection).

    Raises:
        StoreUnavailable: the database failed.
    """
    with store.snapshot() as conn:
        if not is_postgres(conn):
            conn.exec_driver_sql(f"PRAGMA cache_size = -{int(AGGREGATE_CACHE_KIB)}")
        yield conn


def chunks(ids: Sequence[str], size: int = IN_CHUNK) -> Iterator[list[str]]:
    """``ids`` in consecutive lists of at most ``size`` (for ``IN :ids`` queries); nothing for no ids."""
    for start in range(0, len(ids), size):
        yield list(ids[start:start + size])


def collection_of(doc_id: str) -> str:
    """A doc id's collection: the text before its first ":" ("" when it has none)."""
    collection, sep, _ = doc_id.partition(":")
    return collection if sep else ""


# --- fused quality per document (seed 004 §5, `jobs.quality`) ---------------------------------------------

@dataclass(frozen=True)
class FusedWeights:
    """Weights of the fused answer quality (`config.monitoring.QualityConfig`): thumbs, confidence, flags."""

    thumbs: float
    confidence: float
    flags: float

    def params(self) -> dict[str, float]:
        return {"w_thumbs": float(self.thumbs), "w_conf": float(self.confidence), "w_flags": float(self.flags),
                "w_total": float(self.thumbs + self.confidence)}


_FUSED = ("CASE WHEN refused = 1 THEN 0.0 WHEN up + down + flags = 0 THEN top_score "
          "ELSE (:w_thumbs * up / (up + down + :w_flags * flags) + :w_conf * top_score) / :w_total END")

#: ``q(answer_id, created_at, refused, top_score, up, down, flags, fused)`` over the answers of the window;
#: votes and flags are those on these answers, whenever cast. `_quality_cte` picks how they are counted.
_WINDOW = """
    WITH a AS MATERIALIZED (
        SELECT answer_id, created_at, refused, top_score FROM answers
        WHERE created_at >= :since AND created_at < :until
    ),
"""
#: SQLite: one probe per answer in the covering indexes (idx_votes_answer_value), 3x faster there than the
#: grouped joins below (0.52 s against 1.6 s for a 30-day window of 300k answers).
_COUNTS_BY_PROBE = """
    q0 AS MATERIALIZED (
        SELECT a.answer_id, a.created_at, a.refused, a.top_score,
               (SELECT COUNT(*) FROM votes WHERE votes.answer_id = a.answer_id AND votes.value = 'up') AS up,
               (SELECT COUNT(*) FROM votes WHERE votes.answer_id = a.answer_id AND votes.value = 'down') AS down,
               (SELECT COUNT(*) FROM flags WHERE flags.answer_id = a.answer_id) AS flags
        FROM a
    ),
"""
#: PostgreSQL: hash joins and one GROUP BY per table, 1.7x faster there than per-answer probes (0.41 s against
#: 0.69 s on the same window), which keeps bad_docs under 10 s at 1,000,000 answers (benchmarks/monitoring_jobs.py).
_COUNTS_BY_GROUP = """
    v AS (
        SELECT votes.answer_id, SUM(CASE WHEN votes.value = 'up' THEN 1 ELSE 0 END) AS up,
               SUM(CASE WHEN votes.value = 'down' THEN 1 ELSE 0 END) AS down
        FROM votes JOIN a ON a.answer_id = votes.answer_id GROUP BY votes.answer_id
    ),
    f AS (SELECT flags.answer_id, COUNT(*) AS n FROM flags JOIN a ON a.answer_id = flags.answer_id
          GROUP BY flags.answer_id),
    q0 AS MATERIALIZED (
        SELECT a.answer_id, a.created_at, a.refused, a.top_score, COALESCE(v.up, 0) AS up,
               COALESCE(v.down, 0) AS down, COALESCE(f.n, 0) AS flags
        FROM a LEFT JOIN v ON v.answer_id = a.answer_id LEFT JOIN f ON f.answer_id = a.answer_id
    ),
"""


def _quality_cte(conn: Connection) -> str:
    """The fused-quality CTE for this database: the same rows, counted the way each planner runs fastest (a
    dialect branch for speed alone; tests/feedback/test_windows.py checks both give the same figures)."""
    counts = _COUNTS_BY_GROUP if is_postgres(conn) else _COUNTS_BY_PROBE
    return _WINDOW + counts + f"    q AS (SELECT q0.*, {_FUSED} AS fused FROM q0)\n"


def answer_quality(conn: Connection, since: str, until: str, weights: FusedWeights) -> dict[str, float]:
    """answer_id → fused quality in [0, 1] of every answer created in ``[since, until)``."""
    found = rows(conn, _quality_cte(conn) + " SELECT answer_id, fused FROM q",
                 since=since, until=until, **weights.params())
    return {r["answer_id"]: float(r["fused"]) for r in found}


def document_quality(conn: Connection, since: str, until: str, weights: FusedWeights) -> dict[str, dict[str, Any]]:
    """Quality of the answers that cited each document, over answers created in ``[since, until)``.

    A vote or report judges the pages the direct answer came from (``citations.answering``), not the pages
    cited beside them (issue 26 item 4: a 👎 aimed at an old copy cited beside the current page kept the
    current page flagged for 90 days).

    Returns:
        doc_id → {"citations": answers citing it, "answered": of those, answers whose direct answer came from
        it, "up", "down": votes on those answers, "flags": wrong-answer reports on them, "reported": of them,
        answers with at least one report, "fused": their mean fused quality (float in [0, 1], None when it
        answered none)}. Documents never cited in the window are absent.
    """
    found = rows(conn, _quality_cte(conn) + """
        SELECT c.doc_id AS doc_id, COUNT(*) AS citations, SUM(c.answering) AS answered,
               SUM(c.answering * q.up) AS up, SUM(c.answering * q.down) AS down,
               SUM(c.answering * q.flags) AS flags,
               SUM(CASE WHEN c.answering = 1 AND q.flags > 0 THEN 1 ELSE 0 END) AS reported,
               AVG(CASE WHEN c.answering = 1 THEN q.fused END) AS fused
        FROM citations c JOIN q ON q.answer_id = c.answer_id
        GROUP BY c.doc_id
    """, since=since, until=until, **weights.params())
    return {r.pop("doc_id"): _ints(r, "citations", "answered", "up", "down", "flags", "reported") for r in found}


def quality_summary(conn: Connection, since: str, until: str, weights: FusedWeights) -> dict[str, Any]:
    """Window-wide {"answers", "refusals", "up", "down", "flags": ints, "fused": mean or None without answers}."""
    row = first(conn, _quality_cte(conn) + """
        SELECT COUNT(*) AS answers, COALESCE(SUM(refused), 0) AS refusals, COALESCE(SUM(up), 0) AS up,
               COALESCE(SUM(down), 0) AS down, COALESCE(SUM(flags), 0) AS flags, AVG(fused) AS fused
        FROM q
    """, since=since, until=until, **weights.params())
    return _ints(row, "answers", "refusals", "up", "down", "flags")


# --- citations -----------------------------------------------------------------------------------------

def citations_per_document(conn: Connection, since: str, until: str, *, answered_only: bool = False) -> dict[str, int]:
    """doc_id → citations by answers created in ``[since, until)`` (only not-refused answers when asked)."""
    refused = " AND a.refused = 0" if answered_only else ""
    found = rows(conn, f"""
        SELECT c.doc_id AS doc_id, COUNT(*) AS n FROM citations c JOIN answers a ON a.answer_id = c.answer_id
        WHERE a.created_at >= :since AND a.created_at < :until{refused} GROUP BY c.doc_id
    """, since=since, until=until)
    return {r["doc_id"]: int(r["n"]) for r in found}


def citation_totals(conn: Connection, since: str, until: str) -> dict[str, int]:
    """{"answers": answers in the window, "answered": not refused, "citations": citations of the answered ones,
    "no_citation": answered ones without a citation}."""
    row = first(conn, """
        SELECT COUNT(*) AS answers,
               COALESCE(SUM(CASE WHEN refused = 0 THEN 1 ELSE 0 END), 0) AS answered,
               COALESCE(SUM(CASE WHEN refused = 0 THEN n_cit ELSE 0 END), 0) AS citations,
               COALESCE(SUM(CASE WHEN refused = 0 AND n_cit = 0 THEN 1 ELSE 0 END), 0) AS no_citation
        FROM (SELECT a.refused AS refused,
                     (SELECT COUNT(*) FROM citations c WHERE c.answer_id = a.answer_id) AS n_cit
              FROM answers a WHERE a.created_at >= :since AND a.created_at < :until) AS per_answer
    """, since=since, until=until)
    return _ints(row, "answers", "answered", "citations", "no_citation")


def chunk_citations(conn: Connection, since: str, until: str, low: float) -> dict[str, int]:
    """Citations backed by a retrieved passage of the cited document scoring at least ``low``.

    Returns:
        {"chunk_citations": distinct (answer, document, chunk) triples, "distinct_chunks": distinct chunks
        among them, "chunk_level": distinct (answer, document) pairs backed by a passage}; answered questions
        of ``[since, until)`` only.
    """
    row = first(conn, """
        WITH a AS MATERIALIZED (
            SELECT answer_id FROM answers WHERE created_at >= :since AND created_at < :until AND refused = 0
        ),
        cited AS MATERIALIZED (
            SELECT DISTINCT p.answer_id, p.doc_id, p.chunk_id
            FROM a JOIN answer_passages p ON p.answer_id = a.answer_id
            JOIN citations c ON c.answer_id = p.answer_id AND c.doc_id = p.doc_id
            WHERE p.score >= :low
        )
        SELECT (SELECT COUNT(*) FROM cited) AS chunk_citations,
               (SELECT COUNT(DISTINCT chunk_id) FROM cited) AS distinct_chunks,
               (SELECT COUNT(*) FROM (SELECT DISTINCT answer_id, doc_id FROM cited) AS pairs) AS chunk_level
    """, since=since, until=until, low=float(low))
    return _ints(row, "chunk_citations", "distinct_chunks", "chunk_level")


def weekly_document_citations(conn: Connection, since: str, until: str) -> list[dict[str, Any]]:
    """Citations of answered questions per (week, doc_id): [{"week", "doc_id", "n"}].

    ``week`` counts whole weeks back from ``until``: 0 for answers created in ``(until - 7 days, until]``, 1 for
    the week before, and so on; only answers in ``[since, until)``.
    """
    week, params = _week_bucket("a.created_at", since, until)
    return rows(conn, f"""
        SELECT {week} AS week, c.doc_id AS doc_id, COUNT(*) AS n
        FROM citations c JOIN answers a ON a.answer_id = c.answer_id
        WHERE a.created_at >= :since AND a.created_at < :until AND a.refused = 0
        GROUP BY 1, c.doc_id
    """, since=since, until=until, **params)


def weekly_answered(conn: Connection, since: str, until: str) -> list[dict[str, Any]]:
    """Answered (not refused) questions per week (as `weekly_document_citations`): [{"week", "answered",
    "no_citation"}]."""
    week, params = _week_bucket("a.created_at", since, until)
    return [_ints(r, "week", "answered", "no_citation") for r in rows(conn, f"""
        SELECT {week} AS week, COUNT(*) AS answered,
               SUM(CASE WHEN EXISTS (SELECT 1 FROM citations c WHERE c.answer_id = a.answer_id) THEN 0 ELSE 1 END)
                   AS no_citation
        FROM answers a WHERE a.created_at >= :since AND a.created_at < :until AND a.refused = 0
        GROUP BY 1
    """, since=since, until=until, **params)]


def weekly_answers(conn: Connection, start: str, end: str) -> list[dict[str, Any]]:
    """Answers created in ``[start, end]`` (both inclusive) per week back from ``end``.

    Returns:
        [{"week", "answers", "refused", "citations": citations of the not-refused answers, "uncited":
        not-refused answers without a citation, "up", "down": votes on the week's answers}].
    """
    week, params = _week_bucket("a.created_at", start, end)
    answered = rows(conn, f"""
        SELECT {week} AS week, COUNT(*) AS answers, SUM(a.refused) AS refused,
               SUM(CASE WHEN a.refused = 0 THEN n_cit ELSE 0 END) AS citations,
               SUM(CASE WHEN a.refused = 0 AND n_cit = 0 THEN 1 ELSE 0 END) AS uncited
        FROM (SELECT created_at, refused,
                     (SELECT COUNT(*) FROM citations c WHERE c.answer_id = answers.answer_id) AS n_cit
              FROM answers WHERE created_at >= :start AND created_at <= :end) AS a
        GROUP BY 1
    """, start=start, end=end, **params)
    voted = {r["week"]: r for r in rows(conn, f"""
        SELECT {week} AS week, SUM(CASE WHEN v.value = 'up' THEN 1 ELSE 0 END) AS up,
               SUM(CASE WHEN v.value = 'down' THEN 1 ELSE 0 END) AS down
        FROM votes v JOIN answers a ON a.answer_id = v.answer_id
        WHERE a.created_at >= :start AND a.created_at <= :end GROUP BY 1
    """, start=start, end=end, **params)}
    weeks = {r["week"]: {**r, "up": 0, "down": 0} for r in answered}
    for w, r in voted.items():
        weeks.setdefault(w, {"week": w, "answers": 0, "refused": 0, "citations": 0, "uncited": 0}).update(r)
    return [_ints(r, "week", "answers", "refused", "citations", "uncited", "up", "down") for r in weeks.values()]


def answer_totals(conn: Connection, start: str, end: str) -> dict[str, int]:
    """Answers created in ``[start, end]``: {"answers", "refused", "votes", "up"} (votes on those answers)."""
    a = first(conn, "SELECT COUNT(*) AS answers, COALESCE(SUM(refused), 0) AS refused FROM answers "
                    "WHERE created_at >= :start AND created_at <= :end", start=start, end=end)
    v = first(conn, "SELECT COUNT(*) AS votes, COALESCE(SUM(CASE WHEN v.value = 'up' THEN 1 ELSE 0 END), 0) AS up "
                    "FROM votes v JOIN answers a ON a.answer_id = v.answer_id "
                    "WHERE a.created_at >= :start AND a.created_at <= :end", start=start, end=end)
    return _ints({**a, **v}, "answers", "refused", "votes", "up")


def document_votes(conn: Connection, since: str) -> list[dict[str, Any]]:
    """Per cited document, over answers created at or after ``since``: [{"doc_id", "cited": distinct answers
    citing it, "up", "down": votes on them}]."""
    return [_ints(r, "cited", "up", "down") for r in rows(conn, """
        SELECT c.doc_id AS doc_id, COUNT(DISTINCT c.answer_id) AS cited,
               COALESCE(SUM(CASE WHEN v.value = 'up' THEN 1 ELSE 0 END), 0) AS up,
               COALESCE(SUM(CASE WHEN v.value = 'down' THEN 1 ELSE 0 END), 0) AS down
        FROM citations c JOIN answers a ON a.answer_id = c.answer_id
        LEFT JOIN votes v ON v.answer_id = c.answer_id
        WHERE a.created_at >= :since GROUP BY c.doc_id
    """, since=since)]


def cited_documents(conn: Connection, answer_ids: Sequence[str]) -> list[dict[str, str]]:
    """The pages the given answers' direct answers came from (``citations.answering``, issue 26 item 4):
    [{"answer_id", "doc_id"}] (any number of ids; queried in chunks)."""
    found: list[dict[str, str]] = []
    for part in chunks(answer_ids):
        found += rows(conn, "SELECT answer_id, doc_id FROM citations WHERE answer_id IN :ids AND answering = 1",
                      ids=part)
    return found


# --- bad documents (`jobs.signals.bad_docs`) -----------------------------------------------------------

def topic_citations(conn: Connection, since: str, until: str) -> list[dict[str, Any]]:
    """Citations per (doc_id, topic_id) of labelled answers created in ``[since, until)``: [{"doc_id",
    "topic_id", "n"}]."""
    return rows(conn, """
        SELECT c.doc_id AS doc_id, l.topic_id AS topic_id, COUNT(*) AS n
        FROM citations c JOIN answers a ON a.answer_id = c.answer_id JOIN answer_labels l ON l.answer_id = a.answer_id
        WHERE a.created_at >= :since AND a.created_at < :until
        GROUP BY c.doc_id, l.topic_id
    """, since=since, until=until)


def collection_reports(conn: Connection, since: str, until: str, recent_since: str) -> list[dict[str, Any]]:
    """Wrong-answer reports made in ``[since, until)`` per collection of the documents the answers cited.

    A report counts once per collection however many of its documents the answer cited; doc ids without a
    collection prefix are left out.

    Returns:
        [{"collection", "recent": reports made at or after ``recent_since``, "total"}], by collection.
    """
    found = rows(conn, """
        SELECT DISTINCT f.answer_id AS answer_id, f.user_id AS user_id, f.created_at AS created_at, c.doc_id AS doc_id
        FROM flags f JOIN citations c ON c.answer_id = f.answer_id
        WHERE f.created_at >= :since AND f.created_at < :until
    """, since=since, until=until)
    reports = {(r["answer_id"], r["user_id"], r["created_at"], collection_of(r["doc_id"])) for r in found}
    per: dict[str, dict[str, Any]] = {}
    for _, _, created_at, collection in reports:
        if collection:
            entry = per.setdefault(collection, {"collection": collection, "recent": 0, "total": 0})
            entry["total"] += 1
            entry["recent"] += created_at >= recent_since
    return [per[c] for c in sorted(per)]


def reported_answers(conn: Connection, since: str, until: str, collection: str) -> list[dict[str, Any]]:
    """Answers reported wrong in ``[since, until)`` that cited a document of ``collection``.

    Returns:
        [{"answer_id", "question", "reporters": distinct reporters, "last_report": ISO text}], most reporters
        first, then latest report first.
    """
    prefix = collection + ":"
    return rows(conn, """
        SELECT f.answer_id AS answer_id, a.question AS question, COUNT(DISTINCT f.user_id) AS reporters,
               MAX(f.created_at) AS last_report
        FROM flags f JOIN answers a ON a.answer_id = f.answer_id
        WHERE f.created_at >= :since AND f.created_at < :until
          AND EXISTS (SELECT 1 FROM citations c WHERE c.answer_id = f.answer_id
                      AND substr(c.doc_id, 1, :prefix_len) = :prefix)
        GROUP BY f.answer_id, a.question ORDER BY reporters DESC, last_report DESC
    """, since=since, until=until, prefix=prefix, prefix_len=len(prefix))


def document_evidence(conn: Connection, doc_id: str, since: str, until: str, limit: int) -> list[dict[str, Any]]:
    """Answers whose direct answer came from ``doc_id`` in ``[since, until)`` that got a 👎 or a report: [{"answer_id", "question",
    "created_at", "down", "reports"}], most reported first, then newest; at most ``limit``."""
    return rows(conn, """
        SELECT * FROM (
            SELECT a.answer_id AS answer_id, a.question AS question, a.created_at AS created_at,
                   (SELECT COUNT(*) FROM votes v WHERE v.answer_id = a.answer_id AND v.value = 'down') AS down,
                   (SELECT COUNT(*) FROM flags f WHERE f.answer_id = a.answer_id) AS reports
            FROM citations c JOIN answers a ON a.answer_id = c.answer_id
            WHERE c.doc_id = :doc AND c.answering = 1 AND a.created_at >= :since AND a.created_at < :until
        ) AS judged WHERE down > 0 OR reports > 0
        ORDER BY reports DESC, created_at DESC LIMIT :limit
    """, doc=doc_id, since=since, until=until, limit=int(limit))


def document_down_reasons(conn: Connection, doc_id: str, since: str, until: str) -> dict[str, int]:
    """👎 reasons given on answers whose direct answer came from ``doc_id`` in ``[since, until)``: {reason:
    count}, most given first."""
    found = rows(conn, """
        SELECT v.reason AS reason, COUNT(*) AS n
        FROM citations c JOIN answers a ON a.answer_id = c.answer_id JOIN votes v ON v.answer_id = a.answer_id
        WHERE c.doc_id = :doc AND c.answering = 1 AND a.created_at >= :since AND a.created_at < :until
          AND v.value = 'down' AND v.reason IS NOT NULL
        GROUP BY v.reason ORDER BY n DESC, reason
    """, doc=doc_id, since=since, until=until)
    return {r["reason"]: int(r["n"]) for r in found}


def cocited_documents(conn: Connection, doc_id: str, since: str, until: str, limit: int = 20) -> list[dict[str, Any]]:
    """Documents cited beside ``doc_id`` by answers of ``[since, until)``: [{"doc_id", "n"}], most first."""
    return rows(conn, """
        SELECT c2.doc_id AS doc_id, COUNT(*) AS n
        FROM citations c JOIN answers a ON a.answer_id = c.answer_id JOIN citations c2 ON c2.answer_id = c.answer_id
        WHERE c.doc_id = :doc AND c2.doc_id != :doc AND a.created_at >= :since AND a.created_at < :until
        GROUP BY c2.doc_id ORDER BY n DESC, c2.doc_id LIMIT :limit
    """, doc=doc_id, since=since, until=until, limit=int(limit))


# --- intent × topic cells (`jobs.signals.coverage`, the report's heatmap) --------------------------------

def coverage_cells(conn: Connection, since: str, until: str, low: float) -> list[dict[str, Any]]:
    """Per (intent, topic_id) of the answers labelled in ``[since, until)`` (by the answer's time).

    Returns:
        [{"intent", "topic_id", "n": questions, "refusals", "avg_retrieved": mean distinct documents retrieved
        at or above ``low`` (0 for a refusal), "up", "down": votes}], largest cells first.
    """
    found = rows(conn, """
        WITH a AS MATERIALIZED (
            SELECT l.answer_id, l.intent, l.topic_id, answers.refused,
                   (SELECT COUNT(*) FROM votes WHERE votes.answer_id = l.answer_id AND votes.value = 'up') AS up,
                   (SELECT COUNT(*) FROM votes WHERE votes.answer_id = l.answer_id AND votes.value = 'down') AS down
            FROM answer_labels l JOIN answers ON answers.answer_id = l.answer_id
            WHERE l.created_at >= :since AND l.created_at < :until
        ),
        rd AS (
            SELECT a.answer_id, COUNT(DISTINCT p.doc_id) AS docs
            FROM a JOIN answer_passages p ON p.answer_id = a.answer_id
            WHERE a.refused = 0 AND p.score >= :low
            GROUP BY a.answer_id
        )
        SELECT a.intent AS intent, a.topic_id AS topic_id, COUNT(*) AS n, SUM(a.refused) AS refusals,
               AVG(COALESCE(rd.docs, 0)) AS avg_retrieved, SUM(a.up) AS up, SUM(a.down) AS down
        FROM a LEFT JOIN rd ON rd.answer_id = a.answer_id
        GROUP BY a.intent, a.topic_id
        ORDER BY n DESC, a.intent, a.topic_id
    """, since=since, until=until, low=float(low))
    for r in found:
        r["avg_retrieved"] = float(r["avg_retrieved"])
    return [_ints(r, "n", "refusals", "up", "down") for r in found]


def labelled_cells(conn: Connection, since: str) -> list[dict[str, Any]]:
    """Per (intent, topic label) of answers created at or after ``since``: [{"intent", "topic": the topic's
    label, else "topic <id>", "n", "refused"}]."""
    found = rows(conn, """
        SELECT l.intent AS intent,
               COALESCE(NULLIF(t.label, ''), 'topic ' || CAST(t.topic_id AS TEXT)) AS topic,
               COUNT(*) AS n, SUM(a.refused) AS refused
        FROM answers a JOIN answer_labels l ON l.answer_id = a.answer_id JOIN topics t ON t.topic_id = l.topic_id
        WHERE a.created_at >= :since GROUP BY 1, 2
    """, since=since)
    return [_ints(r, "n", "refused") for r in found]


# --- distributions (`jobs.signals.drift`) --------------------------------------------------------------

#: metric → (category expression, FROM + WHERE over the window, GROUP BY); time column first.
_DISTRIBUTIONS = {
    "intent": ("created_at", "intent", "answer_labels", "intent"),
    "topic": ("created_at", "CAST(topic_id AS TEXT)", "answer_labels", "topic_id"),
    "cited_doc": ("a.created_at", "c.doc_id", "citations c JOIN answers a ON a.answer_id = c.answer_id", "c.doc_id"),
    "language": ("a.created_at", "a.language", "answers a", "a.language"),
}
#: The metrics `split_counts` knows.
DISTRIBUTION_METRICS = tuple(_DISTRIBUTIONS)


def split_counts(conn: Connection, metric: str, start: str, split: str, until: str) -> list[dict[str, Any]]:
    """Counts per category of ``metric`` before and after ``split``, over ``[start, until)``.

    Args:
        metric: "intent", "topic" (topic id as text), "cited_doc" or "language".

    Returns:
        [{"category", "recent": count in ``[split, until)``, "baseline": count in ``[start, split)``}].

    Raises:
        ValueError: unknown metric.
    """
    if metric not in _DISTRIBUTIONS:
        raise ValueError(f"unknown drift metric {metric!r}; known: {', '.join(DISTRIBUTION_METRICS)}")
    at, category, source, group = _DISTRIBUTIONS[metric]
    return [_ints(r, "recent", "baseline") for r in rows(conn, f"""
        SELECT {category} AS category, SUM(CASE WHEN {at} >= :split THEN 1 ELSE 0 END) AS recent,
               SUM(CASE WHEN {at} < :split THEN 1 ELSE 0 END) AS baseline
        FROM {source} WHERE {at} >= :start AND {at} < :until GROUP BY {group}
    """, start=start, split=split, until=until)]


# --- helpers -------------------------------------------------------------------------------------------

def _week_bucket(column: str, since: str, until: str) -> tuple[str, dict[str, str]]:
    """A CASE expression numbering whole weeks back from ``until`` (0 = ``(until - 7 d, until]``) for rows with
    ``column`` >= ``since``, and its parameters (ISO boundaries compared as text, so no julianday is needed)."""
    end, start = datetime.fromisoformat(until), datetime.fromisoformat(since)
    weeks = max(int((end - start) / timedelta(weeks=1)) + 1, 1)
    params = {f"week_{k}": _iso(end - timedelta(weeks=k)) for k in range(1, weeks + 1)}
    cases = " ".join(f"WHEN {column} > :week_{k} THEN {k - 1}" for k in range(1, weeks + 1))
    return f"CASE {cases} ELSE {weeks} END", params


def _iso(moment: datetime) -> str:
    return utc_iso(moment, field="week boundary")


def _ints(row: dict[str, Any] | None, *keys: str) -> dict[str, Any]:
    """``row`` with ``keys`` as int (0 for NULL): PostgreSQL's SUM over integers is NUMERIC/BIGINT."""
    row = dict(row or {})
    for key in keys:
        row[key] = int(row.get(key) or 0)
    return row

