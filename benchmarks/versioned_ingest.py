"""Benchmark for issue 11 item 5: versioned ingest of the real corpora never leaves a current page without chunks.

Usage:
    HF_HUB_OFFLINE=1 python benchmarks/versioned_ingest.py --home /work/var-versioned \
        [--out benchmarks/results/versioned_ingest.json] [--corpus ../shared/corpus]

Sources (as the issue's reproduction): both TTS handbook snapshots (``tts-handbook``, ``versions: folders``:
2025-02 active, 2021-12 archived), both Pydantic versions (``pydantic-docs``, ``versions: folders``: v2.13.4
active, v1.10.26 archived) and the Prometheus runbooks, embedded with the default model (all-MiniLM-L6-v2)
and the default gate thresholds (0.92 / 0.80, DESIGN.md). A first run embeds every chunk (~15 min on 2 cores);
later runs on the same home reuse the embedding cache.

Prints (and writes to ``--out``) JSON: document counts (total, active, archived), active documents with zero
searchable chunks (the target is 0; each listed with the reason), chunks indexed, and the gate's decisions:
chunks stopped as duplicates, partial duplicates / updates kept, and the documents listed as near-duplicates
for review (document, the one it copies, chunks stopped of chunks total, whether the first chunk was kept).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _output import emit  # noqa: E402
from config import Settings, SourceConfig  # noqa: E402
from knowledge import KnowledgeBase  # noqa: E402
from knowledge.dedup import gate_pairs  # noqa: E402
from knowledge.embedding import load_embedder  # noqa: E402
from knowledge.sync import zero_chunk_problems  # noqa: E402

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"


def sources(corpus: Path) -> list[SourceConfig]:
    """The three versioned sources of the issue's reproduction."""
    return [
        SourceConfig(name="handbook", path=str(corpus / "tts-handbook"), versions="folders"),
        SourceConfig(name="pydantic", path=str(corpus / "pydantic-docs"), versions="folders"),
        SourceConfig(name="runbooks", path=str(corpus / "prometheus-runbooks" / "runbooks")),
    ]


def run(home: Path, corpus: Path) -> dict:
    """Sync the versioned sources into ``home`` and summarise the index and the gate's decisions."""
    settings = Settings(sources=sources(corpus))
    kb = KnowledgeBase(settings, home, embedder=load_embedder(settings.embedding))
    last = [0.0]

    def progress(done: int, total: int) -> None:
        if time.monotonic() - last[0] > 30:
            last[0] = time.monotonic()
            print(f"embedded {done}/{total}", file=sys.stderr, flush=True)

    started = time.perf_counter()
    report = kb.sync(progress=progress)
    seconds = time.perf_counter() - started
    index = kb.index()
    docs = index.documents
    stages = Counter(d.get("stage", "active") for d in docs.values())
    chunks_per_doc = Counter(c["doc_id"] for c in index.chunks)
    problems = zero_chunk_problems(docs, index.chunks)
    near = sorted((dict(doc_id=d, of=(doc.get("near_duplicate_of") or [""])[0],
                        of_documents=doc.get("near_duplicate_of") or [],
                        chunks_stopped=doc.get("duplicate_chunks", 0), chunks_total=doc.get("n_chunks", 0),
                        chunks_indexed=chunks_per_doc.get(d, 0))
                   for d, doc in docs.items() if doc.get("near_duplicate_of")), key=lambda e: e["doc_id"])
    return {
        "home": str(home),
        "sources": [{"name": s.name, "path": s.path, "versions": s.versions} for s in settings.sources],
        "model": index.manifest.get("model"),
        "sync_seconds": round(seconds, 1),
        "chunks_embedded_this_run": report.chunks_embedded,
        "documents": {"total": len(docs), **{k: stages[k] for k in sorted(stages)},
                      "by_collection_active": dict(sorted(Counter(
                          d["collection"] for d in docs.values() if d.get("stage", "active") == "active").items()))},
        "active_documents_with_zero_chunks": len(problems),
        "zero_chunk_problems": problems,
        "chunks_indexed": len(index.chunks),
        "gate": {
            "chunks_stopped_this_run": len(report.duplicates),
            "partials_or_updates_kept_this_run": len(report.partials),
            "first_chunks_kept_though_duplicate": sum(1 for p in report.partials if p.get("kept")),
            "documents_listed_as_near_duplicates": len(near),
            "chunks_stopped_in_index": sum(e["chunks_stopped"] for e in near),
            "pairs_reported_by_dedup_self": len(gate_pairs(index)),
            "near_duplicate_documents": near,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="MINERVA_HOME for this run (e.g. /work/var-versioned)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    if not args.corpus.is_dir():
        sys.exit(f"the real corpora are not here ({args.corpus} is missing)")
    emit(run(args.home, args.corpus), args.out)


if __name__ == "__main__":
    main()
