"""How every benchmark reports: its result as JSON on standard output, and in ``--out`` when given."""

from __future__ import annotations

import json
from pathlib import Path


def emit(result, out: str | Path | None, *, indent: int = 2) -> None:
    """Print ``result`` (JSON-serialisable) as indented JSON; also write it to ``out`` when given."""
    text = json.dumps(result, indent=indent, ensure_ascii=False)
    print(text)
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")
