"""Benchmark for issue 5: BM25 on Korean and Japanese with the analyzers alone vs analyzers + character bigrams.

Usage:
    python benchmarks/tokenizer_variants.py [--out benchmarks/results/tokenizer_variants.json]

For KorQuAD 1.0 dev (converted at run time by its own ``to_beir.py`` into a temporary folder) and JSQuAD, the
full test split is scored with bm25s (lucene, k1 1.2, b 0.75, as in the datasets' READMEs) under three
tokenizers: `knowledge.tokenize.tokenize` (morphemes + bigrams), the same without the bigrams, and documents with
every bigram and questions by `topic_tokens` (bigrams only inside content words, interrogatives left out: what
coverage counts, tried for BM25 too). The queries are also scored as two halves (even and odd positions in the
qrels file): a variant chosen on one half should also win on the other, or the choice is fitted to the test set.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import bm25s
import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from knowledge import tokenize as tk  # noqa: E402
from knowledge.beir import convert_with_script, load_beir  # noqa: E402
from knowledge.metrics import evaluate_run  # noqa: E402

EVAL = REPO.parent / "shared" / "eval"
#: Character-bigram baselines from the datasets' READMEs (k1 1.2, full test split).
BASELINES = {"korquad-v1-dev": 0.9570, "jsquad": 0.9403}


def score(dataset, tokenizer, query_tokenizer=None) -> dict:
    """nDCG@10 (all queries, even half, odd half) of BM25 with ``tokenizer`` on ``dataset`` (its queries
    with ``query_tokenizer``, by default the same)."""
    query_tokenizer = query_tokenizer or tokenizer
    ids = list(dataset.corpus)
    started = time.perf_counter()
    retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    retriever.index([tokenizer(f"{title} {text}") or [""] for title, text in dataset.corpus.values()],
                    show_progress=False)
    run = {}
    for qid in dataset.qrels:
        tokens = query_tokenizer(dataset.queries[qid])
        scores = retriever.get_scores(tokens) if tokens else np.zeros(len(ids))
        top = np.argsort(-scores, kind="stable")[:100]
        run[qid] = [ids[i] for i in top if scores[i] > 0]
    qids = list(dataset.qrels)
    halves = {"even": qids[0::2], "odd": qids[1::2]}
    result = {"ndcg@10": round(evaluate_run(run, dataset.qrels)["ndcg@10"], 4)}
    for half, members in halves.items():
        qrels = {q: dataset.qrels[q] for q in members}
        result[f"ndcg@10_{half}"] = round(evaluate_run({q: run[q] for q in members}, qrels)["ndcg@10"], 4)
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


def without_bigrams(text: str) -> list[str]:
    """`tokenize` as it was before the bigrams (tokenizer version 2)."""
    with mock.patch.object(tk, "_bigrams", lambda runs: []):
        return tk.tokenize(text)


#: (name, document tokenizer, question tokenizer): the analyzers alone, with every bigram, and with a
#: question's topic tokens only (`knowledge.tokenize.topic_tokens`: bigrams inside its content words, no
#: interrogatives), which coverage counts; BM25 keeps every bigram of the question because of this row.
VARIANTS = (("morphemes", without_bigrams, None), ("morphemes+bigrams", tk.tokenize, None),
            ("morphemes+bigrams, question bigrams in its words", tk.tokenize, tk.topic_tokens))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/tokenizer_variants.json")
    args = parser.parse_args()
    if not EVAL.is_dir():
        sys.exit(f"{EVAL} is missing: this benchmark needs the shared evaluation sets")
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        folders = {"korquad-v1-dev": convert_with_script(EVAL / "korquad-v1-dev", Path(scratch), sample=None),
                   "jsquad": EVAL / "jsquad"}
        for name, folder in folders.items():
            dataset = load_beir(folder, "test", name=name)
            for variant, tokenizer, query_tokenizer in VARIANTS:
                row = {"dataset": name, "tokenizer": variant, "queries": len(dataset.qrels),
                       "baseline_bigram_ndcg@10": BASELINES[name], **score(dataset, tokenizer, query_tokenizer)}
                print(json.dumps(row, ensure_ascii=False), flush=True)
                results.append(row)
    args.out.write_text(json.dumps({"tokenizer_version": tk.TOKENIZER_VERSION, "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
