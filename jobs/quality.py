"""Per-answer fused quality and per-document aggregates over the answers that cited each document.

The fused score (seed 004 §5, "C22 fused_score"; weights in `config.monitoring.QualityConfig`) is, in [0, 1]:

- 0 for a refusal (the user got no answer);
- the retrieval confidence ``top_score`` when nobody voted or reported the answer;
- otherwise ``(w_t · up / (up + down + w_f · flags) + w_c · top_score) / (w_t + w_c)``.

Everything is computed in SQLite (one GROUP BY per table), never by loading answers into Python; the
per-answer expression is `fused_sql`, and `fused_quality` is the same formula in Python for tests.
Citation counts are reported here but never feed ranking (seed 004 §13.7).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from config.monitoring import QualityConfig
from jobs._common import rows


def fused_quality(*, refused: bool, up: int, down: int, flags: int, top_score: float, cfg: QualityConfig) -> float:
    """The fused quality of one answer, in [0, 1] (see the module docstring)."""
    if refused:
        return 0.0
    if up + down + flags == 0:
        return float(top_score)
    thumbs = up / (up + down + cfg.flag_weight * flags)
    return (cfg.thumbs_weight * thumbs + cfg.confidence_weight * top_score) / (cfg.thumbs_weight + cfg.confidence_weight)


def fused_sql(cfg: QualityConfig) -> str:
    """SQL expression of `fused_quality` over columns ``refused, up, down, flags, top_score``.

    The weights are floats from a validated config, inlined with ``repr`` (no user text reaches the SQL).
    """
    wt, wc, wf = (float(cfg.thumbs_weight), float(cfg.confidence_weight), float(cfg.flag_weight))
    return (
        "CASE WHEN refused THEN 0.0 WHEN up + down + flags = 0 THEN top_score "
        f"ELSE ({wt!r} * up / (up + down + {wf!r} * flags) + {wc!r} * top_score) / {wt + wc!r} END"
    )


def answer_quality_cte(cfg: QualityConfig) -> str:
    """A ``WITH`` clause defining ``q(answer_id, created_at, refused, top_score, up, down, flags, fused)``.

    Parameters: ``:since`` and ``:until`` (store time text) select answers by ``created_at``; votes and
    flags are those on these answers, whenever they were cast. Read from covering indexes (answers by
    time, votes by answer and value) with one probe per answer: ~0.3 s for 25k answers and 300k votes.
    """
    return f"""
        WITH a AS MATERIALIZED (
            SELECT answer_id, created_at, refused, top_score FROM answers
            WHERE created_at >= :since AND created_at < :until
        ),
        q0 AS MATERIALIZED (
            SELECT a.*,
                   (SELECT COUNT(*) FROM votes WHERE votes.answer_id = a.answer_id AND votes.value = 'up') AS up,
                   (SELECT COUNT(*) FROM votes WHERE votes.answer_id = a.answer_id AND votes.value = 'down') AS down,
                   (SELECT COUNT(*) FROM flags WHERE flags.answer_id = a.answer_id) AS flags
            FROM a
        ),
        q AS (SELECT q0.*, {fused_sql(cfg)} AS fused FROM q0)
    """


def document_aggregates(conn: sqlite3.Connection, cfg: QualityConfig, since: str, until: str) -> dict[str, dict[str, Any]]:
    """Quality of the answers that cited each document, over answers created in ``[since, until)``.

    Args:
        conn: a read connection (`jobs._common.snapshot`).
        cfg: fused-score weights.
        since, until: store time text.

    Returns:
        doc_id → {"citations": answers citing it, "up", "down": votes on those answers, "flags": wrong-answer
        reports on them, "reported": answers citing it with at least one report, "fused": mean fused quality
        (float in [0, 1])}.
        Documents never cited in the window are absent.
    """
    found = rows(
        conn,
        answer_quality_cte(cfg) + """
        SELECT c.doc_id AS doc_id, COUNT(*) AS citations, SUM(q.up) AS up, SUM(q.down) AS down,
               SUM(q.flags) AS flags, SUM(q.flags > 0) AS reported, AVG(q.fused) AS fused
        FROM citations c JOIN q ON q.answer_id = c.answer_id
        GROUP BY c.doc_id
        """,
        {"since": since, "until": until},
    )
    return {r.pop("doc_id"): r for r in found}


def answer_quality_summary(conn: sqlite3.Connection, cfg: QualityConfig, since: str, until: str) -> dict[str, Any]:
    """Window-wide figures: answers, refusals, votes, flags and the mean fused quality (None when no answers)."""
    (row,) = rows(
        conn,
        answer_quality_cte(cfg) + """
        SELECT COUNT(*) AS answers, COALESCE(SUM(refused), 0) AS refusals, COALESCE(SUM(up), 0) AS up,
               COALESCE(SUM(down), 0) AS down, COALESCE(SUM(flags), 0) AS flags, AVG(fused) AS fused
        FROM q
        """,
        {"since": since, "until": until},
    )
    return row
