"""Grounding check of a generated answer: every sentence must be supported by the passage it cites.

DESIGN.md "Retrieval and answers": a generator may write the answer, but every sentence carries a citation and
a grounding check flags unsupported sentences (the ``hallucination_flag``, an accuracy signal; seed 004 §5).
A sentence of the reply is **supported** when all of these hold:

1. it cites at least one passage with ``[n]`` (``[1]``, ``[1][2]``, ``[1, 2]``), and every number it cites is
   one of the answer's citations;
2. every value it states is in its cited passages: values with units, money and versions as
   `knowledge.values.extract_values` reads them (the same amount in the same kind, so "60 seconds" is
   supported by "1 minute"), every other number (digits, compared as numbers: "1,000" = "1000"), and every
   code (``backticked`` text, ``snake_case`` names, letter-digit codes such as ``SEV1`` or ``NIMBUSQ4-26``)
   as written, ignoring case; and a passage sentence stating the value or number shares a content word with
   the claim besides the value itself (so "keys are blocked for 24 hours" is not supported by "a maximum time
   range of 24 hours per request");
3. it is close to its passages: at least `MIN_OVERLAP` of its content tokens (`knowledge.tokenize`:
   stemmed English, Korean morphemes, Japanese words, CJK bigrams) occur in them. For a sentence in another
   script than its passages (a Korean answer from an English page) only the tokens outside Hangul/kana/kanji
   (names, codes, numbers) are compared, and a sentence without any is judged on 1–2 alone.

The check is lexical and cheap (no model call): a few tokenizer calls per sentence. It cannot tell a
faithful paraphrase that shares few words with its passage from an invented one; it errs towards removing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import regex

from knowledge.language import detect_language
from knowledge.sentences import sentences_of
from knowledge.tokenize import tokenize
from knowledge.values import Value, clean_text, extract_values, sentences

#: Least share of a sentence's content tokens found in its cited passages. 0.5: a grounded sentence
#: reuses the passage's terms for most of what it says; a sentence with fewer than half of its words from
#: the passage says mostly something else. A heuristic, checked on the cases of tests/knowledge/test_grounding.py.
MIN_OVERLAP = 0.5

#: ``[1]``, ``[1, 2]``, ``[1; 2]``: a citation marker and the numbers in it.
_MARKER = regex.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")
_MARKERS_ONLY = regex.compile(r"^(?:\s*\[\d+(?:\s*[,;]\s*\d+)*\])+[\s.。]*$")
_LEADING_MARKERS = regex.compile(r"^((?:\s*\[\d+(?:\s*[,;]\s*\d+)*\])+)[\s.。]*")
#: A number as written ("3.5", "1,000"), compared as a number whatever its separators.
_NUMBER = regex.compile(r"(?<![\d.,])\d+(?:[.,]\d+)*")
_BACKTICKED = regex.compile(r"`([^`\n]+)`")
#: Codes: snake_case names and words mixing letters and digits (SEV1, ERR-429, NIMBUSQ4-26, sha256).
_CODE = regex.compile(r"(?<![\w-])(?:[A-Za-z]\w*_\w+|(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]*[A-Za-z0-9])(?![\w-])")
_VERSION_CODE = regex.compile(r"^v\d+(?:\.\d+)*$", regex.IGNORECASE)
_CJK = regex.compile(r"[\p{Hangul}\p{Hiragana}\p{Katakana}\p{Han}]")
_MARKUP = regex.compile(r"[*>#]+")  # emphasis and quote marks; "_" stays (snake_case codes)


@dataclass(frozen=True)
class SentenceCheck:
    """The verdict on one sentence of a generated reply.

    Attributes:
        sentence: the sentence as written, citation markers included.
        citations: the numbers it cites, in order (may include unknown ones).
        supported: True when it passed every test (see the module docstring).
        reason: why not, e.g. ``"no citation"``, ``"cites unknown [7]"``, ``"value 45 seconds not in [1]"``,
            ``"value 24 hours said of something else in [1]"``, ``"number 12 not in [1]"``,
            ``"code ERR_42 not in [1]"``, ``"overlap 0.20 < 0.5 with [1]"``; ``""`` when supported.
        overlap: share of its content tokens found in the cited passages, in [0, 1]; None when not measured.
        line: index of the reply line the sentence was on (the grounded text keeps the reply's lines).
    """

    sentence: str
    citations: tuple[int, ...]
    supported: bool
    reason: str = ""
    overlap: float | None = None
    line: int = 0


@dataclass(frozen=True)
class GroundingResult:
    """All sentences of a reply with their verdicts.

    Attributes:
        checks: one per sentence, in reply order.
        text: the supported sentences, joined with a space within a line and a newline between lines;
            ``""`` when none was supported.
    """

    checks: list[SentenceCheck] = field(default_factory=list)
    text: str = ""

    @property
    def removed(self) -> list[SentenceCheck]:
        """The unsupported sentences (removed from ``text``)."""
        return [c for c in self.checks if not c.supported]


def split_sentences(reply: str) -> list[tuple[str, int]]:
    """``(sentence, line index)`` pairs of a reply; citation markers stay with the sentence before them.

    Lines are split at sentence ends as units are (`knowledge.sentences.sentences_of`: one splitter for the
    whole project, which knows "e.g.", "i.e." and Japanese 。！？). A piece that is only markers (``"… seconds. [1]"``)
    or that starts with markers (``"… seconds. [1] Next …"``) gives them to the sentence before it.
    """
    out: list[list] = []
    for number, line in enumerate(reply.splitlines()):
        for piece in sentences_of(line.strip()):
            piece = piece.strip()
            if not piece:
                continue
            lead = _LEADING_MARKERS.match(piece)
            if lead and out and out[-1][1] == number:
                out[-1][0] = f"{out[-1][0]} {lead.group(1).strip()}"
                piece = piece[lead.end():].strip()
                if not piece or _MARKERS_ONLY.match(piece):
                    continue
            out.append([piece, number])
    return [(sentence, line) for sentence, line in out]


def check_grounding(reply: str, passages: dict[int, str], *, min_overlap: float = MIN_OVERLAP) -> GroundingResult:
    """Judge every sentence of a generated reply against the passages it cites.

    Args:
        reply: the generator's text, sentences ending with ``[n]`` markers.
        passages: citation number → the text the generator was given under that number (several passages of
            one document joined).
        min_overlap: least share of a sentence's content tokens found in its passages, in [0, 1].

    Returns:
        GroundingResult; ``text`` holds the supported sentences only.

    Example::

        >>> result = check_grounding("Deliveries time out after 45 seconds [1].", {1: "...time out after 30 seconds."})
        >>> result.removed[0].reason
        'value 45 seconds not in [1]'
    """
    checks = [_check(sentence, line, passages, min_overlap) for sentence, line in split_sentences(reply)]
    lines: dict[int, list[str]] = {}
    for c in checks:
        if c.supported:
            lines.setdefault(c.line, []).append(c.sentence)
    return GroundingResult(checks, "\n".join(" ".join(parts) for _, parts in sorted(lines.items())))


def _check(sentence: str, line: int, passages: dict[int, str], min_overlap: float) -> SentenceCheck:
    cited = tuple(int(n) for group in _MARKER.findall(sentence) for n in regex.split(r"\s*[,;]\s*", group))

    def verdict(reason: str = "", overlap: float | None = None) -> SentenceCheck:
        return SentenceCheck(sentence, cited, not reason, reason, overlap, line)

    if not cited:
        return verdict("no citation")
    unknown = [n for n in cited if n not in passages]
    if unknown:
        return verdict(f"cites unknown [{unknown[0]}]")
    where = "".join(f"[{n}]" for n in dict.fromkeys(cited))
    source = "\n\n".join(passages[n] for n in dict.fromkeys(cited))
    claim = _MARKUP.sub("", _MARKER.sub(" ", sentence)).strip()
    problem = _unsupported_value(claim, source)
    if problem:
        return verdict(problem.replace("{where}", where))
    overlap = _overlap(claim, source)
    if overlap is not None and overlap < min_overlap:
        return verdict(f"overlap {overlap:.2f} < {min_overlap:g} with {where}", overlap)
    return verdict(overlap=overlap)


def _unsupported_value(claim: str, source: str) -> str:
    """``""`` when every value, number and code of ``claim`` is in ``source``; else the reason, with
    ``{where}`` standing for the cited numbers."""
    stated = extract_values(claim)
    known = extract_values(source)
    source_numbers = {_as_number(m.group()) for m in _NUMBER.finditer(source)}
    numbered = [(text, {_as_number(n) for n in _NUMBER.findall(text)}) for text, _ in sentences(clean_text(source))]
    words = _words(_CJK.sub(" ", claim) if _cross_lingual(claim, source) else claim)
    matched_spans: list[tuple[int, int]] = []
    for value in stated:
        if not _value_supported(value, known, source_numbers):
            return f"value {value.text} not in {{where}}"
        same = [o.sentence for o in known if o.kind == value.kind and value.same_amount(o)]
        numbers = {_as_number(n) for n in _NUMBER.findall(value.text)}
        stating = same or [text for text, found in numbered if numbers and numbers <= found]
        if not _anchored(words - _words(value.text), stating):
            return f"value {value.text} said of something else in {{where}}"
        at = claim.find(value.text)
        if at >= 0:
            matched_spans.append((at, at + len(value.text)))
    lowered = source.lower()
    for m in _BACKTICKED.finditer(claim):
        if m.group(1).strip().lower() not in lowered:
            return f"code {m.group(1).strip()} not in {{where}}"
    for m in _CODE.finditer(_BACKTICKED.sub(" ", claim)):
        code = m.group()
        if _VERSION_CODE.match(code):  # versions are compared as values ("v2" = "version 2")
            continue
        if code.lower() not in lowered:
            return f"code {code} not in {{where}}"
    for m in _NUMBER.finditer(claim):
        if any(start <= m.start() < end for start, end in matched_spans):
            continue
        number = _as_number(m.group())
        if number not in source_numbers:
            return f"number {m.group()} not in {{where}}"
        if not _anchored(words, [text for text, found in numbered if number in found]):
            return f"number {m.group()} said of something else in {{where}}"
    return ""


def _anchored(words: frozenset[str], stating: list[str]) -> bool:
    """True when one of the passage sentences ``stating`` a value shares a content word with the claim's
    other ``words``; True too when there is nothing to compare (no other words, or the value sits only in a
    code block or a URL, which `sentences` leaves out)."""
    return not words or not stating or any(words & _words(text) for text in stating)


@lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    """Content tokens of ``text`` without numbers (a value's own digits prove nothing about its subject)."""
    return frozenset(t for t in tokenize(text) if not any(ch.isdigit() for ch in t))


def _cross_lingual(claim: str, source: str) -> bool:
    return detect_language(claim) != detect_language(source) and bool(_CJK.search(claim + source))


def _value_supported(value: Value, known: list[Value], source_numbers: set[float]) -> bool:
    """The passage states the same amount of the same kind ("60 seconds" = "1 minute"); or, where the passage
    writes the number without a unit (a table cell under "Requests per minute"), the number is there and no
    value of the same kind in the passage gives that number another unit ("30 minutes" vs "30 seconds")."""
    if any(value.kind == other.kind and value.same_amount(other) for other in known):
        return True
    numbers = {_as_number(n) for n in _NUMBER.findall(value.text)}
    clash = any(other.kind == value.kind and numbers & {_as_number(n) for n in _NUMBER.findall(other.text)}
                for other in known)
    return bool(numbers) and numbers <= source_numbers and not clash


def _as_number(text: str) -> float:
    """"1,000" → 1000.0, "99.95" → 99.95, "03" → 3.0; a "," followed by other than three digits is a decimal
    comma ("2,5")."""
    if regex.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", text):
        text = text.replace(",", "")
    try:
        return float(text.replace(",", "."))
    except ValueError:  # "1.2.3": a version or an address, compared as written
        return hash(text)


def _overlap(claim: str, source: str) -> float | None:
    """Share of the claim's content tokens found in the source; None when there is nothing to compare."""
    if _cross_lingual(claim, source):
        claim = _CJK.sub(" ", claim)  # another script: compare the names, codes and numbers only
    tokens = set(tokenize(claim))
    if not tokens:
        return None
    return len(tokens & set(tokenize(source))) / len(tokens)
