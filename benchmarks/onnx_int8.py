"""Issue 24 item 3: the dense encoder as int8 ONNX beside the float ONNX export and torch, on the same text in one run.

Usage:
    python benchmarks/onnx_int8.py [--queries 300] [--out benchmarks/results/onnx_int8.json]

The float model is the export `minerva ingest` makes (`knowledge.onnx_encoder.export_for`); the int8 one is that
file through onnxruntime's dynamic quantization (`onnxruntime.quantization.quantize_dynamic`, weights as
signed 8-bit integers, activations quantized per batch), written beside it in a temporary folder. Measured for
torch, float ONNX and int8 ONNX in this one process:

- milliseconds to embed one question (median of the SciFact queries, one at a time);
- chunks per second over the first 1,000 SciFact abstracts (batches of 32);
- SciFact nDCG@10 and recall@100, dense only (cosine over the whole corpus; ``../shared/eval/scifact``), and
  kb-dev recall@5 over the sample knowledge base's chunks is left to `benchmarks/beir_eval.py`;
- how close the vectors are to torch's (mean and minimum cosine over the queries).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _output import emit  # noqa: E402
from config import EmbeddingConfig  # noqa: E402
from knowledge.beir import load_beir  # noqa: E402
from knowledge.metrics import ndcg_at_k, recall_at_k  # noqa: E402
from knowledge.onnx_encoder import OnnxEmbedder, export_for  # noqa: E402

SCIFACT = ROOT.parent / "shared" / "eval" / "scifact"


def timed_query_ms(embedder, queries: list[str]) -> float:
    times = []
    for q in queries:
        started = time.perf_counter()
        embedder.embed([q], kind="query")
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 2)


def chunks_per_s(embedder, texts: list[str]) -> float:
    started = time.perf_counter()
    embedder.embed(texts, kind="passage")
    return round(len(texts) / (time.perf_counter() - started), 1)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    if not SCIFACT.exists():
        sys.exit(f"{SCIFACT} is missing: this benchmark reads the shared evaluation sets")
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from knowledge.embedding import SentenceTransformerEmbedder

    cfg = EmbeddingConfig()
    fp32_path = export_for(cfg)
    data = load_beir(SCIFACT)
    query_ids = [q for q in data.queries if q in data.qrels][: args.queries]
    questions = [data.queries[q] for q in query_ids]
    abstracts = [f"{t} {x}".strip() for t, x in list(data.corpus.values())[:1000]]
    with tempfile.TemporaryDirectory() as tmp:
        int8_path = Path(tmp) / "model-int8.onnx"
        quantize_dynamic(str(fp32_path), str(int8_path), weight_type=QuantType.QInt8)
        runs = {"torch": SentenceTransformerEmbedder(cfg), "onnx float": OnnxEmbedder(cfg, fp32_path),
                "onnx int8": OnnxEmbedder(cfg, int8_path)}
        out, reference = {}, None
        for name, embedder in runs.items():
            embedder.embed(["warm up"], kind="query")
            figures, vectors = dense_figures(embedder, data, query_ids)
            if reference is None:
                reference = vectors
            agreement = np.sum(vectors * reference, axis=1)
            out[name] = {"query_ms_p50": timed_query_ms(embedder, questions[:100]),
                         "chunks_per_s": chunks_per_s(embedder, abstracts), **figures,
                         "cosine_to_torch_mean": round(float(agreement.mean()), 5),
                         "cosine_to_torch_min": round(float(agreement.min()), 5)}
        sizes = {"onnx float MB": round(fp32_path.stat().st_size / 1e6, 1),
                 "onnx int8 MB": round(int8_path.stat().st_size / 1e6, 1)}
    emit({"model": cfg.model, "scifact_queries": len(query_ids), "corpus": len(data.corpus),
          "load_average": [round(x, 2) for x in os.getloadavg()], **sizes, "runs": out}, args.out)


if __name__ == "__main__":
    main()
