"""Folder sources: list the files of a collection and read them as text, never leaving the folder.

A document id is stable across syncs: ``"{collection}:{path relative to the folder}"`` (DESIGN.md).

Listing opens no file, and every entry it meets is either listed or reported with a reason (issue 10):

- a symlink whose real path is outside the folder is never read: it could pull any readable file of the
  server into Slack;
- FIFOs, sockets and devices are not opened: opening a FIFO blocks until a writer comes, forever;
- folder symlinks are not followed: ``loop -> .`` never ends, ``up -> ..`` leaves the folder, and the pages
  behind any other one are already listed at their own path;
- a symlink (or hard link) to a page already listed is an alias, not a second document: indexed twice,
  the near-duplicate gate would take the real page's chunks;
- a file or folder the source's ``exclude`` patterns match is reported as ``"excluded"`` before anything else
  is checked: it is never stat'ed nor read, and an excluded folder is not walked (one report line for it, and
  no "!pattern" takes a file inside it back, as in git). A page indexed before is pruned like a deleted one.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import structlog
import yaml

from config import SourceConfig
from knowledge.documents import DOCUMENT_TYPES, to_markdown
from knowledge.errors import SourceMissing, SourceUnreadable

log = structlog.get_logger(__name__)

#: Bytes sniffed for NUL characters to tell binary files from text.
_SNIFF_BYTES = 8192
#: Report reason for a path whose real location is outside the source folder.
OUTSIDE_REASON = "symlink target outside the source folder (not read)"
#: Report reason for a file or folder matched by the source's ``exclude`` patterns.
EXCLUDED_REASON = "excluded"
#: What a file of each non-regular type is called in the report.
_KINDS = ((stat.S_ISFIFO, "named pipe (FIFO)"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
          (stat.S_ISBLK, "block device"), (stat.S_ISDIR, "folder"))


@dataclass(frozen=True)
class SourceFile:
    """One file of a source folder, as listed (not yet read).

    Attributes:
        collection: the source's name.
        rel_path: POSIX path relative to the source folder, e.g. ``"tools/tock.md"``.
        abs_path: absolute path on disk, as listed (under the configured folder path).
        mtime: modification time, timezone-aware UTC.
        size: size in bytes.
        real_path: the path with every symlink resolved, checked to be inside the folder; this is what
            `read_text` opens. None (files made by hand) means ``abs_path``.
    """

    collection: str
    rel_path: str
    abs_path: Path
    mtime: datetime
    size: int
    real_path: Path | None = None

    @property
    def doc_id(self) -> str:
        """Stable document id ``"{collection}:{rel_path}"``."""
        return f"{self.collection}:{self.rel_path}"


def list_folder(source: SourceConfig) -> tuple[list[SourceFile], list[tuple[str, str]]]:
    """List the regular files of a source folder whose extension is configured, in path order.

    Opens no file. Hidden files and folders (name starting with ".") are ignored without a report line;
    every other entry is either listed or reported (see the module docstring for why each is skipped).

    Returns:
        (files, skipped): the files to read, and ``("{collection}:{rel path}", reason)`` for every other
        entry: excluded by the source's ``exclude`` patterns (a folder's path then ends in "/"), unsupported
        extension, symlink out of the folder, folder symlink or loop, FIFO, socket, device, broken symlink,
        alias of a listed page, unlistable folder.

    Raises:
        SourceMissing: the folder does not exist or is not a folder.
    """
    root = Path(source.path)
    if not root.is_dir():
        raise SourceMissing(f"source {source.name!r}: folder {root} does not exist (check `path` in the config)")
    real_root = Path(os.path.realpath(root))
    extensions = {e.lower() for e in source.extensions}
    found, skipped = [], []

    def report(path: Path, reason: str, folder_mark: str = "") -> None:
        skipped.append((f"{source.name}:{path.relative_to(root).as_posix()}{folder_mark}", reason))

    def excluded(path: Path, folder_mark: str = "") -> bool:
        if source.excluded(path.relative_to(root).as_posix() + folder_mark):
            report(path, EXCLUDED_REASON, folder_mark)
            return True
        return False

    def unlistable(exc: OSError) -> None:  # os.walk drops such folders silently otherwise
        report(Path(exc.filename), f"cannot list folder: {exc.strerror}")

    for dirpath, dirnames, filenames in os.walk(root, onerror=unlistable):  # followlinks=False
        folder = Path(dirpath)
        dirnames[:] = [d for d in sorted(dirnames) if not d.startswith(".") and not excluded(folder / d, "/")]
        for name in [d for d in dirnames if (folder / d).is_symlink()]:
            dirnames.remove(name)  # os.walk would not descend, but it would not say so either
            report(folder / name, _folder_link_reason(folder / name, real_root))
        for name in sorted(n for n in filenames if not n.startswith(".")):
            path = folder / name
            if excluded(path):
                continue
            if path.suffix.lower() not in extensions:
                report(path, f"unsupported file type {path.suffix or '(none)'}")
                continue
            checked = _check_file(path, real_root)
            if isinstance(checked, str):
                report(path, checked)
                if checked == OUTSIDE_REASON:
                    log.warning("source.outside_link", source=source.name, path=str(path))
                continue
            found.append((path, *checked))
    files = []
    for path, real, st, alias_of in _mark_aliases(found, root):
        if alias_of:
            report(path, alias_of)
            continue
        mtime = datetime.fromtimestamp(st.st_mtime, tz=timezone.utc)
        files.append(SourceFile(source.name, path.relative_to(root).as_posix(), path, mtime, st.st_size, real))
    skipped.sort()
    return files, skipped


def _inside(path: Path, real_root: Path) -> bool:
    return path == real_root or real_root in path.parents


def _folder_link_reason(link: Path, real_root: Path) -> str:
    """Why a folder symlink is not followed: it leaves the folder, it loops, or its pages are listed already."""
    target = Path(os.path.realpath(link))
    if not _inside(target, real_root):
        return "folder symlink, target outside the source folder (not followed)"
    where = target.relative_to(real_root).as_posix()
    where = "the source folder" if where == "." else f"{where}/"
    if _inside(Path(os.path.realpath(link.parent)), target):
        return f"folder symlink loop: points to {where}, which contains it (not followed)"
    return f"folder symlink to {where} (not followed: its pages are listed at their own path)"


def _check_file(path: Path, real_root: Path) -> str | tuple[Path, os.stat_result]:
    """``(real path, stat)`` of a regular file whose real path is inside the folder, else the reason it is
    skipped. Only ``stat`` calls: nothing is opened."""
    real = Path(os.path.realpath(path))
    if not _inside(real, real_root):
        return OUTSIDE_REASON
    try:
        st = os.stat(path)  # follows the link: the target's type and size
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink loop (not read)"
        if exc.errno == errno.ENOENT and path.is_symlink():
            return "broken symlink: its target does not exist"
        return f"cannot stat: {exc.strerror}"
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "special file")
        return f"{kind}, not a regular file (not opened)"
    return real, st


def _mark_aliases(found: list[tuple[Path, Path, os.stat_result]], root: Path):
    """Yield ``(path, real path, stat, alias reason or "")`` for each found file, in path order.

    Paths that reach the same file (same device and inode) are one document: the path that is not a
    symlink wins, else the first in path order; the others are aliases of it.
    """
    canonical: dict[tuple[int, int], Path] = {}
    for path, _real, st in sorted(found, key=lambda f: (f[0].is_symlink(), f[0])):
        canonical.setdefault((st.st_dev, st.st_ino), path)
    for path, real, st in found:
        first = canonical[(st.st_dev, st.st_ino)]
        reason = ""
        if first != path:
            how = "symlink" if path.is_symlink() else "hard link"
            reason = f"alias of {first.relative_to(root).as_posix()} ({how} to a page already in the source)"
        yield path, real, st, reason


def read_text(file: SourceFile, max_bytes: int) -> str:
    """Read a source file as UTF-8 text, without blocking and without leaving the folder.

    A leading BOM is dropped and CRLF/CR line ends become LF, so quotes carry no stray carriage returns.
    PDF and Word (``.docx``) files are converted to Markdown (`knowledge.documents`): the text is the body
    under a YAML front matter holding the document's ``title``, which `knowledge.parsing.parse_document`
    reads back; they are never sniffed as binary.

    Opens ``file.real_path`` non-blocking and without following a symlink (a path swapped for a FIFO or a
    link after listing is refused, not read), then reads at most ``max_bytes + 1`` bytes.

    Args:
        file: the listed file.
        max_bytes: larger files are refused (config ``chunking.max_file_bytes``).

    Raises:
        SourceUnreadable: I/O error, not a regular file any more, larger than ``max_bytes``, binary (NUL
            bytes), or not valid UTF-8; for a PDF/DOCX: encrypted, corrupt or truncated. The message says
            which and how to fix it.
        DocumentInvalid: a PDF without a text layer (a scan) or a PDF/DOCX without any text.
    """
    if file.size > max_bytes:
        raise SourceUnreadable(_too_large(file.size, max_bytes))
    data = _read_capped(file.real_path or file.abs_path, max_bytes)
    suffix = Path(file.rel_path).suffix.lower()
    if suffix in DOCUMENT_TYPES:
        title, body = to_markdown(data, suffix)
        return with_title(title, body)
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise SourceUnreadable("binary file (contains NUL bytes)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceUnreadable(
            f"not valid UTF-8 (byte {exc.start}: {data[exc.start:exc.start + 1]!r}); re-save the file as UTF-8"
        ) from exc
    return text.replace("\r\n", "\n").replace("\r", "\n")


def with_title(title: str, body: str) -> str:
    """``body`` under a YAML front matter holding ``title`` (a converted document's text; "" = none)."""
    return "---\n" + yaml.safe_dump({"title": title}, allow_unicode=True, width=1_000_000) + "---\n\n" + body


def _read_capped(path: Path, max_bytes: int) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise SourceUnreadable(f"cannot read: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SourceUnreadable("not a regular file any more (not read)")
        if st.st_size > max_bytes:
            raise SourceUnreadable(_too_large(st.st_size, max_bytes))
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise SourceUnreadable(f"cannot read: {exc.strerror or exc}") from exc
    if len(data) > max_bytes:  # grew after fstat
        raise SourceUnreadable(_too_large(len(data), max_bytes))
    return data


def _too_large(size: int, max_bytes: int) -> str:
    return f"{size:,} bytes is over the {max_bytes:,}-byte limit (raise chunking.max_file_bytes to ingest it)"
