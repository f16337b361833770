"""Turn a file's text into a document: front matter, title, and a Markdown body.

Markdown front matter is read with python-frontmatter; Liquid/Jinja tags (``{% include %}``,
``{{ site.x }}``) are stripped because they are template code, not knowledge. HTML is converted to
Markdown with markdownify so the same heading-aware chunker handles every format.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from pathlib import PurePosixPath

import frontmatter
import markdownify
import yaml

from knowledge.documents import DOCUMENT_TYPES
from knowledge.errors import DocumentInvalid, DocumentStub
from knowledge.sentences import HTML_TAG, sentences_of

# A `{% slack_channel "tock" %}` tag is the only place some handbook pages name a channel, so it becomes
# "#tock" instead of disappearing (shared/eval/kb-dev/README.md, "Corpus traits").
_SLACK_CHANNEL_TAG = re.compile(r"\{%-?\s*slack_channel\s+[\"']([^\"']+)[\"']\s*-?%\}")
_COMMENT_BLOCK = re.compile(r"\{%-?\s*comment\s*-?%\}.*?\{%-?\s*endcomment\s*-?%\}", re.S)
#: Indentation, list bullet or heading marks at the start of a line (kept when a sentence is dropped).
_LINE_MARKER = re.compile(r"^\s*(?:[-*+]\s+|\d{1,3}[.)]\s+|#{1,6}\s+|>\s*)?")
#: A ``{{ variable }}`` standing alone in prose: not inside a link, a path or inline code (no "(", "/", "=", "`" or quote
#: before it, no "/" or letter right after it) and not a Hugo shortcode (``{{<``, ``{{%``).
_VARIABLE_HOLE = re.compile(r"(?<![(\[/\"'=`\w])\{\{(?![<%])[^}]*\}\}(?![/\w`])")
_TEMPLATE_TAG = re.compile(r"\{%.*?%\}|\{\{.*?\}\}|\{#.*?#\}", re.S)
#: Liquid's ``{% raw %}`` … ``{% endraw %}``: what it holds is shown as written (whitespace control "-" allowed).
_RAW_BLOCK = re.compile(r"\{%-?\s*raw\s*-?%\}(.*?)\{%-?\s*endraw\s*-?%\}", re.S)
_HELD = re.compile(r"\x00(\d+)\x00")
#: A level-1 heading: the page's title when its front matter names none. Not any heading: a page that opens
#: on "## Booleans" is not titled "Booleans" (pydantic's standard-library types page, issue 26).
_H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.M)
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.S | re.I)
# Elements whose content is not page text (markdownify's `strip` keeps the content, so they go first).
_HTML_NON_TEXT = re.compile(r"<(script|style|title|head)\b[^>]*>.*?</\1\s*>", re.S | re.I)
# Fenced code blocks, skipped when looking for a title heading (a shell "# comment" is not a heading).
#: A PyMdown block's fence line: ``/// type | title`` opening it, ``///`` closing it.
_BLOCK_FENCE = re.compile(r"^ {0,3}///(?:\s+[\w-]+(?:\s*\|.*)?)?\s*$")
_FENCED_CODE = re.compile(r"^ {0,3}(`{3,}|~{3,}).*?^ {0,3}\1", re.S | re.M)

#: Words a sentence needs to state something ("Closed on Sundays." has 3, "Free parking." 2; "Deprecated." is
#: no statement). A stub is a page with no such sentence, not a short page (issue 27: "The lynx enclosure
#: opens at 10:00." was dropped as "4 words"); issue 11 item 7's word count dropped one-sentence facts.
MIN_STATEMENT_WORDS = 2
# Generator directives: an mkdocstrings block (``::: pydantic.types`` and its indented ``options:``), a
# snippet include (``--8<-- "file.md"``), a markdown-include (``{!file.md!}``), a ``[TOC]`` marker.
_DIRECTIVE = re.compile(r"^:::[ \t]+\S.*(?:\n[ \t]+.*)*|^[ \t]*-{1,2}8<-{1,2}.*$|\{!.*?!\}|^\s*\[TOC\]\s*$", re.M)
# Placeholders a macro or template engine fills in at build time, left after template tags were stripped:
# ``{{ ... }}`` blocks that span lines, ``<!-- ... -->`` comments, ``%%macro%%``-style markers.
_PLACEHOLDER = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|<!--.*?-->|%%\w+%%", re.S)
_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}\s.*$|^ {0,3}(?:=+|-+)\s*$", re.M)
_WORD = re.compile(r"[^\W\d_][\w'’-]*|\d[\w.,:/-]*")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
#: A link, image, wiki link or bare URL; group 1 or 2 is its text (a reference definition has none).
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|!?\[([^\]]*)\]\[[^\]]*\]|\[\[([^\]]*)\]\]|^\s*\[[^\]]+\]:\s*\S.*$"
                   r"|<(?:https?|mailto):[^>\s]*>|\b(?:https?://|www\.)[^\s)>\]]+", re.M)
#: A sentence that is a note to the writers, not content: it starts with a to-do marker, or is only a
#: placeholder phrase ("Coming soon.", "Lorem ipsum …", "準備中", "작성 중입니다").
_TODO_START = re.compile(r"^\W*(?:TODO|TBD|TBA|FIXME|WIP|XXX)\b", re.I)
_TODO_PHRASE = re.compile(
    r"^\W*(?:(?:this |the )?(?:page|section|content|article)?\s*(?:is |will be )?(?:coming soon|under construction|"
    r"work in progress|to come|to follow|to be (?:written|added|completed|determined|announced|done)|"
    r"intentionally (?:left )?blank|left blank|a stub|a placeholder)|lorem ipsum\b.*|placeholder(?: text| page)?|"
    r"nothing (?:here|to see here)(?: yet)?|more (?:to come|soon)|draft|stub|"
    r"(?:준비|작성|공사)\s*중(?:입니다)?|(?:準備|作成|工事|編集)中(?:です)?)\W*$", re.I)
#: To-do marker words inside a sentence ("Price: TBD"): not words of a statement.
_TODO_WORDS = frozenset({"todo", "tbd", "tba", "fixme", "wip", "xxx"})
#: Words that only point elsewhere ("See the other page.", "Moved to [X](x).", "For details see [X](x)"): a
#: sentence whose words outside its links are all pointers states nothing. Content words are never here.
_POINTER_WORDS = frozenset("""
    see also refer referred to the a an this that these those here there page pages doc docs document documents
    documentation link links for more details detail info information read check out go visit click follow moved
    has have had been is are was now at on in under and or please related further reading other instead new old
    location redirect redirects redirected article articles section below above following list of it its find
    found can be you we our next previous back contents
""".split())
#: The same in Korean and Japanese, taken out before their characters are counted.
_CJK_POINTERS = re.compile(r"바로\s*가기|참고(?:하세요|해\s*주세요)?|참조(?:하세요)?|링크|をご覧ください|を参照してください|参照|こちら|リンク")


@dataclass
class ParsedDocument:
    """A parsed source file.

    Attributes:
        title: front matter ``title``, else the first heading, else the file name.
        body: Markdown text without front matter and template tags (never empty).
        metadata: front matter as a dict (values as YAML loaded them).
        updated: ``updated``/``last_modified``/``date`` from front matter as UTC datetime, or None.
        expires_at: ``expires_at`` from front matter as UTC datetime, or None.
        redirect_from: old paths of this page (front matter ``redirect_from``: a string or a list, e.g.
            ``["/travel-guide-3-reimbursement/"]``), normalised by `redirect_paths`; [] when absent.
        outdated: front matter ``outdated: true``: the page says itself it is out of date.
        dropped: sentences left out because they hold a ``{{ variable }}`` whose value is unknown here
            (`strip_template_tags`), for the sync report.
    """

    title: str
    body: str
    metadata: dict = field(default_factory=dict)
    updated: datetime | None = None
    expires_at: datetime | None = None
    redirect_from: list[str] = field(default_factory=list)
    outdated: bool = False
    dropped: list[str] = field(default_factory=list)


def parse_document(text: str, rel_path: str) -> ParsedDocument:
    """Parse one file by its extension (.html/.htm → HTML, .txt → text, else Markdown).

    ``.pdf`` and ``.docx`` text is the Markdown `knowledge.sources.read_text` converted them to: its front
    matter holds only the title, and no template tag is stripped (a PDF's ``{{`` is text, not Liquid).

    Raises:
        DocumentInvalid: front matter is not valid YAML or not a mapping, a front matter date cannot be
            read, or there is no text left (e.g. a ``redirect_to`` stub).
        DocumentStub: (a DocumentInvalid) the page is a stub, not content: no sentence states anything
            (only generator directives, macro placeholders, TODO/TBD, links or headings); the message starts
            with "stub: " (see `stub_reason`).
    """
    suffix = PurePosixPath(rel_path).suffix.lower()
    dropped: list[str] = []
    if suffix in (".html", ".htm"):
        metadata, body = {}, _html_to_markdown(text)
        title = _first(_HTML_TITLE.findall(text))
    elif suffix == ".txt":
        metadata, body, title = {}, text, ""
    elif suffix in DOCUMENT_TYPES:
        metadata, body = _split_front_matter(text)
        title = str(metadata.get("title") or "")
    else:
        metadata, body = _split_front_matter(text)
        dropped = variable_sentences(body)
        body = strip_template_tags(body)
        title = str(metadata.get("title") or "")
    body = body.strip()
    if not body:
        reason = "redirect stub (redirect_to)" if metadata.get("redirect_to") else "no text after front matter"
        raise DocumentInvalid(reason)
    # a title is plain text: Jekyll front matter and HTML write "Logging in &amp; Networks" for "&", and
    # "Get set up to travel <em>before</em> onboarding" for the emphasis its template renders
    title = html.unescape(HTML_TAG.sub("", title.strip() or _first(_H1.findall(_FENCED_CODE.sub("", body)))
                                       or _title_from_path(rel_path)))
    updated = _front_matter_time(metadata, ("updated", "last_modified", "date"))
    expires_at = _front_matter_time(metadata, ("expires_at", "expires"), date_means_end_of_day=True)
    stub = stub_reason(body, title)  # after the dates: a broken date is named even on a short page
    if stub:
        raise DocumentStub(f"stub: {stub}")
    return ParsedDocument(
        title=title,
        body=body,
        metadata=metadata,
        updated=updated,
        expires_at=expires_at,
        redirect_from=redirect_paths(metadata.get("redirect_from")),
        outdated=metadata.get("outdated") is True or str(metadata.get("outdated")).strip().lower() == "true",
        dropped=dropped,
    )


def stub_reason(body: str, title: str = "") -> str:
    """Why ``body`` is a stub rather than content, or "" when it has content (issues 11 item 7 and 27).

    A stub is a page with no sentence that states anything, however short the page: one sentence of fact
    ("The lynx enclosure opens at 10:00.") is content and is indexed. Taken out first: generator directives
    (`_DIRECTIVE`: mkdocstrings ``::: x``, snippet includes, ``[TOC]``), placeholders (`_PLACEHOLDER`) and
    heading lines. Then a sentence (a paragraph's or list item's, read across wrapped lines; a table row; a
    code block) states something when it holds at least `MIN_STATEMENT_WORDS` words and one of them, outside
    its links, is neither a pointer ("see", "moved", "page": `_POINTER_WORDS`), a to-do marker ("TBD") nor a
    word of the title. It states nothing when it starts with a to-do marker or is a placeholder phrase
    ("TODO: write this", "Coming soon."), or is only links and pointers ("See [Node RAID Degraded](…)", a
    bare list of links). A CJK character counts as a word, as in the chunker.

    Returns:
        e.g. "generator directives only (::: pydantic.types)", "macro placeholders only", "title only",
        "to-do or placeholder text only (TODO: write the VPN page)", "links only (3 links)", "a pointer only
        (See the other page.)", "no sentence that states anything (too few words: Deprecated.)", or "".
    """
    directives = [d.splitlines()[0].strip() for d in _DIRECTIVE.findall(body)]
    placeholders = _PLACEHOLDER.findall(body)
    rest = _HEADING_LINE.sub(" ", _PLACEHOLDER.sub(" ", _DIRECTIVE.sub(" ", body)))
    title_words = {w.lower() for w in _WORD.findall(title)}
    kinds: dict[str, list[str]] = {}
    for sentence in _sentences(rest):
        kind = sentence_kind(sentence, title_words)
        if kind == "statement":
            return ""
        kinds.setdefault(kind, []).append(sentence)
    kinds.pop("title", None)
    if not kinds:
        if directives:
            return f"generator directives only ({'; '.join(directives[:3])})"
        return "macro placeholders only" if placeholders else "title only"
    links = len(_LINK.findall(rest))
    if set(kinds) == {"todo"}:
        return f"to-do or placeholder text only ({_quote(kinds['todo'][0])})"
    if links and set(kinds) <= {"links", "pointer"}:
        return f"links only ({links} link{'s' if links != 1 else ''})"
    if set(kinds) == {"pointer"}:
        return f"a pointer only ({_quote(kinds['pointer'][0])})"
    parts = {"todo": "to-do or placeholder text", "links": "links", "pointer": "a pointer", "short": "too few words"}
    first = next(iter(kinds.values()))[0]
    return f"no sentence that states anything ({', '.join(parts[k] for k in kinds)}: {_quote(first)})"


def sentence_kind(sentence: str, title_words: set[str] = frozenset()) -> str:
    """What one sentence of a page is (see `stub_reason`): "statement"; "todo" (a to-do marker or placeholder
    phrase, or a marker with too little else: "Price: TBD"); "links" (only links and pointers, at least one
    link); "pointer" (only pointer words); "title" (only words of the title); or "short" (fewer than
    `MIN_STATEMENT_WORDS` words)."""
    text = sentence.strip()
    if _TODO_START.match(text) or _TODO_PHRASE.match(text):
        return "todo"
    outside = _CJK_POINTERS.sub(" ", _LINK.sub(" ", text))
    linked = " ".join(m.group(1) or m.group(2) or m.group(3) or "" for m in _LINK.finditer(text))
    own = [w.lower() for w in _WORD.findall(outside) if w.lower() not in _TODO_WORDS]
    every = own + [w.lower() for w in _WORD.findall(linked)] + _CJK.findall(outside) + _CJK.findall(linked)
    saying = [w for w in own if w not in _POINTER_WORDS and w not in title_words] + _CJK.findall(outside)
    if saying and len(every) >= MIN_STATEMENT_WORDS:
        return "statement"
    if any(w.lower() in _TODO_WORDS for w in _WORD.findall(outside)):
        return "todo"
    if _LINK.search(text) and not saying:
        return "links"
    if own and all(w in title_words for w in own) and not _CJK.findall(outside):
        return "title"
    if own and all(w in _POINTER_WORDS or w in title_words for w in own) and not _CJK.findall(outside):
        return "pointer"
    return "short"


def _sentences(text: str):
    """The sentences of ``text`` with words in them: each paragraph or list item (wrapped lines joined,
    bullet taken off) split at sentence ends; a table row or a code block whole."""
    for block, is_code in _paragraphs(text.split("\n")):
        if is_code:
            joined = " ".join(line for line in block if not line.lstrip().startswith(("```", "~~~")))
            if _WORD.search(joined) or _CJK.search(joined):
                yield joined
            continue
        marker = _LINE_MARKER.match(block[0]).group(0)
        body = " ".join(line.strip() for line in [block[0][len(marker):], *block[1:]])
        for sentence in sentences_of(body):  # the project's one splitter (knowledge.sentences)
            if _WORD.search(sentence) or _CJK.search(sentence) or _LINK.search(sentence):
                yield sentence.strip()


def _quote(sentence: str, limit: int = 60) -> str:
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def redirect_paths(value) -> list[str]:
    """Front matter ``redirect_from`` (a path or a list of paths) → old page paths without leading or
    trailing slashes, extension or a final ``index``: ``"/tools/teams/"`` and ``"tools/teams.html"`` →
    ``"tools/teams"``. Full URLs keep only their path. Empty and non-string entries are dropped."""
    items = value if isinstance(value, list) else [value]
    paths = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            continue
        path = re.sub(r"^[a-z]+://[^/]+", "", item.strip()).split("#")[0].split("?")[0]
        key = page_key(path)
        if key and key not in paths:
            paths.append(key)
    return paths


def own_page_key(rel_path: str, versions_in_folders: bool) -> str:
    """`page_key` of a document's own path; with ``versions: folders`` the version folder is not part of
    the page's address (``2025-02/tools/teams.md`` → ``tools/teams``)."""
    if versions_in_folders and "/" in rel_path:
        rel_path = rel_path.split("/", 1)[1]
    return page_key(rel_path)


def page_key(path: str) -> str:
    """A page's address without slashes at either end, its extension, or a final ``index``/``README``:
    what `redirect_paths` gives and what a document's relative path is compared with."""
    path = path.strip().strip("/")
    path = re.sub(r"\.(md|markdown|html?|txt)$", "", path, flags=re.I)
    path = re.sub(r"(^|/)(index|_index|README)$", "", path)
    return path.strip("/")


def strip_template_tags(text: str) -> str:
    """Remove Liquid/Jinja tags (``{% slack_channel "x" %}`` becomes ``#x``) and the fence lines of
    PyMdown's blocks (``/// version-added | v2.12`` … ``///``), keeping what the blocks hold. What a
    ``{% raw %}`` … ``{% endraw %}`` pair holds is kept as written, as the site shows it: the handbook's own
    shortcode examples ("{% image_with_class … %}" in a code block) had been left as empty code blocks."""
    kept: list[str] = []

    def hold(match: re.Match) -> str:
        kept.append(match.group(1))
        return f"\x00{len(kept) - 1}\x00"

    text = _RAW_BLOCK.sub(hold, text)
    text = _SLACK_CHANNEL_TAG.sub(lambda m: "#" + m.group(1), text)
    text = _COMMENT_BLOCK.sub("", text)
    text = _drop_variable_sentences(text)
    text = _drop_block_fences(_TEMPLATE_TAG.sub("", text))
    return _HELD.sub(lambda m: kept[int(m.group(1))], text)


def _drop_block_fences(text: str) -> str:
    """``text`` without the lines that open or close a PyMdown block (``/// warning | Title``, ``///``), outside
    code blocks (a Rust doc comment starts "///" too): in a reply they read as stray slashes (issue 23)."""
    if "///" not in text:
        return text
    out, in_code = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
        elif not in_code and _BLOCK_FENCE.match(line):
            continue
        out.append(line)
    return "\n".join(out)


def variable_sentences(text: str) -> list[str]:
    """The sentences `strip_template_tags` leaves out of ``text`` because of a ``{{ variable }}``, as
    written (for the sync report: a page that loses a sentence says so)."""
    if "{{" not in text:
        return []
    out = []
    for block, is_code in _paragraphs(text.split("\n")):
        joined = "\n".join(block)
        if is_code or not _VARIABLE_HOLE.search(joined):
            continue
        marker = _LINE_MARKER.match(block[0]).group(0)
        body = " ".join(line.strip() for line in [block[0][len(marker):], *block[1:]])
        out += [s.strip() for s in sentences_of(body) if _VARIABLE_HOLE.search(s)]
    return out


def _drop_variable_sentences(text: str) -> str:
    """Remove each sentence (outside code blocks) that holds a ``{{ variable }}`` standing for a word: its
    value is unknown here, and removing only the tag would leave a hole ("email  with the subject", issue 9).
    Sentences are read across the wrapped lines of a paragraph or list item, so only that sentence goes,
    not the whole line; a paragraph whose only sentence goes is removed with it. A tag that is part of a
    link or path (``]({{site.baseurl}}/x/)``) or a Hugo shortcode (``{{< ref >}}``) is not a hole: only the
    tag goes."""
    if "{{" not in text:
        return text
    out: list[str] = []
    for block, is_code in _paragraphs(text.split("\n")):
        joined = "\n".join(block)
        if is_code or not _VARIABLE_HOLE.search(joined):
            out.extend(block)
            continue
        marker = _LINE_MARKER.match(block[0]).group(0)
        body = " ".join(line.strip() for line in [block[0][len(marker):], *block[1:]])
        kept = [s.strip() for s in sentences_of(body) if s.strip() and not _VARIABLE_HOLE.search(s)]
        if kept:
            out.append(marker + " ".join(kept))
    return "\n".join(out)


def _paragraphs(lines: list[str]):
    """(lines, is_code) blocks: a fenced code block; a paragraph or list item with its wrapped lines; or a
    single blank, heading or table line."""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(("```", "~~~")):
            j = i + 1
            while j < len(lines) and not lines[j].lstrip().startswith(("```", "~~~")):
                j += 1
            yield lines[i:j + 1], True
            i = j + 1
            continue
        if not line.strip() or line.lstrip().startswith(("#", "|")):
            yield [line], False
            i += 1
            continue
        j = i + 1
        while (j < len(lines) and lines[j].strip() and not _LINE_MARKER.match(lines[j]).group(0).strip()
               and not lines[j].lstrip().startswith(("```", "~~~", "#", "|"))):
            j += 1
        yield lines[i:j], False
        i = j


def _split_front_matter(text: str) -> tuple[dict, str]:
    # frontmatter.loads() silently drops a block that is not a mapping (a YAML list or scalar), so the
    # steps of frontmatter.parse() are done here to report it instead.
    text = text.strip()
    handler = frontmatter.detect_format(text, frontmatter.handlers)
    if handler is None:
        return {}, text
    try:
        block, content = handler.split(text)
    except ValueError:  # no closing delimiter: not front matter
        return {}, text
    try:
        metadata = handler.load(block)
    except yaml.YAMLError as exc:
        first = text[: text.find(block)].count("\n") + 1 if block in text else 2  # the block's first line in the file
        where, began = getattr(exc, "problem_mark", None), getattr(exc, "context_mark", None)
        line = f" near line {where.line + first}" if where is not None else ""
        # "while scanning a quoted scalar" + where it began: an unclosed quote is reported where the file ends
        opened = getattr(exc, "context", None) or ""
        context = (f" ({opened} on line {began.line + first})"
                   if began and where and "plain scalar" not in opened and began.line != where.line else "")
        raise DocumentInvalid(f"front matter is not valid YAML{line}{context}: {getattr(exc, 'problem', exc)}") from exc
    except (ValueError, TypeError) as exc:  # TOML/JSON front matter handlers
        raise DocumentInvalid(f"front matter cannot be read: {exc}") from exc
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise DocumentInvalid(
            f"front matter must be a mapping of keys (e.g. `title: ...`), not a {type(metadata).__name__}"
        )
    return metadata, content


def _html_to_markdown(html: str) -> str:
    return markdownify.markdownify(_HTML_NON_TEXT.sub("", html), heading_style="ATX")


def _front_matter_time(metadata: dict, keys: tuple[str, ...], *, date_means_end_of_day: bool = False) -> datetime | None:
    """The first present key as an aware UTC datetime. A bare date is midnight UTC, or with
    ``date_means_end_of_day`` the next midnight ("expires_at: 2026-12-31" is valid through Dec 31)."""
    for key in keys:
        value = metadata.get(key)
        if value in (None, ""):
            continue
        if isinstance(value, datetime):
            return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        if not isinstance(value, date):
            try:
                value = date.fromisoformat(str(value).strip())
            except ValueError:
                pass
        if isinstance(value, date) and not isinstance(value, datetime):
            day = value + timedelta(days=1) if date_means_end_of_day else value
            return datetime.combine(day, time.min, tzinfo=timezone.utc)
        try:
            parsed = datetime.fromisoformat(str(value).strip())
        except ValueError as exc:
            raise DocumentInvalid(f"front matter {key!r} is not a date (YYYY-MM-DD): {value!r}") from exc
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
    return None


def _title_from_path(rel_path: str) -> str:
    stem = PurePosixPath(rel_path).stem
    if stem in ("index", "_index", "README"):
        stem = PurePosixPath(rel_path).parent.name or stem
    return stem.replace("-", " ").replace("_", " ").strip().capitalize()


def _first(items: list[str]) -> str:
    return items[0].strip() if items else ""
