"""Heading-aware chunking of real pages: heading paths, token budget, overlap, code blocks."""

from __future__ import annotations

import hashlib
import re

import pytest

from config import ChunkingConfig
from knowledge.chunking import chunk_document, count_tokens, embedding_text
from knowledge.markdown_tree import open_fence
from knowledge.parsing import parse_document
from tests.conftest import CORPUS, SAMPLE_KB, copy_pages, needs_shared

HANDBOOK = CORPUS / "tts-handbook" / "2025-02"
RUNBOOKS = CORPUS / "prometheus-runbooks" / "runbooks"
DEFAULT = ChunkingConfig()


def _chunks(path, cfg=DEFAULT):
    doc = parse_document(path.read_text(encoding="utf-8"), path.name)
    return doc, chunk_document(doc.title, doc.body, cfg)


@pytest.fixture(scope="module")
def real_pages(tmp_path_factory):
    """Copies of every runbook and of the handbook's chapters, tools and launching-software pages."""
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} is missing")
    dest = tmp_path_factory.mktemp("pages")
    pages = {}
    for root, prefix in ((RUNBOOKS, "runbooks"), (HANDBOOK / "18f" / "chapters", "chapters"),
                         (HANDBOOK / "tools", "tools"), (HANDBOOK / "launching-software", "launching")):
        for src in sorted(root.rglob("*.md")):
            pages[f"{prefix}/{src.relative_to(root).as_posix()}"] = src
    copy_pages(dest, pages)
    return sorted(dest.rglob("*.md"))


def _parsed(paths):
    from knowledge import DocumentInvalid

    for path in paths:
        try:
            yield path, parse_document(path.read_text(encoding="utf-8"), path.name)
        except DocumentInvalid:  # redirect stubs, _index.md stubs
            continue


@needs_shared
@pytest.mark.parametrize(
    "cfg",
    [DEFAULT, ChunkingConfig(max_tokens=50, overlap_tokens=10, min_tokens=5),
     ChunkingConfig(max_tokens=20, overlap_tokens=19, min_tokens=5)],
    ids=["200-40", "50-10", "20-19"],
)
def test_no_chunk_exceeds_the_token_budget(real_pages, cfg):
    over, n_chunks = [], 0
    for path, doc in _parsed(real_pages):
        for chunk in chunk_document(doc.title, doc.body, cfg):
            n_chunks += 1
            if count_tokens(chunk.text) > cfg.max_tokens:
                over.append((path.name, chunk.index, count_tokens(chunk.text)))

    assert n_chunks > 300
    assert over == []


@needs_shared
def test_split_pieces_start_with_the_end_of_the_previous_piece(real_pages):
    cfg = ChunkingConfig(max_tokens=50, overlap_tokens=10, min_tokens=5)
    n_overlaps = 0
    for path, doc in _parsed(real_pages):
        chunks = chunk_document(doc.title, doc.body, cfg)
        for prev, nxt in zip(chunks, chunks[1:]):
            if not nxt.text.startswith("…"):
                continue
            n_overlaps += 1
            if nxt.text.startswith("…\n\n") and (_ends_with_code(prev.text)
                                                 or prev.text.rstrip().split("\n")[-1].lstrip().startswith("|")):
                continue  # after an example or a table the marker alone: its last lines out of their block
            # the piece opens with "…" and a suffix of the previous piece of at most overlap_tokens tokens
            # (0 readable tokens happens when the suffix is markup, e.g. "</summary>")
            tails = [prev.text[i:] for i in range(len(prev.text)) if nxt.text[1:].startswith(prev.text[i:])]
            assert any(count_tokens(t) <= cfg.overlap_tokens for t in tails), (path.name, nxt.index)
            assert nxt.heading_path == prev.heading_path

    assert n_overlaps > 50


@needs_shared
def test_runbook_heading_paths(tmp_path):
    copy_pages(tmp_path, {"space.md": RUNBOOKS / "node" / "NodeFilesystemSpaceFillingUp.md"})

    doc, chunks = _chunks(tmp_path / "space.md")

    assert doc.title == "Node Filesystem Space Filling Up"
    assert [c.heading_path for c in chunks] == [
        ("NodeFilesystemSpaceFillingUp", "Meaning"),  # "# Name" merged into its short "## Meaning"
        ("NodeFilesystemSpaceFillingUp", "Impact"),
        ("NodeFilesystemSpaceFillingUp", "Diagnosis"),
        ("NodeFilesystemSpaceFillingUp", "Mitigation"),
    ]
    assert [c.index for c in chunks] == [0, 1, 2, 3]


@needs_shared
def test_handbook_heading_paths_nest_by_level(tmp_path):
    copy_pages(tmp_path, {"infrastructure.md": HANDBOOK / "launching-software" / "infrastructure.md"})

    _, chunks = _chunks(tmp_path / "infrastructure.md")
    paths = [c.heading_path for c in chunks]

    assert ("Overview", "Server-side code", "Infrastructure as a service (IaaS)",
            "Microsoft Azure and Google Cloud Platform (GCP)") in paths
    assert ("Amazon Web Services", "Common controls", "Require MFA") in paths
    assert ("Pinning Dependencies", "Node.JS", "Using npm", "npm 6.x") in paths
    # a later "##" heading closes the deeper levels of the one before
    assert ("Domains", "DNS") in paths


@needs_shared
@pytest.mark.parametrize(
    ("src", "comment"),
    [
        (RUNBOOKS / "node" / "NodeFileDescriptorLimit.md", "# sysctl -a | grep 'fs.file-'"),
        (RUNBOOKS / "node" / "NodeFilesystemSpaceFillingUp.md", "# TODO: Command needed"),
        (HANDBOOK / "launching-software" / "infrastructure.md", "## or, with stricter version bounds"),
    ],
    ids=["sysctl", "todo", "pip-comment"],
)
def test_hash_line_in_fenced_code_is_not_a_heading(tmp_path, src, comment):
    copy_pages(tmp_path, {src.name: src})

    _, chunks = _chunks(tmp_path / src.name)

    holders = [c for c in chunks if comment in c.text]
    assert holders, "the code block text is kept"
    heading_names = {h for c in chunks for h in c.heading_path}
    assert comment.lstrip("# ") not in heading_names
    assert all("```" in c.text for c in holders)  # the comment stays inside its code block


@needs_shared
def test_page_without_long_sections_keeps_all_its_text_once(tmp_path):
    copy_pages(tmp_path, {"space.md": RUNBOOKS / "node" / "NodeFilesystemSpaceFillingUp.md"})

    doc, chunks = _chunks(tmp_path / "space.md")

    assert not any(c.text.startswith("…") for c in chunks)  # nothing was split, so nothing overlaps
    squash = lambda s: re.sub(r"\s+", " ", s).strip()  # noqa: E731
    assert squash(" ".join(c.text for c in chunks)) == squash(doc.body)


@needs_shared
def test_no_chunk_is_only_headings(real_pages):
    for path, doc in _parsed(real_pages):
        for chunk in chunk_document(doc.title, doc.body, DEFAULT):
            body_lines = [ln for ln in chunk.text.splitlines() if ln.strip() and not re.match(r"#{1,6} ", ln)]
            assert body_lines, (path.name, chunk.index, chunk.text)


def test_html_page_chunks_by_its_headings():
    doc, chunks = _chunks(SAMPLE_KB / "api" / "changelog.html")

    assert [c.heading_path for c in chunks][:3] == [
        ("Nimbus Cloud API changelog",),
        ("Nimbus Cloud API changelog", "v2.4.0 — 2026-10-14"),
        ("Nimbus Cloud API changelog", "v2.3.0 — 2026-06-02"),
    ]
    assert "certificate.renewed" in chunks[1].text


def test_txt_page_without_headings_is_split_within_budget():
    doc, chunks = _chunks(SAMPLE_KB / "runbooks" / "escalation-contacts.txt")

    assert len(chunks) > 1
    assert all(c.heading_path == () for c in chunks)
    assert all(count_tokens(c.text) <= DEFAULT.max_tokens for c in chunks)
    assert chunks[1].text.startswith("…")


def test_content_hash_is_sha256_of_the_embedding_text():
    doc, chunks = _chunks(SAMPLE_KB / "api" / "changelog.html")

    for c in chunks:
        text = embedding_text(doc.title, c.heading_path, c.text)
        assert c.content_hash == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert embedding_text("Changelog", ("Changelog", "v2"), "see [docs](https://x.example)") == "Changelog > v2\nsee docs"


def test_count_tokens_counts_words_and_cjk_characters_not_link_targets():
    assert count_tokens("Rotate the key.") == 4
    assert count_tokens("[the docs](https://example.com/a/b/c)") == 2
    assert count_tokens("<b>bold</b>") == 1
    assert count_tokens("料金プラン") == 5
    assert count_tokens("") == 0


def test_a_short_section_merged_into_its_subsection_takes_the_subsections_heading_path():
    body = ("## Migration guide\n\nThe following sections list the changes.\n\n### Changes to `BaseModel`\n\n"
            + "Methods were renamed. " * 30 + "\n\n| V1 | V2 |\n| --- | --- |\n| `dict()` | `model_dump()` |\n")
    chunks = chunk_document("Migration", body, ChunkingConfig(max_tokens=60, overlap_tokens=5, min_tokens=20))
    assert {c.heading_path for c in chunks} == {("Migration guide", "Changes to `BaseModel`")}


@needs_shared
@pytest.mark.parametrize("cfg", [DEFAULT, ChunkingConfig(max_tokens=50, overlap_tokens=10, min_tokens=5)],
                         ids=["200-40", "50-10"])
def test_a_long_paragraph_is_cut_between_words_never_inside_a_link(tmp_path, real_pages, cfg):
    # the security-incidents steps are one 300-token list: cut between tokens, its cloud.gov link read
    # "…/security-ir" at the end of one chunk and "-checklist/)" as a paragraph of its own in the next
    copy_pages(tmp_path, {"security-incidents.md": HANDBOOK / "general-information-and-resources" / "tech-policies"
                          / "security-incidents.md"})
    cut = []
    for path, doc in _parsed([*real_pages, tmp_path / "security-incidents.md"]):
        words = set(doc.body.split())
        # a run without whitespace longer than a piece's budget (a table rule, a long URL) must be cut; in code,
        # the budget less its fence lines ("```console" and "```": 7 tokens)
        too_long = [w for w in words if count_tokens(w) > cfg.max_tokens - cfg.overlap_tokens - 1 - 7]
        for chunk in chunk_document(doc.title, doc.body, cfg):
            cut += [(path.name, chunk.index, w) for w in chunk.text.lstrip("…").split()
                    if w not in words and not any(w in long for long in too_long)]

    assert cut == []


@needs_shared
def test_a_section_is_named_as_a_reader_sees_its_heading():
    """A citation named "Keyword arguments removed {#removed-kwargs}": the heading's attribute list is markup."""
    page = CORPUS / "pydantic-docs" / "v2.13.4" / "errors" / "usage_errors.md"
    doc = parse_document(page.read_text(encoding="utf-8"), "errors/usage_errors.md")
    paths = {name for c in chunk_document(doc.title, doc.body, ChunkingConfig()) for name in c.heading_path}

    assert "Keyword arguments removed" in paths
    assert not [name for name in paths if "{#" in name or "{:" in name]


def _ends_with_code(text: str) -> bool:
    return text.rstrip().split("\n")[-1].lstrip().startswith(("```", "~~~"))


@needs_shared
@pytest.mark.parametrize("cfg", [DEFAULT, ChunkingConfig(max_tokens=50, overlap_tokens=10, min_tokens=5)],
                         ids=["200-40", "50-10"])
def test_no_chunk_starts_or_ends_inside_a_code_block(cfg):
    """Pydantic's pages (both versions): a piece cut inside an example ("…height: float", the JSON schema printed
    under "Example - JSON Schema" on the why page) was read as prose and quoted as one flattened line in a
    Japanese asker's reply. Every chunk now closes each block it opens, and one that continues a block opens it
    again with its language; only a page whose own fence is never closed may end inside one."""
    pages = sorted((CORPUS / "pydantic-docs").rglob("*.md"))
    ends_inside, continued, n_chunks = [], 0, 0
    for path, doc in _parsed(pages):
        if open_fence(doc.body):
            continue
        for chunk in chunk_document(doc.title, doc.body, cfg):
            n_chunks += 1
            if open_fence(chunk.text):
                ends_inside.append((path.name, chunk.index))
            continued += chunk.text.startswith("…") and "\n    ```python" in chunk.text[:40]

    assert n_chunks > 1000
    assert ends_inside == []
    assert continued > 0  # the why page's schema example goes on in a piece of its own


@needs_shared
def test_a_long_example_is_cut_between_lines_with_its_fence_closed_and_opened_again():
    doc, chunks = _chunks(CORPUS / "pydantic-docs" / "v2.13.4" / "why.md")
    schema = [c for c in chunks if c.heading_path[-1] == "JSON Schema"]

    first, second = (c for c in schema if "'$defs'" in c.text or c.text.startswith("…\n\n    ```python"))
    assert first.text.rstrip().endswith("\n    ```")
    assert second.text.startswith("…\n\n    ```python\n")
    assert "print(Meeting.model_json_schema())" in first.text


@needs_shared
def test_a_lead_in_opens_the_chunk_of_the_list_it_introduces():
    """"5. Enter the following information in Section 3:" ended one chunk and its items (the FEIN) opened the
    next: a reader of the first saw the lead-in without the list (issue 22, hb-022)."""
    _, chunks = _chunks(HANDBOOK / "getting-started" / "classes" / "benefits.md")

    (lead,) = [c for c in chunks if "Enter the following information in Section 3:" in c.text]
    assert "44-0553234" in lead.text
    assert all(count_tokens(c.text) <= DEFAULT.max_tokens for c in chunks)



@needs_shared
def test_a_table_over_the_budget_is_cut_between_rows_each_piece_with_its_header():
    """Cut between words, Pydantic's migration table ended a piece mid-cell and a direct answer showed
    "• State: Not required,"."""
    doc, chunks = _chunks(CORPUS / "pydantic-docs" / "v2.13.4" / "migration.md")

    pieces = [c.text for c in chunks if "| State " in c.text]
    assert len(pieces) > 1
    for text in pieces:
        rows = [line for line in text.split("\n") if line.lstrip().startswith("|")]
        assert rows[0].startswith("| State ") and rows[1].startswith("|---")
        assert all(row.rstrip().endswith("|") for row in rows)  # no row cut
