"""Folder sources: list the files of a collection and read them as text.

A document id is stable across syncs: ``"{collection}:{path relative to the folder}"`` (DESIGN.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from config import SourceConfig
from knowledge.errors import SourceMissing, SourceUnreadable

#: Bytes sniffed for NUL characters to tell binary files from text.
_SNIFF_BYTES = 8192


@dataclass(frozen=True)
class SourceFile:
    """One file of a source folder, as listed (not yet read).

    Attributes:
        collection: the source's name.
        rel_path: POSIX path relative to the source folder, e.g. ``"tools/tock.md"``.
        abs_path: absolute path on disk.
        mtime: modification time, timezone-aware UTC.
        size: size in bytes.
    """

    collection: str
    rel_path: str
    abs_path: Path
    mtime: datetime
    size: int

    @property
    def doc_id(self) -> str:
        """Stable document id ``"{collection}:{rel_path}"``."""
        return f"{self.collection}:{self.rel_path}"


def list_folder(source: SourceConfig) -> tuple[list[SourceFile], list[tuple[str, str]]]:
    """List the files of a source folder whose extension is configured, in path order.

    Hidden files and folders (name starting with ".") are ignored.

    Returns:
        (files, ignored): the supported files, and ``(path, reason)`` for other regular files.

    Raises:
        SourceMissing: the folder does not exist or is not a folder.
    """
    root = Path(source.path)
    if not root.is_dir():
        raise SourceMissing(f"source {source.name!r}: folder {root} does not exist (check `path` in the config)")
    extensions = {e.lower() for e in source.extensions}
    files, ignored = [], []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if path.suffix.lower() not in extensions:
                ignored.append((f"{source.name}:{rel}", f"unsupported file type {path.suffix or '(none)'}"))
                continue
            try:
                stat = path.stat()
            except OSError as exc:
                ignored.append((f"{source.name}:{rel}", f"cannot stat: {exc.strerror}"))
                continue
            mtime = datetime.fromtimestamp(stat.st_mtime, tz=timezone.utc)
            files.append(SourceFile(source.name, rel, path, mtime, stat.st_size))
    return files, ignored


def read_text(file: SourceFile, max_bytes: int) -> str:
    """Read a source file as UTF-8 text (a leading BOM is dropped).

    Args:
        file: the listed file.
        max_bytes: larger files are refused (config ``chunking.max_file_bytes``).

    Raises:
        SourceUnreadable: I/O error, larger than ``max_bytes``, binary (NUL bytes), or not valid UTF-8;
            the message says which and how to fix it.
    """
    if file.size > max_bytes:
        raise SourceUnreadable(
            f"{file.size:,} bytes is over the {max_bytes:,}-byte limit (raise chunking.max_file_bytes to ingest it)"
        )
    try:
        data = file.abs_path.read_bytes()
    except OSError as exc:
        raise SourceUnreadable(f"cannot read: {exc.strerror or exc}") from exc
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise SourceUnreadable("binary file (contains NUL bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceUnreadable(
            f"not valid UTF-8 (byte {exc.start}: {data[exc.start:exc.start + 1]!r}); re-save the file as UTF-8"
        ) from exc
