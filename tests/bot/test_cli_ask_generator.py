"""`minerva ask` with a generator configured, against the fake OpenAI-compatible server over real HTTP."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from bot.cli.main import cli
from config import DEFAULT_CONFIG, load_settings
from tests.fakes.openai_api import FakeOpenAI

QUESTION = "what is the API rate limit on the Pro plan?"


@pytest.fixture
def ask_with(sample_home, tmp_path):
    """Runs ``minerva ask`` on a copy of the sample home with a config whose generator points at ``url``."""
    home = shutil.copytree(sample_home, tmp_path / "home")

    def run(url: str, *args: str, timeout_s: float = 5.0, env: dict | None = None):
        raw = yaml.safe_load(DEFAULT_CONFIG.read_text(encoding="utf-8"))
        for source, loaded in zip(raw["sources"], load_settings().sources):
            source["path"] = loaded.path
        raw["generator"] = {"base_url": url, "model": "fake-model", "api_key_env": "FAKE_LLM_KEY", "timeout_s": timeout_s}
        config = tmp_path / "minerva.yaml"
        config.write_text(yaml.safe_dump(raw), encoding="utf-8")
        return CliRunner().invoke(cli, ["--config", str(config), "--home", str(home), "ask", *args], env=env)

    run.db = Path(home) / "minerva.sqlite"
    return run


def test_ask_prints_the_grounded_generated_answer_and_stores_the_flag(ask_with) -> None:
    fake = FakeOpenAI()
    fake.script("The Pro plan allows 600 requests per minute [1]. It also includes free lunch on Fridays [1].")
    with fake.running_in_thread():
        result = ask_with(fake.url, "--json", QUESTION, env={"FAKE_LLM_KEY": "sk-cli"})

    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout.splitlines()[-1])
    assert printed["direct_answer"] == "The Pro plan allows 600 requests per minute [1]."
    assert printed["hallucination_flag"] is True
    assert fake.requests[0]["headers"]["Authorization"] == "Bearer sk-cli"
    with sqlite3.connect(ask_with.db) as conn:
        stored = conn.execute("SELECT generated, hallucination_flag FROM answers WHERE answer_id = ?",
                              [printed["answer_id"]]).fetchone()
    assert stored == (1, 1)


def test_ask_with_a_silent_generator_prints_the_extractive_answer_on_time(ask_with) -> None:
    fake = FakeOpenAI()
    fake.script("The Pro plan allows 600 requests per minute [1].", delay=10.0)
    with fake.running_in_thread():
        started = time.perf_counter()
        result = ask_with(fake.url, "--json", QUESTION, timeout_s=0.5)
        elapsed = time.perf_counter() - started

    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout.splitlines()[-1])
    assert printed["hallucination_flag"] is False and "The Pro plan allows" not in printed["direct_answer"]
    assert not printed["refused"] and printed["citations"][0]["doc_id"] == "api:rate-limits.md"
    # The 0.5 s budget, not the model's 10 s (the rest is the CLI loading the embedder and the index).
    assert elapsed < 8
