"""Issue 23, "one reading of a page": answer units of every page of the shared corpus, before and after.

Every page of ``config/all-corpora.yaml``'s sources is parsed and chunked as a sync does it; each chunk is split
into units by this checkout's `knowledge.sentences.split_units` and by the one of a baseline revision (``--base``,
read with ``git show``). Counted: units whose display text still carries markup (``**``, ``](``, a tab's
``=== "``, an admonition's ``!!! ``, a site tag's ``{%``, ``<details>``), per marker; chunks whose number of
units changed; and up to ``--examples`` changed units to read by eye.

Usage:
    python benchmarks/units_tree.py [--base main] [--examples 30] [--out benchmarks/results/units_tree.json]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _output import emit  # noqa: E402
from config import load_settings  # noqa: E402
from knowledge.chunking import chunk_document  # noqa: E402
from knowledge.errors import DocumentInvalid  # noqa: E402
from knowledge.parsing import parse_document  # noqa: E402
from knowledge.sentences import split_units  # noqa: E402

CONFIG = ROOT / "config" / "all-corpora.yaml"
_CODE_SPAN = re.compile(r"`[^`]*`")
MARKERS = ("**", "](", '=== "', "!!! ", "{%", "<details>")


def _baseline(rev: str):
    """``split_units`` of ``knowledge/sentences.py`` at git revision ``rev``."""
    source = subprocess.run(["git", "show", f"{rev}:knowledge/sentences.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "baseline_sentences.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("baseline_sentences", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module.split_units


def _chunks():
    """(page, chunk text) for every page of every source of the all-corpora config."""
    settings = load_settings(CONFIG)
    for source in settings.sources:
        root = Path(source.path)
        for page in sorted(root.rglob("*.md")):
            try:
                parsed = parse_document(page.read_text(encoding="utf-8", errors="replace"), page.name)
            except DocumentInvalid:  # a redirect stub or an empty page: a sync skips it too
                continue
            for chunk in chunk_document(parsed.title, parsed.body, settings.chunking):
                yield str(page.relative_to(root.parent)), chunk.text


def _remnants(units) -> dict[str, int]:
    """Units (not code) whose display text outside code spans holds each marker."""
    prose = [_CODE_SPAN.sub("", u.display) for u in units if u.kind != "code"]
    return {m: sum(1 for p in prose if m in p) for m in MARKERS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main")
    parser.add_argument("--examples", type=int, default=30)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "units_tree.json"))
    args = parser.parse_args()
    before_split = _baseline(args.base)
    totals = {"pages": set(), "chunks": 0, "units_before": 0, "units_after": 0, "chunks_count_changed": 0,
              "units_changed": 0}
    remnants = {"before": dict.fromkeys(MARKERS, 0), "after": dict.fromkeys(MARKERS, 0)}
    changed = []
    for page, text in _chunks():
        before, after = before_split(text), split_units(text)
        totals["pages"].add(page)
        totals["chunks"] += 1
        totals["units_before"] += len(before)
        totals["units_after"] += len(after)
        totals["chunks_count_changed"] += len(before) != len(after)
        for side, units in (("before", before), ("after", after)):
            for marker, n in _remnants(units).items():
                remnants[side][marker] += n
        old = {(u.kind, u.display) for u in before}
        for unit in after:
            if (unit.kind, unit.display) not in old:
                totals["units_changed"] += 1
                changed.append({"page": page, "kind": unit.kind, "display": unit.display[:300],
                                "raw": text[unit.start:unit.end][:300]})
    totals["pages"] = len(totals["pages"])
    random.Random(23).shuffle(changed)
    emit({"base": args.base, "totals": totals, "remnants": remnants, "changed_examples": changed[:args.examples]},
         args.out)


if __name__ == "__main__":
    main()
