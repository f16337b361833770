"""What the freshness signal and the re-index score ask about one indexed document.

Works on the document records of the live index (`knowledge.sync` writes them: ``collection``, ``path``,
``last_modified``, ``indexed_at``, ``mtime``, ``size``, ``chunker``, ``stage``, ``expires_at``) and on the
file system; it never reads the feedback store.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from config.monitoring import FreshnessConfig
from feedback import parse_utc


@dataclass(frozen=True)
class SourceState:
    """The source file of a document as it is now.

    Attributes:
        missing: the file is gone or unreadable (the source is unreachable).
        modified: the file's text changed after indexing: its mtime is later than ``indexed_at`` or its
            (mtime, size) differ from the indexed ones (a restored older copy has an earlier mtime), and
            its sha256 is no longer the indexed one (a `touch` or a fresh checkout is no change).
        mtime: the file's current modification time (UTC), None when missing.
    """

    missing: bool
    modified: bool
    mtime: datetime | None


def source_state(doc: dict) -> SourceState:
    """Stats the document's source file (one ``os.stat``)."""
    try:
        stat = os.stat(doc["path"])
    except (OSError, KeyError, TypeError):
        return SourceState(missing=True, modified=False, mtime=None)
    mtime = datetime.fromtimestamp(stat.st_mtime, tz=timezone.utc)
    indexed_at = parse_utc(doc.get("indexed_at"))
    recorded = parse_utc(doc.get("mtime"))
    touched = (indexed_at is not None and mtime > indexed_at) or (
        recorded is not None and (mtime != recorded or stat.st_size != doc.get("size", stat.st_size))
    )
    # a checkout, copy or `touch` moves the mtime without changing the text: only a new text is a change
    modified = touched and not _same_text(doc, stat, mtime)
    return SourceState(missing=False, modified=modified, mtime=mtime)


#: Largest file whose text is hashed to confirm a change (the sync never indexes larger ones by default).
HASH_LIMIT_BYTES = 50_000_000


def _same_text(doc: dict, stat: os.stat_result, mtime: datetime) -> bool:
    """Whether the file's text still has the indexed sha256 (read as `knowledge.sync` reads it); False when
    it cannot be read or the record has no hash."""
    from knowledge.sources import SourceFile, read_text

    if not doc.get("file_hash"):
        return False
    file = SourceFile(doc.get("collection", ""), doc.get("rel_path", ""), Path(doc["path"]), mtime, stat.st_size)
    try:
        text = read_text(file, HASH_LIMIT_BYTES)
    except Exception:  # unreadable now: let the freshness signal report it as modified
        return False
    return hashlib.sha256(text.encode("utf-8")).hexdigest() == doc["file_hash"]


def age_days(doc: dict, now: datetime) -> float | None:
    """Days since the document's ``last_modified`` (front matter date, else file mtime); None if unknown."""
    modified = parse_utc(doc.get("last_modified"))
    return None if modified is None else max(0.0, (now - modified).total_seconds() / 86400)


def is_stale(doc: dict, cfg: FreshnessConfig, now: datetime) -> bool:
    """True when the document is older than its collection's staleness (never for ``-1`` collections)."""
    days = cfg.staleness_days(doc.get("collection", ""))
    age = age_days(doc, now)
    return days is not None and age is not None and age > days
