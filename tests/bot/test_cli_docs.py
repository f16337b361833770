"""`minerva docs` on the bundled sample knowledge base."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from bot.cli.main import cli
from config import DEFAULT_CONFIG


def test_docs_says_when_a_page_was_stopped_as_a_near_duplicate(sample_home, tmp_path):
    home = shutil.copytree(sample_home, tmp_path / "home")

    def docs(*args: str):
        return CliRunner().invoke(cli, ["--config", str(DEFAULT_CONFIG), "--home", str(home), "docs", *args])

    text = docs().stdout.splitlines()
    (copy,) = [line for line in text if "runbooks:disk-full-copy.md" in line]
    assert copy.endswith("(1 chunks, 5 stopped as near-duplicates)"), "the first chunk is always kept (issue 11)"
    rows = {row["doc_id"]: row for row in map(json.loads, docs("--json").stdout.splitlines())}
    assert rows["runbooks:disk-full-copy.md"]["duplicate_chunks"] == 5
    assert rows["runbooks:disk-full.md"]["duplicate_chunks"] == 0 and rows["runbooks:disk-full.md"]["n_chunks"] == 6
