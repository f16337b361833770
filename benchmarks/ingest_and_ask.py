"""Benchmark for issue 2: full ingest, one-page incremental sync, warm `ask` latency, kb-dev quality.

Usage:
    python benchmarks/ingest_and_ask.py [--config config/real-corpora.yaml] [--kb-dev ../shared/eval/kb-dev]

Runs in a fresh temporary MINERVA_HOME (fresh embedding cache, so "full ingest" embeds everything), copies
the configured sources to a temporary folder so one page can be edited, and prints one JSON object.
Peak RSS is the process's maximum resident set size (ru_maxrss), model included.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _output import emit  # noqa: E402
from config import load_settings  # noqa: E402
from knowledge import KnowledgeBase  # noqa: E402
from knowledge.calibration import load_questions  # noqa: E402
from knowledge.kbeval import evaluate, summarize  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=None, help="config file (default: the bundled sample KB)")
    parser.add_argument("--kb-dev", default=None, help="kb-dev folder (questions.jsonl); evaluates answers")
    parser.add_argument("--corpus-root", default=None, help="folder the kb-dev gold paths are relative to")
    parser.add_argument("--out", default=None, help="also write the JSON here")
    args = parser.parse_args()

    settings = load_settings(args.config)
    originals = {s.name: s.path for s in settings.sources}
    work = Path(tempfile.mkdtemp(prefix="minerva-bench-"))
    home = work / "home"
    result: dict = {"config": str(settings.path)}
    try:
        for source in settings.sources:  # a private copy: one page is edited, and ../shared is read-only
            copy = work / "sources" / source.name
            shutil.copytree(source.path, copy)
            source.path = str(copy)
        t0 = time.perf_counter()
        kb = KnowledgeBase(settings, home)
        kb.embedder  # noqa: B018 - load the model outside the timed ingest
        result["model_load_s"] = round(time.perf_counter() - t0, 2)

        report = kb.sync()
        result["full_ingest"] = {
            "documents": len(report.added), "chunks": report.chunks_total, "seconds": round(report.seconds, 2),
            "chunks_per_s": round(report.chunks_embedded / report.seconds, 1), "skipped": len(report.skipped),
        }

        page = _largest_markdown(kb)
        original = page.read_text(encoding="utf-8")
        try:
            page.write_text(original + "\n\nAn added paragraph for the incremental sync benchmark.\n", encoding="utf-8")
            report = kb.sync()
        finally:
            page.write_text(original, encoding="utf-8")
        result["one_page_sync"] = {"page": str(page), "seconds": round(report.seconds, 2),
                                   "chunks_embedded": report.chunks_embedded, "changed": report.changed}
        kb.sync()  # restore the index to the original page

        if args.kb_dev:
            questions = load_questions(Path(args.kb_dev) / "questions.jsonl")
            root = Path(args.corpus_root) if args.corpus_root else Path(args.kb_dev).resolve().parent.parent / "corpus"
            results = evaluate(kb, questions, root, path_map={str(work / "sources" / n): p for n, p in originals.items()})
            result["kb_dev"] = summarize(results)
            english = [r for r in results if r.lang == "en"]
            result["kb_dev"]["english_latency_ms"] = summarize(english)["latency_ms"]
        result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    emit(result, args.out)


def _largest_markdown(kb: KnowledgeBase) -> Path:
    """A mid-sized Markdown page of the index (edited in place, then restored)."""
    docs = sorted((d for d in kb.index().documents.values() if d["path"].endswith(".md")), key=lambda d: d["size"])
    return Path(docs[len(docs) // 2]["path"])


if __name__ == "__main__":
    main()
