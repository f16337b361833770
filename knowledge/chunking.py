"""Heading-aware chunking with a token budget and overlap.

A Markdown body is cut at its headings (found with markdown-it-py, so a ``#`` inside a code block is not
a heading). Each section keeps its heading path for the citation. A section over the budget is split
between paragraphs, and a paragraph over the budget between words, with up to ``overlap_tokens`` repeated
at the start of the next piece (fewer when the next paragraph leaves less room, so no chunk exceeds the
budget). Sections under ``min_tokens`` are merged into the following one so a bare heading never becomes
a chunk of its own.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import regex
from markdown_it import MarkdownIt

from config import ChunkingConfig
from knowledge.markdown_tree import inline_text, parse_blocks

# One token per CJK character, per word otherwise: close enough to MiniLM word pieces to keep a chunk
# inside the model's window without loading its tokenizer here.
_TOKEN = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}]|[\p{Hangul}]+|\w+|[^\w\s]")
_PARAGRAPH_BREAK = regex.compile(r"\n\s*\n")
_MD_LINK = regex.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_HTML_TAG = regex.compile(r"</?[a-zA-Z][^>]*>")
_MARKDOWN = MarkdownIt("commonmark")
_CJK = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}]")


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
#: syntax in a section's name); part of every document's chunker
#: signature, so a new version re-chunks old documents on the next sync (unchanged chunk texts come from
#: the embedding cache).
CHUNKER_VERSION = 14


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
    """Split a section into pieces of <= max_tokens, preferring paragraph boundaries."""
    if count_tokens(text) <= max_tokens:
        return [text]
    units: list[tuple[str, str]] = []  # (what joins it to the unit before, the unit)
    # Word-cut pieces leave room for the overlap (+1 for its "…" marker) that the next piece starts with,
    # but keep at least half the budget so a large overlap cannot shred a paragraph into single words.
    word_budget = max(1, max_tokens // 2, max_tokens - overlap - 1) if overlap else max_tokens
    for para in _PARAGRAPH_BREAK.split(text):
        if count_tokens(para) > max_tokens:
            cut = _split_words(para, word_budget)
            units.extend([("\n\n", cut[0][1]), *cut[1:]])
        else:
            units.append(("\n\n", para))
    pieces, current = [], []
    for sep, unit in units:
        if current and count_tokens(_joined(current + [(sep, unit)])) > max_tokens:
            pieces.append(_joined(current))
            # the overlap shrinks so that overlap + "…" + unit stays within the budget
            room = min(overlap, max_tokens - count_tokens(unit) - 1)
            tail = _tail(pieces[-1], room) if room > 0 else ""
            current = [("", tail)] if tail else []
        current.append((sep, unit))
    if current:
        pieces.append(_joined(current))
    return [p.strip() for p in pieces if p.strip()]


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
    if len(spans) <= n_tokens:
        return text
    starts = [k for k in range(len(spans) - n_tokens, len(spans)) if _breakable(text, spans, k)]
    return "…" + text[spans[starts[0]][0]:] if starts else ""
