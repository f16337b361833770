"""Optional generated answers: an OpenAI-compatible chat model writes the direct answer from the passages.

DESIGN.md: answers quote the source when no generator is configured; a configured generator (any endpoint
speaking ``POST {base_url}/chat/completions``: OpenAI, vLLM, Ollama, a llama.cpp server) may write the answer
from the numbered passages, every sentence citing ``[n]``, and `knowledge.grounding` removes the sentences
their passages do not support. Nothing here can make an answer worse than the extractive one: past
``timeout_s``, on any endpoint error, or when no sentence survives the check, the extractive answer stands.

Usage (the bot and ``minerva ask`` call it after `KnowledgeBase.ask`, before posting or printing)::

    answer = kb.ask(question)
    if settings.generator:
        answer = await improve_answer(answer, question, settings.generator, api_key=os.environ.get(...))
"""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp
import regex
import structlog

from config import GeneratorConfig
from knowledge.answering import plain_text
from knowledge.errors import KnowledgeError
from knowledge.grounding import GroundingResult, check_grounding
from knowledge.types import Answer

log = structlog.get_logger(__name__)

#: What the model replies when the passages do not answer the question; the extractive answer is kept.
NO_ANSWER = "NO_ANSWER"
LANGUAGE_NAMES = {"en": "English", "ko": "Korean", "ja": "Japanese"}
SYSTEM_PROMPT = (
    "You answer employees' questions from numbered passages of the company's documents.\n"
    "Rules:\n"
    "- Use only facts stated in the passages. Copy numbers, units, names and codes exactly as written.\n"
    "- Answer in one to three short sentences, in {language} (the language of the question).\n"
    "- End every sentence with the number of the passage that supports it, like [1] or [1][2].\n"
    f"- If the passages do not answer the question, reply with exactly {NO_ANSWER}.\n"
    "- No introduction, no headings, no lists of sources."
)
_THINKING = regex.compile(r"<think>.*?(?:</think>|$)", regex.DOTALL)


class GeneratorUnavailable(KnowledgeError):
    """The generator endpoint failed: connection refused, HTTP error status, or a reply without text."""


def build_messages(answer: Answer, question: str) -> list[dict[str, str]]:
    """The chat messages for one answer: a system prompt with the rules, and the numbered passages + question.

    Passages keep the answer's citation numbers (several quoted sections of one document share its number),
    so the model's ``[n]`` markers point at the answer's citations.

    Returns:
        ``[{"role": "system", "content": …}, {"role": "user", "content": …}]``.
    """
    language = LANGUAGE_NAMES.get(answer.language, "the language of the question")
    passages = numbered_passages(answer)
    titles = {c.number: c.title for c in answer.citations}
    body = "\n\n".join(f"[{n}] {titles.get(n, '')}\n{text}" for n, text in passages.items())
    return [
        {"role": "system", "content": SYSTEM_PROMPT.format(language=language)},
        {"role": "user", "content": f"Passages:\n\n{body}\n\nQuestion: {question}"},
    ]


def numbered_passages(answer: Answer) -> dict[int, str]:
    """Citation number → the text of the answer's passages cited under it (joined by a blank line)."""
    grouped: dict[int, list[str]] = {}
    for passage, number in zip(answer.passages, answer.citation_numbers):
        grouped.setdefault(number, []).append(passage.text.strip())
    return {n: "\n\n".join(texts) for n, texts in grouped.items()}


async def complete(messages: list[dict[str, str]], cfg: GeneratorConfig, *, api_key: str | None = None,
                   session: aiohttp.ClientSession | None = None) -> str:
    """One chat completion: ``POST {base_url}/chat/completions``; returns the reply text.

    Args:
        messages: OpenAI chat messages.
        cfg: endpoint, model, ``timeout_s`` (applied to the HTTP request as aiohttp's total timeout),
            ``temperature``, ``max_tokens``.
        api_key: sent as ``Authorization: Bearer …`` when given.
        session: an open aiohttp session to reuse; None = a session for this call.

    Returns:
        The first choice's ``message.content``, stripped, without a ``<think>…</think>`` block.

    Raises:
        GeneratorUnavailable: connection error, HTTP status >= 400, a body that is not JSON, or no text.
        asyncio.TimeoutError: past ``cfg.timeout_s``.
    """
    url = cfg.base_url.rstrip("/") + "/chat/completions"
    payload = {"model": cfg.model, "messages": messages, "temperature": cfg.temperature,
               "max_tokens": cfg.max_tokens, "stream": False}
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    timeout = aiohttp.ClientTimeout(total=cfg.timeout_s)
    own = session is None
    session = session or aiohttp.ClientSession()
    try:
        async with session.post(url, json=payload, headers=headers, timeout=timeout) as response:
            raw = await response.text()
            if response.status >= 400:
                raise GeneratorUnavailable(f"{url} answered HTTP {response.status}: {raw[:200]}")
        data = json.loads(raw)
        content = data["choices"][0]["message"]["content"]
        if not isinstance(content, str):
            raise TypeError(f"content is {type(content).__name__}")
    except aiohttp.ClientError as exc:
        raise GeneratorUnavailable(f"{url}: {exc.__class__.__name__}: {exc}") from exc
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise GeneratorUnavailable(f"{url} sent no chat completion ({exc.__class__.__name__}: {exc})") from exc
    finally:
        if own:
            await session.close()
    return _THINKING.sub("", content).strip()


async def improve_answer(answer: Answer, question: str, cfg: GeneratorConfig | None, *, api_key: str | None = None,
                         session: aiohttp.ClientSession | None = None) -> Answer:
    """Let the generator write ``answer.direct_answer`` from the answer's passages, keeping only grounded sentences.

    The extractive parts (``passages``, ``quotes``, ``citations``, ``text``) are kept as support. On success
    ``direct_answer`` is the grounded text and ``generated`` is True. Any removed sentence sets
    ``hallucination_flag``; when no sentence survives, the extractive ``direct_answer`` is kept (flag still
    set). A refusal, a missing config or an answer without passages is returned untouched, without a call.

    Never raises for the endpoint's sake: past ``cfg.timeout_s`` (the whole call), or on any endpoint error,
    it logs a ``generator.failed`` warning and returns the answer unchanged. The grounding check runs in a
    worker thread (it may load the Korean/Japanese analyzers), so the event loop is never blocked.

    Args:
        answer: the extractive answer from `KnowledgeBase.ask`; modified in place and returned.
        question: the question as asked (the prompt asks for an answer in ``answer.language``).
        cfg: the ``generator`` config section, or None (off).
        api_key: the endpoint's key (the caller reads ``cfg.api_key_env`` from its environment).
        session: an aiohttp session to reuse; None = one for this call.

    Returns:
        The same Answer object.
    """
    if cfg is None or answer.refused or not answer.passages:
        return answer
    started = time.perf_counter()
    try:
        async with asyncio.timeout(cfg.timeout_s):
            reply = await complete(build_messages(answer, question), cfg, api_key=api_key, session=session)
    except (GeneratorUnavailable, TimeoutError) as exc:
        log.warning("generator.failed", answer_id=answer.answer_id, model=cfg.model,
                    error=str(exc) or f"no reply within {cfg.timeout_s:g} s",
                    elapsed_ms=round((time.perf_counter() - started) * 1000, 1))
        return answer
    if not reply or reply.strip().rstrip(".") == NO_ANSWER:
        log.info("generator.no_answer", answer_id=answer.answer_id, model=cfg.model)
        return answer
    result: GroundingResult = await asyncio.to_thread(check_grounding, reply, numbered_passages(answer))
    removed = result.removed
    if removed:
        answer.hallucination_flag = True
    if result.text:
        answer.direct_answer = result.text
        answer.answered_from = []  # written from every quoted passage: its votes judge every cited page
        answer.generated = True
        answer.text = plain_text(answer)
    log.info("generator.answer", answer_id=answer.answer_id, model=cfg.model, sentences=len(result.checks),
             removed=[c.reason for c in removed], used=bool(result.text),
             elapsed_ms=round((time.perf_counter() - started) * 1000, 1))
    return answer
