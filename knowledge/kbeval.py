"""Evaluate answers on a KB question set (shared/eval/kb-dev layout) and collect calibration samples.

Metrics (kb-dev README, "Suggested scoring"): hit@k = any gold path among the documents of the top k
passages (recall@k of gold pages); share of no-answer questions refused; share of answerable questions
answered; per-language breakdown; ``ask`` latency percentiles (warm).
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from knowledge.calibration import CalibrationSample
from knowledge.service import ANSWER_CANDIDATES, KnowledgeBase


@dataclass
class QuestionResult:
    """What happened to one question."""

    id: str
    lang: str
    kind: str
    answerable: bool
    refused: bool
    hit_at_5: bool
    best_cosine: float
    best_is_gold: bool
    top_score: float
    latency_ms: float
    cited: list[str] = field(default_factory=list)
    evidence: list[tuple[dict, bool]] = field(default_factory=list)
    direct_answer: str = ""


#: A Markdown link (not an image): ``[label](address)``.
_MARKDOWN_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\([^)\s]+\)")


def evaluate(
    kb: KnowledgeBase,
    questions: Iterable[dict],
    corpus_root: Path,
    *,
    progress: Callable[[], None] | None = None,
    path_map: dict[str, str] | None = None,
) -> list[QuestionResult]:
    """Ask every question (after one warm-up) and score retrieval and refusal.

    Args:
        kb: the knowledge base (index built over the corpus the gold paths refer to).
        questions: dicts with id, question, lang, kind, answerable, gold (paths relative to ``corpus_root``).
        corpus_root: folder the gold paths are relative to.
        progress: called once per question.
        path_map: folder prefix replacements applied to document paths first (copy → original), for
            indexes built from copies of the corpus.
    """
    corpus_root = Path(corpus_root).resolve()
    index = kb.index()
    path_of = {doc_id: _relative(_remap(doc["path"], path_map or {}), corpus_root)
               for doc_id, doc in index.documents.items()}
    kb.ask("warm-up question")
    results = []
    for q in questions:
        gold = set(q.get("gold") or [])
        started = time.perf_counter()
        answer = kb.ask(q["question"])
        latency = (time.perf_counter() - started) * 1000
        passages = kb.search([q["question"]], top_k=ANSWER_CANDIDATES)[0]
        top5_docs = {path_of.get(p.doc_id) for p in passages[:5]}
        best = max(passages, key=lambda p: p.dense_score, default=None)
        results.append(QuestionResult(
            id=q.get("id", ""), lang=q.get("lang", "en"), kind=q.get("kind", ""), answerable=bool(q.get("answerable", True)),
            refused=answer.refused, hit_at_5=bool(gold & top5_docs), best_cosine=best.dense_score if best else -1.0,
            best_is_gold=bool(best and path_of.get(best.doc_id) in gold), top_score=answer.top_score,
            latency_ms=latency, cited=[path_of.get(c.doc_id, c.doc_id) for c in answer.citations],
            evidence=[(p.evidence, path_of.get(p.doc_id) in gold) for p in passages],
            direct_answer=answer.direct_answer,
        ))
        if progress:
            progress()
    return results


def summarize(results: list[QuestionResult]) -> dict:
    """Aggregate metrics: recall@5 (answerable, per language), refusal shares, latency p50/p95 (ms)."""
    def share(flags: list[bool]) -> float | None:
        return round(float(np.mean(flags)), 4) if flags else None

    answerable = [r for r in results if r.answerable]
    latencies = np.array([r.latency_ms for r in results]) if results else np.zeros(1)
    return {
        "questions": len(results),
        "recall@5": {lang: share([r.hit_at_5 for r in answerable if r.lang == lang])
                     for lang in sorted({r.lang for r in answerable})},
        "answered_share_answerable": share([not r.refused for r in answerable]),
        "refused_share_no_answer": share([r.refused for r in results if not r.answerable]),
        "latency_ms": {"p50": round(float(np.percentile(latencies, 50)), 1),
                       "p95": round(float(np.percentile(latencies, 95)), 1)},
    }


def calibration_samples(results: list[QuestionResult], languages: set[str] | None = None) -> list[CalibrationSample]:
    """Samples for `knowledge.calibration.fit_confidence` (and the cosine-only `fit_calibration`),
    optionally only some question languages."""
    return [CalibrationSample(r.best_cosine, r.answerable, r.best_is_gold, r.lang, r.evidence)
            for r in results if languages is None or r.lang in languages]


def _remap(path: str, path_map: dict[str, str]) -> str:
    for prefix, original in path_map.items():
        if path.startswith(prefix.rstrip("/") + "/"):
            return original.rstrip("/") + path[len(prefix.rstrip("/")):]
    return path


def _relative(path: str, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return path


#: The seed of the one split of every labelled set into a fitting part and a validation part (issue 22: fit on
#: one part, report on the other; never re-drawn, so no tuning leaks into the reported part).
SPLIT_SEED = "minerva-split-1"


def split_by_page(questions: list[dict], *, seed: str = SPLIT_SEED, validation_share: float = 0.5
                  ) -> tuple[list[dict], list[dict]]:
    """``(fitting, validation)``: ``questions`` split by page, so that no gold page is in both parts.

    Questions that share a gold page (directly or through a chain of pages) form one group; a question
    without gold pages (no-answer) is a group of its own, keyed by its id. A group goes to validation when the
    SHA-256 of ``seed`` and its smallest key, read as a fraction in [0, 1), is below ``validation_share``: the
    same group lands in the same part whatever else the set holds, so adding questions never moves old ones.
    """
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    keys = [[f"page:{g}" for g in q.get("gold") or []] or [f"question:{q.get('id', q['question'])}"]
            for q in questions]
    for group in keys:
        root(group[0])
        for other in group[1:]:
            parent[root(other)] = root(group[0])
    members: dict[str, list[str]] = {}
    for key in parent:
        members.setdefault(root(key), []).append(key)
    fitting, validation = [], []
    for q, group in zip(questions, keys):
        name = min(members[root(group[0])])
        fraction = int(hashlib.sha256(f"{seed}\n{name}".encode()).hexdigest()[:12], 16) / 16 ** 12
        (validation if fraction < validation_share else fitting).append(q)
    return fitting, validation


def holds_fact(text: str, must_contain: list[list[str]]) -> bool:
    """Whether ``text`` holds the fact keyed by ``must_contain`` (kb-dev-v2): every group has one of its
    alternatives in it, case-insensitive. An empty key holds nothing."""
    text = text.lower()
    return bool(must_contain) and all(any(alt.lower() in text for alt in group) for group in must_contain)


def groups_held(text: str, must_contain: list[list[str]]) -> float:
    """The share of ``must_contain``'s groups that ``text`` holds one alternative of (0 for an empty key)."""
    text = text.lower()
    if not must_contain:
        return 0.0
    return sum(any(alt.lower() in text for alt in group) for group in must_contain) / len(must_contain)


#: A hint's words about an outdated page ("(2021 page: …)") name values the answer must NOT give.
_OLD_PAGE = re.compile(r"\((?:2021|old|v1)[^)]*\)|\bold page\b|\b2021 page\b")


def hint_values(hint: str) -> set[str]:
    """The values an answer hint names, lower-cased: numbers ("$75", "35th"), `code` spans, and identifiers
    (snake_case, camelCase, #channel, @decorator). A proxy key for sets without ``must_contain``."""
    hint = _OLD_PAGE.split(hint)[0]
    values = set(re.findall(r"(?<![\w.])\$?\d[\d,.]*(?:th|st|nd|rd)?", hint))
    values |= set(re.findall(r"`([^`]+)`", hint))
    values |= {w for w in re.findall(r"[#@]?[A-Za-z_][\w\-.]*", hint)
               if "_" in w or w[0] in "#@" or re.search(r"[a-z][A-Z]", w)}
    return {v.strip(".,").lower() for v in values if v.strip(".,")}


def question_key(q: dict) -> list[list[str]]:
    """What an answer to ``q`` must hold: its ``must_contain`` groups (kb-dev-v2), else one group of the
    values its ``answer_hint`` names (`hint_values`: any one of them), else ``[]`` (no key: not scored)."""
    if q.get("must_contain"):
        return q["must_contain"]
    values = hint_values(q.get("answer_hint") or "")
    return [sorted(values)] if values else []


def as_seen(direct_answer: str) -> str:
    """``direct_answer`` as Slack shows its characters: a Markdown link is its label (the address hides behind
    it), so "the first 200 characters" (`knowledge.reader_fit.GLANCE_CHARS`) count what a reader sees."""
    return _MARKDOWN_LINK.sub(r"\1", direct_answer)
