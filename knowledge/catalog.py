"""Listing documents of the live generation by stage, expiry and collection (`minerva docs`)."""

from __future__ import annotations

from datetime import datetime, timezone

from knowledge.index import LoadedIndex


def is_expired(doc: dict, now: datetime | None = None) -> bool:
    """True when the document has an ``expires_at`` at or before ``now`` (UTC; default: now)."""
    expires = doc.get("expires_at")
    return bool(expires) and datetime.fromisoformat(expires) <= (now or datetime.now(timezone.utc))


def list_documents(
    index: LoadedIndex,
    *,
    stage: str | None = None,
    expired: bool | None = None,
    collection: str | None = None,
    now: datetime | None = None,
) -> list[dict]:
    """Document records matching every given filter, sorted by doc_id.

    Args:
        index: the loaded generation.
        stage: "active", "archived" or "deprecated"; None = any.
        expired: True = only expired, False = only unexpired, None = either.
        collection: collection name; None = any.
        now: the time expiry is checked against (UTC).

    Returns:
        The records (dicts, see `knowledge.sync`), each with an added ``expired`` bool and ``n_chunks``
        counted in the index (duplicate chunks stopped by the gate are not counted).
    """
    counts: dict[str, int] = {}
    for chunk in index.chunks:
        counts[chunk["doc_id"]] = counts.get(chunk["doc_id"], 0) + 1
    rows = []
    for doc_id in sorted(index.documents):
        doc = index.documents[doc_id]
        flag = is_expired(doc, now)
        if stage and doc.get("stage", "active") != stage:
            continue
        if expired is not None and flag != expired:
            continue
        if collection and doc["collection"] != collection:
            continue
        rows.append({**doc, "expired": flag, "n_chunks": counts.get(doc_id, 0)})
    return rows
