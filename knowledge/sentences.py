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
import textwrap
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

import regex

from knowledge import markdown_tree as tree

#: Bump when `split_units` changes what it returns; a new value re-derives unit vectors on the next sync
#: (7: a continued chunk whose first, bare fence is followed by a language-tagged one opens inside code;
#: 8: no sentence end inside an open bracket or after an initialism before a number; 9: read from the
#: Markdown tree, `knowledge.markdown_tree`: tabs, admonitions and HTML blocks are structure, not text;
#: 10: a lead-in to a short block of commands is also embedded with the commands; 11: a quoted GitHub alert's
#: marker reads as its word, "[!WARNING]" → "Warning:"; 12: an aside's example with two blank lines in it is
#: one code block, and no chunk opens inside code, `knowledge.chunking`; 13: no space after a Japanese full stop
#: where the page wraps a line, `knowledge.markdown_tree.squash_spaces`; a heading over a section of commands only
#: is their lead-in and embedded with them; 14: a paragraph opening with a bold question on its own line is a FAQ
#: entry, the question a label over its answer, `knowledge.markdown_tree._faq_question`; 15: an HTML heading
#: opening an HTML block is a heading and the rest of the block a paragraph, and every HTML element's tags are
#: markup, `knowledge.markdown_tree.HTML_NAMES`; 16: a paragraph that is one line in bold is a label,
#: `knowledge.markdown_tree._is_bold_label`; 17: a styling element's tags part no words, "your <em>first</em> day."
#: reads "your first day.", `knowledge.markdown_tree._tag_gap`; 18: a bold line over text on the next lines is a
#: label over that text, `knowledge.markdown_tree._faq_question`; 19: a bare "Yes." or "No." leads the sentence after
#: it, `sentences_of`; 20: a bold paragraph ending on a colon, "**Note:**", is no label, as over text; 21: a
#: collapsible's caption that asks a question labels what it folds, `knowledge.markdown_tree._SUMMARY_QUESTION`).
UNITS_VERSION = 21

SENTENCE = "sentence"
ITEM = "item"
ROW = "row"
CODE = "code"
HEADING = "heading"
#: Kinds that can be a direct answer (and are embedded at ingest).
ANSWER_KINDS = (SENTENCE, ITEM, ROW)
#: Most units per chunk embedded at ingest: a 200-token chunk rarely has more; bounds ingest cost.
MAX_UNITS_PER_CHUNK = 24

#: A table line of a chunk that the chunker's cut left without its header and rule (a paragraph to markdown-it).
_TABLE_LINE = regex.compile(r"^\s*\|.*\|\s*$")
#: A chunk whose overlap ("…") starts on a tab's or an admonition's opening line (`knowledge.markdown_tree`).
_CONTINUED_OPENING = regex.compile(r'^…(?:===[!+]?[ \t]+"|(?:!!!|\?\?\?\+?)[ \t]+\S)')
#: A sentence ends at . ! ? (or the CJK full stops) followed by space and a likely sentence start; CJK
#: full stops need no space. Abbreviations ("e.g.", "i.e.", "etc.", "vs.") and decimals are no ends.
_SENTENCE_END = regex.compile(
    r"(?<![\s(](?:e\.g|i\.e|etc|vs|cf|approx|incl|Mr|Ms|Dr|No|St|Jr|Inc|Ltd|U\.S)\.)(?<=[.!?])\s+(?=[\p{Lu}\d\"'(\[*_`\p{Han}\p{Hangul}\p{Hiragana}\p{Katakana}])"
    r"|(?<=[。！？])\s*"
)
#: A reply word alone as a sentence ("No.", "Yes!", "はい。", "아니요."): it leads the sentence after it.
_BARE_REPLY = regex.compile(r"(?i)(?:yes|no|nope|yep|correct|はい|いいえ|네|예|아니요|아니오)[.!。！]")
#: A sentence piece ending in a dotted initialism ("U.S.C.", "D.C."): before a number it ends no sentence.
_INITIALISM_END = regex.compile(r"(?:\b\p{Lu}\.){2,}$")
#: Inline HTML a page's site renders (``<details><summary>Full context</summary>``, ``<em>``, ``<br/>``) and HTML
#: comments, in raw Markdown (the quote renderer's `knowledge.answering.tidy` reads raw text; units read the
#: tree). Only `markdown_tree.HTML_NAMES`, so ``List<String>`` stays; a tag may span lines (``<button`` and its
#: attributes one per line).
HTML_TAG = regex.compile(
    r"<!--.*?-->|</?(?:" + "|".join(sorted(tree.HTML_NAMES, key=len, reverse=True)) + r")\b[^<>]*>",
    regex.I | regex.S)
#: Blockquote markers at a line's start (CommonMark §5.1): a quoted paragraph, list or table is read as one.
_QUOTE_MARKERS = regex.compile(r"^(?:[ \t]*>)+[ \t]?")
_WORD = regex.compile(r"[\p{L}\p{N}]+")
#: Longest block of commands (characters, fences included) that belongs to the sentence leading to it: shown
#: with it in a direct answer and embedded with it; a longer block is an example to read, not the answer.
COMMAND_BLOCK_CHARS = 240
_INTRODUCES_CODE = regex.compile(
    r":\s*$|\b(run|use|type|execute|enter) (this|these|the following)\b|\bas follows\b|\bbelow\b", regex.I)
#: A fenced block of commands or settings (no language, a shell's, a query to run: PromQL, SQL, or a config
#: file's: "the Flake8 configuration can be adapted:" + ini): an example program is not an instruction.
_COMMAND_FENCE = regex.compile(r"^\s*(?:```|~~~)\s*(?:bash|sh|shell|console|zsh|text|promql|sql|ini|toml|ya?ml|cfg|conf|properties|env|dotenv|)\s*\n", regex.I)
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
        leads_commands: for a heading, True when its section is only a short block of commands ("## Restarting
            the API" over a ``kubectl … rollout restart`` block): the heading is then that block's lead-in, and
            with it an answer (`answerable`, `commands_after`).
    """

    start: int
    end: int
    kind: str
    display: str
    partial: bool = False
    leads_commands: bool = False

    @cached_property  # read for every unit at every step of a reply: ~25,000 times in 180 replies
    def answerable(self) -> bool:
        """Whether this unit can be (part of) a direct answer: a whole sentence, list item or table row
        with at least a few words (3 Latin words or 6 CJK characters; a list item 2 words or 4 CJK characters: an
        item is one member of what its list enumerates, "firewall rules" among a runbook's causes). A link
        reference definition (``[cgeform]: https://…``) is no unit at all: the tree reads it into links."""
        if self.kind == HEADING and self.leads_commands:  # a newcomer's "How do I restart the API?"
            return True
        if self.kind not in ANSWER_KINDS or self.partial:
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
    question several times (units are frozen, so sharing them is safe). Reads the blocks of the Markdown tree
    (`knowledge.markdown_tree`) and finds each unit's characters within its block's lines."""
    units: list[Unit] = []
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    # the overlap's "…" before a tab or admonition: read the block
    parsed = tree.parse(" " + text[1:] if _CONTINUED_OPENING.match(text) else text)
    for block in parsed.blocks:
        start, end = offsets[block.first], offsets[block.last - 1] + len(lines[block.last - 1])
        if block.kind == tree.CODE:
            units.append(Unit(start, end, CODE, text[start:end]))
        elif block.kind == tree.TITLE:  # an aside's caption: no unit, and no heading that would end a quote
            continue
        elif block.kind in (tree.HEADING, tree.LABEL):
            units.append(Unit(start, end, HEADING, block.text))
        elif block.kind == tree.ROW:
            units.append(Unit(start, end, ROW, _row_text(block.header, block.cells)))
        elif block.kind == tree.ITEM:
            units.append(Unit(start, end, ITEM, block.text))
        elif any(_TABLE_LINE.match(line) for line in lines[block.first:block.last]):
            units += _cut_table(lines[block.first:block.last], start, parsed.env)
        else:
            units += _sentences(text[start:end], start, block.quoted, parsed.env)
    return tuple(_headings_over_commands(_mark_partial([u for u in units if u.display], text)))


def sentences_of(text: str) -> list[str]:
    """The sentences of one unit's display text (a list item may hold several), in order, stripped. No end inside
    an open bracket ("(how long? 6 weeks? 8 weeks?)"), after an initialism before a number ("5 U.S.C. 6323"), nor
    after a bare "Yes." or "No.": the reply word leads the sentence after it ("No. Ask reception in Munich for a
    day pass." — alone, the "No." of a newcomer's FAQ was too short to show and the answer lost it)."""
    pieces = [p.strip() for p in _SENTENCE_END.split(text) if p and p.strip()]
    out: list[str] = []
    for k, piece in enumerate(pieces):
        open_bracket = bool(out) and out[-1].count("(") > out[-1].count(")") and any(")" in p for p in pieces[k:])
        if open_bracket or (out and _INITIALISM_END.search(out[-1]) and piece[0].isdigit()) or \
                (out and _BARE_REPLY.fullmatch(out[-1])):
            out[-1] = f"{out[-1]}{'' if out[-1].endswith(tree.CJK_STOPS) else ' '}{piece}"
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
        commands = commands_after(units, i)
        if commands is not None:  # "Run these from a bastion host:" says what only its commands say
            out.append((unit, f"{unit.display.rstrip()} {commands}"))
    return out


def _headings_over_commands(units: list[Unit]) -> list[Unit]:
    """``units`` with each heading whose section is only a short block of commands marked ``leads_commands``: such a
    section has no sentence to find it by or to show, so its commands were never an answer."""
    out = list(units)
    for i, unit in enumerate(units[:-1]):
        after = units[i + 2] if i + 2 < len(units) else None
        if unit.kind == HEADING and _command_block(units[i + 1]) and (after is None or after.kind == HEADING):
            out[i] = replace(unit, leads_commands=True)
    return out


def _command_block(unit: Unit) -> bool:
    """Whether ``unit`` is a short fenced block of commands or settings (`COMMAND_BLOCK_CHARS`, `_COMMAND_FENCE`)."""
    return unit.kind == CODE and len(unit.display) <= COMMAND_BLOCK_CHARS and bool(_COMMAND_FENCE.match(unit.display))


def commands_after(units: list[Unit], i: int) -> str | None:
    """The body (no fences) of the short block of commands or settings that ``units[i]`` introduces ("Run these
    commands from a bastion host:" + a shell block, at most `COMMAND_BLOCK_CHARS`), else None. Such a unit is
    embedded (`embedding_inputs`), read (`knowledge.answering.unit_features`) and shown with its block: the
    command is the answer, the sentence only leads to it."""
    after = units[i + 1] if i + 1 < len(units) else None
    if (after is not None and _command_block(after)
            and (_INTRODUCES_CODE.search(units[i].display) or units[i].leads_commands)):
        # dedented: a tab's or an aside's block is indented four spaces in the page; a block the template tags it
        # held left empty ("{% image … %}" in the handbook's own shortcode examples) leads to nothing
        return textwrap.dedent(_COMMAND_FENCE.sub("", after.display, count=1)).strip().rstrip("`~ \n") or None
    return None


def leads_in(unit: Unit) -> bool:
    """Whether ``unit`` introduces what follows it: it ends with ":" ("Three to five weeks in advance for:")."""
    return unit.display.rstrip().endswith(":")


def list_lead_in(units: list[Unit], i: int, *, nested: bool = True) -> int | None:
    """The position of the unit that introduces list item ``units[i]``'s list: the sentence or heading ending
    with ":" right before the list, or (``nested``) the item of an outer list ending with ":" right before a
    nested one; None when ``units[i]`` is no list item or its list has no lead-in, or only the cut end of one (a
    chunk's overlap, "…has procured:", is never shown)."""
    if units[i].kind != ITEM:
        return None
    j = i - 1
    while j >= 0 and units[j].kind == ITEM and not (nested and leads_in(units[j])):
        j -= 1
    if j >= 0 and units[j].kind in (SENTENCE, HEADING, ITEM) and leads_in(units[j]) and not units[j].partial:
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
    return " ".join(_WORD.findall(readable(heading))).lower()


def _level(text: str, unit: Unit) -> int:
    """The level of a heading unit: how many "#" open its line (a setext heading's by its underline); a tab's
    label is deeper than any (`markdown_tree.LABEL_LEVEL`)."""
    return tree.heading_level(text[unit.start:unit.end].lstrip())


def unquoted(text: str) -> str:
    """``text`` without blockquote markers at its lines' starts (a unit's raw Markdown inside a quote)."""
    return "\n".join(_QUOTE_MARKERS.sub("", line) for line in text.split("\n"))


def _sentences(raw: str, start: int, quoted: bool, env: dict) -> list[Unit]:
    """A paragraph's sentences (``raw`` is its lines as in the chunk, starting at ``start``); a quoted paragraph's
    ``>`` markers read as spaces, so offsets stay valid. A sentence end inside a link's label, an emphasis or a
    code span is none (``**Note.** Then`` stays one piece until its markers close), nor one after a bare "No."
    (`sentences_of`)."""
    if quoted:
        raw = "\n".join(_QUOTE_MARKERS.sub(lambda m: " " * len(m.group()), line) for line in raw.split("\n"))
    pieces: list[str] = []
    for piece in _SENTENCE_END.split(raw):
        if piece is None:
            continue
        if pieces and (_open_markup(pieces[-1]) or _BARE_REPLY.fullmatch(pieces[-1].strip(" *_"))):
            pieces[-1] = raw[raw.find(pieces[-1]):raw.find(piece, raw.find(pieces[-1]) + len(pieces[-1])) + len(piece)]
        else:
            pieces.append(piece)
    out, position = [], 0
    for piece in pieces:
        found = raw.find(piece, position) if piece else -1
        if not piece.strip() or found < 0:
            continue
        position = found + len(piece)
        shown = tree.alert_as_label(piece) if quoted else piece  # "> [!WARNING]" reads "Warning:"
        out.append(Unit(start + found, start + position, SENTENCE, tree.inline_text(shown, env)))
    return out


def _open_markup(piece: str) -> bool:
    """Whether ``piece`` of raw Markdown leaves a code span, a link label or strong emphasis open."""
    if piece.count("`") % 2:
        return True
    prose = regex.sub(r"`[^`]*`", "", piece)
    return prose.count("[") > prose.count("]") or prose.count("**") % 2 == 1


def _cut_table(lines: list[str], start: int, env: dict) -> list[Unit]:
    """A piece of a table the chunker cut out of its page (a long table is split at words, so its header, its
    rule or a row's start may be in the chunk before): markdown-it reads it as a paragraph. Each table line is a
    row (its cells joined, as a table without a header reads); the rest of the rule is dropped; any other line
    is read as sentences."""
    out = []
    for line in lines:
        if not line.strip(" |:-…"):  # the table's rule
            pass
        elif _TABLE_LINE.match(line):
            cells = [tree.inline_text(c, env) for c in line.strip().strip("|").split("|")]
            out.append(Unit(start, start + len(line), ROW, _row_text(None, cells)))
        else:
            out += _sentences(line, start, False, env)
        start += len(line) + 1
    return out


def _row_text(header, cells) -> str:
    """``Plan: Team · Price: $12`` (with a header of the same width), else the cells joined by " · "."""
    if header and len(header) == len(cells):
        return " · ".join(f"{h}: {c}" if h else c for h, c in zip(header, cells) if c)
    return " · ".join(c for c in cells if c)


def readable(text: str) -> str:
    """Readable text of inline Markdown (`markdown_tree.inline_text`): link labels instead of links (with the
    address of a mail or phone link), no inline HTML tags, images or emphasis markers, code spans as written
    (``__fields__`` and ``*args`` inside them are names), one space between words."""
    return tree.inline_text(tree.alert_as_label(text))


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
