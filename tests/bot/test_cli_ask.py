"""`minerva ask`: one question, the stdin batch form, and bad input, on the bundled sample knowledge base."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
from config import DEFAULT_CONFIG


@pytest.fixture
def ask(sample_home, tmp_path):
    home = shutil.copytree(sample_home, tmp_path / "home")

    def run(*args: str, stdin: str | None = None):
        return CliRunner().invoke(cli, ["--config", str(DEFAULT_CONFIG), "--home", str(home), "ask", *args], input=stdin)

    return run


def test_batch_gives_one_json_line_per_input_line_even_for_a_blank_one(ask):
    result = ask("--json", stdin="How much does the Team plan cost per user?\n\nWhat is the capital of France?\n")

    assert result.exit_code == 0, result.output
    first, blank, off_topic = (json.loads(line) for line in result.stdout.splitlines())
    assert not first["refused"] and first["citations"][0]["doc_id"] == "plans:team_plan_v3.md"
    assert "empty" in blank["error"] and blank["question"] == ""
    assert off_topic["refused"] and off_topic["citations"] == []


def test_plain_text_batch_separates_the_answers(ask):
    result = ask(stdin="How much does the Team plan cost per user?\nWhat is the capital of France?\n")

    first, second = result.stdout.split("\n---\n")
    assert "$18 per user per month" in first and "couldn't find this" in second


def test_empty_standard_input_is_an_error(ask):
    result = ask(stdin="")

    assert result.exit_code == 2 and "standard input was empty" in result.output
