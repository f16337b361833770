"""PDF and Word (.docx) files as Markdown, so the heading-aware chunker handles them like any page.

The bytes come from `knowledge.sources` (read without blocking and capped by size) and are parsed in memory
(``io.BytesIO``), never from a path:

- **PDF** (pypdf): the text layer, one ``## Page N`` section per page that has text, so a chunk's heading
  path, and with it the citation, carries the page number ("Page 3"). Title: the PDF's metadata title
  when it is a real one, else the first line of text. A PDF without any text layer (a scan) is refused
  with a reason: it needs OCR first.
- **DOCX** (python-docx): ``Heading 1/2/3…`` styles become ``#``/``##``/``###``, list paragraphs ``- ``
  (indented by level), tables Markdown tables, other paragraphs plain paragraphs, in document order.
  Title: the core properties' title, else the first ``Title``-style paragraph, else the first heading.

An encrypted, truncated or otherwise unreadable file raises `SourceUnreadable` with what to do, never
anything else: the sync skips it and reports the reason.
"""

from __future__ import annotations

import io
import logging
import re
import unicodedata
import zipfile

import structlog

from knowledge.errors import DocumentInvalid, SourceUnreadable

log = structlog.get_logger(__name__)
# pypdf logs every oddity of a damaged file on the stdlib logger; the skip reason already says what matters.
logging.getLogger("pypdf").setLevel(logging.ERROR)

#: File types read as bytes and converted here (lower-case suffixes).
DOCUMENT_TYPES = (".pdf", ".docx")
#: Skip reason of a PDF whose pages carry no text (a scan or photos of pages).
NO_TEXT_LAYER = "no text layer (scanned PDF?); OCR it first (e.g. with ocrmypdf) and sync again"
#: Uncompressed size a .docx package may unpack to (a ZIP bomb is refused before python-docx inflates it).
MAX_UNPACKED_BYTES = 200_000_000
#: Longest title taken from a PDF's first line of text.
MAX_TITLE_CHARS = 120

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # encrypted Office files and old binary .doc files
# A line that Markdown would read as a heading, a setext underline, a code fence or an indented code block.
_MARKDOWN_SIGNIFICANT = re.compile(r"^(#{1,6}(\s|$)|=+\s*$|-{2,}\s*$|`{3,}|~{3,})")
_HEADING_STYLE = re.compile(r"^heading\s+([1-9])$", re.I)
_LIST_LEVEL = re.compile(r"\s(\d)$")
# Titles that PDF writers fill in when the author set none.
_PLACEHOLDER_TITLE = re.compile(r"^(untitled|anonymous|unknown|document\d*|title)$|\.(pdf|docx?|tex|dvi|ps|odt|rtf)$",
                                re.I)


def to_markdown(data: bytes, suffix: str) -> tuple[str, str]:
    """Convert a PDF or DOCX file's bytes to ``(title, markdown body)``.

    Args:
        data: the whole file.
        suffix: its lower-case extension, one of `DOCUMENT_TYPES`.

    Returns:
        ``(title, body)``: title "" when the file names none (PDFs always get one); body non-empty Markdown.

    Raises:
        SourceUnreadable: encrypted, corrupt or truncated file; the message says what to do.
        DocumentInvalid: the file has no text (a scanned PDF: `NO_TEXT_LAYER`; an empty document).
        ValueError: ``suffix`` is not one of `DOCUMENT_TYPES`.
    """
    if suffix == ".pdf":
        return pdf_to_markdown(data)
    if suffix == ".docx":
        return docx_to_markdown(data)
    raise ValueError(f"not a converted document type: {suffix!r} (expected one of {DOCUMENT_TYPES})")


def pdf_to_markdown(data: bytes) -> tuple[str, str]:
    """The text layer of a PDF as ``(title, body)``, one ``## Page N`` section per page that has text.

    Pages without text (images only) are left out; their numbers are not reused, so "Page 3" is the third
    page of the file. Title: metadata ``/Title`` unless a placeholder ("untitled", a file name), else the
    first line of text, at most `MAX_TITLE_CHARS`.

    Raises:
        SourceUnreadable: not a PDF, truncated or damaged, or encrypted with a password.
        DocumentInvalid: no page has text (`NO_TEXT_LAYER`), or the file has no pages.
    """
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not _decrypts_without_password(reader):
            raise SourceUnreadable("encrypted PDF (opens only with a password); save an unprotected copy to ingest it")
        pages = list(reader.pages)
        meta_title = _metadata_title(reader)
    except SourceUnreadable:
        raise
    except Exception as exc:  # pypdf raises many types on damaged input (PdfReadError, KeyError, ValueError...)
        raise SourceUnreadable(f"not a readable PDF ({_why(exc)}); re-export or re-download it") from None
    if not pages:
        raise DocumentInvalid("PDF has no pages")
    sections, empty, broken = [], [], []
    for number, page in enumerate(pages, start=1):
        try:
            text = _clean_text(page.extract_text() or "")
        except Exception as exc:  # one damaged page must not lose the others
            broken.append(number)
            log.warning("pdf.page_unreadable", page=number, error=_why(exc))
            continue
        if text:
            sections.append((number, text))
        else:
            empty.append(number)
    if not sections:
        if broken:
            raise SourceUnreadable(f"no page of the PDF could be read (damaged pages {_numbers(broken)}); "
                                   "re-export or re-download it")
        raise DocumentInvalid(NO_TEXT_LAYER)
    if empty:
        log.info("pdf.pages_without_text", pages=_numbers(empty), hint="scanned pages need OCR to be searchable")
    body = "\n\n".join(f"## Page {number}\n\n{text}" for number, text in sections)
    return meta_title or _first_line_title(sections[0][1]), body


def docx_to_markdown(data: bytes) -> tuple[str, str]:
    """A Word document's body as ``(title, Markdown)``: headings, paragraphs, lists and tables in order.

    Headers, footers, comments and images are left out. Title: core properties ``title``, else the first
    ``Title``-style paragraph, else the first heading, else "" (the caller falls back to the file name).

    Raises:
        SourceUnreadable: password-protected, an old binary ``.doc`` renamed, not a ZIP package, damaged, or
            unpacking to more than `MAX_UNPACKED_BYTES`.
        DocumentInvalid: no text in the document body.
    """
    import docx

    if data[:8] == _OLE_MAGIC:
        raise SourceUnreadable("password-protected Word file, or an old binary .doc renamed to .docx; "
                               "save an unprotected .docx copy to ingest it")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            unpacked = sum(info.file_size for info in package.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise SourceUnreadable(f"not a readable .docx (not a ZIP package: {_why(exc)}); re-save it from Word") from None
    if unpacked > MAX_UNPACKED_BYTES:
        raise SourceUnreadable(f".docx unpacks to {unpacked:,} bytes, over the {MAX_UNPACKED_BYTES:,}-byte limit "
                               "(not read)")
    try:
        document = docx.Document(io.BytesIO(data))
        title = (document.core_properties.title or "").strip()
        blocks = _docx_blocks(document)
    except Exception as exc:  # python-docx/lxml raise KeyError, ValueError, XMLSyntaxError... on damaged parts
        raise SourceUnreadable(f"not a readable .docx ({_why(exc)}); re-save it from Word") from None
    heading_title = next((text for kind, text in blocks if kind == "title"), "") or next(
        (text.lstrip("#").strip() for kind, text in blocks if kind == "heading"), "")
    title = " ".join((title or heading_title).split())
    body = _join_blocks([(kind, text) for kind, text in blocks if not (kind == "title" and text == title)])
    if not body.strip():
        raise DocumentInvalid("no text in the Word document")
    return title, body


def _docx_blocks(document) -> list[tuple[str, str]]:
    """``(kind, markdown)`` per body element; kind is heading, title, paragraph, item or table."""
    from docx.table import Table

    blocks = []
    for element in document.iter_inner_content():
        if isinstance(element, Table):
            table = _docx_table(element)
            if table:
                blocks.append(("table", table))
            continue
        text = _clean_text(element.text)
        if not text:
            continue
        style = (element.style.name if element.style is not None else "") or ""
        heading = _HEADING_STYLE.match(style)
        if heading:
            blocks.append(("heading", "#" * min(int(heading.group(1)), 6) + " " + " ".join(text.split())))
        elif style.lower() == "title":
            blocks.append(("title", " ".join(text.split())))
        elif _list_level(element, style) is not None:
            blocks.append(("item", "  " * _list_level(element, style) + "- " + " ".join(text.split())))
        else:
            blocks.append(("paragraph", text))
    return blocks


def _list_level(paragraph, style: str) -> int | None:
    """Nesting level (0 = top) of a list paragraph, None when the paragraph is not a list item."""
    p_pr = paragraph._p.pPr
    num_pr = p_pr.numPr if p_pr is not None else None
    if num_pr is not None and num_pr.ilvl is not None and num_pr.ilvl.val is not None:
        return min(int(num_pr.ilvl.val), 8)
    if num_pr is not None or style.lower().startswith("list"):
        level = _LIST_LEVEL.search(style)  # "List Bullet 2" is the second level
        return min(int(level.group(1)) - 1, 8) if level else 0
    return None


def _docx_table(table) -> str:
    """A Word table as a Markdown table: first row as header, merged cells once, ``|`` escaped."""
    rows = []
    for row in table.rows:
        cells, previous = [], None
        for cell in row.cells:
            if previous is not None and cell._tc is previous._tc:  # a horizontally merged cell repeats
                continue
            previous = cell
            cells.append(" ".join(_clean_text(cell.text).split()).replace("|", "\\|"))
        if any(cells):
            rows.append(cells)
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


def _join_blocks(blocks: list[tuple[str, str]]) -> str:
    """Blocks separated by blank lines; consecutive list items stay one list (one line each)."""
    out: list[str] = []
    for i, (kind, text) in enumerate(blocks):
        if i and not (kind == "item" and blocks[i - 1][0] == "item"):
            out.append("")
        out.append(text)
    return "\n".join(out)


def _clean_text(text: str) -> str:
    """Extracted text made safe Markdown: control characters dropped, line ends unified, lines trimmed, runs
    of blank lines collapsed, and a line Markdown would read as structure (``# x``, ``---``, a code fence)
    escaped, so only the converter makes headings."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x0b", "\n")
    text = "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) != "Cc")
    lines = []
    for line in text.split("\n"):
        line = line.strip()
        if _MARKDOWN_SIGNIFICANT.match(line):
            line = "\\" + line
        if line or (lines and lines[-1]):
            lines.append(line)
    return "\n".join(lines).strip()


def _decrypts_without_password(reader) -> bool:
    """True when an encrypted PDF opens with the empty user password (owner-only restrictions)."""
    try:
        return bool(reader.decrypt(""))
    except Exception:  # noqa: BLE001 - unknown algorithm, missing crypto backend: treated as locked
        return False


def _metadata_title(reader) -> str:
    try:
        title = (reader.metadata.title if reader.metadata is not None else None) or ""
    except Exception:  # noqa: BLE001 - a damaged info dictionary only loses the title
        return ""
    title = " ".join(str(title).split())
    title = re.sub(r"^Microsoft (Word|PowerPoint) - ", "", title)
    return "" if _PLACEHOLDER_TITLE.search(title) else title


def _first_line_title(text: str) -> str:
    line = next((ln.lstrip("\\").strip() for ln in text.split("\n") if ln.strip()), "")
    if len(line) <= MAX_TITLE_CHARS:
        return line
    return line[:MAX_TITLE_CHARS].rsplit(" ", 1)[0] + "…"


def _numbers(pages: list[int]) -> str:
    return ", ".join(map(str, pages[:10])) + (f" and {len(pages) - 10} more" if len(pages) > 10 else "")


def _why(exc: Exception) -> str:
    message = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
