"""Scores that mean the same across queries, confidence bands, and rank fusion.

The raw signal is the cosine similarity of question and chunk embeddings: unlike BM25 scores or per-query
min-max values, it does not depend on the query's length or on the other candidates. A piecewise-linear
calibration per embedding model (anchors in config, fitted by `knowledge.calibration`) maps it to [0, 1]
so that the design's fixed bands apply: >= 0.6 high, 0.3–0.6 low, < 0.3 excluded (DESIGN.md). For a
question in a language the dense model cannot read, the cosine means nothing: the score is then the
question's IDF-weighted token coverage (`lexical_coverage`, mapped by `LEXICAL_CALIBRATION`).
"""

from __future__ import annotations

import bisect

import numpy as np

from config import AnswerConfig, CalibrationConfig
from knowledge.types import CONFIDENCE_HIGH, CONFIDENCE_LOW


def calibrate(cosine: np.ndarray | float, cfg: CalibrationConfig) -> np.ndarray | float:
    """Map raw cosine similarity in [-1, 1] to a score in [0, 1] by the config's anchors (``numpy.interp``).

    Values below the first anchor map to its score, above the last to the last score. A Python float in
    gives a float out, computed without numpy (it runs once per returned passage: ~1 µs instead of ~40 µs).
    """
    if isinstance(cosine, float):
        raw, score = cfg.raw, cfg.score
        i = bisect.bisect_right(raw, cosine)
        if i == 0:
            value = score[0]
        elif i == len(raw):
            value = score[-1]
        else:
            t = (cosine - raw[i - 1]) / (raw[i] - raw[i - 1])
            value = score[i - 1] + t * (score[i] - score[i - 1])
        return min(max(float(value), 0.0), 1.0)
    return np.clip(np.interp(cosine, cfg.raw, cfg.score), 0.0, 1.0)


#: Lexical confidence of a question the dense model cannot read (e.g. Korean under all-MiniLM-L6-v2): the
#: IDF-weighted share of the question's BM25 tokens found in the passage, mapped onto the same bands. 0.2 →
#: 0.3 and 0.5 → 0.6 separate the sample KB's Korean/Japanese questions: answerable ones' best passage covers
#: 0.24–0.97, off-topic ones ≤ 0.14 (a question's words no page uses weigh most, so off-topic stays low).
LEXICAL_CALIBRATION = CalibrationConfig(model="lexical", raw=[0.0, 0.2, 0.5, 1.0], score=[0.0, 0.3, 0.6, 1.0])


def lexical_coverage(question_tokens: set[str], passage_tokens: set[str], idf) -> float:
    """IDF-weighted share of ``question_tokens`` present in ``passage_tokens``, in [0, 1] (0 when empty).

    ``idf(token)`` gives the token's inverse document frequency; tokens no document contains get the
    largest, so a question about something the corpus never mentions scores low whatever else matches.
    """
    weights = {t: idf(t) for t in question_tokens}
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if t in passage_tokens) / total if total > 0 else 0.0


def combine(evidence: dict[str, float], cfg: CalibrationConfig) -> float:
    """The raw value the calibration anchors map: ``Σ cfg.weights[f] · evidence[f]``; with no weights
    (an old config) the cosine alone, as before issue 9."""
    if not cfg.weights:
        return float(evidence.get("cosine", 0.0))
    return weighted_sum(evidence, cfg.weights)


def weighted_sum(evidence: dict[str, float], weights: dict[str, float]) -> float:
    """``Σ weights[f] · evidence[f]`` (a missing feature counts 0): the raw value of `combine`, also what
    `knowledge.calibration` places the anchors on, so fit and runtime cannot drift apart."""
    return float(sum(w * float(evidence.get(f, 0.0)) for f, w in weights.items()))


def evidence_score(evidence: dict[str, float], cfg: CalibrationConfig) -> float:
    """A passage's confidence score in [0, 1]: `calibrate` of `combine`."""
    return float(calibrate(combine(evidence, cfg), cfg))


def bm25_share(bm25: float, term_idf: list[float], k1: float) -> float:
    """A passage's BM25 score as a share of the most any passage could score for this question, in [0, 1].

    Lucene's BM25 term weight idf · tf·(k1+1) / (tf + k1·norm) tends to idf·(k1+1) as tf grows, so
    Σ idf·(k1+1) over the question's tokens bounds the score (Robertson & Zaragoza, 2009, §3.4): the share
    is comparable across questions, unlike the raw score. 0 when the question has no tokens.
    """
    bound = sum(term_idf) * (k1 + 1)
    return min(1.0, bm25 / bound) if bound > 0 else 0.0


def rank_agreement(dense_rank: int | None, sparse_rank: int | None) -> float:
    """How strongly both rankings put a passage on top, in [0, 1]: the mean of 1/(1+rank) over the dense
    and the BM25 ranking (ranks from 0; absent from one ranking counts 0 for it). 1 = first in both."""
    return sum(1.0 / (1 + r) for r in (dense_rank, sparse_rank) if r is not None) / 2


def band(score: float, cfg: AnswerConfig) -> str | None:
    """``"high"`` (score >= cfg.high), ``"low"`` (cfg.low <= score < cfg.high) or None (excluded)."""
    if score >= cfg.high:
        return CONFIDENCE_HIGH
    if score >= cfg.low:
        return CONFIDENCE_LOW
    return None


def reciprocal_rank_fusion(rankings: list[list[int]], k: int = 60) -> dict[int, float]:
    """Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): sum of 1 / (k + rank), rank from 1.

    Args:
        rankings: each a list of item ids, best first.
        k: smoothing constant; 60 from the paper.

    Returns:
        item id → fused score (> 0); higher is better.
    """
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return fused


def convex_fusion(dense: dict[int, float], sparse: dict[int, float], dense_weight: float) -> dict[int, float]:
    """Convex combination of min-max-normalised scores: w·dense + (1 − w)·sparse (Bruch et al., 2023).

    Normalisation is per query, so these values rank candidates but are never shown as confidence.

    Args:
        dense: item id → cosine similarity.
        sparse: item id → BM25 score.
        dense_weight: w in [0, 1].

    Returns:
        item id → fused value in [0, 1].
    """
    def normalise(scores: dict[int, float]) -> dict[int, float]:
        if not scores:
            return {}
        lo, hi = min(scores.values()), max(scores.values())
        if hi == lo:  # one candidate, or all tied: each is that side's best match, not its worst
            return dict.fromkeys(scores, 1.0)
        return {i: (s - lo) / (hi - lo) for i, s in scores.items()}

    d, s = normalise(dense), normalise(sparse)
    return {i: dense_weight * d.get(i, 0.0) + (1 - dense_weight) * s.get(i, 0.0) for i in set(d) | set(s)}
