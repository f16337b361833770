"""PDF (text layer, page headings) and Word (.docx) pages, on real files generated in tmp_path."""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone
from pathlib import Path

import docx
import pytest
from click.testing import CliRunner
from pypdf import PdfReader, PdfWriter
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from config import Settings, SourceConfig
from knowledge.documents import NO_TEXT_LAYER, docx_to_markdown, pdf_to_markdown
from knowledge.errors import DocumentInvalid, SourceUnreadable
from knowledge.parsing import parse_document
from knowledge.sources import SourceFile, list_folder, read_text

# Each page is long enough (>= chunking.min_tokens) to stay a chunk of its own, with its own page heading.
TRAVEL_PAGES = [
    ["Travel policy", "Book trains and flights through the travel desk at least two weeks before the trip,",
     "and choose the cheapest fare that arrives in time for the first meeting of the day."],
    ["Expense refunds", "Expenses are refunded within 30 days of the receipt being uploaded to the expense tool,",
     "provided the receipt shows the date, the amount and the name of the shop or the airline."],
    ["Hotels", "Hotels are booked for at most 180 euros a night in capitals and 120 euros elsewhere,",
     "breakfast included; the travel desk books rooms for stays longer than three nights."],
]


def make_pdf(path: Path, pages: list[list[str] | None], title: str | None = None) -> Path:
    """A PDF with one text line per string; a None page carries only a drawing (no text layer)."""
    pdf = canvas.Canvas(str(path), pagesize=A4)
    if title:
        pdf.setTitle(title)
    for lines in pages:
        if lines is None:
            pdf.rect(100, 300, 300, 300, fill=1)  # what a scan looks like to a text extractor: no text
        for i, line in enumerate(lines or []):
            pdf.drawString(72, 760 - 18 * i, line)
        pdf.showPage()
    pdf.save()
    return path


def make_docx(path: Path, title: str | None = "Leave policy") -> Path:
    document = docx.Document()
    if title:
        document.core_properties.title = title
    document.add_heading("Leave", 1)
    document.add_paragraph("Everyone gets 25 days of annual leave per calendar year.")
    document.add_heading("Carrying over", 2)
    document.add_paragraph("Up to five unused days carry over to the next year.", style="List Bullet")
    document.add_paragraph("Carried days expire on March 31.", style="List Bullet 2")
    document.add_heading("Details", 3)
    table = document.add_table(rows=2, cols=2)
    for cell, text in zip(table._cells, ["Years employed", "Days | extra", "5+", "2"]):
        cell.text = text
    document.save(str(path))
    return path


def listed(path: Path, collection: str = "docs") -> SourceFile:
    stat = path.stat()
    return SourceFile(collection, path.name, path, datetime.fromtimestamp(stat.st_mtime, tz=timezone.utc),
                      stat.st_size)


def parsed(path: Path):
    return parse_document(read_text(listed(path), 5_000_000), path.name)


# --- PDF -------------------------------------------------------------------------------------------


def test_a_pdf_becomes_one_page_heading_per_page_titled_from_its_metadata(tmp_path):
    doc = parsed(make_pdf(tmp_path / "travel.pdf", TRAVEL_PAGES, title="Company travel policy"))

    assert doc.title == "Company travel policy"
    assert doc.body.startswith("## Page 1\n\nTravel policy\nBook trains")
    assert "## Page 2\n\nExpense refunds\nExpenses are refunded within 30 days" in doc.body
    assert doc.body.count("## Page ") == 3


def test_a_pdf_without_a_metadata_title_is_titled_by_its_first_line(tmp_path):
    # reportlab writes the placeholder title "untitled" when none is set
    doc = parsed(make_pdf(tmp_path / "travel.pdf", TRAVEL_PAGES))

    assert doc.title == "Travel policy"


def test_pages_without_text_are_left_out_and_keep_the_numbering(tmp_path):
    doc = parsed(make_pdf(tmp_path / "mixed.pdf", [TRAVEL_PAGES[0], None, TRAVEL_PAGES[1]]))

    assert "## Page 2" not in doc.body and "## Page 3\n\nExpense refunds" in doc.body


def test_a_scanned_pdf_is_refused_with_the_reason(tmp_path):
    with pytest.raises(DocumentInvalid) as raised:
        read_text(listed(make_pdf(tmp_path / "scan.pdf", [None, None])), 5_000_000)

    assert str(raised.value) == NO_TEXT_LAYER
    assert NO_TEXT_LAYER.startswith("no text layer (scanned PDF?); OCR it first")


def test_pdf_text_never_makes_headings_of_its_own(tmp_path):
    title, body = pdf_to_markdown(make_pdf(tmp_path / "x.pdf", [["# not a heading", "Some text", "-----",
                                                                "```", "more text"]]).read_bytes())

    assert body == "## Page 1\n\n\\# not a heading\nSome text\n\\-----\n\\```\nmore text"
    assert title == "# not a heading"


def test_a_corrupt_or_truncated_pdf_is_unreadable_not_a_crash(tmp_path):
    whole = make_pdf(tmp_path / "whole.pdf", TRAVEL_PAGES).read_bytes()
    for data in (b"%PDF-1.7\nthis is not really a PDF", whole[: len(whole) // 3], b""):
        with pytest.raises(SourceUnreadable, match="not a readable PDF"):
            pdf_to_markdown(data)


def test_a_password_protected_pdf_is_unreadable_with_what_to_do(tmp_path):
    writer = PdfWriter(clone_from=PdfReader(make_pdf(tmp_path / "x.pdf", TRAVEL_PAGES)))
    writer.encrypt("s3cret", algorithm="RC4-128")
    locked = io.BytesIO()
    writer.write(locked)

    with pytest.raises(SourceUnreadable, match=r"encrypted PDF .*save an unprotected copy"):
        pdf_to_markdown(locked.getvalue())


def test_a_pdf_locked_only_for_editing_is_read(tmp_path):
    writer = PdfWriter(clone_from=PdfReader(make_pdf(tmp_path / "x.pdf", TRAVEL_PAGES)))
    writer.encrypt("", owner_password="owner", algorithm="RC4-128")  # opens without a password
    locked = io.BytesIO()
    writer.write(locked)

    assert "## Page 3" in pdf_to_markdown(locked.getvalue())[1]


# --- DOCX ------------------------------------------------------------------------------------------


def test_a_docx_keeps_headings_lists_and_tables(tmp_path):
    doc = parsed(make_docx(tmp_path / "leave.docx"))

    assert doc.title == "Leave policy"
    assert doc.body == (
        "# Leave\n\n"
        "Everyone gets 25 days of annual leave per calendar year.\n\n"
        "## Carrying over\n\n"
        "- Up to five unused days carry over to the next year.\n"
        "  - Carried days expire on March 31.\n\n"
        "### Details\n\n"
        "| Years employed | Days \\| extra |\n| --- | --- |\n| 5+ | 2 |"
    )


def test_a_docx_without_a_title_property_is_titled_by_its_title_paragraph_or_first_heading(tmp_path):
    assert parsed(make_docx(tmp_path / "leave.docx", title=None)).title == "Leave"
    document = docx.Document()
    document.add_heading("Parental leave", 0)  # the "Title" style
    document.add_paragraph("Sixteen weeks of parental leave, fully paid.")
    document.save(str(tmp_path / "parental.docx"))

    doc = parsed(tmp_path / "parental.docx")

    assert doc.title == "Parental leave" and doc.body == "Sixteen weeks of parental leave, fully paid."


def test_docx_and_pdf_bytes_are_not_sniffed_as_binary(tmp_path):
    path = make_docx(tmp_path / "leave.docx")
    assert b"\x00" in path.read_bytes()[:8192]  # a ZIP package: the text sniffer would call it binary

    assert "Everyone gets 25 days" in read_text(listed(path), 5_000_000)


def test_a_corrupt_docx_an_encrypted_one_and_an_empty_one_are_skipped_with_reasons(tmp_path):
    with pytest.raises(SourceUnreadable, match=r"not a readable \.docx \(not a ZIP package"):
        docx_to_markdown(b"PK\x03\x04 truncated")
    with pytest.raises(SourceUnreadable, match="password-protected Word file"):
        docx_to_markdown(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504)  # an OLE container
    whole = make_docx(tmp_path / "x.docx").read_bytes()
    with pytest.raises(SourceUnreadable, match=r"not a readable \.docx"):
        docx_to_markdown(whole[: len(whole) // 2])
    docx.Document().save(str(tmp_path / "empty.docx"))
    with pytest.raises(DocumentInvalid, match="no text"):
        docx_to_markdown((tmp_path / "empty.docx").read_bytes())


# --- through a source folder, the sync and `ask` ------------------------------------------------------


def test_pdf_and_docx_are_listed_by_default(tmp_path):
    make_pdf(tmp_path / "travel.pdf", TRAVEL_PAGES)
    make_docx(tmp_path / "Leave.DOCX")
    (tmp_path / "old.doc").write_bytes(b"\xd0\xcf\x11\xe0")

    files, skipped = list_folder(SourceConfig(name="docs", path=str(tmp_path)))

    assert [f.rel_path for f in files] == ["Leave.DOCX", "travel.pdf"]
    assert skipped == [("docs:old.doc", "unsupported file type .doc")]


def test_sync_indexes_pdf_pages_and_skips_scans_and_corrupt_files_with_reasons(tmp_path, embedder):
    from knowledge import KnowledgeBase

    src = tmp_path / "src"
    src.mkdir()
    make_pdf(src / "travel.pdf", TRAVEL_PAGES, title="Travel policy")
    make_docx(src / "leave.docx")
    make_pdf(src / "scan.pdf", [None])
    (src / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj <<")
    (src / "broken.docx").write_bytes(b"not a zip")
    kb = KnowledgeBase(Settings(sources=[SourceConfig(name="docs", path=str(src))]), tmp_path / "home",
                       embedder=embedder)

    report = kb.sync()

    assert sorted(report.added) == ["docs:leave.docx", "docs:travel.pdf"]
    reasons = dict(report.skipped)
    assert reasons["docs:scan.pdf"] == NO_TEXT_LAYER
    assert reasons["docs:broken.pdf"].startswith("not a readable PDF")
    assert reasons["docs:broken.docx"].startswith("not a readable .docx")
    headings = {tuple(c["heading_path"]) for c in kb.index().chunks if c["doc_id"] == "docs:travel.pdf"}
    assert headings == {("Page 1",), ("Page 2",), ("Page 3",)}


def test_ingest_and_ask_cite_the_pdf_page(tmp_path):
    """`minerva ingest FOLDER` then `minerva ask`: the citation names the PDF's page 2."""
    from bot.cli.main import cli

    folder = tmp_path / "handbook"
    folder.mkdir()
    make_pdf(folder / "travel.pdf", TRAVEL_PAGES, title="Travel policy")
    make_docx(folder / "leave.docx")
    home = ["--home", str(tmp_path / "home")]

    ingest = CliRunner().invoke(cli, [*home, "ingest", str(folder)])
    assert ingest.exit_code == 0, ingest.output
    asked = CliRunner().invoke(cli, [*home, "ask", "--json", "How soon are expenses refunded after the receipt?"])

    assert asked.exit_code == 0, asked.output
    answer = json.loads(asked.output)
    first = answer["citations"][0]
    assert (first["doc_id"], first["heading"]) == ("handbook:travel.pdf", "Page 2"), answer
    assert "30 days" in answer["answer"]
