"""Fused per-answer quality and per-document aggregates, computed in the database (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from config.monitoring import QualityConfig
from jobs._common import snapshot, window
from jobs.quality import answer_quality, answer_quality_summary, document_aggregates, fused_quality
from tests.jobs.monitoring_helpers import add_answer, any_store  # noqa: F401

CFG = QualityConfig()


@pytest.mark.parametrize("kwargs,expected", [
    ({"refused": True, "up": 3, "down": 0, "flags": 0, "top_score": 0.9}, 0.0),        # a refusal answers nothing
    ({"refused": False, "up": 0, "down": 0, "flags": 0, "top_score": 0.72}, 0.72),     # no feedback: confidence
    ({"refused": False, "up": 1, "down": 0, "flags": 0, "top_score": 0.5}, 0.6 * 1 + 0.4 * 0.5),
    ({"refused": False, "up": 0, "down": 2, "flags": 0, "top_score": 0.9}, 0.4 * 0.9),
    ({"refused": False, "up": 2, "down": 0, "flags": 1, "top_score": 1.0}, 0.6 * 2 / 4 + 0.4),  # a flag = 2 👎
])
def test_fused_quality_cases(kwargs, expected) -> None:
    assert fused_quality(cfg=CFG, **kwargs) == pytest.approx(expected)


def test_sql_matches_python_and_documents_aggregate(any_store) -> None:  # noqa: F811
    store = any_store
    cases = [
        dict(cited=("api:errors.md",), votes=("up", "up"), top_score=0.9),
        dict(cited=("api:errors.md", "api:rate-limits.md"), votes=("down",), flags=1, top_score=0.7),
        dict(cited=("api:rate-limits.md",), top_score=0.65),
        dict(cited=(), votes=("down",)),
    ]
    ids = [add_answer(store, **c) for c in cases]
    old = add_answer(store, cited=("api:errors.md",), votes=("down",) * 3,
                     created_at=datetime.now(timezone.utc) - timedelta(days=60))  # outside the window
    since, until = window(datetime.now(timezone.utc), 30)
    with snapshot(store) as conn:
        fused = answer_quality(conn, CFG, since, until)
        docs = document_aggregates(conn, CFG, since, until)
        summary = answer_quality_summary(conn, CFG, since, until)
    assert old not in fused
    for answer_id, c in zip(ids, cases):
        votes = c.get("votes", ())
        assert fused[answer_id] == pytest.approx(fused_quality(
            refused=not c["cited"], up=votes.count("up"), down=votes.count("down"), flags=c.get("flags", 0),
            top_score=c.get("top_score", 0.1), cfg=CFG))
    assert docs["api:errors.md"]["citations"] == 2
    assert (docs["api:errors.md"]["up"], docs["api:errors.md"]["down"], docs["api:errors.md"]["flags"]) == (2, 1, 1)
    assert docs["api:errors.md"]["fused"] == pytest.approx((fused[ids[0]] + fused[ids[1]]) / 2)
    assert docs["api:rate-limits.md"]["citations"] == 2
    assert (summary["answers"], summary["refusals"], summary["flags"]) == (4, 1, 1)
