"""Rank fusion and score calibration on hand-worked cases."""

from __future__ import annotations

import numpy as np
import pytest

from config import CalibrationConfig
from knowledge.scoring import calibrate, convex_fusion, reciprocal_rank_fusion


def test_reciprocal_rank_fusion_sums_one_over_k_plus_rank():
    fused = reciprocal_rank_fusion([[1, 2, 3], [3, 1]], k=60)

    assert fused == pytest.approx({1: 1 / 61 + 1 / 62, 2: 1 / 62, 3: 1 / 63 + 1 / 61})


def test_convex_fusion_of_min_max_normalised_scores():
    dense = {1: 0.9, 2: 0.7, 3: 0.5}  # → 1, 0.5, 0
    sparse = {3: 12.0, 4: 4.0}  # → 1, 0

    fused = convex_fusion(dense, sparse, dense_weight=0.45)

    assert fused == pytest.approx({1: 0.45, 2: 0.225, 3: 0.55, 4: 0.0})


def test_convex_fusion_single_or_tied_candidates_count_as_the_best():
    fused = convex_fusion({1: 0.8, 2: 0.6}, {2: 3.1}, dense_weight=0.5)  # the only BM25 match of the query

    assert fused == pytest.approx({1: 0.5, 2: 0.5})
    assert convex_fusion({}, {}, 0.5) == {}


def test_calibrate_float_and_array_agree():
    cfg = CalibrationConfig(raw=[0.40, 0.52, 0.63, 0.79], score=[0.0, 0.3, 0.6, 1.0])
    xs = np.linspace(-1, 1, 401)

    scalar = np.array([calibrate(float(x), cfg) for x in xs])

    np.testing.assert_allclose(scalar, calibrate(xs, cfg), atol=1e-12)
    assert calibrate(0.52, cfg) == pytest.approx(0.3) and calibrate(0.575, cfg) == pytest.approx(0.45)
    assert calibrate(-1.0, cfg) == 0.0 and calibrate(1.0, cfg) == 1.0
    assert isinstance(calibrate(0.5, cfg), float)


def test_lexical_coverage_weighs_the_question_tokens_by_idf():
    from knowledge.scoring import lexical_coverage

    idf = {"refund": 1.0, "policy": 1.0, "nowhere": 3.0}.get
    assert lexical_coverage({"refund", "policy"}, {"refund", "policy", "other"}, idf) == 1.0
    assert lexical_coverage({"refund", "policy", "nowhere"}, {"refund", "policy"}, idf) == pytest.approx(2 / 5)
    assert lexical_coverage(set(), {"refund"}, idf) == 0.0
