"""Source folders never lead outside themselves, never block, and report every entry (issue 10, item 1).

Real folders under tmp_path: symlinks out of the folder and in loops, a FIFO, a Unix socket, a device,
aliases, and odd encodings; the sync tests ingest them with the packaged MiniLM model.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from config import ChunkingConfig, Settings, SourceConfig
from knowledge import KnowledgeBase
from knowledge.errors import SourceUnreadable
from knowledge.sources import OUTSIDE_REASON, SourceFile, list_folder, read_text

SECRET = "Quetzalcoatl-7 host secret: the root password is hunter2"
PAGE = "# Expenses\n\nSubmit travel expenses within thirty days using the finance portal.\n"


def _source(folder: Path, **kwargs) -> SourceConfig:
    return SourceConfig(name="hb", path=str(folder), **kwargs)


def _unix_socket(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    return sock


@pytest.fixture
def outside(tmp_path) -> Path:
    """A file outside the source folder whose text must never reach the index."""
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_text(f"# Host file\n\n{SECRET}\n", encoding="utf-8")
    return secret


@pytest.fixture
def hostile(tmp_path, outside) -> Path:
    """A source folder with every kind of entry the issue lists; yields the folder (socket kept open)."""
    src = tmp_path / "src"
    (src / "tools").mkdir(parents=True)
    (src / "tools" / "tock.md").write_text(PAGE, encoding="utf-8")
    (src / "notes.md").symlink_to(outside)                                 # a file symlink out of the folder
    (src / "escape").symlink_to(outside.parent, target_is_directory=True)  # a folder symlink out
    (src / "loop").symlink_to(".", target_is_directory=True)               # loop -> .
    (src / "tools" / "up").symlink_to("..", target_is_directory=True)      # up -> .. (a loop too)
    (src / "tock-alias.md").symlink_to("tools/tock.md")                    # an alias of a page
    (src / "zero.md").symlink_to("/dev/zero")                              # a device, outside the folder
    (src / "a.md").symlink_to("b.md")
    (src / "b.md").symlink_to("a.md")                                      # a symlink loop between files
    os.mkfifo(src / "pipe.md")
    (src / "empty.md").write_bytes(b"")
    (src / "huge.md").write_bytes(b"# Huge\n\n" + b"lorem ipsum dolor sit amet\n" * 2_400_000)  # ~65 MB
    (src / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (src / "crlf.md").write_bytes(b"---\r\ntitle: Parking\r\n---\r\n\r\n# Parking\r\n\r\nVisitors park on level two.\r\n")
    (src / "bom.md").write_bytes("\ufeff---\ntitle: Badges\n---\n\nBadges are collected at the front desk.\n".encode())
    (src / "latin1.md").write_bytes("# Café\n\nLe menu du café est à jour.\n".encode("latin-1"))
    with _unix_socket(src / "sock.md"):
        yield src


EXPECTED_SKIPS = {
    "hb:notes.md": OUTSIDE_REASON,
    "hb:zero.md": OUTSIDE_REASON,
    "hb:escape": "folder symlink, target outside the source folder (not followed)",
    "hb:loop": "folder symlink loop: points to the source folder, which contains it (not followed)",
    "hb:tools/up": "folder symlink loop: points to the source folder, which contains it (not followed)",
    "hb:tock-alias.md": "alias of tools/tock.md (symlink to a page already in the source)",
    "hb:a.md": "symlink loop (not read)",
    "hb:b.md": "symlink loop (not read)",
    "hb:pipe.md": "named pipe (FIFO), not a regular file (not opened)",
    "hb:sock.md": "socket, not a regular file (not opened)",
}


def test_listing_reports_every_entry_that_is_not_a_regular_file_inside(hostile):
    files, skipped = list_folder(_source(hostile))

    assert dict(skipped) == EXPECTED_SKIPS
    assert [f.rel_path for f in files] == ["bom.md", "crlf.md", "empty.md", "huge.md", "image.md", "latin1.md",
                                           "tools/tock.md"]


def test_device_file_is_not_opened(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    try:
        os.mknod(src / "null.md", 0o600 | 0o020000, os.makedev(1, 3))  # S_IFCHR: /dev/null's numbers
    except (PermissionError, AttributeError):
        pytest.skip("creating a device file needs privileges")

    files, skipped = list_folder(_source(src))

    assert files == []
    assert skipped == [("hb:null.md", "character device, not a regular file (not opened)")]


def test_folder_symlink_inside_the_source_is_reported_not_followed(tmp_path):
    src = tmp_path / "src"
    (src / "tools").mkdir(parents=True)
    (src / "tools" / "zoom.md").write_text(PAGE, encoding="utf-8")
    (src / "apps").symlink_to("tools", target_is_directory=True)

    files, skipped = list_folder(_source(src))

    assert [f.rel_path for f in files] == ["tools/zoom.md"]
    assert skipped == [("hb:apps", "folder symlink to tools/ (not followed: its pages are listed at their own path)")]


@pytest.fixture
def curated(tmp_path) -> Path:
    """A folder laid out like ../shared/corpus: curators' notes beside version folders, and a drafts folder."""
    src = tmp_path / "src"
    for rel in ("README.md", "LICENSE.md", "v1/README.md", "v1/tock.md", "v2/tock.md", "v2/drafts/new.md",
                "v2/drafts/keep.md", "v2/notes.txt"):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(PAGE, encoding="utf-8")
    return src


def test_excluded_files_and_folders_are_reported_not_listed(curated):
    source = _source(curated, exclude=["/README.md", "LICENSE*", "drafts/", "*.txt"])

    files, skipped = list_folder(source)

    assert [f.rel_path for f in files] == ["v1/README.md", "v1/tock.md", "v2/tock.md"]  # "/" anchors to the root
    assert skipped == [("hb:LICENSE.md", "excluded"), ("hb:README.md", "excluded"), ("hb:v2/drafts/", "excluded"),
                       ("hb:v2/notes.txt", "excluded")]


def test_a_negated_pattern_takes_a_file_back_but_not_out_of_an_excluded_folder(curated):
    """As in git: "!" re-includes a file a wildcard excluded; an excluded folder is not walked at all."""
    by_wildcard = _source(curated, exclude=["v2/drafts/*", "!v2/drafts/keep.md"])
    by_folder = _source(curated, exclude=["drafts/", "!drafts/keep.md"])

    assert "v2/drafts/keep.md" in [f.rel_path for f in list_folder(by_wildcard)[0]]
    assert ("hb:v2/drafts/new.md", "excluded") in list_folder(by_wildcard)[1]
    assert "v2/drafts/keep.md" not in [f.rel_path for f in list_folder(by_folder)[0]]
    assert list_folder(by_folder)[1] == [("hb:v2/drafts/", "excluded")]


def test_an_excluded_entry_is_never_stated_nor_opened(tmp_path, outside):
    """Exclusion comes first: a FIFO, a link out of the folder and a folder loop are only "excluded"."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "tock.md").write_text(PAGE, encoding="utf-8")
    os.mkfifo(src / "pipe.md")
    (src / "notes.md").symlink_to(outside)
    (src / "loop").symlink_to(".", target_is_directory=True)

    files, skipped = list_folder(_source(src, exclude=["pipe.md", "notes.md", "loop"]))

    assert [f.rel_path for f in files] == ["tock.md"]
    assert skipped == [("hb:loop/", "excluded"), ("hb:notes.md", "excluded"), ("hb:pipe.md", "excluded")]


def test_symlink_to_a_file_inside_that_is_not_listed_itself_is_one_document(tmp_path):
    """A link to a hidden file is the only way to its text: indexed under the link's name, read at the target."""
    src = tmp_path / "src"
    src.mkdir()
    (src / ".drafts").mkdir()
    (src / ".drafts" / "plan.md").write_text(PAGE, encoding="utf-8")
    (src / "plan.md").symlink_to(".drafts/plan.md")
    (src / "plan-again.md").symlink_to(".drafts/plan.md")

    files, skipped = list_folder(_source(src))

    assert [(f.rel_path, f.real_path) for f in files] == [("plan-again.md", (src / ".drafts" / "plan.md").resolve())]
    assert skipped == [("hb:plan.md", "alias of plan-again.md (symlink to a page already in the source)")]


def test_read_text_refuses_a_fifo_swapped_in_after_listing_without_blocking(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    (file,), _ = list_folder(_source(tmp_path))
    page.unlink()
    os.mkfifo(page)

    started = time.monotonic()
    with pytest.raises(SourceUnreadable, match="not a regular file any more"):
        read_text(file, 1000)
    assert time.monotonic() - started < 5


def test_read_text_refuses_a_symlink_swapped_in_after_listing(tmp_path, outside):
    src = tmp_path / "src"
    src.mkdir()
    page = src / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    (file,), _ = list_folder(_source(src))
    page.unlink()
    page.symlink_to(outside)

    with pytest.raises(SourceUnreadable, match="cannot read"):
        read_text(file, 1000)


def test_read_text_caps_a_file_that_grew_after_listing(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("small", encoding="utf-8")
    file = SourceFile("hb", "page.md", page, None, 5)
    page.write_text("x" * 2000, encoding="utf-8")

    with pytest.raises(SourceUnreadable, match="2,000 bytes is over the 1,000-byte limit"):
        read_text(file, 1000)


def test_read_text_drops_the_bom_and_carriage_returns(tmp_path):
    page = tmp_path / "page.md"
    page.write_bytes("\ufeff# Title\r\n\r\nOne\rTwo\r\n".encode())
    (file,), _ = list_folder(_source(tmp_path))

    assert read_text(file, 1000) == "# Title\n\nOne\nTwo\n"


# --- the sync over a hostile folder ----------------------------------------------------------------------


def _sync_bounded(kb: KnowledgeBase, seconds: float = 60):
    """Run ``kb.sync()`` in a thread; fail (instead of hanging the suite) when it takes over ``seconds``."""
    outcome = {}

    def work():
        try:
            outcome["report"] = kb.sync()
        except BaseException as exc:  # handed to the test thread
            outcome["error"] = exc

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(timeout=seconds)
    assert not thread.is_alive(), f"sync did not finish in {seconds} s (a FIFO or a loop blocked it?)"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["report"]


@pytest.fixture
def hostile_kb(hostile, tmp_path, embedder) -> KnowledgeBase:
    settings = Settings(sources=[_source(hostile)], chunking=ChunkingConfig(max_file_bytes=5_000_000))
    return KnowledgeBase(settings, tmp_path / "home", embedder=embedder)


def test_hostile_folder_ingests_in_bounded_time_reading_nothing_outside(hostile_kb, hostile):
    started = time.monotonic()
    report = _sync_bounded(hostile_kb)
    seconds = time.monotonic() - started

    skipped = dict(report.skipped)
    for doc_id, reason in EXPECTED_SKIPS.items():
        assert skipped[doc_id] == reason
    assert skipped["hb:empty.md"] == "no text after front matter"
    assert skipped["hb:huge.md"].endswith("over the 5,000,000-byte limit (raise chunking.max_file_bytes to ingest it)")
    assert skipped["hb:image.md"] == "binary file (contains NUL bytes)"
    assert skipped["hb:latin1.md"].startswith("not valid UTF-8")
    assert report.added == ["hb:bom.md", "hb:crlf.md", "hb:tools/tock.md"]
    listed = {p.relative_to(hostile).as_posix() for p in hostile.rglob("*") if not p.is_dir() or p.is_symlink()}
    assert {d.split(":", 1)[1] for d in skipped} | {d.split(":", 1)[1] for d in report.added} == listed
    index = hostile_kb.index()
    assert not any("Quetzalcoatl" in c["text"] or "hunter2" in c["text"] for c in index.chunks)
    assert sorted(index.documents) == report.added  # the alias is not a second document
    assert index.documents["hb:crlf.md"]["title"] == "Parking" and index.documents["hb:bom.md"]["title"] == "Badges"
    assert not any("\r" in c["text"] for c in index.chunks)
    assert seconds < 60


def test_citation_url_without_url_base_is_the_path_relative_to_the_source(hostile_kb, hostile):
    _sync_bounded(hostile_kb)

    doc = hostile_kb.index().documents["hb:tools/tock.md"]
    assert doc["url"] == "tools/tock.md"
    (passage, *_) = hostile_kb.search(["travel expenses finance portal"], top_k=1)[0]
    assert passage.url == "tools/tock.md" and str(hostile) not in passage.url


def test_slack_citation_without_url_base_shows_title_and_relative_path(hostile_kb, hostile):
    from bot.slack.blocks import answer_blocks

    _sync_bounded(hostile_kb)
    answer = hostile_kb.ask("How do I submit travel expenses?")
    blocks = json.dumps(answer_blocks(answer), ensure_ascii=False)

    assert [c.url for c in answer.citations] == ["tools/tock.md"]
    assert "Expenses (tools/tock.md)" in blocks
    assert str(hostile.parent) not in blocks


def test_index_with_absolute_urls_gets_relative_ones_on_the_next_sync(hostile_kb, hostile, monkeypatch):
    """Indexes built before issue 10 stored the absolute path as url: the next sync rewrites it."""
    import knowledge.sync

    with monkeypatch.context() as patch:
        patch.setattr(knowledge.sync, "document_url", lambda source, rel: str(Path(source.path) / rel))
        first = _sync_bounded(hostile_kb)
    assert hostile_kb.index().documents["hb:tools/tock.md"]["url"].startswith("/")

    second = _sync_bounded(hostile_kb)

    assert second.generation != first.generation and second.chunks_embedded == 0
    assert KnowledgeBase(hostile_kb.settings, hostile_kb.home, embedder=hostile_kb.embedder).index() \
        .documents["hb:tools/tock.md"]["url"] == "tools/tock.md"
