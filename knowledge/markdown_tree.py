"""One reading of a page's Markdown: blocks with their source lines, and inline text as a reader sees it.

The text is parsed once with markdown-it-py (CommonMark with GFM tables and strikethrough) plus the site
extensions the corpora use, so that answer units (`knowledge.sentences`), quotes and plain renderings read
the same structure instead of each guessing it with line patterns (issue 23, "one reading of a page"):

- admonitions ``!!! note "Title"`` / ``??? tip`` (mdit-py-plugins' ``admon``, Python-Markdown's syntax);
- PyMdown tabs ``=== "Label"`` with their content indented by four spaces (`_tab_rule`);
- PyMdown blocks ``/// type | Title`` … ``///`` (mdit-py-plugins' ``container`` with ``/`` markers);
- attribute lists after links and code (``{target=_blank}``, mdit-py-plugins' ``attrs``) and after a heading
  (``## Set up {#set-up}``);

MkDocs' cross-references ``[label][pydantic.main.BaseModel]`` (no definition in the page) stay as written: their
target names what the label means to the embedder (units reading them as bare labels dropped the gap query "How
do I write a field validator in Pydantic?" from 0.93 to 0.72); the quote renderer shows their label
(`knowledge.answering.tidy`).

Indented code blocks are off: chunks are cut out of pages, and the body of a tab or admonition whose opening
line fell into the previous chunk is indented text, not code (fenced code is what the corpora use).

A tab's label becomes a heading-like block (context, never text of a sentence); an admonition's or ``///``
block's own title a caption block. HTML blocks are read for their words (a lone ``<h3>`` is a heading); those of
tags only (``<details>``, ``<summary>Full context</summary>``) are dropped. Link reference definitions are read
into links and never become text.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote, urljoin

import regex
from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.token import Token
from mdit_py_plugins.admon import admon_plugin
from mdit_py_plugins.attrs import attrs_plugin
from mdit_py_plugins.container import container_plugin

HEADING = "heading"
#: A tab's label: read as a heading, deeper than any ``#`` (the tabs of a set are alternatives: "pip" or "uv").
LABEL = "label"
#: An admonition's or ``///`` block's own title ("Validating LLM Output"): an aside's caption. Units leave it
#: out: as a heading it cut a quote off from the example the aside comments on.
TITLE = "title"
PARAGRAPH = "paragraph"
ITEM = "item"
ROW = "row"
CODE = "code"
#: The heading level a `LABEL` counts as in a section path: below ``######`` (CommonMark's deepest is 6).
LABEL_LEVEL = 7

#: A PyMdown tab's opening line (``=== "Label"``, ``===! "…"`` starts a new tab set, ``===+ "…"`` is selected).
_TAB_OPENING = regex.compile(r'^===[!+]?[ \t]+"(.*)"[ \t]*$')
#: HTML element names (WHATWG HTML's sections, grouping, text-level, form-control and embedded elements, and the
#: legacy ``center`` and ``font``; not ``label``, ``input``, ``option``, ``time`` or ``var``, which pages write as
#: placeholders). Inline HTML with one of these names is markup and is dropped: a site's accordion button
#: ("<button class="usa-accordion__button" …>") had led a direct answer. Any other ``<Name>`` is text
#: (``List<String>``, ``Dict<K, V>``).
HTML_NAMES = frozenset(
    "a abbr address article aside audio b blockquote br button caption center cite code col colgroup dd del details "
    "dfn dialog div dl dt em fieldset figcaption figure font footer form h1 h2 h3 h4 h5 h6 header hr i iframe img "
    "ins kbd legend li main mark nav noscript ol p picture pre q s samp script section small span strong style sub "
    "summary sup svg table tbody td tfoot th thead tr u ul video wbr".split())
#: A collapsible's caption that asks a question ("<summary>What should I bring on the first day?</summary>"): the
#: label of the answer it folds, as a bold question is; any other caption ("Full context") is plumbing.
_SUMMARY_QUESTION = regex.compile(r"<summary\b[^>]*>\s*([^<]*?[?？])\s*</summary>", regex.I)
#: An HTML heading opening an HTML block (its content may hold tags: an accordion's ``<button>``).
_HTML_HEADING = regex.compile(r"\s*<h([1-6])\b[^>]*>(.*?)</h\1>[ \t]*", regex.I | regex.S)
#: Python-Markdown's attribute list closing a heading: ``## Set up {#set-up-phase}``, ``# Title { .class }``.
_HEADING_ATTRIBUTES = regex.compile(r"\s*\{\s*[#.:][^{}]*\}\s*$")
#: A lone emphasis marker markdown-it left as text because its partner is in another sentence or chunk
#: ("_Some projects are billed weekly —" … "uses._"): only next to a word or after a sentence's end mark, so
#: "2 * 3" stays.
_LONE_EMPHASIS = regex.compile(r"(?<![\w*])[*_](?=\w)|(?<=[\w.!?,;:)])[*_](?![\w*])")
_TAG_NAME = regex.compile(r"^</?([A-Za-z][A-Za-z0-9-]*)")
#: What markdown-it leaves as text of markup a chunk's cut broke: strong-emphasis markers whose partner is in
#: another chunk ("- **Procurement life"), and a link's tail whose label began in the chunk before
#: ("…Dashboard](https://airtable.com/…)"). Whole links and emphasis are tokens, never text.
_BROKEN_MARKUP = regex.compile(r"\*\*|__|\]\([^)\s]*\)")
#: The characters that start inline Markdown (CommonMark §6: escapes, entities, code spans, emphasis, links,
#: images, autolinks, raw HTML; strikethrough; attribute lists): text without them reads as written, one space
#: between words (a line break is a space either way). On every line and paragraph of ../shared/corpus and the
#: sample (46,140 without them) the parse gives the same text.
_INLINE_MARKUP = regex.compile(r"[\\&`*_\[\]!<>~{}]")


@dataclass(frozen=True)
class Block:
    """One block of a Markdown text, in reading order.

    Attributes:
        kind: `HEADING`, `LABEL`, `TITLE`, `PARAGRAPH`, `ITEM` (a list item's first paragraph), `ROW` (a table body
            row), or `CODE` (a fenced block, fences included).
        first, last: the block's source lines, ``first`` inclusive and ``last`` exclusive (0-based, split
            on "\\n"); an item's lines start at its marker's line.
        text: the block as a reader sees it: inline text (`inline_text`) of a heading, label, paragraph or
            item; the cells of a row; empty for code.
        level: a heading's level (1–6), `LABEL_LEVEL` for a label or title, else 0.
        depth: how many lists hold the block (1 for a top-level item), 0 outside lists.
        number: an ordered item's number as written ("3." → 3), else None.
        cells, header: a row's cells and its table's header cells (inline text), else empty.
        quoted: whether the block is inside a blockquote (its lines carry ``>`` markers).
    """

    kind: str
    first: int
    last: int
    text: str = ""
    level: int = 0
    depth: int = 0
    number: int | None = None
    cells: tuple[str, ...] = ()
    header: tuple[str, ...] = ()
    quoted: bool = False


def _tab_rule(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """Block rule for a PyMdown tab: the opening line, then every line indented at least four spaces past it
    (blank lines inside); the label goes into the open token's ``info``."""
    if state.is_code_block(start):
        return False
    line = state.src[state.bMarks[start] + state.tShift[start]:state.eMarks[start]]
    opening = _TAB_OPENING.match(line)
    if not opening:
        return False
    if silent:
        return True
    indent = state.sCount[start] + 4
    stop = start + 1
    while stop < end and (state.isEmpty(stop) or state.sCount[stop] >= indent):
        stop += 1
    while stop > start + 1 and state.isEmpty(stop - 1):  # trailing blank lines belong to no tab
        stop -= 1
    saved = (state.parentType, state.lineMax, state.blkIndent)
    token = state.push("tab_open", "div", 1)
    token.info, token.map = opening.group(1), [start, stop]
    state.parentType, state.lineMax, state.blkIndent = "tab", stop, indent
    state.md.block.tokenize(state, start + 1, stop)
    state.push("tab_close", "div", -1)
    state.parentType, state.lineMax, state.blkIndent = saved
    state.line = stop
    return True


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).disable("code")
    md.use(admon_plugin)
    md.use(attrs_plugin)  # "[label](url){target=_blank}", "`code`{.py}": attribute lists, not text
    md.use(container_plugin, name="blocks", marker="/", validate=lambda params, markup: True)
    md.block.ruler.before("fence", "tab", _tab_rule, {"alt": ["paragraph", "reference", "blockquote", "list"]})
    return md


_MD = _parser()


@dataclass(frozen=True)
class Parsed:
    """A parse of one text: its blocks in reading order and the environment to read its inline text in
    (``env["references"]``: the link reference definitions, so ``[label][ref]`` reads "label")."""

    blocks: tuple[Block, ...]
    env: dict


def parse(text: str) -> Parsed:
    """``text`` parsed once (remembered per text: units, section paths and quotes read the same passages);
    never raises on any input."""
    return _parse(text)


def parse_blocks(text: str) -> list[Block]:
    """The blocks of ``text`` in reading order (see `Block`); never raises on any input."""
    return list(_parse(text).blocks)


@lru_cache(maxsize=2048)
def _parse(text: str) -> Parsed:
    env: dict = {}
    tokens = _MD.parse(_blank_lines_indented(text), env)
    return Parsed(tuple(_read(tokens, env)), env)


#: The full stops Chinese and Japanese write without a space after them.
CJK_STOPS = ("。", "！", "？")
_AFTER_CJK_STOP = regex.compile(r"(?<=[" + "".join(CJK_STOPS) + r"]) ")
#: A code fence line (CommonMark §4.5): its indentation, the fence, its info string.
FENCE = regex.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")


def fence_after(opened: str | None, line: str) -> str | None:
    """The opening fence line of the code block open after ``line``, given the one open before it (None: none).
    A closing fence has the opening one's character, at least as many, and no info string (CommonMark §4.5)."""
    fence = FENCE.match(line)
    if fence is None:
        return opened
    if opened is None:
        return line
    first = FENCE.match(opened).group(2)
    closes = fence.group(2)[0] == first[0] and len(fence.group(2)) >= len(first) and not fence.group(3).strip()
    return None if closes else opened


def open_fence(text: str) -> str | None:
    """The opening fence line of the code block ``text`` ends inside of (`fence_after` over its lines), else None."""
    opened = None
    for line in text.split("\n"):
        opened = fence_after(opened, line)
    return opened


def closing_fence(opened: str) -> str:
    """The line that closes the block ``opened`` (an opening fence line) opens: its indentation and fence."""
    fence = FENCE.match(opened)
    return fence.group(1) + fence.group(2)


def _blank_lines_indented(text: str) -> str:
    """``text`` with each blank line inside an indented fenced block given the fence's indentation: two blank
    lines end an admonition for mdit-py-plugins, not for MkDocs, and an example with two blank lines between its
    classes (PEP 8) inside ``??? example`` was read as code up to them and prose after. Lines keep their number."""
    lines = text.split("\n")
    opened = None
    for k, line in enumerate(lines):
        if opened and not line.strip():
            lines[k] = FENCE.match(opened).group(1)
        opened = fence_after(opened, line)
    return "\n".join(lines)


def _read(tokens: list[Token], env: dict) -> list[Block]:
    """Walk the token stream once: containers (lists, quotes, admonitions, tabs) only set context."""
    out: list[Block] = []
    items: list[list] = []  # open list items: [first line, number, whether its first paragraph was read]
    quoted = 0
    header: tuple[str, ...] = ()
    row: list[str] = []
    in_head = False
    for i, tok in enumerate(tokens):
        kind = tok.type
        if kind == "list_item_open":
            number = int(tok.info) if tok.info.isdigit() else None
            items.append([tok.map[0] if tok.map else 0, number, False])
        elif kind == "list_item_close":
            items.pop()
        elif kind == "blockquote_open":
            quoted += 1
        elif kind == "blockquote_close":
            quoted -= 1
        elif kind == "heading_open" and tok.map:
            heading = _HEADING_ATTRIBUTES.sub("", inline_text(tokens[i + 1]))
            out.append(Block(HEADING, tok.map[0], tok.map[1], heading, level=int(tok.tag[1:]),
                             depth=len(items), quoted=bool(quoted)))
        elif kind == "paragraph_open" and tok.map:
            first, item_kind = tok.map[0], PARAGRAPH
            if items and not items[-1][2]:
                first, item_kind = items[-1][0], ITEM
                items[-1][2] = True
            elif _is_bold_label(tokens[i + 1]):  # "**Getting ready to scan**": a heading the page
                # writes in bold; as a sentence it had run into the answer ("Getting ready to scan All of these …")
                out.append(Block(LABEL, first, tok.map[1], inline_text(tokens[i + 1], env), level=LABEL_LEVEL,
                                 depth=len(items), quoted=bool(quoted)))
                continue
            elif (asked := _faq_question(tokens[i + 1].content)) is not None:
                out.append(Block(LABEL, first, first + 1, inline_text(asked, env), level=LABEL_LEVEL,
                                 depth=len(items), quoted=bool(quoted)))
                answer = tokens[i + 1].content.split("\n", 1)[1]
                out.append(Block(PARAGRAPH, first + 1, tok.map[1], inline_text(answer, env), depth=len(items),
                                 quoted=bool(quoted)))
                continue
            out.append(Block(item_kind, first, tok.map[1], inline_text(tokens[i + 1]), depth=len(items),
                             number=items[-1][1] if item_kind == ITEM else None, quoted=bool(quoted)))
        elif kind == "html_block" and tok.map:
            out += _html_block(tok, env, len(items), bool(quoted))
        elif kind == "fence" and tok.map:
            out.append(Block(CODE, tok.map[0], tok.map[1], depth=len(items), quoted=bool(quoted)))
            if items:
                items[-1][2] = True
        elif kind in ("tab_open", "admonition_open", "container_blocks_open") and tok.map:
            label = _label(tok, tokens[i + 1:i + 3])
            if label:
                kind = LABEL if tok.type == "tab_open" else TITLE
                out.append(Block(kind, tok.map[0], tok.map[0] + 1, label, level=LABEL_LEVEL, depth=len(items),
                                 quoted=bool(quoted)))
        elif kind == "thead_open":
            in_head = True
        elif kind == "thead_close":
            in_head = False
        elif kind == "tr_open":
            row = []
        elif kind == "inline" and tokens[i - 1].type in ("th_open", "td_open"):
            row.append(inline_text(tok))
        elif kind == "tr_close":
            if in_head:
                header = tuple(row)
            else:
                span = next(t.map for t in reversed(tokens[:i]) if t.type == "tr_open")
                out.append(Block(ROW, span[0], span[1], cells=tuple(row), header=header, depth=len(items),
                                 quoted=bool(quoted)))
    return out


#: A paragraph's first line that is only a bold question ("**When is payday?**"), its answer on the lines below.
_BOLD_QUESTION = regex.compile(r"^(\*\*|__)(?=\S)[^\n]*?[?？](\1)\s*$")


def _is_bold_label(inline: Token) -> bool:
    """Whether a paragraph (its ``inline`` token) is one bold line (`_BOLD_LINE`): a label over the lines below it
    ("**Greybox testing**"; "**When is payday?**" over an answer in the next paragraph)."""
    return "\n" not in inline.content.strip() and bool(_BOLD_LINE.match(inline.content.strip()))


def _faq_question(content: str) -> str | None:
    """The bold line that opens a paragraph whose text follows on its next lines, else None: a FAQ's question
    ("**When is payday?**" / "Salaries are paid on the 25th.") or a sub-heading written in bold ("**Before you
    start**" / "Check the service catalogue …"). Read as a label, a heading for the lines under it: a newcomer's
    FAQ page answered "When is payday?" with the other entries' sentences spliced in ("… They must be used before
    March 31 … Who do I tell if I am sick? …"), and another's "**Before you start**" ran into its first step."""
    first, _, rest = content.partition("\n")
    return first if rest.strip() and _BOLD_LINE.match(first.strip()) else None


#: A line that is one bold span not ended as a sentence is ("**Before you start**"; "**Never share it.**" is none),
#: nor as a lead-in ("**Warning:**" over its instruction reads as one sentence with it, and stays a warning).
_BOLD_LINE = regex.compile(r"^(\*\*|__)(?=\S)(?:(?!\1).)+?(?<![.!。！:：\s])\1$")


def is_bold_question(line: str) -> bool:
    """Whether ``line`` is only a bold question ("**When is payday?**"): what opens a FAQ entry (`_faq_question`)."""
    return bool(_BOLD_QUESTION.match(line.strip()))


def _html_block(tok: Token, env: dict, depth: int, quoted: bool) -> list[Block]:
    """An HTML block as text: an ``<h3>…</h3>`` opening it is a heading (what follows it, a paragraph); other
    blocks with words outside their tags are a paragraph (a handbook's HTML table of office facts, a ``<div
    markdown=1>`` around prose); blocks of tags only (``<details>``, ``<summary>Full context</summary>``: a
    collapsible's plumbing) are dropped, unless the caption asks a question: then it labels what it folds (a
    newcomer's "What should I bring on the first day?" over its answer)."""
    text = inline_text(tok.content, env)
    asked = _SUMMARY_QUESTION.search(tok.content)
    if asked and not regex.search(r"[\p{L}\p{N}]", text):  # a collapsible titled by a question: a FAQ's entry
        return [Block(LABEL, tok.map[0], tok.map[1], inline_text(asked.group(1), env), level=LABEL_LEVEL, depth=depth,
                      quoted=quoted)]
    if not regex.search(r"[\p{L}\p{N}]", text):
        return []
    heading = _HTML_HEADING.match(tok.content)
    if not heading:
        return [Block(PARAGRAPH, tok.map[0], tok.map[1], text, depth=depth, quoted=quoted)]
    # the heading, then what follows it in the same block (a site's accordion: "<h3><button …>Step 4</button></h3>
    # <div markdown=1>" and its first paragraph, with no blank line between)
    split = tok.map[0] + tok.content.count("\n", 0, heading.end())
    title, rest = inline_text(heading.group(2), env), inline_text(tok.content[heading.end():], env)
    blocks = [Block(HEADING, tok.map[0], split + 1, title, level=int(heading.group(1)), depth=depth, quoted=quoted)]
    if regex.search(r"[\p{L}\p{N}]", rest):
        blocks.append(Block(PARAGRAPH, split + 1, tok.map[1], rest, depth=depth, quoted=quoted))
    return blocks


def _label(opening: Token, following: list[Token]) -> str:
    """The heading-like label of a tab (its quoted label), an admonition (only a title the page gives in
    quotes: ``!!! note`` alone titles itself "Note", which says nothing) or a ``///`` block (the title after
    ``|``: ``/// details | Why`` → "Why"; ``/// version-added | v2.11`` → "Version added v2.11")."""
    if opening.type == "tab_open":
        return inline_text(opening.info)
    if opening.type == "admonition_open":
        titled = '"' in opening.info and following and following[0].type == "admonition_title_open"
        return inline_text(following[1]) if titled and len(following) > 1 else ""
    kind, _, title = opening.info.strip().partition("|")
    if kind.strip().startswith(("version", "deprecated")):
        return inline_text(f"{kind.strip().replace('-', ' ').capitalize()} {title.strip()}")
    return inline_text(title.strip())


def inline_text(markdown: str | Token, env: dict | None = None) -> str:
    """Inline Markdown as a reader sees it, read from markdown-it's inline tokens: emphasis and strikethrough
    markers dropped, code spans kept with their backticks (`` `code` ``), a link as its label (a ``mailto:``
    or ``tel:`` link also with its address when the label does not say it: "email the TTS Talent team
    (tts-jointts@gsa.gov)"), images and inline HTML tags dropped (``<String>`` in ``List<String>`` is no HTML
    element and stays), entities and backslash escapes resolved, one space between words.

    Args:
        markdown: inline Markdown text, or an ``inline`` token of a parse.
        env: the parse's environment (its link reference definitions), when ``markdown`` is text.
    """
    if isinstance(markdown, str) and not _INLINE_MARKUP.search(markdown):
        return squash_spaces(markdown)  # nothing markdown-it would read: its parse (~0.1 ms) gives the same text
    children = markdown.children if isinstance(markdown, Token) else _inline_tokens(markdown, env)
    out: list[str] = []
    links: list[tuple[str, int]] = []  # open links: (contact address or "", where its label starts in out)
    summary = False  # inside <summary>…</summary>: a collapsible's caption ("Full context"), no text of the page
    for tok in children or ():
        kind = tok.type
        if kind == "html_inline" and _TAG_NAME.match(tok.content) and \
                _TAG_NAME.match(tok.content).group(1).lower() == "summary":
            summary = not tok.content.startswith("</")
            continue
        if summary:
            continue
        if kind == "text":
            out.append(_LONE_EMPHASIS.sub("", _BROKEN_MARKUP.sub("", tok.content)))
        elif kind == "code_inline":
            out.append(f"{tok.markup}{tok.content}{tok.markup}")
        elif kind in ("softbreak", "hardbreak"):
            out.append(" ")
        elif kind == "html_inline":
            out.append(_tag_gap(tok.content) if _is_html(tok.content) else tok.content)
        elif kind == "link_open":
            links.append((_contact(str(tok.attrs.get("href", ""))), len(out)))
        elif kind == "link_close" and links:
            contact, start = links.pop()
            if contact and "".join(out[start:]).lower().startswith(("mailto:", "tel:")):  # <mailto:a@b.gov>
                out[start:] = [contact]
            elif contact and contact.lower() not in "".join(out[start:]).lower():
                out.append(f" ({contact})")
    return squash_spaces("".join(out))


def squash_spaces(text: str) -> str:
    """``text`` with each run of whitespace as one space, and none after a Chinese-Japanese full stop (。！？): a
    line a Japanese page wraps after one is no space in the sentence ("休業します。 Pro の P1" read as a typo)."""
    return _AFTER_CJK_STOP.sub("", " ".join(text.split()))


def _inline_tokens(text: str, env: dict | None) -> list[Token]:
    tokens = _MD.parseInline(text, dict(env or {}))
    return tokens[0].children if tokens else []


#: Elements that only style the text inside them: their tags part no words ("your <em>first</em> day." reads
#: "your first day.", not "your first day ."); any other tag (``<br>``, ``<td>``, ``<div>``) is a space.
_PHRASING = frozenset("a abbr b cite code del dfn em font i ins kbd mark q s samp small span strong sub sup u".split())


def _tag_gap(tag: str) -> str:
    """What an inline HTML tag leaves in the text: nothing for a styling element's tag, else a space."""
    name = _TAG_NAME.match(tag)
    return "" if name and name.group(1).lower() in _PHRASING else " "


def _is_html(tag: str) -> bool:
    """Whether an inline HTML token is markup: a comment, processing instruction, or an HTML element's tag.
    Slack's own ``<!channel>`` / ``<!here>`` (an HTML declaration to markdown-it) is text a page quotes."""
    if tag.startswith(("<!--", "<?")):
        return True
    name = _TAG_NAME.match(tag)
    return bool(name) and name.group(1).lower() in HTML_NAMES


def _contact(href: str) -> str:
    """The address of a ``mailto:`` or ``tel:`` link (its query dropped), else ""."""
    scheme, _, rest = href.partition(":")
    if scheme.lower() not in ("mailto", "tel"):
        return ""
    return unquote(rest.split("?")[0].split("#")[0])


def heading_level(raw: str) -> int:
    """The level of a heading unit's raw Markdown: ATX (``## …`` → 2) or setext (underlined ``===`` → 1,
    ``---`` → 2); anything else (a tab's label, an admonition's title) is `LABEL_LEVEL`."""
    for block in parse_blocks(raw):
        if block.kind == HEADING:
            return block.level
    return LABEL_LEVEL

#: A GitHub alert's marker at the start of a quoted paragraph (``> [!WARNING]``, GitHub's "alerts" syntax): a
#: label for what follows, read as the word it names ("Warning:").
_ALERT = regex.compile(r"^(\s*)\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\][ \t]*\n?[ \t]*", regex.I)


def alert_as_label(text: str) -> str:
    """``text`` with a leading GitHub alert marker read as its word: ``[!WARNING] Never print …`` → ``Warning: Never
    print …`` (a newcomer's reply showed the marker as written)."""
    return _ALERT.sub(lambda m: f"{m.group(1)}{m.group(2).capitalize()}: ", text, count=1)


#: A Markdown link to a web address (not an image), its label and address as groups 1 and 2: a direct answer
#: keeps such links (`knowledge.answering`), the terminal prints "label (address)" (`bot.cli.render_text`).
WEB_LINK = regex.compile(r"(?<!!)\[([^\]\n]+)\]\((https?://[^)\s]+)\)")

#: A Markdown link (not an image) to a path relative to its page ("expenses.md", "../tools/slack/#channels"): not a
#: web address, a mail or phone link, or an anchor in the page itself ("#carry-over": the section's name says it).
_RELATIVE_LINK = regex.compile(r"(?<!!)\[([^\]\n]+)\]\((?!https?://|mailto:|tel:|#)([^)\s]+)\)")


def resolve_links(markdown: str, page_url: str) -> str:
    """``markdown`` with each link relative to its page made absolute against ``page_url`` (the page's own address,
    from its source's ``url_base``): "See the [expense policy](expenses.md)" leads to the wiki's expense page
    instead of losing its link in Slack (issue 23). An anchor in the page itself stays as it is (Slack and the
    terminal show its label: the section's name), and so does every link when ``page_url`` is no web address (a
    folder without ``url_base``)."""
    if not page_url.startswith(("http://", "https://")):
        return markdown
    return _RELATIVE_LINK.sub(lambda m: f"[{m.group(1)}]({urljoin(page_url, m.group(2))})", markdown)
