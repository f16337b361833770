"""Ranking metrics against values worked out by hand (log2 discounts written out)."""

from __future__ import annotations

import math

import pytest

from knowledge.metrics import dcg, evaluate_run, mrr_at_k, ndcg_at_k, recall_at_k

LOG2_3 = math.log2(3)


def test_dcg_discounts_by_log2_of_rank_plus_one():
    assert dcg([3, 2, 1]) == pytest.approx(3 / 1 + 2 / LOG2_3 + 1 / 2)
    assert dcg([]) == 0.0


def test_ndcg_with_graded_relevance():
    # ranking d3 (rel 2), d1 (not judged), d2 (rel 1): DCG = 2/1 + 0 + 1/log2(4); ideal = 2/1 + 1/log2(3)
    assert ndcg_at_k(["d3", "d1", "d2"], {"d3": 2, "d2": 1}) == pytest.approx(2.5 / (2 + 1 / LOG2_3))
    assert ndcg_at_k(["d3", "d1", "d2"], {"d3": 2, "d2": 1}) == pytest.approx(0.950234, abs=1e-6)


def test_ndcg_gain_is_the_relevance_not_two_to_the_relevance():
    # trec_eval's ndcg_cut: gain = rel. With 2^rel - 1 this would be (1 + 3/log2(3)) / (3 + 1/log2(3)).
    assert ndcg_at_k(["a", "b"], {"a": 1, "b": 2}) == pytest.approx((1 + 2 / LOG2_3) / (2 + 1 / LOG2_3))


def test_ndcg_cut_off_and_perfect_and_empty_rankings():
    relevance = {"x": 1}
    assert ndcg_at_k(["x"], relevance) == 1.0
    assert ndcg_at_k([f"n{i}" for i in range(10)] + ["x"], relevance, k=10) == 0.0  # rank 11 is past the cut
    assert ndcg_at_k([f"n{i}" for i in range(9)] + ["x"], relevance, k=10) == pytest.approx(1 / math.log2(11))
    assert ndcg_at_k([], relevance) == 0.0
    assert ndcg_at_k(["x"], {"x": 0}) == 0.0  # nothing relevant: defined as 0


def test_ideal_ranking_is_cut_at_k_too():
    relevance = {"a": 1, "b": 1, "c": 1}
    # k = 2: ideal DCG@2 = 1 + 1/log2(3); the ranking finds one of them at rank 2
    assert ndcg_at_k(["z", "c"], relevance, k=2) == pytest.approx((1 / LOG2_3) / (1 + 1 / LOG2_3))


def test_duplicates_in_a_ranking_count_once():
    assert ndcg_at_k(["x", "x", "y"], {"y": 1}) == pytest.approx(1 / LOG2_3)
    assert recall_at_k(["x", "x"], {"x": 1, "y": 1}, k=2) == 0.5


def test_recall_at_k():
    relevance = {"a": 1, "b": 1, "c": 0}  # c judged not relevant
    assert recall_at_k(["a", "z", "b"], relevance, k=2) == 0.5
    assert recall_at_k(["a", "z", "b"], relevance, k=3) == 1.0
    assert recall_at_k(["c"], relevance, k=10) == 0.0


def test_mrr_at_k():
    assert mrr_at_k(["z", "y", "a"], {"a": 1}) == pytest.approx(1 / 3)
    assert mrr_at_k(["a"], {"a": 1}) == 1.0
    assert mrr_at_k([f"n{i}" for i in range(10)] + ["a"], {"a": 1}, k=10) == 0.0


def test_evaluate_run_averages_over_judged_queries():
    qrels = {"q1": {"d3": 2, "d2": 1}, "q2": {"d5": 1}, "q3": {"d1": 1}}
    run = {"q1": ["d3", "d1", "d2"], "q2": ["d4", "d5"], "q9": ["d1"]}  # q3 missing, q9 not judged

    metrics = evaluate_run(run, qrels)

    assert metrics["ndcg@10"] == pytest.approx((2.5 / (2 + 1 / LOG2_3) + 1 / LOG2_3 + 0) / 3)
    assert metrics["recall@10"] == pytest.approx(2 / 3)
    assert metrics["recall@100"] == pytest.approx(2 / 3)
    assert metrics["mrr@10"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert evaluate_run({}, {}) == {"ndcg@10": 0.0, "recall@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}
