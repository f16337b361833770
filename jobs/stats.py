"""The statistics the signals rest on: Wilson intervals, Gini concentration, distribution comparison.

Formulas and their sources (notes/monitoring.md):

- Wilson score interval for a rate, the interval of ``scipy.stats.binomtest(k, n).proportion_ci(
  method="wilson")``, in closed form: binomtest also computes an exact p-value we do not use (5 ms a call,
  4 s for a coverage heatmap); tests check the two agree.
- Gini over counts, sorted ascending: ``G = 2·Σ i·x₍ᵢ₎ / (n·Σx) − (n+1)/n``; [1,2,3,4,100] → 0.73.
- Drift: chi-square on the 2×K table (baseline vs recent) after dropping all-zero categories and merging
  rare ones into "other"; Jensen–Shannon distance (base 2) as the effect size; KL smoothed with a
  pseudocount, ``(c + α) / (N + αK)``, so a category seen in one window only stays finite.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from statistics import NormalDist

import numpy as np

#: Category that rare categories are merged into before the chi-square test.
OTHER = "(other)"


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of the rate ``k / n``.

    Args:
        k: successes, 0 <= k <= n.
        n: trials, >= 0.
        confidence: confidence level in (0, 1).

    Returns:
        ``(low, high)`` in [0, 1]; ``(0.0, 1.0)`` when ``n == 0`` (no evidence either way).
    """
    if n <= 0:
        return 0.0, 1.0
    z = _z(confidence)
    p = k / n
    denominator = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, center - half), min(1.0, center + half)


@lru_cache(maxsize=8)
def _z(confidence: float) -> float:
    """The two-sided normal quantile for ``confidence`` (1.96 for 0.95)."""
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def posterior_below(k: int, n: int, threshold: float, prior: tuple[float, float] = (1.0, 1.0)) -> float:
    """P(θ < ``threshold``) for a rate θ with prior Beta(a, b) after ``k`` successes in ``n`` trials.

    The posterior is Beta(a + k, b + n − k) (the Beta-binomial conjugate pair); its CDF is the regularized
    incomplete beta function ``scipy.special.betainc``.

    Args:
        k: successes, 0 <= k <= n.
        n: trials, >= 0 (0 gives the prior's probability).
        threshold: in (0, 1).
        prior: ``(a, b)``, both > 0; (1, 1) is the uniform prior.

    Returns:
        A probability in [0, 1].

    Raises:
        ValueError: ``k`` outside [0, n] or a prior parameter <= 0.
    """
    a, b = prior
    if not 0 <= k <= n or a <= 0 or b <= 0:
        raise ValueError(f"need 0 <= k <= n and a positive prior, got k={k}, n={n}, prior={prior}")
    from scipy.special import betainc

    return float(betainc(a + k, b + n - k, threshold))


def clearly_above(k: int, n: int, threshold: float, confidence: float = 0.95) -> bool:
    """True when the whole Wilson interval of ``k / n`` lies above ``threshold`` (so tiny counts never fire)."""
    return n > 0 and wilson_interval(k, n, confidence)[0] > threshold


def clearly_below(k: int, n: int, threshold: float, confidence: float = 0.95) -> bool:
    """True when the whole Wilson interval of ``k / n`` lies below ``threshold``."""
    return n > 0 and wilson_interval(k, n, confidence)[1] < threshold


def gini(counts: Sequence[float]) -> float | None:
    """Gini coefficient of non-negative counts (0 = all equal, → 1 = all in one item).

    Args:
        counts: one count per item of the population, zeros included (e.g. every indexed document).

    Returns:
        G in [0, 1), or None when undefined (no items, or all counts zero).

    Example:
        ``gini([1, 2, 3, 4, 100])`` → 0.727; the same plus 95 zeros → 0.986 (notes/monitoring.md).
    """
    x = np.sort(np.asarray(counts, dtype=float))
    n, total = len(x), float(x.sum()) if len(x) else 0.0
    if n == 0 or total <= 0:
        return None
    i = np.arange(1, n + 1)
    return float(2.0 * (i * x).sum() / (n * total) - (n + 1) / n)


def top_share(counts: Sequence[float], top: int = 5) -> float | None:
    """Share of the total held by the ``top`` largest counts, in [0, 1]; None when the total is 0."""
    x = np.sort(np.asarray(counts, dtype=float))[::-1]
    total = float(x.sum()) if len(x) else 0.0
    return float(x[:top].sum() / total) if total > 0 else None


@dataclass
class Comparison:
    """Baseline vs recent distribution of one categorical variable.

    Attributes:
        n_baseline, n_recent: observations in each window.
        p_value: chi-square p (None when fewer than two categories remain after merging).
        js_distance: Jensen–Shannon distance, base 2, in [0, 1] (None when a window is empty).
        kl_smoothed: KL(recent ‖ baseline) in bits over the union of categories, pseudocount-smoothed.
        new_categories: category → recent count, for categories absent from the baseline.
        changes: the categories whose share moved most: dicts (category, baseline_share, recent_share).
        merged: how many rare categories were merged into "(other)" for the test.
    """

    n_baseline: int
    n_recent: int
    p_value: float | None
    js_distance: float | None
    kl_smoothed: float | None
    new_categories: dict[str, int] = field(default_factory=dict)
    changes: list[dict] = field(default_factory=list)
    merged: int = 0


def compare_distributions(
    baseline: Mapping[str, int], recent: Mapping[str, int], *, pseudocount: float = 1.0, top_changes: int = 5
) -> Comparison:
    """Compares two category → count mappings (notes/monitoring.md "Drift without false alarms").

    Categories zero in both windows are dropped; when expected counts are small (any < 1, or more than
    20 % below 5) the rarest categories are merged into "(other)" until they are not, then
    ``chi2_contingency(correction=False)`` runs on the 2×K table.

    Args:
        baseline: counts in the earlier window.
        recent: counts in the later window.
        pseudocount: α of the smoothed KL, > 0.
        top_changes: how many moved categories to report.

    Returns:
        A `Comparison`; no statistic is None unless its input makes it undefined.
    """
    from scipy.spatial.distance import jensenshannon  # scipy takes seconds to import; only drift needs it
    from scipy.stats import chi2_contingency

    categories = sorted({c for c in (*baseline, *recent) if baseline.get(c, 0) + recent.get(c, 0) > 0})
    b = np.array([baseline.get(c, 0) for c in categories], dtype=float)
    r = np.array([recent.get(c, 0) for c in categories], dtype=float)
    nb, nr = int(b.sum()), int(r.sum())
    new = {c: int(rc) for c, bc, rc in zip(categories, b, r) if bc == 0 and rc > 0}
    if nb == 0 or nr == 0:
        return Comparison(nb, nr, None, None, None, new)
    pb, pr = b / nb, r / nr
    js = float(jensenshannon(pr, pb, base=2))
    k = len(categories)
    qb = (b + pseudocount) / (nb + pseudocount * k)
    qr = (r + pseudocount) / (nr + pseudocount * k)
    kl = float(np.sum(qr * np.log2(qr / qb)))
    order = np.argsort(-np.abs(pr - pb))[:top_changes]
    changes = [{"category": categories[i], "baseline_share": round(float(pb[i]), 4),
                "recent_share": round(float(pr[i]), 4)} for i in order]
    table, merged = _mergeable_table(b, r)
    p_value = None
    if table.shape[1] >= 2:
        p_value = float(chi2_contingency(table, correction=False)[1])
    return Comparison(nb, nr, p_value, js if math.isfinite(js) else None, kl, new, changes, merged)


def _mergeable_table(b: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, int]:
    """The 2×K table with the rarest categories merged into one until expected counts are large enough."""
    order = np.argsort(b + r, kind="stable")  # rarest first
    b, r = b[order], r[order]
    for m in range(0, len(b) - 1):
        if m == 1:
            continue  # merging one category into "other" changes nothing
        if m == 0:
            table = np.vstack([b, r])
        else:
            table = np.vstack([np.concatenate([[b[:m].sum()], b[m:]]), np.concatenate([[r[:m].sum()], r[m:]])])
        if _expected_ok(table):
            return table, m
    if len(b) < 2:
        return np.vstack([b, r]), 0
    return np.vstack([[b[:-1].sum(), b[-1]], [r[:-1].sum(), r[-1]]]), len(b) - 1  # all but the largest merged


def _expected_ok(table: np.ndarray) -> bool:
    total = table.sum()
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / total
    return bool(expected.min() >= 1 and (expected < 5).mean() <= 0.2)
