"""Answer units of a chunk: sentences, list items, table rows and code blocks, with their offsets.

A direct answer is one to three of these units (issue 9: "lead with the answer"), and a supporting quote is
a run of whole units around the evidence, so a reply never starts or ends mid-sentence. The same split runs
at ingest (each candidate unit is embedded once, `knowledge.sync`) and at answer time (to show the units),
so it must stay deterministic: `UNITS_VERSION` is recorded in the index manifest and a new version makes
the next sync embed the units again.

Markdown tables become readable text (``Plan: Team · Price: $12``) because Slack does not render them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

import regex

#: Bump when `split_units` changes what it returns; a new value re-derives unit vectors on the next sync
#: (7: a continued chunk whose first, bare fence is followed by a language-tagged one opens inside code;
#: 8: no sentence end inside an open bracket or after an initialism before a number).
UNITS_VERSION = 8

SENTENCE = "sentence"
ITEM = "item"
ROW = "row"
CODE = "code"
HEADING = "heading"
#: Kinds that can be a direct answer (and are embedded at ingest).
ANSWER_KINDS = (SENTENCE, ITEM, ROW)
#: Most units per chunk embedded at ingest: a 200-token chunk rarely has more; bounds ingest cost.
MAX_UNITS_PER_CHUNK = 24

_FENCE = regex.compile(r"^\s*(```|~~~)")
_TABLE_LINE = regex.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = regex.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_HEADING = regex.compile(r"^\s*#{1,6}\s+\S")
_ITEM = regex.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
#: A sentence ends at . ! ? (or the CJK full stops) followed by space and a likely sentence start; CJK
#: full stops need no space. Abbreviations ("e.g.", "i.e.", "etc.", "vs.") and decimals are no ends.
_SENTENCE_END = regex.compile(
    r"(?<![\s(](?:e\.g|i\.e|etc|vs|cf|approx|incl|Mr|Ms|Dr|No|St|Jr|Inc|Ltd|U\.S)\.)(?<=[.!?])\s+(?=[\p{Lu}\d\"'(\[*_`\p{Han}\p{Hangul}\p{Hiragana}\p{Katakana}])"
    r"|(?<=[。！？])\s*"
)
#: A sentence piece ending in a dotted initialism ("U.S.C.", "D.C."): before a number it ends no sentence.
_INITIALISM_END = regex.compile(r"(?:\b\p{Lu}\.){2,}$")
_MARKUP = regex.compile(r"\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)")
_INLINE_CODE = regex.compile(r"(`+[^`\n]+?`+)")
_LINK = regex.compile(r"!?\[([^\]\n]*)\]\(([^)\s]*)\)")
#: A link whose target is itself the fact (an address to write to or call): ``[TTS Talent](mailto:a@b.gov)``.
_CONTACT = regex.compile(r"^(?:mailto|tel):([^?#]+)", regex.I)
#: Inline HTML a page's site renders (``<details><summary>Full context</summary>``, ``<em>``, ``<br/>``) and HTML
#: comments: markup, never words of a unit. Only tag names HTML defines for text, so ``List<String>`` stays.
HTML_TAG = regex.compile(
    r"<!--.*?-->|</?(?:a|abbr|b|br|code|del|details|div|em|i|img|ins|kbd|li|mark|ol|p|s|small|span|strong|sub|"
    r"summary|sup|table|tbody|td|th|thead|tr|u|ul)\b[^>\n]*>", regex.I)
#: Blockquote markers at a line's start (CommonMark §5.1): a quoted paragraph, list or table is read as one.
_QUOTE_MARKERS = regex.compile(r"^(?:[ \t]*>)+[ \t]?")
_WORD = regex.compile(r"[\p{L}\p{N}]+")
#: A Markdown link reference definition (CommonMark §4.7): ``[label]: destination``.
_LINK_DEFINITION = regex.compile(r"^\s*\[[^\]\n]+\]:\s*\S+")
_CJK = regex.compile(r"[\p{Han}\p{Hangul}\p{Hiragana}\p{Katakana}]")


@dataclass(frozen=True)
class Unit:
    """One unit of a chunk's text.

    Attributes:
        start, end: character offsets into the chunk text (``text[start:end]`` is the raw Markdown).
        kind: ``"sentence"``, ``"item"``, ``"row"``, ``"code"`` or ``"heading"``.
        display: the unit as readable text: inline Markdown links become their label, a table row
            becomes ``header: cell · header: cell``; code keeps its fences.
        partial: True when the unit is the cut-off end of a sentence from the previous chunk (the chunker's
            overlap) or is cut at the chunk's end: never shown as the start of a quote or as an answer.
    """

    start: int
    end: int
    kind: str
    display: str
    partial: bool = False

    @property
    def answerable(self) -> bool:
        """Whether this unit can be (part of) a direct answer: a whole sentence, list item or table row
        with at least a few words (3 Latin words or 6 CJK characters; a list item 2 words or 4 CJK characters: an
        item is one member of what its list enumerates, "firewall rules" among a runbook's causes), not a Markdown
        link reference definition (``[cgeform]: https://…``: the page's plumbing, no fact)."""
        if self.kind not in ANSWER_KINDS or self.partial or _LINK_DEFINITION.match(self.display):
            return False
        words, cjk = (2, 4) if self.kind == ITEM else (3, 6)
        return len(_WORD.findall(self.display)) >= words or len(_CJK.findall(self.display)) >= cjk


def split_units(text: str) -> list[Unit]:
    """Units of a chunk's text in reading order; together they cover every non-blank line.

    Args:
        text: the chunk text (Markdown).

    Returns:
        Units with offsets into ``text``; never raises on any input.
    """
    return list(_units_of(text))


@lru_cache(maxsize=2048)
def _units_of(text: str) -> tuple[Unit, ...]:
    """`split_units`, remembered per text: retrieval and answering split the same few passages of every
    question several times (units are frozen, so sharing them is safe)."""
    units: list[Unit] = []
    lines = _lines_with_offsets(text)
    i = _continued_code(lines, text, units)
    while i < len(lines):
        start, line = lines[i]
        if not line.strip():
            i += 1
        elif _FENCE.match(line):
            i = _code_block(lines, i, text, units)
        elif _TABLE_LINE.match(line):
            i = _table(lines, i, units)
        elif _HEADING.match(line):
            units.append(Unit(start, start + len(line), HEADING, readable(line.lstrip("# "))))
            i += 1
        else:
            i = _paragraph(lines, i, units)
    return tuple(_mark_partial(units, text))


def sentences_of(text: str) -> list[str]:
    """The sentences of one unit's display text (a list item may hold several), in order, stripped. No end inside
    an open bracket ("(how long? 6 weeks? 8 weeks?)") nor after an initialism before a number ("5 U.S.C. 6323")."""
    pieces = [p.strip() for p in _SENTENCE_END.split(text) if p and p.strip()]
    out: list[str] = []
    for k, piece in enumerate(pieces):
        open_bracket = bool(out) and out[-1].count("(") > out[-1].count(")") and any(")" in p for p in pieces[k:])
        if open_bracket or (out and _INITIALISM_END.search(out[-1]) and piece[0].isdigit()):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def unit_hash(display: str) -> str:
    """Content hash of a unit's display text for the embedding cache (kept apart from chunk hashes)."""
    return hashlib.sha256(("unit\x00" + display).encode("utf-8")).hexdigest()


def embeddable_units(text: str) -> list[Unit]:
    """The units of ``text`` that are embedded at ingest: answerable ones, at most `MAX_UNITS_PER_CHUNK`."""
    return [u for u in split_units(text) if u.answerable][:MAX_UNITS_PER_CHUNK]


def embedding_inputs(text: str) -> list[tuple[Unit, str]]:
    """What is embedded at ingest for the units of ``text`` (`embeddable_units`), in order: each unit's display
    text, and for a list item whose list follows a sentence or heading ending with ":" in the same chunk, also
    the item after that lead-in (a unit's cosine is then the better of the two, `Retriever._unit_cosines`).
    An item may say little alone: "You are conducting research with 9 or fewer participants" answers "do we
    need PRA clearance?" only under "You do not need PRA clearance if:" (MiniLM cosine 0.27 alone, 0.77 with
    its lead-in). Alone, because a generic lead-in ("We follow these best practices …:") dilutes a long item
    that says everything itself."""
    units = split_units(text)
    out = []
    for i, unit in [(i, u) for i, u in enumerate(units) if u.answerable][:MAX_UNITS_PER_CHUNK]:
        out.append((unit, unit.display))
        # nested=False: the vectors of UNITS_VERSION 3 read an item after its list's sentence or heading only
        lead = list_lead_in(units, i, nested=False)
        if lead is not None:
            out.append((unit, f"{units[lead].display.rstrip()} {unit.display}"))
    return out


def leads_in(unit: Unit) -> bool:
    """Whether ``unit`` introduces what follows it: it ends with ":" ("Three to five weeks in advance for:")."""
    return unit.display.rstrip().endswith(":")


def list_lead_in(units: list[Unit], i: int, *, nested: bool = True) -> int | None:
    """The position of the unit that introduces list item ``units[i]``'s list: the sentence or heading ending
    with ":" right before the list, or (``nested``) the item of an outer list ending with ":" right before a
    nested one; None when ``units[i]`` is no list item or its list has no lead-in."""
    if units[i].kind != ITEM:
        return None
    j = i - 1
    while j >= 0 and units[j].kind == ITEM and not (nested and leads_in(units[j])):
        j -= 1
    if j >= 0 and units[j].kind in (SENTENCE, HEADING, ITEM) and leads_in(units[j]):
        return j
    return None


def section_path(heading_path: tuple[str, ...], text: str, units: list[Unit], position: int) -> tuple[str, ...]:
    """The heading path of the section that holds ``units[position]`` of a chunk (``text``, whose own path is
    ``heading_path``, root first). The chunker merges a short section into the next one and keeps the short
    one's path (`knowledge.chunking`), so a chunk may hold several sections: each heading inside it before the
    unit replaces the path's headings of its level and below ("Paid Time Off › Carry-over", then "## Parental
    leave" → "Paid Time Off › Parental leave"). The chunk's own headings end at the level of the heading line
    the text opens with (or take levels 1, 2, … when it opens without one)."""
    inside = [u for i, u in enumerate(units) if u.kind == HEADING and i <= position]
    if not inside:
        return heading_path
    if units[0].kind == HEADING and heading_path:  # the text opens with one of the chunk's headings: its level
        own = [k for k, h in enumerate(heading_path) if _plain(h) == _plain(units[0].display)]
        # a short section merged into its subsection keeps the subsection's longer path, whose deeper
        # headings come later in the text
        opened = heading_path[: own[-1] + 1] if own else heading_path
        top = _level(text, units[0])
        path = [(h, top - (len(opened) - k)) for k, h in enumerate(opened, 1)]
        inside = inside[1:]
    else:
        path = [(h, k) for k, h in enumerate(heading_path, 1)]
    for unit in inside:
        level = _level(text, unit)
        while path and path[-1][1] >= level:
            path.pop()
        path.append((unit.display, level))
    return tuple(h for h, _ in path)


def _plain(heading: str) -> str:
    """A heading's words, for telling whether a heading line is one of a chunk's path: "## Reporting
    [Phishing](…)" and "Reporting Phishing" match."""
    return " ".join(_WORD.findall(_LINK.sub(r"\1", heading))).lower()


def _level(text: str, unit: Unit) -> int:
    """The level of a heading unit: how many "#" open its line."""
    line = text[unit.start:unit.end].lstrip()
    return len(line) - len(line.lstrip("#"))


def unquoted(text: str) -> str:
    """``text`` without blockquote markers at its lines' starts (a unit's raw Markdown inside a quote)."""
    return "\n".join(_QUOTE_MARKERS.sub("", line) for line in text.split("\n"))


def _lines_with_offsets(text: str) -> list[tuple[int, str]]:
    """Each line of ``text`` with its offset; blockquote markers become spaces (offsets stay valid), so a quoted
    paragraph splits into sentences and a quoted list into items, as the page renders them."""
    out, offset = [], 0
    for line in text.split("\n"):
        out.append((offset, _QUOTE_MARKERS.sub(lambda m: " " * len(m.group()), line)))
        offset += len(line) + 1
    return out


def _continued_code(lines, text: str, units: list[Unit]) -> int:
    """Where reading starts: past the end of a code block the chunk opens inside of (the chunker's "…" overlap
    continues a long block), kept as one partial code unit; else 0. Such a chunk holds an odd number of fence
    lines, or a bare first one followed by one naming a language: a closing fence, which read as an opening one
    would swallow the prose after it."""
    fences = [k for k, (_, line) in enumerate(lines) if _FENCE.match(line)]
    if not text.startswith("…") or not fences or lines[fences[0]][1].strip() not in ("```", "~~~"):
        return 0
    # the first fence closes when the fences are odd in number, or when the next one names a language (only an
    # opening fence does): a chunk that also ends inside another block holds an even number
    if len(fences) % 2 == 0 and not (len(fences) > 1 and lines[fences[1]][1].strip().lstrip("`~").strip()):
        return 0
    end = lines[fences[0]][0] + len(lines[fences[0]][1])
    units.append(Unit(0, end, CODE, text[:end], partial=True))
    return fences[0] + 1


def _code_block(lines, i: int, text: str, units: list[Unit]) -> int:
    start, first = lines[i]
    fence = _FENCE.match(first).group(1)
    j = i + 1
    while j < len(lines) and not lines[j][1].strip().startswith(fence):
        j += 1
    last = min(j, len(lines) - 1)
    end = lines[last][0] + len(lines[last][1])
    units.append(Unit(start, end, CODE, text[start:end]))
    return j + 1


def _table(lines, i: int, units: list[Unit]) -> int:
    header: list[str] | None = None
    j = i
    while j < len(lines) and _TABLE_LINE.match(lines[j][1]):
        start, line = lines[j]
        cells = [readable(c) for c in line.strip().strip("|").split("|")]
        following = lines[j + 1][1] if j + 1 < len(lines) else ""
        if _TABLE_RULE.match(line):
            pass
        elif header is None and _TABLE_RULE.match(following):
            header = cells
        else:
            units.append(Unit(start, start + len(line), ROW, _row_text(header, cells)))
        j += 1
    return j


def _row_text(header: list[str] | None, cells: list[str]) -> str:
    """``Plan: Team · Price: $12`` (with a header of the same width), else the cells joined by " · "."""
    if header and len(header) == len(cells):
        return " · ".join(f"{h}: {c}" if h else c for h, c in zip(header, cells) if c)
    return " · ".join(c for c in cells if c)


def _paragraph(lines, i: int, units: list[Unit]) -> int:
    """A paragraph or list item (wrapped lines joined) split into sentences; returns the next line index."""
    start, first = lines[i]
    kind = ITEM if _ITEM.match(first) else SENTENCE
    j = i + 1
    while j < len(lines):
        line = lines[j][1]
        if (not line.strip() or _ITEM.match(line) or _FENCE.match(line) or _TABLE_LINE.match(line)
                or _HEADING.match(line)):
            break
        j += 1
    end = lines[j - 1][0] + len(lines[j - 1][1])
    block = _text_between(lines, i, j)
    if kind == ITEM:
        units.append(Unit(start, end, ITEM, readable(_ITEM.sub("", block, count=1))))
        return j
    position = 0
    for piece in _SENTENCE_END.split(block):
        if piece is None:
            continue
        found = block.find(piece, position) if piece else -1
        if not piece.strip() or found < 0:
            continue
        position = found + len(piece)
        units.append(Unit(start + found, start + position, SENTENCE, readable(piece)))
    return j


def _text_between(lines, i: int, j: int) -> str:
    """Lines i..j-1 with their newlines, exactly as in the chunk (offsets stay valid)."""
    return "\n".join(line for _, line in lines[i:j])


def readable(text: str) -> str:
    """Readable text: link labels instead of Markdown links (with the address of a mail or phone link), no inline
    HTML tags or comments and no emphasis markers outside inline code (``__fields__`` and ``*args`` are names,
    not emphasis), one space between words."""
    text = _LINK.sub(_link_label, text)
    text = "".join(piece if piece.startswith("`") else _MARKUP.sub("", HTML_TAG.sub(" ", piece))
                   for piece in _INLINE_CODE.split(text))
    return " ".join(text.split())


def _link_label(link: regex.Match) -> str:
    """A Markdown link as read: its label, and a mail address or phone number behind it when the label does not
    say it ("email the TTS Talent team (tts-jointts@gsa.gov)"): the address is what the reader needs."""
    label, contact = link.group(1), _CONTACT.match(link.group(2))
    if contact and contact.group(1).lower() not in label.lower():
        return f"{label} ({contact.group(1)})"
    return label


def _mark_partial(units: list[Unit], text: str) -> list[Unit]:
    """Mark the chunk's first unit partial when it continues a sentence (the chunker's overlap starts
    mid-sentence: a lowercase letter or punctuation first), and the last when it stops without an end mark."""
    if not units:
        return units
    first = units[0]
    if first.kind == SENTENCE and first.display and (first.display[0].islower() or first.display[0] in ",;:)]}'`…-"):
        units[0] = Unit(first.start, first.end, first.kind, first.display, partial=True)
    last = units[-1]
    if (last.kind == SENTENCE and len(units) > 1 and not regex.search(r"[.!?。！？:)\"'`]\s*$", last.display)
            and len(_WORD.findall(last.display)) < 6):
        units[-1] = Unit(last.start, last.end, last.kind, last.display, partial=True)
    return units
