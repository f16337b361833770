"""The statistics the signals rest on, on small hand-worked cases (notes/monitoring.md)."""

from __future__ import annotations

import math

import pytest
from scipy.stats import binomtest

from jobs.stats import (
    OTHER,
    clearly_above,
    clearly_below,
    compare_distributions,
    gini,
    top_share,
    wilson_interval,
)


def test_gini_hand_worked_cases() -> None:
    # Sorted 1,2,3,4,100: 2*(1+4+9+16+500)/(5*110) - 6/5 = 1060/550 - 1.2
    assert gini([1, 2, 3, 4, 100]) == pytest.approx(1060 / 550 - 1.2)
    assert round(gini([1, 2, 3, 4, 100]), 2) == 0.73
    # The same citations over 100 indexed documents, 95 never cited: 2*10980/(100*110) - 1.01
    assert gini([1, 2, 3, 4, 100] + [0] * 95) == pytest.approx(21960 / 11000 - 1.01)
    assert round(gini([0] * 95 + [100, 4, 3, 2, 1]), 2) == 0.99


def test_gini_edges() -> None:
    assert gini([5, 5, 5, 5]) == pytest.approx(0.0)
    assert gini([]) is None
    assert gini([0, 0, 0]) is None  # no citations at all: undefined, not "perfectly equal"
    assert gini([7]) == pytest.approx(0.0)


def test_top_share() -> None:
    assert top_share([1, 2, 3, 4, 100] + [0] * 95, 5) == 1.0
    assert top_share([10, 10, 10, 10, 10, 10, 10, 10, 10, 10], 5) == 0.5
    assert top_share([0, 0], 5) is None


@pytest.mark.parametrize("k,n", [(0, 1), (1, 1), (0, 10), (3, 10), (10, 10), (7, 31), (250, 1000), (999, 1000)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_wilson_matches_scipy_binomtest(k: int, n: int, confidence: float) -> None:
    expected = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    low, high = wilson_interval(k, n, confidence)
    assert low == pytest.approx(expected.low, abs=1e-12)
    assert high == pytest.approx(expected.high, abs=1e-12)


def test_wilson_without_trials_is_uninformative() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_rates_alert_only_when_the_interval_clears_the_threshold() -> None:
    assert not clearly_below(0, 3, 0.3)       # 0 of 3 thumbs up: could still be fine
    assert clearly_below(2, 40, 0.3)          # 5 % of 40: the whole interval is below 30 %
    assert not clearly_below(10, 40, 0.3)     # 25 % of 40: interval reaches above 30 %
    assert clearly_above(30, 60, 0.2)         # half of 60 refused
    assert not clearly_above(2, 5, 0.2)
    assert not clearly_above(0, 0, 0.2)


def test_compare_identical_distributions() -> None:
    counts = {"a": 500, "b": 300, "c": 200}
    c = compare_distributions(counts, counts)
    assert c.p_value == pytest.approx(1.0)
    assert c.js_distance == pytest.approx(0.0, abs=1e-7)
    assert c.kl_smoothed == pytest.approx(0.0, abs=1e-12)
    assert c.new_categories == {}


def test_compare_a_new_category_stays_finite_and_is_reported() -> None:
    c = compare_distributions({"a": 100, "b": 100}, {"a": 50, "b": 50, "new": 40})
    assert c.new_categories == {"new": 40}
    assert math.isfinite(c.kl_smoothed) and c.kl_smoothed > 0
    assert 0 < c.js_distance <= 1
    assert c.p_value < 1e-6


def test_compare_drops_all_zero_categories_and_merges_rare_ones() -> None:
    baseline = {"a": 500, "b": 480, "zero": 0, **{f"rare{i}": 1 for i in range(6)}}
    recent = {"a": 250, "b": 240, "zero": 0, **{f"rare{i}": 0 for i in range(6)}}
    c = compare_distributions(baseline, recent)
    assert c.p_value is not None and c.p_value > 0.05  # no "expected frequencies has a zero element" error
    assert c.merged >= 2
    assert OTHER == "(other)"


def test_compare_with_an_empty_window() -> None:
    c = compare_distributions({"a": 10}, {})
    assert (c.n_baseline, c.n_recent, c.p_value, c.js_distance) == (10, 0, None, None)
