"""Turn a file's text into a document: front matter, title, and a Markdown body.

Markdown front matter is read with python-frontmatter; Liquid/Jinja tags (``{% include %}``,
``{{ site.x }}``) are stripped because they are template code, not knowledge. HTML is converted to
Markdown with markdownify so the same heading-aware chunker handles every format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from pathlib import PurePosixPath

import frontmatter
import markdownify
import yaml

from knowledge.documents import DOCUMENT_TYPES
from knowledge.errors import DocumentInvalid

# A `{% slack_channel "tock" %}` tag is the only place some handbook pages name a channel, so it becomes
# "#tock" instead of disappearing (shared/eval/kb-dev/README.md, "Corpus traits").
_SLACK_CHANNEL_TAG = re.compile(r"\{%-?\s*slack_channel\s+[\"']([^\"']+)[\"']\s*-?%\}")
_COMMENT_BLOCK = re.compile(r"\{%-?\s*comment\s*-?%\}.*?\{%-?\s*endcomment\s*-?%\}", re.S)
#: Indentation, list bullet or heading marks at the start of a line (kept when a sentence is dropped).
_LINE_MARKER = re.compile(r"^\s*(?:[-*+]\s+|\d{1,3}[.)]\s+|#{1,6}\s+|>\s*)?")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+")
_TEMPLATE_TAG = re.compile(r"\{%.*?%\}|\{\{.*?\}\}|\{#.*?#\}", re.S)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.S | re.I)
# Elements whose content is not page text (markdownify's `strip` keeps the content, so they go first).
_HTML_NON_TEXT = re.compile(r"<(script|style|title|head)\b[^>]*>.*?</\1\s*>", re.S | re.I)
# Fenced code blocks, skipped when looking for a title heading (a shell "# comment" is not a heading).
_FENCED_CODE = re.compile(r"^ {0,3}(`{3,}|~{3,}).*?^ {0,3}\1", re.S | re.M)


@dataclass
class ParsedDocument:
    """A parsed source file.

    Attributes:
        title: front matter ``title``, else the first heading, else the file name.
        body: Markdown text without front matter and template tags (never empty).
        metadata: front matter as a dict (values as YAML loaded them).
        updated: ``updated``/``last_modified``/``date`` from front matter as UTC datetime, or None.
        expires_at: ``expires_at`` from front matter as UTC datetime, or None.
    """

    title: str
    body: str
    metadata: dict = field(default_factory=dict)
    updated: datetime | None = None
    expires_at: datetime | None = None


def parse_document(text: str, rel_path: str) -> ParsedDocument:
    """Parse one file by its extension (.html/.htm → HTML, .txt → text, else Markdown).

    ``.pdf`` and ``.docx`` text is the Markdown `knowledge.sources.read_text` converted them to: its front
    matter holds only the title, and no template tag is stripped (a PDF's ``{{`` is text, not Liquid).

    Raises:
        DocumentInvalid: front matter is not valid YAML or not a mapping, a front matter date cannot be
            read, or there is no text left (e.g. a ``redirect_to`` stub).
    """
    suffix = PurePosixPath(rel_path).suffix.lower()
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
        body = strip_template_tags(body)
        title = str(metadata.get("title") or "")
    body = body.strip()
    if not body:
        reason = "redirect stub (redirect_to)" if metadata.get("redirect_to") else "no text after front matter"
        raise DocumentInvalid(reason)
    title = title.strip() or _first(_HEADING.findall(_FENCED_CODE.sub("", body))) or _title_from_path(rel_path)
    return ParsedDocument(
        title=title,
        body=body,
        metadata=metadata,
        updated=_front_matter_time(metadata, ("updated", "last_modified", "date")),
        expires_at=_front_matter_time(metadata, ("expires_at", "expires"), date_means_end_of_day=True),
    )


def strip_template_tags(text: str) -> str:
    """Remove Liquid/Jinja tags; ``{% slack_channel "x" %}`` becomes ``#x``."""
    text = _SLACK_CHANNEL_TAG.sub(lambda m: "#" + m.group(1), text)
    text = _COMMENT_BLOCK.sub("", text)
    text = _drop_variable_sentences(text)
    return _TEMPLATE_TAG.sub("", text)


def _drop_variable_sentences(text: str) -> str:
    """Remove each sentence (outside code blocks) that holds a ``{{ variable }}``: its value is unknown
    here, and removing only the tag would leave a hole ("email  with the subject", issue 9). A line whose
    only sentence goes is removed with it."""
    if "{{" not in text:
        return text
    out, in_code = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
        if in_code or "{{" not in line:
            out.append(line)
            continue
        marker = _LINE_MARKER.match(line).group(0)
        kept = [s for s in _SENTENCE_SPLIT.split(line[len(marker):]) if "{{" not in s]
        if any(s.strip() for s in kept):
            out.append(marker + " ".join(s.strip() for s in kept if s.strip()))
    return "\n".join(out)


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
        where = getattr(exc, "problem_mark", None)
        line = f" near line {where.line + 1}" if where is not None else ""  # block line 0 = file line 1
        raise DocumentInvalid(f"front matter is not valid YAML{line}: {getattr(exc, 'problem', exc)}") from exc
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
