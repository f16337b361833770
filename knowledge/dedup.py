"""Near-duplicate chunks, found with the hnswlib index (k nearest neighbours), never an n×n matrix.

DESIGN.md "Corpus hygiene at ingest" (seed 000):

- **Self-duplication**: pairs of chunks from *different source files* with cosine >= 0.95; chunks of one
  document are ignored (adjacent chunks share their overlap and are naturally similar).
  `find_self_duplicates` queries every chunk's k nearest neighbours, so the cost grows with n·k·log n.
- **Ingest gate**: each new chunk is compared with the closest existing chunk of *another* document
  (``nearest_existing``): >= 0.92 duplicate, 0.80–0.92 partial, below new (`classify`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from knowledge.index import LoadedIndex

#: Self-duplication report threshold: cosine >= 0.95 between different source files (DESIGN.md).
SELF_DUPLICATE_THRESHOLD = 0.95
#: Ingest gate: cosine >= 0.92 with an existing chunk → duplicate, not added (DESIGN.md).
DUPLICATE_THRESHOLD = 0.92
#: Ingest gate: 0.80 <= cosine < 0.92 → partial, added and queued for review (issue 3 default).
PARTIAL_THRESHOLD = 0.80
#: Neighbours asked for per chunk at first; doubled for a chunk whose k-th neighbour is still a match.
NEIGHBOURS = 16
# A Python filter (archived or excluded rows) runs under the GIL: hnswlib's worker threads then contend for
# it, 20x slower than one thread on the sample KB (0.30 s vs 0.015 s), so filtered queries use one thread.


@dataclass(frozen=True)
class DuplicatePair:
    """Two chunks of different documents that say (nearly) the same thing.

    Attributes:
        chunk_a, chunk_b: chunk ids, ``chunk_a`` < ``chunk_b``.
        doc_a, doc_b: their documents.
        cosine: cosine similarity of the two chunk vectors, in [threshold, 1].
    """

    chunk_a: str
    chunk_b: str
    doc_a: str
    doc_b: str
    cosine: float

    def to_json(self) -> dict:
        """A JSON-ready dict; cosine rounded to 4 decimals."""
        return {"chunk_a": self.chunk_a, "chunk_b": self.chunk_b, "doc_a": self.doc_a, "doc_b": self.doc_b,
                "cosine": round(self.cosine, 4)}


def find_self_duplicates(
    index: LoadedIndex, threshold: float = SELF_DUPLICATE_THRESHOLD, *, neighbours: int = NEIGHBOURS
) -> list[DuplicatePair]:
    """Chunk pairs of different documents with cosine >= ``threshold``, most similar first.

    Only documents in stage "active" count: archived versions are kept out of search on purpose.

    Args:
        index: a loaded generation.
        threshold: cosine in [-1, 1]; 0.95 by default (DESIGN.md).
        neighbours: k nearest neighbours asked per chunk at first (>= 1). A chunk whose k-th neighbour is
            still at or above the threshold is asked again with 2k, so a chunk copied into many files
            reports every copy.

    Returns:
        Each pair once (``chunk_a`` < ``chunk_b``), sorted by cosine descending, then chunk ids.
    """
    docs = [c["doc_id"] for c in index.chunks]
    active = np.fromiter((index.documents[d].get("stage", "active") == "active" for d in docs), dtype=bool,
                         count=len(docs))
    rows = np.flatnonzero(active)
    if index.dense is None or len(rows) < 2:
        return []
    accept = None if active.all() else (lambda label: bool(active[label]))
    pairs: dict[tuple[int, int], float] = {}
    k = min(neighbours + 1, len(rows))  # +1: a chunk is its own nearest neighbour
    pending = rows
    while len(pending):
        labels, distances = index.dense.knn_query(index.vectors[pending], k=k, filter=accept,
                                                  num_threads=1 if accept else -1)
        cosines = np.minimum(1.0 - distances, 1.0)  # float error can give 1.0000007
        for row, row_labels, row_cosines in zip(pending, labels, cosines):
            for label, cosine in zip(row_labels, row_cosines):
                if cosine < threshold:
                    break  # neighbours come best first
                i, j = (int(row), int(label)) if row < label else (int(label), int(row))
                if docs[i] != docs[j]:
                    pairs[(i, j)] = max(pairs.get((i, j), -1.0), float(cosine))
        if k >= len(rows):
            break
        pending = pending[cosines[:, -1] >= threshold]
        k = min(2 * k, len(rows))
    found = [
        DuplicatePair(index.chunks[i]["chunk_id"], index.chunks[j]["chunk_id"], docs[i], docs[j], cosine)
        for (i, j), cosine in pairs.items()
    ]
    return sorted(found, key=lambda p: (-p.cosine, p.chunk_a, p.chunk_b))


def nearest_existing(
    index: LoadedIndex | None, vectors: np.ndarray, exclude_doc_ids: set[str] | frozenset[str] = frozenset()
) -> tuple[np.ndarray, np.ndarray]:
    """For each new vector, the most similar existing chunk outside ``exclude_doc_ids``.

    Used by the ingest gate: pass the new document's own id and the ids of its other versions as
    ``exclude_doc_ids`` so that re-ingesting a changed page or a new version is never a duplicate.

    Example::

        rows, cosines = nearest_existing(previous, new_vectors, {"handbook:leave.md"})
        kinds = classify(cosines)              # ["duplicate", "new", "partial", ...]
        of = [previous.chunks[r]["chunk_id"] for r in rows if r >= 0]

    Args:
        index: the live generation, or None before the first build.
        vectors: float32, shape (m, dim), unit norm: the new chunks' embeddings.
        exclude_doc_ids: documents whose chunks never count as the nearest one.

    Returns:
        ``(rows, cosines)``: int64 array, shape (m,), the existing chunk row (index into ``index.chunks``)
        or -1 when there is none; float32 array, shape (m,), its cosine similarity in [-1, 1], or -1.0
        when there is none.
    """
    vectors = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1)
    rows = np.full(len(vectors), -1, dtype=np.int64)
    cosines = np.full(len(vectors), -1.0, dtype=np.float32)
    if index is None or index.dense is None or len(vectors) == 0:
        return rows, cosines
    docs = [c["doc_id"] for c in index.chunks]
    allowed = np.fromiter((d not in exclude_doc_ids for d in docs), dtype=bool, count=len(docs))
    count = int(allowed.sum())
    if count == 0:
        return rows, cosines
    accept = None if allowed.all() else (lambda label: bool(allowed[label]))
    labels, distances = index.dense.knn_query(vectors, k=1, filter=accept, num_threads=1 if accept else -1)
    rows[:] = labels[:, 0]
    cosines[:] = np.minimum(1.0 - distances[:, 0], 1.0)
    return rows, cosines


def classify(
    cosines: np.ndarray, duplicate: float = DUPLICATE_THRESHOLD, partial: float = PARTIAL_THRESHOLD
) -> list[str]:
    """The gate's verdict per cosine: "duplicate" (>= duplicate), "partial" (>= partial) or "new"."""
    return ["duplicate" if c >= duplicate else "partial" if c >= partial else "new" for c in np.asarray(cosines)]
