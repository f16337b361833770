"""Per-answer fused quality and per-document aggregates over the answers that cited each document.

The fused score (seed 004 §5, "C22 fused_score"; weights in `config.monitoring.QualityConfig`) is, in [0, 1]:

- 0 for a refusal (the user got no answer);
- the retrieval confidence ``top_score`` when nobody voted or reported the answer;
- otherwise ``(w_t · up / (up + down + w_f · flags) + w_c · top_score) / (w_t + w_c)``.

Everything is computed in the database (one GROUP BY per table, `feedback.windows`), never by loading answers
into Python; `fused_quality` is the same formula in Python for tests.
Citation counts are reported here but never feed ranking (seed 004 §13.7).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection

from config.monitoring import QualityConfig
from feedback import windows
from feedback.windows import FusedWeights


def fused_quality(*, refused: bool, up: int, down: int, flags: int, top_score: float, cfg: QualityConfig) -> float:
    """The fused quality of one answer, in [0, 1] (see the module docstring)."""
    if refused:
        return 0.0
    if up + down + flags == 0:
        return float(top_score)
    thumbs = up / (up + down + cfg.flag_weight * flags)
    return (cfg.thumbs_weight * thumbs + cfg.confidence_weight * top_score) / (cfg.thumbs_weight + cfg.confidence_weight)


def weights(cfg: QualityConfig) -> FusedWeights:
    """The fused-score weights of ``cfg`` for `feedback.windows`."""
    return FusedWeights(thumbs=cfg.thumbs_weight, confidence=cfg.confidence_weight, flags=cfg.flag_weight)


def answer_quality(conn: Connection, cfg: QualityConfig, since: str, until: str) -> dict[str, float]:
    """answer_id → fused quality of every answer created in ``[since, until)`` (`feedback.windows.answer_quality`)."""
    return windows.answer_quality(conn, since, until, weights(cfg))


def document_aggregates(conn: Connection, cfg: QualityConfig, since: str, until: str) -> dict[str, dict[str, Any]]:
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
    return windows.document_quality(conn, since, until, weights(cfg))


def answer_quality_summary(conn: Connection, cfg: QualityConfig, since: str, until: str) -> dict[str, Any]:
    """Window-wide figures: answers, refusals, votes, flags and the mean fused quality (None when no answers)."""
    return windows.quality_summary(conn, since, until, weights(cfg))
