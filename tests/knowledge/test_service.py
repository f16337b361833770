"""KnowledgeBase.ask on the bundled sample knowledge base: citations, refusals, question validation."""

from __future__ import annotations

import pytest

from knowledge import KnowledgeBase, QuestionInvalid, SearchFilter, validate_question
from knowledge.answering import REFUSAL_TEXT


def test_answer_cites_title_url_and_heading(sample_kb):
    answer = sample_kb.ask("  what's the API rate limit for Pro customers?  ")

    assert not answer.refused
    assert answer.question == "what's the API rate limit for Pro customers?"
    first = answer.citations[0]
    assert (first.number, first.doc_id, first.title) == (1, "api:rate-limits.md", "API rate limits")
    assert first.url == "https://wiki.nimbus.example/api/rate-limits.md"
    quoted = [p.heading for p, n in zip(answer.passages, answer.citation_numbers) if n == 1]
    assert first.heading == "; ".join(dict.fromkeys(quoted))  # every quoted section of the page is named
    assert set(quoted[0].split(" › ")) <= set(answer.passages[0].heading_path)
    assert 0.0 <= first.score <= 1.0
    assert "[1]" in answer.text
    assert [c.number for c in answer.citations] == list(range(1, len(answer.citations) + 1))
    assert len(answer.passages) == len(answer.citation_numbers) == len(answer.quotes)
    assert answer.answer_id and len(answer.answer_id) == 32
    assert answer.latency_ms > 0
    data = answer.to_json()
    assert data["citations"][0] == {"doc_id": "api:rate-limits.md", "title": "API rate limits",
                                    "url": "https://wiki.nimbus.example/api/rate-limits.md",
                                    "heading": first.heading, "score": round(first.score, 4), "outdated": False}


def test_quotes_are_source_text(sample_kb):
    answer = sample_kb.ask("what's the API rate limit for Pro customers?")

    for passage, quoted in zip(answer.passages, answer.quotes):  # whole sentences, wrapped lines joined
        source = " ".join(passage.text.split())
        for line in quoted.splitlines():
            assert line.removeprefix("• ").strip() in source or "·" in line  # table rows are shown as text


def test_off_topic_question_is_refused(sample_kb):
    answer = sample_kb.ask("what's the recipe for lasagna?")

    assert answer.refused
    assert answer.text.startswith(REFUSAL_TEXT)  # then the closest pages, as links to read, never quoted
    assert answer.quotes == [] and len(answer.closest) <= 2
    assert answer.citations == [] and answer.passages == []
    assert answer.retrieved  # candidates are still recorded for the feedback log


def test_expired_document_is_never_cited(sample_kb):
    answer = sample_kb.ask("customer wants to use SUMMER25, does it still work?")

    assert all(c.doc_id != "plans:summer-2025-sale.md" for c in answer.citations)
    assert all(r["doc_id"] != "plans:summer-2025-sale.md" for r in answer.retrieved)


def test_collection_filter_applies_to_answers(sample_kb):
    answer = sample_kb.ask("what's the API rate limit for Pro customers?",
                           where=SearchFilter(collections=frozenset({"runbooks"})))

    assert all(r["doc_id"].startswith("runbooks:") for r in answer.retrieved)
    assert all(c.doc_id.startswith("runbooks:") for c in answer.citations)


@pytest.mark.parametrize("question", ["", "   \n\t "])
def test_empty_question_is_invalid(sample_kb, question):
    with pytest.raises(QuestionInvalid, match=r"^The question is empty: ask something"):
        sample_kb.ask(question)


def test_oversized_question_is_invalid_and_says_the_limit(sample_kb):
    with pytest.raises(QuestionInvalid) as excinfo:
        sample_kb.ask("why " * 10_000)

    assert str(excinfo.value) == (
        "The question is 39,999 characters long; the limit is 2,000. "
        "Please ask a shorter question (paste long logs into a file instead)."
    )


def test_question_at_the_limit_is_accepted():
    assert validate_question("x" * 2000, 2000) == "x" * 2000
    with pytest.raises(QuestionInvalid, match="2,001 characters"):
        validate_question("x" * 2001, 2000)


def test_ask_before_any_sync_says_to_ingest(sample_settings, tmp_path, embedder):
    from knowledge import IndexNotBuilt

    kb = KnowledgeBase(sample_settings, tmp_path, embedder=embedder)

    with pytest.raises(IndexNotBuilt, match="run `minerva ingest` first"):
        kb.ask("anything?")


def test_warm_up_loads_the_index_and_the_analyzers_of_a_korean_japanese_kb(sample_settings, sample_home, embedder):
    from knowledge import tokenize as tk

    tk._kiwi.cache_clear()
    tk._sudachi.cache_clear()
    kb = KnowledgeBase(sample_settings, sample_home, embedder=embedder)

    warmed = kb.warm_up()

    assert warmed == {"index": kb.index().name, "analyzers": True}  # the sample KB has ko and ja pages
    assert tk._kiwi.cache_info().currsize == tk._sudachi.cache_info().currsize == 1


def test_warm_up_loads_the_analyzers_for_questions_across_languages_on_english_pages(sample_settings, tmp_path,
                                                                                      embedder):
    """English pages with cross-lingual vectors take Korean and Japanese questions: the first one must not wait
    ~2 s for the analyzers (seen in benchmarks/ask_latency.py's profile)."""
    from pathlib import Path

    from tests.conftest import synced_kb
    from knowledge import tokenize as tk

    pages = Path(sample_settings.sources[0].path)
    kb = synced_kb(tmp_path, {"sla.md": pages / "sla.md"}, sample_settings, embedder)
    tk._kiwi.cache_clear()
    tk._sudachi.cache_clear()

    warmed = kb.warm_up()

    assert kb.index().xl_dense is not None  # the default configuration embeds units across languages
    assert warmed == {"index": kb.index().name, "analyzers": True}
    assert tk._kiwi.cache_info().currsize == tk._sudachi.cache_info().currsize == 1


def test_warm_up_before_any_sync_loads_the_model_only(sample_settings, tmp_path, embedder):
    assert KnowledgeBase(sample_settings, tmp_path / "empty", embedder=embedder).warm_up() == {
        "index": None, "analyzers": False}


def test_a_page_quoted_twice_names_both_sections_in_its_citation(sample_kb):
    answer = sample_kb.ask("How much does the Team plan cost per user?")

    team = [p.heading for p, n in zip(answer.passages, answer.citation_numbers) if n == 1]
    assert len(team) >= 2 and answer.citations[0].heading == "; ".join(dict.fromkeys(team))


def test_a_refusal_in_a_collection_limited_channel_says_where_else_pages_answer(sample_kb):
    """A newcomer's on-call channel reads only runbooks: a VPN question the IT pages answer was refused with "I
    searched runbooks: 2 pages" and no word on where to ask instead."""
    from knowledge import SearchFilter
    from knowledge.messages import message

    answer = sample_kb.ask("How much does the Team plan cost per user?",
                           where=SearchFilter(collections=frozenset({"runbooks"})))
    everywhere = sample_kb.ask("Is the dashboard down right now?")

    assert answer.refused
    assert message("answer.elsewhere", "en", collections="plans") in answer.text
    assert "may answer it" not in everywhere.text  # no collection left out: nothing to point at


LEAVE_PAGE = """---
title: Annual Leave Policy
---
# Annual Leave Policy

## Entitlement

Every full-time employee receives 20 days of annual leave per calendar year. Part-time employees receive
leave pro rata.

## Carry-over

You may carry over up to 5 days of unused annual leave into the next year.
"""


def test_a_refusal_of_a_reworded_question_offers_the_page_it_shares_no_word_with(tmp_path, sample_settings, embedder):
    """A newcomer's first hour: "How much vacation do I get?" on their leave page (no word in common) was refused
    with no closest page; the page's best sentence is close in meaning (MiniLM cosine 0.54). An off-topic
    question still gets none."""
    from tests.conftest import written_kb

    kb = written_kb(tmp_path, {"annual-leave.md": LEAVE_PAGE}, sample_settings, embedder)

    vacation = kb.ask("How much vacation do I get?")
    lasagna = kb.ask("What's a good lasagna recipe?")

    assert vacation.refused and [c["title"] for c in vacation.closest] == ["Annual Leave Policy"]
    assert lasagna.refused and lasagna.closest == []
