"""Index generations on disk: hnswlib (cosine) + bm25s + chunk and document records, switched atomically.

Layout under ``{home}/index/``::

    CURRENT                      name of the live generation (replaced atomically with os.replace)
    gen-20261130T081500-3f2a/    one complete generation
        manifest.json            model, dim, format, chunker settings, counts, created_at
        documents.json           one record per document (see knowledge.sync)
        chunks.json              one record per chunk, row i = vector i = hnswlib label i = BM25 doc i
        vectors.npy              float32 (n_chunks, dim), unit norm
        dense.hnsw               hnswlib index, space "cosine"
        bm25/                    bm25s.BM25.save() output
        units.json               [chunk row, start, end] of every embedded answer unit (knowledge.sentences); a
                                 list item under a lead-in has two rows: alone and after its lead-in
        unit_vectors.npy         float32 (n_units, dim), unit norm, aligned with units.json
        unit_dense.hnsw          hnswlib index (cosine) of unit_vectors, label i = unit i (absent in older
                                 generations: their searches scan every unit)
        xl_vectors.npy           float32 (n_chunks, xl dim): the cross-lingual model's chunk vectors
                                 (knowledge.crosslingual; manifest "crosslingual" names the model)
        xl_dense.hnsw            hnswlib index (cosine) of xl_vectors
    .building-*/                 a generation being written; never loaded, removed by the next build

A generation is written completely under ``.building-*``, renamed, and only then named in CURRENT, so a
crash at any point leaves the previous generation serving and a half-built one is never loaded.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import bm25s
import hnswlib
import numpy as np

from config import RetrievalConfig, Settings
from knowledge.errors import IndexIncompatible, IndexNotBuilt
from knowledge.tokenize import TOKENIZER_VERSION, tokenize

#: Bumped when the on-disk layout changes; an index of another format is rebuilt, never misread.
FORMAT_VERSION = 1
#: Generations kept besides the live one (for a quick manual rollback).
KEEP_OLD_GENERATIONS = 1


@dataclass
class LoadedIndex:
    """A complete generation in memory.

    Attributes:
        name: generation folder name.
        manifest: manifest.json contents.
        documents: doc_id → document record.
        chunks: chunk records; row i matches ``vectors[i]``, hnswlib label i and BM25 document i.
        vectors: float32 (n_chunks, dim), unit norm.
        dense: hnswlib index (cosine), or None when there are no chunks.
        bm25: bm25s retriever, or None when there are no chunks.
        units: the embedded answer units (sentences, list items, table rows) of every chunk
            (`knowledge.sentences`); empty for a generation written before they existed.
        xl_vectors: float32 (n_chunks, xl dim), unit norm: the cross-lingual model's vectors of every
            chunk (`knowledge.crosslingual`); None when the generation has none (off, or written before).
        xl_dense: hnswlib index (cosine) of ``xl_vectors``, or None.
    """

    name: str
    manifest: dict
    documents: dict[str, dict]
    chunks: list[dict]
    vectors: np.ndarray
    dense: hnswlib.Index | None
    bm25: bm25s.BM25 | None
    units: "UnitVectors | None" = None
    xl_vectors: np.ndarray | None = None
    xl_dense: hnswlib.Index | None = None
    _pages: dict[str, list[int]] | None = field(default=None, repr=False)
    #: search filter → (allowed rows, computed at, valid until): `Retriever._allowed_rows`
    masks: dict = field(default_factory=dict, repr=False)

    def rows_of(self, doc_id: str) -> list[int]:
        """The rows of document ``doc_id``'s chunks in page order (by chunk ``index``); empty for an unknown
        document. The doc → rows map is built on first use (~4 ms for 4,400 chunks)."""
        if self._pages is None:
            pages: dict[str, list[int]] = {}
            for row, chunk in enumerate(self.chunks):
                pages.setdefault(chunk["doc_id"], []).append(row)
            self._pages = {doc: sorted(rows, key=lambda r: self.chunks[r]["index"]) for doc, rows in pages.items()}
        return self._pages.get(doc_id, [])

    def rows_mask(self, doc_ids: set[str]) -> np.ndarray:
        """Boolean mask (n_chunks,) of the rows whose chunk belongs to one of ``doc_ids``, from the doc → rows
        map of `rows_of` (~0.3 ms for 4,400 chunks, not a pass over every chunk record)."""
        mask = np.zeros(len(self.chunks), dtype=bool)
        mask[[row for doc_id in doc_ids for row in self.rows_of(doc_id)]] = True
        return mask

    def next_row(self, row: int) -> int | None:
        """The row of the chunk after chunk ``row`` in its document, or None when it is the document's last."""
        chunk = self.chunks[row]
        rows = self.rows_of(chunk["doc_id"])
        at = rows.index(row) + 1
        return rows[at] if at < len(rows) and self.chunks[rows[at]]["index"] == chunk["index"] + 1 else None


@dataclass(frozen=True)
class UnitVectors:
    """Embedded answer units, grouped by chunk row.

    Attributes:
        offsets: int64 (n_chunks + 1,): the units of chunk row r are ``offsets[r]:offsets[r + 1]``.
        spans: int32 (n_units, 2): (start, end) character offsets into the chunk text; a list item under a
            lead-in appears twice (embedded alone and after its lead-in, `knowledge.sentences.embedding_inputs`).
        vectors: float32 (n_units, dim), unit norm.
        dense: hnswlib index (cosine) of ``vectors``, or None (a generation written before it: scan instead).
        row_of: int64 (n_units,): the chunk row of each unit.
    """

    offsets: np.ndarray
    spans: np.ndarray
    vectors: np.ndarray
    dense: hnswlib.Index | None = None
    row_of: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def of_row(self, row: int) -> tuple[np.ndarray, np.ndarray]:
        """(spans, vectors) of chunk ``row``'s units; empty arrays when it has none."""
        lo, hi = int(self.offsets[row]), int(self.offsets[row + 1])
        return self.spans[lo:hi], self.vectors[lo:hi]

    def nearest_rows(self, qvec: np.ndarray, k: int, allowed: np.ndarray) -> list[int]:
        """The allowed chunk rows holding the ``k`` units nearest to ``qvec`` (float32 (dim,), unit norm), each row
        once, in the order of its nearest unit: by the hnswlib index when there is one (~2 ms for k = 200 of
        21,000 units, against ~9 ms for a scan of them all), else, or when a filtered search cannot fill ``k``,
        by a scan. ``allowed``: bool (n_chunks,)."""
        usable = allowed[self.row_of]
        k = min(k, int(usable.sum()))
        if k == 0:
            return []
        units = self._nearest_indexed(qvec, k, allowed, bool(usable.all())) if self.dense is not None else None
        if units is None:
            sims = np.where(usable, np.einsum("ij,j->i", self.vectors, qvec), -2.0)
            units = np.argsort(-sims, kind="stable")[:k]
        return list(dict.fromkeys(self.row_of[units].tolist()))

    def _nearest_indexed(self, qvec: np.ndarray, k: int, allowed: np.ndarray, everything: bool) -> np.ndarray | None:
        """The ``k`` nearest allowed units by hnswlib, or None when its filtered search cannot return ``k``."""
        if self.dense.ef < k:  # hnswlib needs ef ≥ k
            self.dense.set_ef(k)
        row_of = self.row_of
        try:
            labels, _ = self.dense.knn_query(
                qvec, k=k, filter=None if everything else (lambda label: bool(allowed[row_of[label]])))
        except RuntimeError:  # "cannot return the results in a contiguous 2D array": too few reachable
            return None
        return labels[0]

    def best_of_rows(self, rows: list[int], qvec: np.ndarray) -> dict[int, float]:
        """Chunk row → the best cosine of one of its units to ``qvec``, for those of ``rows`` that have units."""
        rows = [r for r in rows if self.offsets[r + 1] > self.offsets[r]]
        if not rows:
            return {}
        starts, ends = self.offsets[rows], self.offsets[np.asarray(rows) + 1]
        picked = np.concatenate([np.arange(lo, hi) for lo, hi in zip(starts, ends)])
        sims = np.einsum("ij,j->i", self.vectors[picked], qvec)
        firsts = np.concatenate([[0], np.cumsum(ends - starts)[:-1]])
        return dict(zip(rows, np.maximum.reduceat(sims, firsts).tolist()))

    @staticmethod
    def build(n_chunks: int, rows: list[int], spans: list[tuple[int, int]], vectors: np.ndarray,
              dense: hnswlib.Index | None = None) -> "UnitVectors":
        """From per-unit chunk rows (non-decreasing), spans and vectors (as written by `write_generation`), and
        the units' hnswlib index when there is one."""
        counts = np.bincount(np.asarray(rows, dtype=np.int64), minlength=n_chunks) if rows else np.zeros(n_chunks, np.int64)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return UnitVectors(offsets, np.asarray(spans, dtype=np.int32).reshape(-1, 2),
                           np.asarray(vectors, dtype=np.float32), dense, np.repeat(np.arange(n_chunks), counts))


#: Environment variable naming a generations folder shared by several replicas (a mounted volume); when
#: unset, each home keeps its own ``{home}/index``.
INDEX_DIR_ENV = "MINERVA_INDEX_DIR"


def index_root(home: Path) -> Path:
    """The folder holding all generations: ``$MINERVA_INDEX_DIR`` when set (shared by replicas), else
    ``{home}/index``."""
    shared = os.environ.get(INDEX_DIR_ENV, "").strip()
    return Path(shared).expanduser() if shared else Path(home) / "index"


def current_generation(home: Path) -> str | None:
    """Name of the live generation, or None before the first successful build."""
    pointer = index_root(home) / "CURRENT"
    try:
        name = pointer.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return name or None


def live_manifest(home: Path) -> dict:
    """The live generation's manifest (a small JSON file; nothing else is read), or {} before the first build
    or when it cannot be read."""
    name = current_generation(home)
    try:
        return json.loads((index_root(home) / name / "manifest.json").read_text(encoding="utf-8")) if name else {}
    except (OSError, ValueError):
        return {}


def held_by_another_config(collections: set[str], synced_with: str | None, settings: Settings) -> bool:
    """Whether an index holding ``collections``, synced with the config file ``synced_with`` (None when not
    recorded), belongs to another config than ``settings``: none of its collections is a source of
    ``settings``, and another config file (or an unrecorded one) synced it. The config that synced it is not
    another even then: its last source was removed (`minerva sources remove`) and the next one is new."""
    same_file = bool(synced_with) and settings.path is not None and synced_with == str(settings.path)
    return bool(collections) and not collections & {s.name for s in settings.sources} and not same_file


def config_mismatch(home: Path, settings: Settings) -> str | None:
    """A one-line warning when none of the collections the live index of ``home`` holds (its manifest's
    ``sources``, read alone, so every command can afford it) is a source of ``settings``, else None: answers,
    jobs and reports would then mix one config's pages with another's collections, models and channels."""
    manifest = live_manifest(home)
    synced = set(manifest.get("sources") or ())
    if not held_by_another_config(synced, manifest.get("config"), settings):
        return None
    return (f"{home}'s index holds pages of {', '.join(sorted(synced))} (synced with "
            f"{manifest.get('config') or 'another config'}), none of them a source of {settings.path or 'this config'}"
            f": pass --config or set MINERVA_CONFIG")


def write_generation(
    home: Path,
    *,
    model: str,
    dim: int,
    documents: dict[str, dict],
    chunks: list[dict],
    vectors: np.ndarray,
    retrieval: RetrievalConfig,
    extra_manifest: dict | None = None,
    before_switch=None,
    units: tuple[list[list[int]], np.ndarray] | None = None,
    crosslingual: tuple[str, np.ndarray] | None = None,
) -> str:
    """Build and publish a new generation; return its name.

    Args:
        home: MINERVA_HOME.
        model: embedding model name recorded in the manifest.
        dim: vector length.
        documents: doc_id → record (JSON-serialisable).
        chunks: chunk records aligned with ``vectors`` rows; each has ``embedding_text``.
        vectors: float32 (len(chunks), dim), unit norm.
        retrieval: hnswlib and BM25 parameters.
        extra_manifest: more fields for manifest.json (e.g. chunker settings).
        before_switch: optional callable(generation_dir) run after the generation is complete and before
            CURRENT points at it; raising keeps the old generation live (used by tests and the A/B gate).
        units: ``([[chunk row, start, end], ...] ordered by row, float32 (n_units, dim))``: the embedded
            answer units; None = none (search works, direct answers fall back to lexical evidence).
        crosslingual: ``(model name, float32 (len(chunks), xl dim))``: the cross-lingual model's chunk
            vectors (`knowledge.crosslingual`), written as xl_vectors.npy + xl_dense.hnsw; the manifest's
            ``crosslingual`` records the model (None when not given).

    Raises:
        OSError: disk errors; the live generation is untouched.
    """
    root = index_root(home)
    root.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(root)
    name = f"gen-{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"
    building = root / f".building-{name}"
    building.mkdir()
    try:
        _write_records(building, documents, chunks, vectors)
        _write_dense(building / "dense.hnsw", vectors, retrieval)
        _write_bm25(building / "bm25", chunks, retrieval)
        if units is not None:
            _write_json(building / "units.json", units[0])
            np.save(building / "unit_vectors.npy", np.asarray(units[1], dtype=np.float32))
            _write_dense(building / "unit_dense.hnsw", np.asarray(units[1], dtype=np.float32), retrieval)
        if crosslingual is not None:
            np.save(building / "xl_vectors.npy", np.asarray(crosslingual[1], dtype=np.float32))
            _write_dense(building / "xl_dense.hnsw", np.asarray(crosslingual[1], dtype=np.float32), retrieval)
        manifest = {
            "format": FORMAT_VERSION,
            "name": name,
            "model": model,
            "dim": dim,
            "n_chunks": len(chunks),
            "n_documents": len(documents),
            "created_at": datetime.now(timezone.utc).isoformat(),
            "hnsw": {"M": retrieval.hnsw_m, "ef_construction": retrieval.hnsw_ef_construction},
            "bm25": {"k1": retrieval.bm25_k1, "b": retrieval.bm25_b, "method": "lucene"},
            "tokenizer": TOKENIZER_VERSION,
            "crosslingual": crosslingual[0] if crosslingual is not None else None,
            **(extra_manifest or {}),
            "files": _file_sizes(building),
        }
        _write_json(building / "manifest.json", manifest)
        final = root / name
        os.replace(building, final)
        if before_switch is not None:
            before_switch(final)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        # renamed but never named in CURRENT: remove it too, or pruning would keep it as a "rollback"
        shutil.rmtree(root / name, ignore_errors=True)
        raise
    _switch_current(root, name)
    _prune_old(root, keep={name, *_newest(root, KEEP_OLD_GENERATIONS + 1)})
    return name


def load_generation(home: Path, *, model: str | None = None, ef: int = 100) -> LoadedIndex:
    """Load the live generation (the one CURRENT names).

    Args:
        home: MINERVA_HOME.
        model: when given, the embedding model the caller will query with.
        ef: hnswlib query-time ef (recall/speed trade-off).

    Raises:
        IndexNotBuilt: no live generation (run `minerva ingest`).
        IndexIncompatible: built with another model or format; re-run `minerva ingest` to rebuild.
    """
    name = current_generation(home)
    if name is None:
        raise IndexNotBuilt(f"no index under {index_root(home)} yet: run `minerva ingest` first (for your own pages "
                            "pass your config: `minerva --config minerva.yaml ...` or MINERVA_CONFIG; without one, "
                            "commands use the bundled sample knowledge base)")
    return load_generation_dir(index_root(home) / name, model=model, ef=ef)


def load_generation_dir(folder: Path, *, model: str | None = None, ef: int = 100) -> LoadedIndex:
    """Load one complete generation folder, live or not (e.g. a candidate checked before the switch).

    Raises:
        IndexNotBuilt: the folder or its manifest is unreadable.
        IndexIncompatible: another format, or built with another model than ``model``.
    """
    folder = Path(folder)
    name = folder.name
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise IndexNotBuilt(f"generation {name} is unreadable ({exc}); run `minerva ingest` to rebuild") from exc
    if manifest.get("format") != FORMAT_VERSION:
        raise IndexIncompatible(f"index format {manifest.get('format')} != {FORMAT_VERSION}: run `minerva ingest`")
    _check_complete(folder, manifest.get("files"))
    if model is not None and manifest["model"] != model:
        raise IndexIncompatible(
            f"the index was built with {manifest['model']!r} but the config asks for {model!r}; "
            "run `minerva ingest` to re-embed with the configured model"
        )
    documents = {d["doc_id"]: d for d in json.loads((folder / "documents.json").read_text(encoding="utf-8"))}
    chunks = json.loads((folder / "chunks.json").read_text(encoding="utf-8"))
    vectors = np.load(folder / "vectors.npy")
    dense = bm25 = None
    if chunks:
        dense = hnswlib.Index(space="cosine", dim=manifest["dim"])
        dense.load_index(str(folder / "dense.hnsw"), max_elements=len(chunks))
        dense.set_ef(max(ef, 10))
        bm25 = bm25s.BM25.load(str(folder / "bm25"))
    xl_vectors, xl_dense = _load_crosslingual(folder, len(chunks), ef)
    return LoadedIndex(name, manifest, documents, chunks, vectors, dense, bm25,
                       _load_units(folder, len(chunks), ef), xl_vectors, xl_dense)


def _load_crosslingual(folder: Path, n_chunks: int, ef: int) -> tuple[np.ndarray | None, hnswlib.Index | None]:
    """The generation's cross-lingual vectors and their hnswlib index, or (None, None) when it has none
    (cross-lingual retrieval off, or a generation written before it existed: those questions use BM25)."""
    if not n_chunks or not (folder / "xl_vectors.npy").exists():
        return None, None
    vectors = np.load(folder / "xl_vectors.npy")
    dense = hnswlib.Index(space="cosine", dim=int(vectors.shape[1]))
    dense.load_index(str(folder / "xl_dense.hnsw"), max_elements=n_chunks)
    dense.set_ef(max(ef, 10))
    return vectors, dense


def _load_units(folder: Path, n_chunks: int, ef: int) -> UnitVectors | None:
    """The generation's unit vectors (with their hnswlib index when it was written), or None when it has none
    (written before units existed)."""
    if not (folder / "units.json").exists():
        return None
    rows = json.loads((folder / "units.json").read_text(encoding="utf-8"))
    vectors = np.load(folder / "unit_vectors.npy")
    dense = None
    if len(vectors) and (folder / "unit_dense.hnsw").exists():
        dense = hnswlib.Index(space="cosine", dim=int(vectors.shape[1]))
        dense.load_index(str(folder / "unit_dense.hnsw"), max_elements=len(vectors))
        dense.set_ef(max(ef, 10))
    return UnitVectors.build(n_chunks, [r[0] for r in rows], [(r[1], r[2]) for r in rows], vectors, dense)


def _file_sizes(folder: Path) -> dict[str, int]:
    """Every file under ``folder`` (relative POSIX path → bytes), recorded in the manifest, which is written last."""
    return {path.relative_to(folder).as_posix(): path.stat().st_size
            for path in sorted(folder.rglob("*")) if path.is_file()}


def _check_complete(folder: Path, files: dict[str, int] | None) -> None:
    """Refuses a generation whose files are missing or shorter/longer than its manifest says.

    A generation copied or synced into a shared folder (rsync, a volume replicating between machines) can be
    named by CURRENT before all of its files arrived; loading it would crash or serve a truncated index.
    Generations written before the manifest listed its files are not checked.

    Raises:
        IndexNotBuilt: a file is missing or has another size.
    """
    for relative, size in (files or {}).items():
        path = folder / relative
        try:
            found = path.stat().st_size
        except OSError:
            found = None
        if found != size:
            raise IndexNotBuilt(f"generation {folder.name} is incomplete: {relative} has {found} of {size} bytes "
                                "(still being copied?); the previous generation keeps serving")


def _write_records(folder: Path, documents: dict, chunks: list[dict], vectors: np.ndarray) -> None:
    _write_json(folder / "documents.json", list(documents.values()))
    _write_json(folder / "chunks.json", chunks)
    np.save(folder / "vectors.npy", np.asarray(vectors, dtype=np.float32))


def _write_dense(path: Path, vectors: np.ndarray, cfg: RetrievalConfig) -> None:
    if len(vectors) == 0:
        return
    index = hnswlib.Index(space="cosine", dim=vectors.shape[1])
    index.init_index(max_elements=len(vectors), M=cfg.hnsw_m, ef_construction=cfg.hnsw_ef_construction)
    index.add_items(vectors, np.arange(len(vectors)))
    index.save_index(str(path))


def _write_bm25(path: Path, chunks: list[dict], cfg: RetrievalConfig) -> None:
    if not chunks:
        return
    retriever = bm25s.BM25(k1=cfg.bm25_k1, b=cfg.bm25_b, method="lucene")
    retriever.index([tokenize(c["embedding_text"]) or [""] for c in chunks], show_progress=False)
    retriever.save(str(path))


def _write_json(path: Path, data) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False)
        fh.flush()
        os.fsync(fh.fileno())


def _switch_current(root: Path, name: str) -> None:
    tmp = root / f".CURRENT-{uuid.uuid4().hex[:8]}"
    tmp.write_text(name, encoding="utf-8")
    os.replace(tmp, root / "CURRENT")


def _newest(root: Path, n: int) -> list[str]:
    gens = sorted(p.name for p in root.iterdir() if p.is_dir() and p.name.startswith("gen-"))
    return gens[-n:]


def _prune_old(root: Path, keep: set[str]) -> None:
    live = current_generation(root.parent)
    for path in root.iterdir():
        if path.is_dir() and path.name.startswith("gen-") and path.name not in keep and path.name != live:
            shutil.rmtree(path, ignore_errors=True)


def _remove_leftovers(root: Path) -> None:
    """Remove half-built generations left by a crash (they were never live)."""
    for path in root.glob(".building-*"):
        shutil.rmtree(path, ignore_errors=True)
    for path in root.glob(".CURRENT-*"):
        path.unlink(missing_ok=True)
