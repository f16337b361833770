"""Heading-aware chunking with a token budget and overlap.

A Markdown body is cut at its headings (found with markdown-it-py, so a ``#`` inside a code block is not
a heading). Each section keeps its heading path for the citation. A section over the budget is split
between paragraphs, and a paragraph over the budget between words, with up to ``overlap_tokens`` repeated
at the start of the next piece (fewer when the next paragraph leaves less room, so no chunk exceeds the
budget). A code block is one paragraph; one over the budget is cut between lines, each piece closing its
fence and the next opening it again, so every chunk reads as the page does (issue 23: a piece that opened
inside an example was read as prose and quoted flattened). Sections under ``min_tokens`` are merged into the following one so a bare heading never becomes
a chunk of its own.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import regex
from markdown_it import MarkdownIt

from config import ChunkingConfig
from knowledge.markdown_tree import FENCE, closing_fence, fence_after, inline_text, parse_blocks

# One token per CJK character, per word otherwise: close enough to MiniLM word pieces to keep a chunk
# inside the model's window without loading its tokenizer here.
_TOKEN = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}]|[\p{Hangul}]+|\w+|[^\w\s]")
_MD_LINK = regex.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_HTML_TAG = regex.compile(r"</?[a-zA-Z][^>]*>")
_MARKDOWN = MarkdownIt("commonmark")
_CJK = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}]")
#: How much larger than an equal share a piece of a long code block may grow: lines do not divide evenly, and
#: an exact share would leave a remainder of a line or two as one more piece.
CODE_PIECE_SLACK = 1.2
#: A table's separator row ("|---|:---:|"), under its header (GFM tables).
_TABLE_RULE = regex.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
#: An ATX heading line (CommonMark §4.2).
_HEADING = regex.compile(r"^ {0,3}#{1,6}(?:\s|$)")
#: A line that starts a list item (CommonMark §5.2: a bullet, or up to nine digits and "." or ")").
_LIST_ITEM = regex.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s")
#: What opens a piece that continues the one before (`knowledge.continuation` reads it).
CONTINUED = "…"


#: Bumped whenever the chunking code changes its output, or what parsing derives per document (3: language
#: detection weighs Latin letters; 4: a sentence holding a ``{{ variable }}`` is dropped whole; 5: stubs are
#: skipped, ``redirect_from`` and ``outdated`` read from front matter; 6: a ``{{ variable }}`` sentence is read
#: across wrapped lines; 7: not one in inline code; 8: a small section merged into its subsection takes the
#: subsection's heading path; 9: an over-long paragraph is cut at whitespace, never inside a word or a link, and
#: its pieces keep their own spacing; 10: a title's HTML entities are unescaped; 11: a page without a title in
#: its front matter is titled by its H1, else its file name, not by its first heading of any level; 12: a version folder
#: anywhere in a path (``docs/v2/pricing.md``) makes a version family, `knowledge.versions`; 13: PyMdown block fences
#: ``/// type | title`` … ``///`` are dropped, their content kept; 14: a heading's name is read as the page's
#: Markdown tree reads it, `knowledge.markdown_tree`: no ``{#anchor}`` attribute list, emphasis marker or link
#: syntax in a section's name; 15: a code block is one paragraph, cut between lines with its fence closed and
#: opened again, and an overlap never starts inside one; 16: a piece never ends on a lead-in whose list or example
#: opens the next one, `_lead_in`; 17: a title's HTML tags are dropped; 18: what Liquid's ``{% raw %}`` holds is
#: kept as written, `knowledge.parsing.strip_template_tags`; 19: a table over the budget is cut between rows, each
#: piece with the header, `_split_table`); part of every document's chunker
#: signature, so a new version re-chunks old documents on the next sync (unchanged chunk texts come from
#: the embedding cache).
CHUNKER_VERSION = 19


@dataclass(frozen=True)
class Chunk:
    """A piece of a document.

    Attributes:
        index: position in the document, from 0.
        heading_path: headings from the root to this chunk, e.g. ``("Leave", "Annual leave")``.
        text: the original Markdown of the chunk (quoted in answers).
        content_hash: sha256 hex of `embedding_text` (the embedding cache key).
    """

    index: int
    heading_path: tuple[str, ...]
    text: str
    content_hash: str


def count_tokens(text: str) -> int:
    """Approximate token count of the readable text (link targets and HTML tags left out), >= 0."""
    return len(_TOKEN.findall(plain_text(text)))


def plain_text(markdown: str) -> str:
    """Markdown with links reduced to their text and HTML tags removed: what a reader (and the model) sees."""
    return _HTML_TAG.sub(" ", _MD_LINK.sub(r"\1", markdown))


def embedding_text(title: str, heading_path: tuple[str, ...], text: str) -> str:
    """The text that is embedded and BM25-indexed: title and heading path first, then the chunk.

    Prefixing the headings gives a chunk the context a reader gets from the page ("contextual chunk headers").
    """
    header = " > ".join([title, *[h for h in heading_path if h != title]])
    return f"{header}\n{plain_text(text)}"


def chunk_document(title: str, body: str, cfg: ChunkingConfig) -> list[Chunk]:
    """Split a Markdown body into chunks.

    Args:
        title: document title (part of every chunk's embedding text).
        body: Markdown without front matter.
        cfg: ``max_tokens`` per chunk, ``overlap_tokens`` between split pieces, ``min_tokens`` to merge.

    Returns:
        Chunks in document order (at least one for a non-empty body).
    """
    pieces: list[tuple[tuple[str, ...], str]] = []
    for path, text in _merge_small(_sections(body), cfg.min_tokens):
        pieces.extend((path, part) for part in _split(text, cfg.max_tokens, cfg.overlap_tokens))
    chunks = []
    for i, (path, text) in enumerate(pieces):
        digest = hashlib.sha256(embedding_text(title, path, text).encode("utf-8")).hexdigest()
        chunks.append(Chunk(i, path, text, digest))
    return chunks


def _sections(body: str) -> list[tuple[tuple[str, ...], str]]:
    """Cut ``body`` at headings: ``(heading_path, text)`` per section, text including its heading line."""
    lines = body.splitlines()
    tokens = _MARKDOWN.parse(body)
    starts: list[tuple[int, int, str]] = []  # (line, level, heading text)
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map:
            # named as the tree reads it: a citation showed "Keyword arguments removed {#removed-kwargs}"
            starts.append((tok.map[0], int(tok.tag[1]), _heading_name(tokens[i + 1].content)))
    sections, stack = [], []
    bounds = [0] + [s[0] for s in starts] + [len(lines)]
    heads = [None] + starts
    for k, head in enumerate(heads):
        if head is not None:
            _, level, name = head
            stack = [(lvl, n) for lvl, n in stack if lvl < level] + [(level, name)]
        text = "\n".join(lines[bounds[k]:bounds[k + 1]]).strip()
        if text:
            sections.append((tuple(n for _, n in stack), text))
    return sections


def _heading_name(raw: str) -> str:
    """A heading's inline Markdown as a reader sees it (`knowledge.markdown_tree.inline_text`), without a trailing
    attribute list (``Set up {#set-up}``, ``{: .note}``): the tree's parser reads that only at a block's end."""
    blocks = parse_blocks("# " + raw.strip())
    return (blocks[0].text if blocks and blocks[0].kind == "heading" else inline_text(raw)).strip()


def _merge_small(sections: list, min_tokens: int) -> list:
    """Prepend sections under ``min_tokens`` (e.g. a bare heading) to the next section. The merged section
    keeps the small section's heading path, unless the next section is its subsection: then the longer path
    (which holds both) names it, so "## Migration guide" + a line of intro before "### Changes to
    `pydantic.BaseModel`" does not leave the method-rename table under "Migration guide" alone."""
    merged, carry, carry_path = [], "", None
    for path, text in sections:
        text = f"{carry}\n\n{text}" if carry else text
        if carry_path is not None and path[:len(carry_path)] != carry_path:
            path = carry_path
        if count_tokens(text) < min_tokens:
            carry, carry_path = text, path
            continue
        merged.append((path, text))
        carry, carry_path = "", None
    if carry:
        if merged:
            last_path, last_text = merged[-1]
            merged[-1] = (last_path, f"{last_text}\n\n{carry}")
        else:
            merged.append((carry_path, carry))
    return merged


def _split(text: str, max_tokens: int, overlap: int) -> list[str]:
    """Split a section into pieces of <= max_tokens, preferring paragraph boundaries; a code block is one
    paragraph, and one over the budget is cut between lines with its fence closed and opened again
    (`_split_code`), so every piece is Markdown a parser reads as the page does."""
    if count_tokens(text) <= max_tokens:
        return [text]
    units: list[tuple[str, str]] = []  # (what joins it to the unit before, the unit)
    # Word-cut pieces leave room for the overlap (+1 for its "…" marker) that the next piece starts with,
    # but keep at least half the budget so a large overlap cannot shred a paragraph into single words.
    word_budget = max(1, max_tokens // 2, max_tokens - overlap - 1) if overlap else max_tokens
    for sep, para, code in _paragraphs(text):
        if count_tokens(para) <= max_tokens:
            units.append((sep, para))
            continue
        if code:
            cut = _split_code(para, word_budget)
        else:
            cut = _split_table(para, word_budget) or _split_words(para, word_budget)
        units.extend([(sep, cut[0][1]), *cut[1:]])
    pieces, current = [], []
    for sep, unit in units:
        if current and count_tokens(_joined(current + [(sep, unit)])) > max_tokens:
            held = _lead_in(current, count_tokens(unit), max_tokens)
            pieces.append(_joined(current))
            # the overlap shrinks so that overlap + "…" + lead-in + unit stays within the budget
            room = min(overlap, max_tokens - count_tokens(_joined([*held, (sep, unit)])) - 1)
            tail = _tail(pieces[-1], room) if room > 0 else ""
            current = [("", tail)] if tail else []
            if held and tail == CONTINUED:
                held[0] = ("\n\n", held[0][1])
            current += held
            sep = "\n\n" if tail == CONTINUED and not held else sep  # the marker alone is a paragraph of its own
        current.append((sep, unit))
    if current:
        pieces.append(_joined(current))
    return [p.strip() for p in pieces if p.strip()]


def _lead_in(current: list[tuple[str, str]], next_tokens: int, max_tokens: int) -> list[tuple[str, str]]:
    """The lead-in that ends ``current`` (a piece about to close: ``(separator, unit)`` pairs), taken off it to
    open the next piece with what it introduces (a unit of ``next_tokens``): a paragraph whose last line ends
    with a colon ("To apply, send:"), or the last item of a list that does ("5. Enter the following in Section
    3:"). [] when the piece would keep nothing of its own, or the lead-in and the next unit would not fit
    ``max_tokens`` together. 428 of the 6,918 chunks of ../shared/corpus ended on such a line, the list it opens
    in the next chunk: the reader saw the lead-in apart from its items."""
    sep, last = current[-1]
    if not last.rstrip().endswith(":") or FENCE.match(last.rstrip().rsplit("\n", 1)[-1]):
        return []
    lines = last.split("\n")
    start = next((k for k in range(len(lines) - 1, -1, -1) if _LIST_ITEM.match(lines[k])), 0)
    lead = "\n".join(lines[start:])
    if count_tokens(lead) + next_tokens + 1 > max_tokens:
        return []
    if start > 0:  # the list's last item: the items before it stay
        current[-1] = (sep, "\n".join(lines[:start]))
        return [("\n", lead)]
    if not any(_own_text(unit) for _, unit in current[:-1]):  # the piece would be its overlap or headings alone
        return []
    current.pop()
    return [(sep, lead)]


def _own_text(unit: str) -> bool:
    """Whether a unit of a piece holds text of its own: not the overlap carried from the piece before, nor only
    headings (a small section merged into the next keeps its heading line)."""
    return not unit.startswith(CONTINUED) and any(line.strip() and not _HEADING.match(line)
                                                  for line in unit.split("\n"))


def _paragraphs(text: str) -> list[tuple[str, str, bool]]:
    """``(separator before it, paragraph, is code)`` of ``text`` in order: runs of lines between blank lines, a
    code block being a paragraph of its own ("\n" before it and after it when no blank line parts it from its
    text) whose blank lines do not end it: an indented block (markdown-it's reading) or a fenced one at any
    indentation (an aside's, a tab's or a list item's example: ``???+ example`` right above a fence makes
    markdown-it read the fence as the aside's paragraph, as MkDocs does not)."""
    lines = text.split("\n")
    code = {k for tok in _MARKDOWN.parse(text) if tok.type == "code_block" and tok.map for k in range(*tok.map)}
    opened = None
    for k, line in enumerate(lines):
        after = fence_after(opened, line)
        if opened or after:
            code.add(k)
        opened = after
    out: list[tuple[str, str, bool]] = []
    current: list[str] = []
    sep, in_code = "\n\n", False  # what parts the current run from the one before; whether it is code
    for k, line in enumerate(lines):
        inside = k in code
        if not line.strip() and not inside:  # a blank line ends a run
            if current:
                out.append((sep, "\n".join(current), in_code))
            current, sep = [], "\n\n"
            continue
        if current and inside != in_code:  # code right after its text, or text right after code
            out.append((sep, "\n".join(current), in_code))
            current, sep = [], "\n"
        current.append(line)
        in_code = inside
    if current:
        out.append((sep, "\n".join(current), in_code))
    return out


def _split_code(block: str, max_tokens: int) -> list[tuple[str, str]]:
    """Cut an over-long paragraph holding code between lines, each piece within ``max_tokens``: a piece that ends
    inside a fenced block gets its closing fence and the next opens it again (with its language), so no piece
    starts or ends inside code. A line over the budget alone is cut between words (`_split_words`).

    Returns:
        ``(separator, piece)`` as `_split_words` does (a blank line between pieces of one block: an indented
        fence after the next piece's "…" would otherwise continue its paragraph)."""
    fences = [line for line in block.split("\n") if FENCE.match(line)]
    if any(count_tokens(f"{line}\n{closing_fence(line)}") > max_tokens
           or count_tokens(f"{_language_fence(line)}\n{closing_fence(line)}") > max_tokens // 2 for line in fences):
        return _split_words(block, max_tokens)  # a budget a fence's own lines nearly fill: no room to repair
    # pieces of about equal size: filling each to the budget left the last line or two of an example alone
    # (a quote showed "#> id=1 children=[…]" under its lead-in, the code that printed it in another chunk)
    pieces_needed = -(-count_tokens(block) // max_tokens)
    max_tokens = min(max_tokens, int(count_tokens(block) / pieces_needed * CODE_PIECE_SLACK) + 1)
    pieces: list[str] = []
    current: list[str] = []
    opened: str | None = None  # the opening fence line of the block the last line of ``current`` is in

    def closed(lines: list[str], state: str | None) -> list[str]:
        return lines + [closing_fence(state)] if state else lines

    def fits(lines: list[str], state: str | None) -> bool:
        return count_tokens("\n".join(closed(lines, state))) <= max_tokens

    def reopened() -> list[str]:
        return [_language_fence(opened)] if opened else []

    for line in block.split("\n"):
        if current and not fits(current + [line], fence_after(opened, line)):
            pieces.append("\n".join(closed(current, opened)))
            current = reopened()
        if not fits(current + [line], opened) and not FENCE.match(line) and line.strip():  # one line over the budget
            room = max(1, max_tokens - count_tokens("\n".join(closed(current, opened))))
            *whole, line = [words for _, words in _split_words(line, room)]
            for words in whole:
                pieces.append("\n".join(closed(current + [words], opened)))
                current = reopened()
        current.append(line)
        opened = fence_after(opened, line)
    if current:
        pieces.append("\n".join(current))
    return [("" if i == 0 else "\n\n", piece) for i, piece in enumerate(pieces)]


def _split_table(block: str, max_tokens: int) -> list[tuple[str, str]] | None:
    """Cut an over-long Markdown table between rows, each piece repeating the header and its separator row so that
    every row still reads as "State: Not required, … · Field Definition: `f4: …`"; None when ``block`` is no table
    with a header, or a row does not fit beside it. Cut between words, a table's piece had ended mid-cell and a
    direct answer showed "• State: Not required," (Pydantic's migration guide).

    Returns:
        ``(separator, piece)`` as `_split_code` does."""
    lines = block.split("\n")
    is_table = all(line.lstrip().startswith("|") for line in lines) and len(lines) >= 3
    if not is_table or not _TABLE_RULE.match(lines[1]):
        return None
    head = lines[:2]
    pieces: list[list[str]] = []
    for row in lines[2:]:
        if count_tokens("\n".join(head + [row])) > max_tokens:
            return None
        if pieces and count_tokens("\n".join(pieces[-1] + [row])) <= max_tokens:
            pieces[-1].append(row)
        else:
            pieces.append(head + [row])
    return [("" if i == 0 else "\n\n", "\n".join(piece)) for i, piece in enumerate(pieces)]


def _language_fence(opened: str) -> str:
    """An opening fence line with its language only, without attributes (``{test="skip"}``)."""
    fence = FENCE.match(opened)
    return fence.group(1) + fence.group(2) + (fence.group(3).strip().split(" ") or [""])[0]


def _joined(units: list[tuple[str, str]]) -> str:
    """Units as one text, each after its separator (the first one's is dropped)."""
    return "".join(unit if i == 0 else sep + unit for i, (sep, unit) in enumerate(units))


def _split_words(text: str, max_tokens: int) -> list[tuple[str, str]]:
    """Cut an over-long paragraph every ~max_tokens at the last whitespace before the budget (between
    characters for CJK, or inside a run with no whitespace), so a link or a word is never cut in two.

    Returns:
        ``(whitespace before the piece, piece)`` in order; the first piece's whitespace is "". Joining
        them gives ``text`` back.
    """
    spans = [m.span() for m in _TOKEN.finditer(text)]
    max_tokens = max(1, max_tokens)
    pieces, start, begin = [], 0, 0  # token index and character offset where the current piece starts
    while start < len(spans):
        cut = min(start + max_tokens, len(spans))
        if cut < len(spans):
            # the last break within the budget; a run without whitespace is cut at the budget after all
            cut = next((k for k in range(cut, start, -1) if _breakable(text, spans, k)), cut)
        stop = spans[cut - 1][1]
        pieces.append((text[begin:spans[start][0]] if pieces else "", text[spans[start][0]:stop]))
        begin, start = stop, cut
    return pieces


def _breakable(text: str, spans: list[tuple[int, int]], k: int) -> bool:
    """Whether a piece may end before token ``k``: whitespace lies between it and the token before, or
    either is a CJK character (written without spaces)."""
    return spans[k - 1][1] < spans[k][0] or bool(_CJK.match(text, spans[k][0])) or \
        bool(_CJK.match(text, spans[k - 1][1] - 1))


def _tail(text: str, n_tokens: int) -> str:
    """The last ``n_tokens`` tokens of ``text`` or fewer, from the start of a word (the overlap carried into
    the next piece, after its "…" marker)."""
    spans = [m.span() for m in _TOKEN.finditer(text)]
    last = text.rsplit("\n", 1)[-1]
    # after a code block or a table the marker alone: a code block's last lines read as prose, a table's last rows
    # without their header as a paragraph of pipes (each piece of a table repeats its header, `_split_table`)
    if FENCE.match(last) or last.lstrip().startswith("|"):
        return CONTINUED
    if len(spans) <= n_tokens:
        return text
    starts = [k for k in range(len(spans) - n_tokens, len(spans)) if _breakable(text, spans, k)]
    lines = text[spans[starts[0]][0]:].split("\n") if starts else [""]
    fences = [k for k, line in enumerate(lines) if FENCE.match(line)]
    tail = "\n".join(lines[fences[-1] + 1:]).lstrip() if fences else "\n".join(lines)  # never from inside code
    return CONTINUED + tail if tail else ""
