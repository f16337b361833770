"""Only the project's own files are tracked (issue 24 item 2): no wheel, archive or model weights, nothing over
1 MB outside ``benchmarks/results/`` (where measured outputs live). A fetched dependency or a copied model
would otherwise ride along in every clone."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: Endings of packaged or binary artefacts that are never the project's own source.
NOT_OURS = (".whl", ".tar.gz", ".tgz", ".zip", ".tar", ".gz", ".bz2", ".xz", ".7z", ".egg", ".onnx", ".bin",
            ".safetensors", ".pt", ".pth", ".ckpt", ".h5", ".npy", ".npz", ".so", ".dll", ".dylib")
MAX_BYTES = 1_000_000


def _tracked() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, timeout=60)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"not a git checkout ({exc})")
    return [p for p in out.stdout.decode().split("\0") if p]


def test_no_wheel_archive_or_weights_is_tracked():
    assert [p for p in _tracked() if p.lower().endswith(NOT_OURS)] == []


def test_no_tracked_file_over_1_mb_outside_benchmark_results():
    big = [p for p in _tracked() if not p.startswith("benchmarks/results/") and (REPO / p).is_file()
           and (REPO / p).stat().st_size > MAX_BYTES]
    assert big == []
