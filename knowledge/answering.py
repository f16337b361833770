"""Extractive answers: the original text of the best passages, with numbered citations.

DESIGN.md: answers preserve the source text (quote, don't paraphrase, when no generator is configured);
score >= 0.6 → cite it; 0.3–0.6 → include only when nothing better exists, marked low confidence;
< 0.3 → excluded; nothing left → refusal.
"""

from __future__ import annotations

import uuid
from dataclasses import replace

import regex

from config import AnswerConfig
from knowledge.scoring import band
from knowledge.types import CONFIDENCE_HIGH, CONFIDENCE_LOW, Answer, Citation, Passage

REFUSAL_TEXT = "I couldn't find this in the knowledge base."
LOW_CONFIDENCE_NOTE = "Low confidence: this is the closest passage I found; please check the source."
_SENTENCE_END = regex.compile(r"(?<=[.!?。！？])\s+|\n")


def compose_answer(question: str, candidates: list[Passage], cfg: AnswerConfig, *, language: str = "en") -> Answer:
    """Choose passages by confidence band and build the answer.

    Args:
        question: the (validated) question.
        candidates: retrieved passages, best first, with calibrated scores.
        cfg: bands (``high``, ``low``), ``max_passages``, ``max_quote_chars``.
        language: language code of the question, recorded on the answer.

    Returns:
        An Answer; ``refused`` when no candidate reaches ``cfg.low``.
    """
    high = [p for p in candidates if band(p.score, cfg) == CONFIDENCE_HIGH]
    low = [p for p in candidates if band(p.score, cfg) == CONFIDENCE_LOW]
    chosen = [_with_confidence(p, CONFIDENCE_HIGH) for p in high[: cfg.max_passages]]
    low_confidence = False
    if not chosen and low:
        chosen, low_confidence = [_with_confidence(low[0], CONFIDENCE_LOW)], True
    answer = Answer(
        answer_id=uuid.uuid4().hex,
        question=question,
        refused=not chosen,
        text=REFUSAL_TEXT,
        retrieved=[{"chunk_id": p.chunk_id, "doc_id": p.doc_id, "score": round(p.score, 4)} for p in candidates],
        top_score=max((p.score for p in candidates), default=0.0),
        low_confidence=low_confidence,
        language=language,
    )
    if chosen:
        _cite(answer, chosen, cfg.max_quote_chars)
    return answer


def _cite(answer: Answer, passages: list[Passage], max_chars: int) -> None:
    numbers: dict[str, int] = {}
    parts = [LOW_CONFIDENCE_NOTE] if answer.low_confidence else []
    for p in passages:
        if p.doc_id not in numbers:
            numbers[p.doc_id] = len(numbers) + 1
            answer.citations.append(
                Citation(numbers[p.doc_id], p.doc_id, p.title, p.url, p.heading, p.score, p.last_modified, p.visibility)
            )
        else:  # another quoted section of a cited page: name it in the citation too
            i = numbers[p.doc_id] - 1
            citation = answer.citations[i]
            if p.heading and p.heading not in citation.heading.split("; "):
                heading = f"{citation.heading}; {p.heading}" if citation.heading else p.heading
                answer.citations[i] = replace(citation, heading=heading)
        answer.passages.append(p)
        answer.citation_numbers.append(numbers[p.doc_id])
        answer.quotes.append(quote(p.text, max_chars))
        parts.append(f"{answer.quotes[-1]} [{numbers[p.doc_id]}]")
    answer.text = "\n\n".join(parts)


def quote(text: str, max_chars: int) -> str:
    """The passage text cut to at most ``max_chars`` characters, at a sentence end when one is near.

    A cut passage ends with "…". Never cuts inside a grapheme cluster (emoji, Hangul).
    """
    text = text.strip()
    if len(text) <= max_chars:
        return text
    clusters = regex.findall(r"\X", text)
    cut = "".join(clusters[:max_chars])
    ends = [m.start() for m in _SENTENCE_END.finditer(cut) if m.start() > max_chars // 2]
    return (cut[: ends[-1]] if ends else cut).rstrip() + " …"


def _with_confidence(p: Passage, confidence: str) -> Passage:
    return replace(p, confidence=confidence)
