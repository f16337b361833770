"""The optional generator against a local fake OpenAI-compatible server over real HTTP (tests.fakes.openai_api).

Answers are built from real sample-KB sections, as `KnowledgeBase.ask` would quote them, so the grounding
check runs on real text; the endpoint's behaviour (replies, delays, status codes, refused connections) is
scripted on the fake.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import AsyncIterator
from datetime import datetime, timezone

import pytest
import pytest_asyncio
import structlog
from structlog.testing import capture_logs

from config import ConfigError, GeneratorConfig, load_settings
from knowledge.generator import NO_ANSWER, build_messages, improve_answer
from knowledge.types import Answer, Citation, Passage
from tests.fakes.openai_api import FakeOpenAI
from tests.knowledge.test_grounding import DELIVERY, EXCEEDED, LIMITS

EXTRACTIVE = "| Pro | 600 | 100 | [1]"
QUESTION = "what is the API rate limit on the Pro plan?"


def passage(doc_id: str, title: str, heading: str, text: str) -> Passage:
    return Passage(chunk_id=f"{doc_id}#0", doc_id=doc_id, collection=doc_id.split(":")[0], title=title,
                   url=f"https://wiki.nimbus.example/{doc_id.replace(':', '/')}", heading_path=(title, heading),
                   text=text, score=0.8, dense_score=0.6, bm25_score=7.0,
                   last_modified=datetime(2026, 7, 1, tzinfo=timezone.utc), confidence="high")


def rate_limit_answer(language: str = "en") -> Answer:
    """The extractive answer to QUESTION: two sections of api/rate-limits.md ([1]) and webhooks' Delivery ([2])."""
    passages = [passage("api:rate-limits.md", "API rate limits", "Limits by plan", LIMITS),
                passage("api:rate-limits.md", "API rate limits", "When the limit is exceeded", EXCEEDED),
                passage("api:webhooks.md", "Webhooks", "Delivery", DELIVERY)]
    citations = [Citation(1, "api:rate-limits.md", "API rate limits", passages[0].url, "Limits by plan", 0.8,
                          passages[0].last_modified),
                 Citation(2, "api:webhooks.md", "Webhooks", passages[2].url, "Delivery", 0.7, passages[2].last_modified)]
    return Answer(answer_id="a" * 32, question=QUESTION, refused=False, text="…", passages=passages,
                  citation_numbers=[1, 1, 2], quotes=[p.text for p in passages], citations=citations,
                  top_score=0.8, language=language, direct_answer=EXTRACTIVE)


@pytest.fixture(autouse=True)
def _default_structlog():
    """structlog's defaults, so ``capture_logs`` sees info events whatever a CLI test configured before."""
    structlog.reset_defaults()


@pytest_asyncio.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as fake:
        yield fake


def config(fake: FakeOpenAI | None = None, *, url: str | None = None, timeout_s: float = 5.0) -> GeneratorConfig:
    return GeneratorConfig(base_url=url or fake.url, model="fake-model", timeout_s=timeout_s)


def closed_port_url() -> str:
    """An http URL on 127.0.0.1 where nothing listens (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# --- the generator's answer is used when grounded ----------------------------------------------------


async def test_grounded_answer_is_used_and_the_prompt_carries_numbered_passages(fake_openai: FakeOpenAI) -> None:
    reply = "The Pro plan allows 600 requests per minute with a burst of 100 [1]. Over it the API answers HTTP 429 [1]."
    fake_openai.script(reply)

    answer = await improve_answer(rate_limit_answer(), QUESTION, config(fake_openai), api_key="sk-test")

    assert answer.direct_answer == reply
    assert answer.generated is True and answer.hallucination_flag is False
    assert answer.quotes and answer.citations  # the extractive support stays
    (request,) = fake_openai.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    body = request["body"]
    assert body["model"] == "fake-model" and body["temperature"] == 0.0
    system, user = body["messages"]
    assert "[1]" in system["content"] and "English" in system["content"]
    assert user["content"].startswith("Passages:\n\n[1] API rate limits\n")
    assert "| Pro | 600 | 100 |" in user["content"] and "HTTP 429" in user["content"]
    assert "\n\n[2] Webhooks\n" in user["content"] and user["content"].endswith(f"Question: {QUESTION}")


async def test_korean_question_asks_for_a_korean_answer(fake_openai: FakeOpenAI) -> None:
    fake_openai.script("Pro 플랜은 분당 600개의 요청을 허용합니다 [1].")
    answer = await improve_answer(rate_limit_answer("ko"), "Pro 플랜의 API 요청 한도는?", config(fake_openai))

    assert answer.generated and answer.direct_answer == "Pro 플랜은 분당 600개의 요청을 허용합니다 [1]."
    assert "in Korean" in fake_openai.requests[0]["body"]["messages"][0]["content"]
    assert "Authorization" not in fake_openai.requests[0]["headers"]  # no api_key_env: no header


# --- invented values -----------------------------------------------------------------------------------


async def test_invented_number_is_removed_and_flagged(fake_openai: FakeOpenAI) -> None:
    fake_openai.script("The Pro plan allows 600 requests per minute [1]. "
                       "Pro customers can raise it permanently to 5,000 requests per minute [1].")

    with capture_logs() as logs:
        answer = await improve_answer(rate_limit_answer(), QUESTION, config(fake_openai))

    assert answer.direct_answer == "The Pro plan allows 600 requests per minute [1]."
    assert answer.hallucination_flag is True and answer.generated is True
    (event,) = [e for e in logs if e["event"] == "generator.answer"]
    assert event["removed"] == ["value 5,000 requests per minute not in [1]"]


async def test_when_nothing_is_grounded_the_extractive_answer_stays_flagged(fake_openai: FakeOpenAI) -> None:
    fake_openai.script("Webhooks time out after 45 seconds [2]. Pro gets 900 requests per minute [1].")

    answer = await improve_answer(rate_limit_answer(), QUESTION, config(fake_openai))

    assert answer.direct_answer == EXTRACTIVE
    assert answer.hallucination_flag is True and answer.generated is False


async def test_no_answer_reply_keeps_the_extractive_answer_unflagged(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(NO_ANSWER)
    answer = await improve_answer(rate_limit_answer(), QUESTION, config(fake_openai))
    assert (answer.direct_answer, answer.generated, answer.hallucination_flag) == (EXTRACTIVE, False, False)


# --- the endpoint fails: the extractive answer, on time ---------------------------------------------------


async def test_timeout_gives_the_extractive_answer_within_the_budget(fake_openai: FakeOpenAI) -> None:
    fake_openai.script("The Pro plan allows 600 requests per minute [1].", delay=5.0)
    cfg = config(fake_openai, timeout_s=0.5)

    started = time.perf_counter()
    with capture_logs() as logs:
        answer = await improve_answer(rate_limit_answer(), QUESTION, cfg)
    elapsed = time.perf_counter() - started

    assert elapsed < cfg.timeout_s + 1
    assert (answer.direct_answer, answer.generated, answer.hallucination_flag) == (EXTRACTIVE, False, False)
    (warning,) = [e for e in logs if e["event"] == "generator.failed"]
    assert warning["log_level"] == "warning" and "0.5 s" in warning["error"]


async def test_endpoint_down_gives_the_extractive_answer() -> None:
    with capture_logs() as logs:
        answer = await improve_answer(rate_limit_answer(), QUESTION, config(url=closed_port_url()))
    assert (answer.direct_answer, answer.generated) == (EXTRACTIVE, False)
    (warning,) = [e for e in logs if e["event"] == "generator.failed"]
    assert "ClientConnectorError" in warning["error"]


@pytest.mark.parametrize("scripted", [
    {"status": 500}, {"status": 503}, {"status": 429}, {"raw": "not json"}, {"raw": json.dumps({"choices": []})},
    {"raw": json.dumps({"choices": [{"message": {"content": None}}]})},
])
async def test_endpoint_errors_give_the_extractive_answer(fake_openai: FakeOpenAI, scripted: dict) -> None:
    fake_openai.script(**scripted)
    with capture_logs() as logs:
        answer = await improve_answer(rate_limit_answer(), QUESTION, config(fake_openai))
    assert (answer.direct_answer, answer.generated) == (EXTRACTIVE, False)
    assert [e["event"] for e in logs if e["log_level"] == "warning"] == ["generator.failed"]


async def test_refusals_and_unconfigured_generators_make_no_call(fake_openai: FakeOpenAI) -> None:
    refused = Answer(answer_id="r" * 32, question="parental leave?", refused=True, text="I couldn't find this.")
    assert await improve_answer(refused, "parental leave?", config(fake_openai)) is refused
    plain = rate_limit_answer()
    assert (await improve_answer(plain, QUESTION, None)).direct_answer == EXTRACTIVE
    assert fake_openai.requests == []


def test_passages_of_one_document_share_its_number() -> None:
    user = build_messages(rate_limit_answer(), QUESTION)[1]["content"]
    assert user.count("[1] API rate limits") == 1 and user.count("[2] Webhooks") == 1
    assert user.index("Limits by plan") < user.index("When the limit is exceeded") < user.index("[2] Webhooks")


# --- config ---------------------------------------------------------------------------------------------


def test_generator_is_off_by_default_and_configurable(tmp_path) -> None:
    assert load_settings().generator is None
    path = tmp_path / "minerva.yaml"
    path.write_text("generator:\n  base_url: http://127.0.0.1:8080/v1\n  model: qwen2.5-0.5b-instruct\n"
                    "  api_key_env: LLM_KEY\n  timeout_s: 4\n", encoding="utf-8")
    cfg = load_settings(path).generator
    assert (cfg.base_url, cfg.model, cfg.api_key_env, cfg.timeout_s) == (
        "http://127.0.0.1:8080/v1", "qwen2.5-0.5b-instruct", "LLM_KEY", 4.0)


@pytest.mark.parametrize("body, message", [
    ("generator:\n  base_url: http://x/v1\n  model: m\n  temprature: 0\n", "unknown key 'generator.temprature'"),
    ("generator:\n  model: m\n", "missing key 'generator.base_url'"),
    ("generator:\n  base_url: localhost:8080\n  model: m\n", "must start with http"),
    ("generator:\n  base_url: http://x/v1\n  model: m\n  timeout_s: 0\n", "timeout_s must be > 0"),
])
def test_bad_generator_config_is_refused(tmp_path, body: str, message: str) -> None:
    path = tmp_path / "minerva.yaml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_settings(path)
