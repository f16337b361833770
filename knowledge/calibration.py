"""Fit the score calibration of an embedding model on a KB question set (answerable vs no-answer).

The design's bands are fixed (0.3 refusal cut-off, 0.6 high confidence); what changes per model is which
raw cosine similarity those scores correspond to. `fit_calibration` picks:

- ``raw_low`` (score 0.3): a cut-off on each question's best cosine that refuses as many no-answer
  questions as possible while still answering at least ``min_answered`` (default 0.9, the issue's target)
  of the answerable ones, placed midway in the gap so unseen questions get a margin on both sides;
- ``raw_high`` (score 0.6): the median best cosine of answerable questions whose best passage comes from a
  gold page (so half of the clearly right answers are "high confidence");
- score 0 and 1 anchors extrapolated linearly from those two and clipped to [0, 1] in raw space;
- first, a ``language_shift`` (`language_shift`) is added to the cosines of questions not in English, so a
  Korean or Japanese question is judged on the English questions' scale (multilingual-e5: right answers to
  Korean/Japanese questions score ~0.04 lower, for Japanese pages as for English ones).

Question-set format (shared/eval/kb-dev): JSON Lines with ``question``, ``answerable``, ``gold`` (paths
relative to the corpus root), ``lang``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from config import CalibrationConfig
from config.settings import EVIDENCE_FEATURES
from knowledge.scoring import weighted_sum


#: Least raw-cosine distance between the 0.3 and 0.6 anchors. 0.01, not more: multilingual-e5 packs right
#: and wrong answers into ~0.85–0.92, and a 0.05 floor put most right answers in the low-confidence band.
MIN_BAND_WIDTH = 0.01
#: Questions needed on each side (English, other languages) before a language shift is fitted.
MIN_SHIFT_SAMPLES = 3


@dataclass(frozen=True)
class CalibrationSample:
    """One question's evidence: its best cosine, whether the best passage is on a gold page, the
    question's language, and each retrieved passage's evidence with whether it is on a gold page."""

    best_cosine: float
    answerable: bool
    best_is_gold: bool
    language: str = "en"
    passages: list[tuple[dict, bool]] = field(default_factory=list)


def load_questions(path: Path) -> list[dict]:
    """Read a question set (JSON Lines). Raises ValueError naming the line when a line is not JSON."""
    questions = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            questions.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
    return questions


def fit_calibration(samples: list[CalibrationSample], model: str, *, min_answered: float = 0.9) -> CalibrationConfig:
    """Anchors mapping raw cosine → score so that 0.3 and 0.6 fall where the module docstring says.

    Args:
        samples: one per question (answerable and no-answer).
        model: embedding model name recorded with the calibration.
        min_answered: share of answerable questions that must stay above the refusal cut-off, in (0, 1].

    Raises:
        ValueError: no answerable question, or no answerable question whose best passage is gold.
    """
    shift = language_shift(samples)
    samples = [replace(s, best_cosine=s.best_cosine + shift) if s.language != "en" else s for s in samples]
    answerable = np.array([s.best_cosine for s in samples if s.answerable])
    unanswerable = np.array([s.best_cosine for s in samples if not s.answerable])
    gold_best = np.array([s.best_cosine for s in samples if s.answerable and s.best_is_gold])
    if len(answerable) == 0 or len(gold_best) == 0:
        raise ValueError("calibration needs answerable questions whose best passage is on a gold page")
    # The highest cut-off that still answers min_answered of the answerable questions.
    ceiling = float(np.quantile(answerable, 1 - min_answered, method="lower"))
    # No-answer questions refused at that cut-off; moving the cut-off down to just above the highest of them
    # refuses the same ones and answers more. Take the midpoint: margin on both sides for unseen questions.
    refused = unanswerable[unanswerable < ceiling]
    raw_low = ceiling if len(refused) == 0 else float((refused.max() + ceiling) / 2)
    raw_high = max(float(np.median(gold_best)), raw_low + MIN_BAND_WIDTH)
    span = raw_high - raw_low
    raw_zero = max(-1.0, raw_low - span)
    raw_one = min(1.0, raw_high + span * 4 / 3)
    if raw_one <= raw_high:
        raw_one = raw_high + 1e-3
    return CalibrationConfig(
        model=model,
        raw=[round(x, 4) for x in (raw_zero, raw_low, raw_high, raw_one)],
        score=[0.0, 0.3, 0.6, 1.0],
        language_shift=round(shift, 4),
    )


def language_shift(samples: list[CalibrationSample]) -> float:
    """How much lower a right answer's cosine is for questions not in English: median best cosine of
    answerable English questions whose best passage is gold, minus the same for the other languages; >= 0.
    0 unless both groups have `MIN_SHIFT_SAMPLES` questions (one number from a handful of questions, not a
    per-language fit)."""
    english = [s.best_cosine for s in samples if s.answerable and s.best_is_gold and s.language == "en"]
    other = [s.best_cosine for s in samples if s.answerable and s.best_is_gold and s.language != "en"]
    if min(len(english), len(other)) < MIN_SHIFT_SAMPLES:
        return 0.0
    return max(0.0, float(np.median(english) - np.median(other)))


#: L2 penalty of the logistic regression over evidence features: a few hundred (question, passage) pairs
#: fit five weights; the penalty keeps a feature that separates the dev set by luck from dominating.
L2_PENALTY = 1.0
#: Share of answerable questions that must stay above the refusal cut-off (issue 9 target: ≥ 0.95).
MIN_ANSWERED = 0.95


def fit_confidence(samples: list[CalibrationSample], model: str, *, min_answered: float = MIN_ANSWERED,
                   features: tuple[str, ...] = EVIDENCE_FEATURES) -> CalibrationConfig:
    """Fit how a passage's evidence is combined into one confidence score, and the score's bands.

    1. ``language_shift`` as in `fit_calibration`, added to the cosine features of questions not in
       English.
    2. Weights: an L2-penalised logistic regression (scipy's L-BFGS on the log loss) of "this passage is
       on a gold page" on the evidence of every retrieved passage of every question; a no-answer
       question's passages are all negatives. The raw value is ``Σ w·x`` (the intercept is absorbed by
       the anchors).
    3. Anchors on that raw value, per question's best passage: score 0.3 where refusing keeps
       ``min_answered`` of the answerable questions answered and refuses as many no-answer ones as
       possible (midway in the gap, as `fit_calibration`); score 0.6 where "high confidence" best
       agrees with "the best passage is on a gold page" (fewest right answers below plus wrong or
       no-answer ones above), so the low-confidence label marks doubtful answers, not half the right ones.

    Args:
        samples: questions with ``passages`` filled (`knowledge.kbeval.calibration_samples`).
        model: embedding model name recorded with the calibration.
        min_answered: in (0, 1].
        features: evidence features to combine.

    Raises:
        ValueError: no passage evidence, or no answerable question whose best passage is gold.
    """
    from scipy.optimize import minimize

    shift = language_shift(samples)
    shifted = [_shift_evidence(s, shift) for s in samples]
    rows = [(ev, gold) for s in shifted for ev, gold in s.passages]
    if not rows or not any(g for _, g in rows):
        raise ValueError("confidence fit needs retrieved passages on gold pages")
    x = np.array([[float(ev.get(f, 0.0)) for f in features] + [1.0] for ev, _ in rows])
    y = np.array([1.0 if g else 0.0 for _, g in rows])

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ w
        p = 1 / (1 + np.exp(-z))
        nll = float(np.sum(np.logaddexp(0, z) - y * z)) + L2_PENALTY * float(w[:-1] @ w[:-1]) / 2
        grad = x.T @ (p - y) + L2_PENALTY * np.append(w[:-1], 0.0)
        return nll, grad

    fitted = minimize(loss, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B").x
    weights = {f: round(float(w), 4) for f, w in zip(features, fitted[:-1])}
    raw_low, raw_high, spread = _anchors(shifted, weights, min_answered)
    return CalibrationConfig(
        model=model,
        raw=[round(float(x), 4) for x in (raw_low - spread, raw_low, raw_high, raw_high + spread)],
        score=[0.0, 0.3, 0.6, 1.0],
        language_shift=round(shift, 4),
        weights=weights,
    )


def _shift_evidence(sample: CalibrationSample, shift: float) -> CalibrationSample:
    if sample.language == "en" or not shift:
        return sample
    moved = [({**ev, "cosine": ev.get("cosine", 0.0) + shift, "unit_cosine": ev.get("unit_cosine", 0.0) + shift}, g)
             for ev, g in sample.passages]
    return replace(sample, passages=moved)


def _anchors(samples: list[CalibrationSample], weights: dict[str, float],
             min_answered: float) -> tuple[float, float, float]:
    """(raw value at score 0.3, at 0.6, the raw scale) from each question's best combined passage
    (`fit_confidence`). The scale — the interquartile range of answerable questions' best values — sets
    the least band width (a tenth of it) and the distance of the 0 and 1 anchors, so the score keeps
    rising past the bands instead of jumping from 0 to 1."""
    def best(s: CalibrationSample) -> tuple[float, bool]:
        scored = [(weighted_sum(ev, weights), g) for ev, g in s.passages]
        return max(scored, key=lambda t: t[0]) if scored else (float("-inf"), False)

    answerable = [best(s) for s in samples if s.answerable and s.passages]
    unanswerable = np.array([best(s)[0] for s in samples if not s.answerable and s.passages])
    if not any(g for _, g in answerable):
        raise ValueError("calibration needs answerable questions whose best passage is on a gold page")
    values = np.array([v for v, _ in answerable])
    ceiling = float(np.quantile(values, 1 - min_answered, method="lower"))
    refused = unanswerable[unanswerable < ceiling] if len(unanswerable) else unanswerable
    raw_low = ceiling if len(refused) == 0 else float((refused.max() + ceiling) / 2)
    right = sorted(v for v, g in answerable if g and v >= raw_low)
    doubtful = [v for v, g in answerable if not g and v >= raw_low] + [v for v in unanswerable if v >= raw_low]
    candidates = sorted(set(right + doubtful + [raw_low + MIN_BAND_WIDTH]))

    def errors(t: float) -> int:
        return sum(v < t for v in right) + sum(v >= t for v in doubtful)

    # the raw value's scale: the interquartile range of the answerable questions' best values
    spread = max(float(np.subtract(*np.percentile(values, [75, 25]))), MIN_BAND_WIDTH)
    width = max(MIN_BAND_WIDTH, spread / 10)
    threshold = min((t for t in candidates if t >= raw_low + width), key=lambda t: (errors(t), t),
                    default=raw_low + width)
    below = [v for v in right + doubtful if v < threshold]
    # midway between the threshold and the highest value below it, for a margin on unseen questions
    raw_high = (threshold + max(below)) / 2 if below and max(below) > raw_low + width else threshold
    return raw_low, max(raw_high, raw_low + width), spread
