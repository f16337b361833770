"""Chunks that end inside a code block, on every page of ../shared/corpus (issue 23: one reading of a page).

Usage:
    python benchmarks/code_chunks.py [--out benchmarks/results/code_chunks.json]

Chunks every Markdown page of the shared corpus (both handbook snapshots, both Pydantic versions, all runbooks)
with the default chunking and with a small budget (50 tokens, 10 of overlap), and counts the chunks whose text
ends inside a fenced code block (an opening fence not closed, CommonMark §4.5) and those over the budget. A piece
cut inside an example was read as prose by the units that split it and quoted flattened into one line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _output import emit  # noqa: E402
from config import ChunkingConfig  # noqa: E402
from knowledge import DocumentInvalid  # noqa: E402
from knowledge.chunking import chunk_document, count_tokens  # noqa: E402
from knowledge.markdown_tree import open_fence  # noqa: E402
from knowledge.parsing import parse_document  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"{CORPUS} is missing: this benchmark reads the shared corpus")
    pages = []
    for path in sorted(CORPUS.rglob("*.md")):
        try:
            pages.append(parse_document(path.read_text(encoding="utf-8"), path.name))
        except DocumentInvalid:  # redirect stubs, generator-only pages
            continue
    report = {"pages": len(pages)}
    for name, cfg in (("default", ChunkingConfig()), ("50-10", ChunkingConfig(max_tokens=50, overlap_tokens=10, min_tokens=5))):
        chunks = [c for doc in pages for c in chunk_document(doc.title, doc.body, cfg)]
        report[name] = {"chunks": len(chunks),
                        "ending_inside_code": sum(open_fence(c.text) is not None for c in chunks),
                        "over_budget": sum(count_tokens(c.text) > cfg.max_tokens for c in chunks),
                        "pages_ending_inside_code": sum(open_fence(doc.body) is not None for doc in pages)}
    emit(report, args.out)


if __name__ == "__main__":
    main()
