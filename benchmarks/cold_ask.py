"""A one-shot ``minerva ask`` from a cold process, as a user types it (issue 28: "the first answer of a one-shot
ask in <= 3 s"; issue 24: the encoder run by onnxruntime instead of torch).

Usage:
    python benchmarks/cold_ask.py [--home var] [--runs 3] [--out benchmarks/results/cold_ask.json]

Runs ``python -m bot.cli --home HOME ask QUESTION`` in a new process ``--runs`` times for each runtime: with the
dense model's ONNX export (`knowledge.onnx_encoder`, made first when missing) and with torch (an empty
``MINERVA_MODEL_CACHE``). Reports wall seconds per run, their median, and the load average at the start.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _output import emit  # noqa: E402
from config import EmbeddingConfig  # noqa: E402
from knowledge import onnx_encoder  # noqa: E402

QUESTION = "How do I roll back a deployment?"


def timed_runs(home: str, runs: int, env: dict[str, str]) -> list[float]:
    """Wall seconds of ``runs`` cold ``ask`` processes."""
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "bot.cli", "--home", home, "ask", QUESTION], cwd=ROOT, env=env,
                       check=True, capture_output=True)
        out.append(round(time.perf_counter() - started, 2))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", default="var")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out")
    args = parser.parse_args()
    exported = onnx_encoder.export_for(EmbeddingConfig())
    result = {"question": QUESTION, "load_average": os.getloadavg()[0], "onnx_export": exported.name if exported else None}
    with tempfile.TemporaryDirectory() as empty:
        for runtime, cache in (("onnxruntime", str(exported.parent) if exported else empty), ("torch", empty)):
            seconds = timed_runs(args.home, args.runs, os.environ | {"MINERVA_MODEL_CACHE": cache})
            result[runtime] = {"seconds": seconds, "median": statistics.median(seconds)}
    emit(result, args.out)


if __name__ == "__main__":
    main()
