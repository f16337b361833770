"""Gap queries (seed 000/001 "periodic gap search") and the index A/B gate.

A gap query is a core question the knowledge base must answer well, with an expected score (0.75 by
default, DESIGN.md "Gaps"). Its score is the best calibrated score among the candidates an answer would
consider (the same ``top_score`` as `KnowledgeBase.ask`), so it means the same for every query and model.

The A/B gate runs the gap queries on the live generation and on a candidate one before the switch; a drop
larger than the tolerance keeps the old generation live (`ab_gate`, `make_gate`, used as the
``before_switch`` hook of `knowledge.sync.sync`).

File format (``config/gap_queries.yaml``)::

    expected: 0.75        # default threshold of every query (DESIGN.md)
    drop: 0.2             # alert when a score falls by more than this since the previous run
    gate_tolerance: 0.05  # A/B gate: largest allowed fall of the mean score
    gate_query_tolerance: 0.2   # A/B gate: largest allowed fall of any one query
    collections: [api, runbooks]  # optional: the collections these queries are about (default of each query)
    queries:
      - query: how long before a webhook delivery times out?
        expected: 0.8               # optional, overrides the default
        collections: [api, runbooks]   # optional, search only these
      - how do I reset my password?     # a plain string is a query with the defaults

Queries judge only the collections they name (theirs or the file's ``collections``): a query whose
collections are neither configured nor in the index is left out (`scope_queries`), so the sample knowledge
base's questions never judge a user's own documents. A query naming no collection judges the whole index.
A user config without a gap-query file beside it has no gap queries (`gap_query_set_for`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from config import DEFAULT_CONFIG, ConfigError, Settings, read_yaml_mapping
from knowledge.embedding import Embedder
from knowledge.errors import GateRejected, IndexIncompatible, IndexNotBuilt
from knowledge.index import LoadedIndex, load_generation_dir
from knowledge.retrieval import Retriever, SearchFilter

#: The bundled gap queries of the sample knowledge base.
DEFAULT_GAP_QUERIES = DEFAULT_CONFIG.with_name("gap_queries.yaml")
#: Score below which a core query is a gap (DESIGN.md "Gaps", seed 000: score < 0.75 = gap).
DEFAULT_EXPECTED = 0.75
#: Fall since the previous run that raises an alert; seed 000's example falls 0.85 → 0.45 (0.40).
DEFAULT_DROP = 0.2
#: A/B gate: largest allowed fall of the mean gap-query score from the live to the candidate generation.
DEFAULT_GATE_TOLERANCE = 0.05
#: A/B gate: largest allowed fall of any single gap query (a page that answered it vanished).
DEFAULT_GATE_QUERY_TOLERANCE = 0.2
#: Candidates scored per query: as many as an answer considers (knowledge.service.ANSWER_CANDIDATES).
CANDIDATES = 10
_FILE_KEYS = {"expected", "drop", "gate_tolerance", "gate_query_tolerance", "collections", "queries"}
_QUERY_KEYS = {"query", "expected", "collections"}


@dataclass(frozen=True)
class GapQuery:
    """One core query: its text, the score it must reach, and optionally the collections it searches."""

    query: str
    expected: float = DEFAULT_EXPECTED
    collections: tuple[str, ...] | None = None


@dataclass(frozen=True)
class GapQuerySet:
    """A gap-query file: the queries and the thresholds that apply to them (see the module docstring)."""

    queries: tuple[GapQuery, ...]
    drop: float = DEFAULT_DROP
    gate_tolerance: float = DEFAULT_GATE_TOLERANCE
    gate_query_tolerance: float = DEFAULT_GATE_QUERY_TOLERANCE
    path: Path | None = None
    collections: tuple[str, ...] | None = None


@dataclass(frozen=True)
class GapScore:
    """A gap query's result on one generation.

    Attributes:
        query: the query text.
        score: best calibrated score in [0, 1] among the top CANDIDATES passages; 0.0 when none.
        expected: the query's threshold.
        top_doc_id: document of the best passage, or "" when nothing was retrieved.
        generation: the generation searched.
    """

    query: str
    score: float
    expected: float
    top_doc_id: str = ""
    generation: str = ""

    @property
    def converged(self) -> bool:
        """True when the score reaches the expected score (seed 001: every query >= 0.75 → converged)."""
        return self.score >= self.expected

    def to_json(self) -> dict:
        """A JSON-ready dict (score rounded to 4 decimals)."""
        return {"query": self.query, "score": round(self.score, 4), "expected": self.expected,
                "converged": self.converged, "top_doc_id": self.top_doc_id, "generation": self.generation}


@dataclass
class GateResult:
    """The A/B gate's verdict on a candidate generation.

    Attributes:
        passed: True when the candidate may go live.
        reason: one sentence saying why (quoted in logs, the sync report and GateRejected).
        old_scores: gap scores on the live generation ([] when there is none).
        new_scores: gap scores on the candidate.
    """

    passed: bool
    reason: str
    old_scores: list[GapScore] = field(default_factory=list)
    new_scores: list[GapScore] = field(default_factory=list)

    def to_json(self) -> dict:
        """A JSON-ready dict."""
        return {"passed": self.passed, "reason": self.reason,
                "old_scores": [s.to_json() for s in self.old_scores],
                "new_scores": [s.to_json() for s in self.new_scores]}


def load_gap_queries(path: str | Path | None = None) -> GapQuerySet:
    """Read a gap-query file (format in the module docstring).

    Args:
        path: the YAML file; None = the bundled ``config/gap_queries.yaml``.

    Raises:
        ConfigError: the file is missing or not valid YAML, has an unknown key, a query without text, or a
            threshold outside [0, 1]. The message names the file and the entry.
    """
    path = Path(path) if path else DEFAULT_GAP_QUERIES
    raw = read_yaml_mapping(path, "gap queries")
    if not isinstance(raw.get("queries"), list):
        raise ConfigError(f"{path}: expected a mapping with a `queries:` list")
    _no_unknown_keys(raw, _FILE_KEYS, f"{path}")
    default = _fraction(raw.get("expected", DEFAULT_EXPECTED), f"{path}: expected")
    file_collections = _collections(raw.get("collections"), f"{path}: collections")
    queries = []
    for number, item in enumerate(raw["queries"], start=1):
        where = f"{path}: queries[{number}]"
        item = {"query": item} if isinstance(item, str) else item
        if not isinstance(item, dict) or not str(item.get("query") or "").strip():
            raise ConfigError(f"{where}: each entry needs a non-empty `query`")
        _no_unknown_keys(item, _QUERY_KEYS, where)
        collections = _collections(item.get("collections"), f"{where}: collections") or file_collections
        expected = _fraction(item.get("expected", default), f"{where}: expected")
        queries.append(GapQuery(str(item["query"]).strip(), expected, collections))
    return GapQuerySet(
        tuple(queries),
        drop=_fraction(raw.get("drop", DEFAULT_DROP), f"{path}: drop"),
        gate_tolerance=_fraction(raw.get("gate_tolerance", DEFAULT_GATE_TOLERANCE), f"{path}: gate_tolerance"),
        gate_query_tolerance=_fraction(raw.get("gate_query_tolerance", DEFAULT_GATE_QUERY_TOLERANCE),
                                       f"{path}: gate_query_tolerance"),
        path=path.resolve(),
        collections=file_collections,
    )


def _collections(value, where: str) -> tuple[str, ...] | None:
    if value is None or value == []:
        return None
    if not (isinstance(value, list) and all(isinstance(c, str) and c for c in value)):
        raise ConfigError(f"{where} must be a list of collection names")
    return tuple(value)


#: No gap queries (a user config without a gap-query file).
NO_GAP_QUERIES = GapQuerySet(())


def gap_query_set_for(settings: Settings, path: str | Path | None = None) -> GapQuerySet:
    """The gap queries for ``settings``: the file ``path`` when given, else `gap_queries_for`'s file, else none.

    Raises:
        ConfigError: the file is broken (see `load_gap_queries`).
    """
    found = Path(path) if path else gap_queries_for(settings)
    return load_gap_queries(found) if found is not None else NO_GAP_QUERIES


def scope_queries(query_set: GapQuerySet, collections: set[str] | frozenset[str]) -> GapQuerySet:
    """The queries of ``query_set`` that may judge ``collections``.

    A query naming collections is kept when one of them is in ``collections``, and then searches only
    those; a query naming none is kept as it is (it judges the whole index).

    Returns:
        A GapQuerySet with the same thresholds and the kept queries, in file order.
    """
    kept = []
    for query in query_set.queries:
        if query.collections is None:
            kept.append(query)
            continue
        mine = tuple(c for c in query.collections if c in collections)
        if mine:
            kept.append(GapQuery(query.query, query.expected, mine))
    return dataclasses.replace(query_set, queries=tuple(kept))


def judged_collections(index: LoadedIndex | None, settings: Settings) -> set[str]:
    """Collections gap queries may judge: configured (config or recorded folders) and present in ``index``.

    ``index`` None (nothing built yet) → the empty set.
    """
    if index is None:
        return set()
    configured = {s.name for s in settings.sources}
    return {d["collection"] for d in index.documents.values()} & configured


def live_index(kb) -> LoadedIndex | None:
    """``kb.index()``, or None when nothing usable is built yet."""
    try:
        return kb.index()
    except (IndexNotBuilt, IndexIncompatible):
        return None


def gap_queries_for(settings: Settings) -> Path | None:
    """The gap-query file that goes with ``settings``: beside its config file, ``gap_queries-{stem}.yaml``,
    then ``gap_queries-{first word of stem}.yaml``, then ``gap_queries.yaml``; the bundled one only when
    ``settings`` has no config file; else None (a user's config never gets the sample's questions).

    So ``config/real-corpora.yaml`` gets ``config/gap_queries-real.yaml`` and ``config/minerva.yaml`` gets
    ``config/gap_queries.yaml``.
    """
    if settings.path is not None:
        stem = Path(settings.path).stem
        for name in (f"gap_queries-{stem}.yaml", f"gap_queries-{stem.split('-')[0]}.yaml", "gap_queries.yaml"):
            candidate = Path(settings.path).with_name(name)
            if candidate.is_file():
                return candidate
        return None
    return DEFAULT_GAP_QUERIES


def run_gap_queries(
    target, queries: list[GapQuery] | tuple[GapQuery, ...], *, embedder: Embedder | None = None,
    settings: Settings | None = None,
) -> list[GapScore]:
    """Score each gap query on a knowledge base's live generation or on a given generation.

    Args:
        target: a `KnowledgeBase` (its live generation, model and settings are used) or a `LoadedIndex`
            (then ``embedder`` and ``settings`` are required).
        queries: the queries, in the order the scores are returned.
        embedder: the dense model, when ``target`` is a LoadedIndex.
        settings: retrieval and calibration settings, when ``target`` is a LoadedIndex.

    Returns:
        One GapScore per query, in order. Only public, active, unexpired content is searched (what a
        channel user can be answered from).

    Raises:
        IndexNotBuilt: ``target`` is a KnowledgeBase with nothing ingested.
        ValueError: ``target`` is a LoadedIndex and ``embedder`` or ``settings`` is missing.
    """
    if isinstance(target, LoadedIndex):
        if embedder is None or settings is None:
            raise ValueError("scoring a LoadedIndex needs the embedder and settings it is searched with")
        index = target
    else:
        index, embedder, settings = target.index(), target.embedder, target.settings
    retriever = Retriever(index, embedder, settings)
    scores = []
    for query in queries:
        where = SearchFilter(collections=frozenset(query.collections) if query.collections else None)
        passages = retriever.search([query.query], top_k=CANDIDATES, where=where)[0]
        best = max(passages, key=lambda p: p.score, default=None)
        scores.append(GapScore(query.query, best.score if best else 0.0, query.expected,
                               best.doc_id if best else "", index.name))
    return scores


def ab_gate(
    old: LoadedIndex | None,
    candidate_dir: Path,
    kb,
    queries: list[GapQuery] | tuple[GapQuery, ...],
    tolerance: float = DEFAULT_GATE_TOLERANCE,
    query_tolerance: float | None = None,
) -> GateResult:
    """Compare gap-query scores of the live generation and a candidate; fail on a large drop.

    Args:
        old: the live generation, or None (first build: the candidate passes).
        candidate_dir: the complete, not yet live generation folder (``write_generation``'s
            ``before_switch`` argument).
        kb: the `KnowledgeBase` whose embedder and settings search both generations.
        queries: the gap queries; none → the candidate passes.
        tolerance: largest allowed fall of the mean score (in score units, [0, 1]).
        query_tolerance: largest allowed fall of any one query; None = ``tolerance``.

    Returns:
        GateResult; ``passed`` is False when the mean falls by more than ``tolerance`` or a query by more
        than ``query_tolerance``. A candidate built with another embedding model is not compared (its
        scores are not comparable) and passes.

    Raises:
        IndexNotBuilt: the candidate folder is unreadable.
    """
    query_tolerance = tolerance if query_tolerance is None else query_tolerance
    if old is None or not queries:
        return GateResult(True, "no live generation to compare with" if old is None else "no gap queries")
    try:
        candidate = load_generation_dir(candidate_dir, model=kb.settings.embedding.model,
                                        ef=kb.settings.retrieval.hnsw_ef)
    except IndexIncompatible as exc:
        return GateResult(True, f"not compared: {exc}")
    embedder = _QueryCache(kb.embedder)
    old_scores = run_gap_queries(old, queries, embedder=embedder, settings=kb.settings)
    new_scores = run_gap_queries(candidate, queries, embedder=embedder, settings=kb.settings)
    old_mean = float(np.mean([s.score for s in old_scores]))
    new_mean = float(np.mean([s.score for s in new_scores]))
    falls = [(o.score - n.score, o, n) for o, n in zip(old_scores, new_scores)]
    worst, worst_old, worst_new = max(falls, key=lambda f: f[0])
    summary = f"mean gap-query score {old_mean:.2f} → {new_mean:.2f} over {len(queries)} queries"
    if old_mean - new_mean > tolerance:
        reason = (f"{summary}: a fall of {old_mean - new_mean:.2f} exceeds the tolerance {tolerance:.2f}; "
                  f"worst: {worst_new.query!r} {worst_old.score:.2f} → {worst_new.score:.2f}")
        return GateResult(False, reason, old_scores, new_scores)
    if worst > query_tolerance:
        reason = (f"{summary}, but {worst_new.query!r} fell {worst_old.score:.2f} → {worst_new.score:.2f}, "
                  f"more than the per-query tolerance {query_tolerance:.2f}")
        return GateResult(False, reason, old_scores, new_scores)
    return GateResult(True, f"{summary}: within tolerance", old_scores, new_scores)


class ABGate:
    """The A/B gate as a ``before_switch`` hook: ``sync(..., before_switch=make_gate(kb, queries))``.

    Calling it with the candidate folder compares it with the live generation (`ab_gate`) and raises
    GateRejected when it fails, which keeps the old generation live. ``result`` holds the last verdict,
    so the caller can record why a candidate was accepted or rejected.
    """

    def __init__(self, kb, queries, tolerance: float = DEFAULT_GATE_TOLERANCE, query_tolerance: float | None = None):
        self.kb = kb
        self.queries = tuple(queries)
        self.tolerance = tolerance
        self.query_tolerance = query_tolerance
        self.result: GateResult | None = None

    def __call__(self, candidate_dir: Path) -> None:
        try:
            old = self.kb.index()
        except (IndexNotBuilt, IndexIncompatible):
            old = None
        # only queries about collections the live generation has and the config still names can fall
        queries = scope_queries(GapQuerySet(self.queries), judged_collections(old, self.kb.settings)).queries
        self.result = ab_gate(old, Path(candidate_dir), self.kb, queries, self.tolerance, self.query_tolerance)
        if not self.result.passed:
            raise GateRejected(f"index generation {Path(candidate_dir).name} rejected: {self.result.reason}",
                               self.result)


def make_gate(kb, queries, tolerance: float = DEFAULT_GATE_TOLERANCE, query_tolerance: float | None = None) -> ABGate:
    """An `ABGate` for ``sync``'s ``before_switch``; raises GateRejected on a regressing candidate.

    Example::

        gaps = load_gap_queries()
        gate = make_gate(kb, gaps.queries, gaps.gate_tolerance, gaps.gate_query_tolerance)
        try:
            kb.sync(before_switch=gate)
        except GateRejected as exc:
            log.warning("sync.gate_rejected", reason=str(exc), scores=exc.result.to_json())
    """
    return ABGate(kb, queries, tolerance, query_tolerance)


class _QueryCache:
    """Wraps an embedder so the gate embeds each query once for both generations."""

    def __init__(self, embedder: Embedder):
        self._embedder = embedder
        self.name, self.dim = embedder.name, embedder.dim
        self._cache: dict[tuple[str, str], np.ndarray] = {}

    def embed(self, texts: list[str], *, kind: str = "passage") -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if (kind, t) not in self._cache]
        if missing:
            for text, vector in zip(missing, self._embedder.embed(missing, kind=kind)):
                self._cache[(kind, text)] = vector
        return np.stack([self._cache[(kind, t)] for t in texts]) if texts else self._embedder.embed([], kind=kind)


def _fraction(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ConfigError(f"{where} must be a number in [0, 1], not {value!r}")
    return float(value)


def _no_unknown_keys(mapping: dict, known: set[str], where: str) -> None:
    unknown = sorted(set(mapping) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown}; known: {sorted(known)}")
