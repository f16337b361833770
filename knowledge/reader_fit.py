"""Fit the answer reader (`knowledge.reader`) on labelled questions: ``minerva fit-reader``.

Input: questions in the kb-dev-v2 layout (``question``, ``lang``, ``answerable``, ``gold``, ``must_contain``:
groups of alternatives; a text holds the fact when every group has one of its alternatives). Only the
*fitting* part of their one split by page is read (`knowledge.kbeval.split_by_page`); the validation part is
left for `benchmarks/answers.py` to report on.

1. Unit model. Every answerable unit of the passages a reply would quote is a row of `FEATURES`; its target
   is the share of the question's ``must_contain`` groups the unit holds (0 for every unit of a no-answer
   question). A logistic regression with an L2 penalty is fitted to these soft targets (cross-entropy,
   L-BFGS); the penalty is chosen by cross-validation over folds of pages, by how often the best-scored unit
   holds the most groups any unit of the question holds.
2. Answer model. Each fitting question is answered by a unit model fitted on the *other* folds (cross-fitting,
   so the answer model learns from scores like those of unseen questions), and a logistic regression of
   `ANSWER_FEATURES` predicts whether the direct answer holds the fact (a reply to a no-answer question never
   does).
3. Thresholds, on those cross-fitted replies (`thresholds`): ``refuse`` below which a reply is a refusal,
   ``low`` below which it is labelled low confidence, ``high`` from which it is labelled high (≥ 90 % of such
   replies hold the fact: issue 22, "Confidence that means right").
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.optimize import minimize
from scipy.stats import binomtest

from knowledge.kbeval import as_seen, groups_held, holds_fact, question_key, split_by_page
from knowledge.reader import ANSWER_FEATURES, FEATURES, Logistic, ReaderModel, using

#: Candidate L2 penalties (on standardised features; the loss is a mean over rows).
PENALTIES = (0.001, 0.003, 0.01, 0.03, 0.1)
#: Folds of pages for choosing the penalty and for cross-fitting the answer model.
FOLDS = 5
#: Direct-answer compositions tried (`ReaderModel.join_share`, `direct_chars`, `direct_units`): a unit joins the
#: best one at this share of its probability, within this many characters and this many units. 450 characters
#: is about four lines of a Slack thread (600 held the fact a little more often by showing a screenful); the
#: limit on units keeps a table's rows from flooding the answer. Chosen by `composition_score`.
COMPOSITIONS = tuple((share, chars, most) for chars in (300, 450) for share in (0.1, 0.3) for most in (3, 4, 6))
#: Characters a reader takes in at a glance: a direct answer whose first ones hold the fact counts twice.
GLANCE_CHARS = 200
#: How much better a refusal threshold must refuse no-answer replies than answerable ones to be used.
MIN_SEPARATION = 0.2
#: Below this probability of holding the fact a reply is labelled low confidence: more likely wrong than right.
LOW_LEVEL = 0.5
#: Share of answerable questions that must stay answered.
ANSWERED_TARGET = 0.95
#: "High" needs the lower end of the 95 % Wilson score interval (Wilson 1927) of the share of such replies that
#: hold the fact to reach issue 22's target for high replies, 0.85: five right of five (lower end 0.57) is
#: chance at this size, not evidence; about 22 right of 22 is.
HIGH_LOWER_BOUND = 0.85


#: The answer model used while cross-fitting (its output is not read then): P = σ(best unit's logit).
_NEUTRAL_ANSWER = Logistic(ANSWER_FEATURES, np.zeros(len(ANSWER_FEATURES)), np.ones(len(ANSWER_FEATURES)),
                           np.eye(len(ANSWER_FEATURES))[0], 0.0)


@dataclass
class QuestionRows:
    """One question's units as the reader sees them, with their targets."""

    question: dict
    x: np.ndarray        # (n_units, len(FEATURES))
    target: np.ndarray   # (n_units,): share of must_contain groups each unit holds
    fold: int
    kb: object           # the knowledge base it is asked on


def collect(kb, questions: list[dict], progress: Callable[[], None] | None = None) -> list[QuestionRows]:
    """The reader's inputs for each question, retrieved as `KnowledgeBase.ask` does, with unit targets."""
    rows = []
    for q in questions:
        _, units, x = kb.reader_inputs(q["question"])
        answerable = q.get("answerable", True)
        key = question_key(q) if answerable else []
        if answerable and not key:  # nothing to say which unit answers
            continue
        target = np.array([groups_held(c.unit.display, key) for c in units], dtype=np.float64)
        rows.append(QuestionRows(q, x, target, _fold(q), kb))
        if progress:
            progress()
    return rows


def _fold(q: dict) -> int:
    """A question's fold: by its first gold page (pages never straddle folds), else by its id."""
    key = (q.get("gold") or [q.get("id", q["question"])])[0]
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % FOLDS


def fit_logistic(x: np.ndarray, y: np.ndarray, names: tuple[str, ...], penalty: float,
                 weight: np.ndarray | None = None) -> Logistic:
    """A logistic regression of soft targets ``y`` in [0, 1] on rows ``x``, standardised; L2 ``penalty``.

    Raises:
        ValueError: no rows."""
    if len(x) == 0:
        raise ValueError("nothing to fit on: no rows")
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale = np.where(scale > 1e-9, scale, 1.0)
    z = (x - mean) / scale
    w = np.ones(len(y)) if weight is None else weight
    w = w / w.sum()

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        logit = theta[0] + z @ theta[1:]
        p = 1.0 / (1.0 + np.exp(-np.clip(logit, -30, 30)))
        eps = 1e-12
        value = -np.sum(w * (y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))) + penalty * theta[1:] @ theta[1:]
        residual = w * (p - y)
        grad = np.concatenate([[residual.sum()], z.T @ residual + 2 * penalty * theta[1:]])
        return value, grad

    theta = minimize(loss, np.zeros(z.shape[1] + 1), jac=True, method="L-BFGS-B").x
    return Logistic(names, mean, scale, theta[1:], float(theta[0]))


def top_unit_right(model: Logistic, rows: list[QuestionRows]) -> float:
    """Share of questions (with a unit holding some group) whose best-scored unit holds as many groups as
    any of their units."""
    keyed = [r for r in rows if len(r.target) and r.target.max() > 0]
    if not keyed:
        return 0.0
    return float(np.mean([r.target[int(np.argmax(model.logit(r.x)))] >= r.target.max() for r in keyed]))


def fit_units(rows: list[QuestionRows], penalty: float) -> Logistic:
    """The unit model on ``rows``: each question weighs the same whatever its number of units."""
    x = np.vstack([r.x for r in rows if len(r.x)])
    y = np.concatenate([r.target for r in rows if len(r.x)])
    weight = np.concatenate([np.full(len(r.x), 1.0 / len(r.x)) for r in rows if len(r.x)])
    return fit_logistic(x, y, FEATURES, penalty, weight)


def choose_penalty(rows: list[QuestionRows]) -> tuple[float, dict]:
    """The penalty whose fold-held-out top-unit accuracy is best (the larger on a tie), with every score."""
    scores = {}
    for penalty in PENALTIES:
        held = [top_unit_right(fit_units([r for r in rows if r.fold != k], penalty), [r for r in rows if r.fold == k])
                for k in range(FOLDS)]
        scores[penalty] = round(float(np.mean(held)), 4)
    best = max(PENALTIES, key=lambda p: (scores[p], p))
    return best, scores


def fold_models(rows: list[QuestionRows], penalty: float) -> list[Logistic]:
    """The unit model of each fold, fitted on the other folds' ``rows`` (index k: without fold k)."""
    return [fit_units([r for r in rows if r.fold != k], penalty) for k in range(FOLDS)]


def cross_fitted_replies(rows: list[QuestionRows], folds: list[Logistic], composition: tuple[float, int, int]
                         ) -> list[tuple[list[float], bool, dict, str]]:
    """Each question answered with the unit model fitted without its fold (``folds``, `fold_models`; direct
    answers composed with ``composition``: join share, characters, units): its answer features (taken from the
    reply, `ANSWER_FEATURES`), whether its direct answer holds the fact, the question and the direct answer."""
    from knowledge.answering import answer_features  # the same features compose_answer reads

    share, chars, most = composition
    out = []
    for k, unit in enumerate(folds):
        with using(ReaderModel(unit, _NEUTRAL_ANSWER, 0.0, 0.0, 1.0, {}, share, chars, most)):  # no refusal, no "high"
            for r in (r for r in rows if r.fold == k):
                answer = r.kb.ask(r.question["question"])
                right = (r.question.get("answerable", True) and not answer.refused
                         and holds_fact(answer.direct_answer, question_key(r.question)))
                if not answer.refused:
                    out.append((answer_features(answer), right, r.question, answer.direct_answer))
    return out


def composition_score(replies: list[tuple[list[float], bool, dict, str]]) -> int:
    """How well a composition's cross-fitted ``replies`` serve a reader: the direct answers that hold the fact,
    plus those whose first `GLANCE_CHARS` characters already do (a fact shown first is worth more than one
    below three other sentences)."""
    return sum(right + (right and holds_fact(as_seen(direct)[:GLANCE_CHARS], question_key(q))) for _, right, q, direct in replies)


def thresholds(prob: np.ndarray, right: np.ndarray, answerable: np.ndarray) -> tuple[float, float, float]:
    """``(refuse, low, high)`` on replies' probabilities of holding the fact (`module docstring`, step 3):

    - ``refuse``: the highest level that keeps `ANSWERED_TARGET` of the answerable replies, kept only when it
      refuses a share of the no-answer replies at least `MIN_SEPARATION` above the share of answerable ones it
      refuses (else 0: a threshold that does not tell them apart only loses answers);
    - ``high``: the lowest level whose replies at or above it are right with a 95 % Wilson lower bound of at
      least `HIGH_LOWER_BOUND` (1.0 when there is none: nothing is labelled high);
    - ``low``: `LOW_LEVEL`, where the answer model (fitted on these cross-fitted replies) says a reply is more
      likely wrong than right.
    """
    levels = sorted(set(np.round(prob, 4).tolist()))
    n_answerable, n_no = answerable.sum(), (~answerable).sum()
    refuse = 0.0
    for t in levels:
        if n_answerable and (answerable & (prob >= t)).sum() / n_answerable < ANSWERED_TARGET:
            break
        refuse = float(t)
    refused_no = (~answerable & (prob < refuse)).sum() / n_no if n_no else 0.0
    refused_yes = (answerable & (prob < refuse)).sum() / n_answerable if n_answerable else 0.0
    if refused_no - refused_yes < MIN_SEPARATION:
        refuse = 0.0
    high = next((t for t in levels if _lower_bound(int(right[prob >= t].sum()), int((prob >= t).sum()))
                 >= HIGH_LOWER_BOUND), 1.0)
    return refuse, max(LOW_LEVEL, refuse), max(high, LOW_LEVEL, refuse)


def _lower_bound(right: int, replies: int) -> float:
    """The lower end of the 95 % Wilson score interval of ``right`` successes in ``replies`` (0 for none)."""
    return float(binomtest(right, replies).proportion_ci(0.95, method="wilson").low) if replies else 0.0


def fit_reader(sets: list[tuple[object, list[dict]]], progress: Callable[[], None] | None = None
               ) -> tuple[ReaderModel, dict]:
    """The reader fitted on the fitting part of each set of questions (``(knowledge base, questions)``: each set
    asked on its own knowledge base), and a report of the fit.

    Raises:
        ValueError: no fitting question has a key (`knowledge.kbeval.question_key`)."""
    rows, fitting_n, validation_n = [], 0, 0
    for kb, questions in sets:
        fitting, validation = split_by_page(questions)
        fitting_n, validation_n = fitting_n + len(fitting), validation_n + len(validation)
        rows += collect(kb, fitting, progress)
    if not any(r.target.any() for r in rows):
        raise ValueError("no fitting question has a must_contain key or an answer hint with a value")
    penalty, cv = choose_penalty(rows)
    composed = {}
    folds = fold_models(rows, penalty)  # the same five models serve every composition
    for composition in COMPOSITIONS:  # what a direct answer shows: fitted on the cross-fitted replies
        replies = cross_fitted_replies(rows, folds, composition)
        composed[composition] = (composition_score(replies), sum(r for _, r, _, _ in replies), replies)
    # the best score; on a tie the shorter, then fewer units, then the stricter join
    best = max(COMPOSITIONS, key=lambda c: (composed[c][0], -c[1], -c[2], c[0]))
    share, chars, most = best
    replies = composed[best][2]
    x = np.array([f for f, _, _, _ in replies])
    right = np.array([r for _, r, _, _ in replies], dtype=np.float64)
    answer = fit_logistic(x, right, ANSWER_FEATURES, 0.01)
    prob = answer.prob(x)
    answerable = np.array([bool(q.get("answerable", True)) for _, _, q, _ in replies])
    refuse, low, high = thresholds(prob, right.astype(bool), answerable)
    report = {"fitting_questions": fitting_n, "validation_questions_left_out": validation_n,
              "units": int(sum(len(r.x) for r in rows)), "penalty": penalty, "cv_top_unit_right": cv,
              "cross_fitted_direct_holds": round(float(right.mean()), 4) if len(right) else None,
              "by_composition": {f"{s} of the best, {c} chars, {m} units": {"score": score, "direct_holds": n}
                                 for (s, c, m), (score, n, _) in composed.items()},
              "refuse": round(refuse, 4), "low": round(low, 4), "high": round(high, 4),
              "replies": len(replies), "replies_right": int(right.sum())}
    model = ReaderModel(fit_units(rows, penalty), answer, refuse, low, high,
                        {"questions": fitting_n, "penalty": penalty}, share, chars, most)
    return model, report
