"""Ranking metrics of BEIR evaluations: nDCG@k, recall@k, MRR@k (pure functions, no state).

Definitions follow trec_eval as called through pytrec_eval by BEIR (Thakur et al., NeurIPS 2021):

- **nDCG@k** (Järvelin & Kekäläinen, 2002): DCG@k = Σ_{i=1..k} rel_i / log2(i + 1), with the graded
  relevance rel_i from the qrels as the gain (trec_eval's ``ndcg_cut``; not 2^rel − 1), divided by the DCG
  of the ideal ranking of all judged documents with rel > 0.
- **recall@k**: |relevant ∩ top k| / |relevant|, relevant meaning rel > 0.
- **MRR@k**: 1 / rank of the first relevant document within the top k, else 0.

A query that is judged but got no results scores 0 (BEIR's loop would skip it; counting it is stricter).
Queries without judgements are ignored. Means are over judged queries.

Example::

    >>> ndcg_at_k(["d3", "d1", "d2"], {"d3": 2, "d2": 1}, k=10)   # (2 + 1/2) / (2 + 1/log2(3))
    0.9502...
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

#: The cut-offs reported by `minerva eval` (BEIR reports nDCG@10; recall@100 bounds what a reranker could do).
REPORTED = ("ndcg@10", "recall@10", "recall@100", "mrr@10")


def dcg(gains: Sequence[float]) -> float:
    """Discounted cumulative gain: Σ gains[i] / log2(i + 2) for 0-based i."""
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg_at_k(ranking: Sequence[str], relevance: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k of one ranked list.

    Args:
        ranking: document ids, best first (duplicates after the first occurrence are ignored).
        relevance: judged document id → graded relevance (0 or negative = not relevant).
        k: cut-off (>= 1).

    Returns:
        A value in [0, 1]; 0 when no judged document is relevant.
    """
    ideal = dcg(sorted((r for r in relevance.values() if r > 0), reverse=True)[:k])
    if ideal == 0:
        return 0.0
    gains = [max(relevance.get(d, 0), 0) for d in _dedupe(ranking)[:k]]
    return dcg(gains) / ideal


def recall_at_k(ranking: Sequence[str], relevance: Mapping[str, int], k: int = 100) -> float:
    """Share of the relevant documents (rel > 0) found in the top ``k``; 0 when none is relevant."""
    relevant = {d for d, r in relevance.items() if r > 0}
    if not relevant:
        return 0.0
    return len(relevant & set(_dedupe(ranking)[:k])) / len(relevant)


def mrr_at_k(ranking: Sequence[str], relevance: Mapping[str, int], k: int = 10) -> float:
    """Reciprocal rank (1-based) of the first relevant document in the top ``k``, else 0."""
    for rank, doc in enumerate(_dedupe(ranking)[:k], start=1):
        if relevance.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def evaluate_run(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]]) -> dict[str, float]:
    """Mean nDCG@10, recall@10, recall@100 and MRR@10 over the judged queries.

    Args:
        run: query id → ranked document ids (best first); a judged query missing here scores 0.
        qrels: query id → {document id: relevance}.

    Returns:
        {"ndcg@10", "recall@10", "recall@100", "mrr@10"} → mean in [0, 1] (0.0 when qrels is empty).
    """
    per_query = [per_query_metrics(run.get(qid, ()), rel) for qid, rel in qrels.items()]
    if not per_query:
        return {name: 0.0 for name in REPORTED}
    return {name: sum(m[name] for m in per_query) / len(per_query) for name in REPORTED}


def per_query_metrics(ranking: Sequence[str], relevance: Mapping[str, int]) -> dict[str, float]:
    """The `REPORTED` metrics of one query."""
    return {
        "ndcg@10": ndcg_at_k(ranking, relevance, 10),
        "recall@10": recall_at_k(ranking, relevance, 10),
        "recall@100": recall_at_k(ranking, relevance, 100),
        "mrr@10": mrr_at_k(ranking, relevance, 10),
    }


def _dedupe(ranking: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ranking))
