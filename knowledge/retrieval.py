"""Hybrid retrieval over a loaded generation: hnswlib (dense) + bm25s (sparse), fused, filtered.

Filters (DESIGN.md): collection, stage = active, not expired (checked at query time, so a page disappears
the moment it expires without a re-index), and visibility. Every candidate gets the calibrated score of
its exact cosine similarity, so scores are comparable across queries and modes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime, timezone

import numpy as np

from config import Settings
from knowledge import crosslingual
from knowledge.catalog import is_expired
from knowledge.continuation import continues, joined, joined_unit_scores
from knowledge.embedding import Embedder, spell_out_identifiers
from knowledge.embedding_profiles import dense_languages
from knowledge.index import LoadedIndex
from knowledge.language import detect_language
from knowledge.scoring import (
    LEXICAL_CALIBRATION, bm25_share, calibrate, convex_fusion, evidence_score, lexical_coverage, rank_agreement,
    reciprocal_rank_fusion,
)
from knowledge.answer_type import asked_sections, path_kind
from knowledge.replacements import may_state_replacement, replacement_terms, states_replacement
from knowledge.sentences import split_units
from knowledge.tokenize import compound_words, question_tokens, tokenize, topic_tokens
from knowledge.types import Passage

MODES = ("hybrid", "dense", "bm25")
#: Most chunks a question asking what replaces an identifier brings to the front (`Retriever._replacement_rows`).
REPLACEMENT_ROWS = 2
#: Most sections of the best page a question asking for a kind of section brings in (`Retriever._section_rows`).
SECTION_ROWS = 3


@dataclass(frozen=True)
class SearchFilter:
    """Which chunks a search may return.

    Attributes:
        collections: allowed collection names; None = all.
        excluded: collection names taken out of search (e.g. by the kill switch); wins over ``collections``.
        excluded_docs: doc ids taken out of search (documents quarantined by the kill switch).
        allow_restricted: whether restricted collections may be used (DMs of allowed users only).
        now: the time expiry is checked against (UTC); None = now.
        only_expired: search only the documents past their ``expires_at`` instead of leaving them out (to tell
            an asker that the page that covered a question has expired, `KnowledgeBase.ask`).
    """

    collections: frozenset[str] | None = None
    excluded: frozenset[str] = frozenset()
    excluded_docs: frozenset[str] = frozenset()
    allow_restricted: bool = False
    now: datetime | None = None
    only_expired: bool = False


#: Passages (best scored first) whose answer units a Korean/Japanese question re-scores with the cross-lingual
#: model (`knowledge.crosslingual.XLRanking.with_unit_cosines`): the direct answer comes from the best one or
#: two; each unit costs ~1.3 ms, so three passages' units took up to ~40 ms of a ~50 ms question.
XL_UNIT_PASSAGES = 2

#: Nearest answer units a search reads (`Retriever._dense_top`): the chunks holding them join the dense candidates.
#: On kb-dev and kb-dev-v2's questions the chunks of the 200 nearest units hold 98 % of the 50 best chunks by
#: best unit that a scan of all 21,000 units finds (100 units: 95 %; 400: 99 %), at ~2 ms instead of ~9 ms.
UNIT_NEIGHBOURS = 200

#: Permission masks kept per loaded generation (`Retriever._allowed_rows`): one per distinct filter (channel
#: collections × restricted rights × kill switch state); a few dozen in a real workspace, cleared beyond this.
MASK_CACHE_SIZE = 256

#: Stands for "no page ever expires" in the mask cache.
_NEVER = datetime.max.replace(tzinfo=timezone.utc)


def _next_expiry(documents: dict[str, dict], now: datetime) -> datetime:
    """The earliest ``expires_at`` after ``now`` among ``documents`` (`_NEVER` when none): until then every
    document's expiry state stays as it is at ``now``."""
    later = [datetime.fromisoformat(d["expires_at"]) for d in documents.values() if d.get("expires_at")]
    later = [t if t.tzinfo else t.replace(tzinfo=timezone.utc) for t in later]
    return min((t for t in later if t > now), default=_NEVER)


class Retriever:
    """Searches one loaded generation. Cheap to create; holds no state beyond the index."""

    def __init__(self, index: LoadedIndex, embedder: Embedder, settings: Settings, unit_cache=None):
        """``unit_cache``: an `knowledge.embedding.EmbeddingCache` of cross-lingual unit vectors (None: a
        Korean or Japanese question's units are embedded at question time)."""
        self.index = index
        self.embedder = embedder
        self.settings = settings
        self._unit_cache = unit_cache
        self._dense_languages = dense_languages(embedder.name, settings.embedding.languages)
        self._xl_model = crosslingual.crosslingual_model(settings.embedding, embedder.name)
        self._asked: dict[str, np.ndarray] = {}  # question → vector, for this retriever's searches

    def search(
        self, queries: list[str], *, top_k: int = 5, mode: str = "hybrid", where: SearchFilter | None = None
    ) -> list[list[Passage]]:
        """Passages for each query, best first.

        Args:
            queries: question texts (non-empty strings).
            top_k: passages per query (>= 1).
            mode: "hybrid" (fusion of both), "dense" (cosine only) or "bm25" (BM25 only). A hybrid search
                of a question in a language the dense model cannot read (`dense_languages`) uses BM25 only,
                and its passages' ``score`` is the lexical confidence instead of the calibrated cosine; when
                the index has cross-lingual vectors (`knowledge.crosslingual`), it is ranked by their cosine
                fused with BM25 instead, and scored by the larger of the lexical and the cross-lingual score.
            where: filters; None = every active, unexpired, public chunk.

        Returns:
            One list per query of at most ``top_k`` passages, led by those that say what replaces an identifier
            the question names (`knowledge.replacements`), then up to `SECTION_ROWS` more: the sections of the
            best page that the question asks for (`knowledge.answer_type.asked_sections`); ``score`` is the
            calibrated score in [0, 1] (raised to the high band for a replacement, to the page's best for a
            section). A passage whose section the chunker split goes on with the next piece (`_read_on`).

        Raises:
            ValueError: unknown mode.
        """
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        if not self.index.chunks or not queries:
            return [[] for _ in queries]
        allowed = self._allowed_rows(where or SearchFilter())
        languages = [detect_language(q) for q in queries]
        query_vectors = self._query_vectors(queries, languages, mode)
        results = []
        for query, qvec, language in zip(queries, query_vectors, languages):
            tokens = self.question_tokens(query)
            bm25 = self._bm25_scores(tokens, allowed)  # once per query: ranking, fusion and the passages use it
            readable = self.reads(language)
            xl = self._crosslingual(query, bm25, allowed) if not readable and mode == "hybrid" else None
            if xl is not None:
                order, dense_rank, sparse_rank = xl.order, xl.dense_rank, xl.sparse_rank
            else:
                order, dense_rank, sparse_rank = self._rank(bm25, qvec, allowed, mode if readable or mode != "hybrid" else "bm25")
            found = self._replacement_rows(replacement_terms(query), bm25, allowed)
            rows = (found + [r for r in order[:top_k] if r not in found])[:top_k]
            sections = self._section_rows(rows, asked_sections(query), bm25, allowed)
            rows += [r for r in sections if r not in rows]
            # Exact cosine for the returned rows only: a full (n_chunks x dim) product would wake
            # OpenBLAS's thread pool, whose spinning threads then slow torch's next query tenfold.
            cosines = np.einsum("ij,j->i", self.index.vectors[rows], qvec) if rows else []
            terms = self.topic_weights(query)
            passages = []
            for r, c in zip(rows, cosines):
                evidence, units = self._evidence(r, float(c), qvec, bm25, terms, language, dense_rank, sparse_rank)
                passage = self._passage(r, float(c), evidence, units, float(bm25[r]), readable)
                passage = xl.rescore(passage, r) if xl is not None else passage
                passages.append(self._as_replacement(passage) if r in found else passage)
            passages = _with_page_confidence(passages, [r in sections for r in rows])
            passages = self._read_on(passages, rows, qvec, language)
            if xl is not None:
                passages = xl.with_unit_cosines(passages, self._xl_model, XL_UNIT_PASSAGES, self._unit_cache)
            results.append(passages)
        return results

    def _query_vectors(self, queries: list[str], languages: list[str], mode: str) -> np.ndarray:
        """The main model's vector of each query; zeros for a query in a language it cannot read when the
        cross-lingual index will rank it (its vector would only score passages the model cannot judge, and
        embedding it took ~20 ms of a Korean question's ~50)."""
        vectors = np.zeros((len(queries), self.embedder.dim), dtype=np.float32)
        skip = mode == "hybrid" and self._xl_available()
        todo = [i for i, language in enumerate(languages) if not (skip and not self.reads(language))]
        if len(todo) == 1:  # one question: a second search of it (expired pages, `KnowledgeBase.ask`) reuses it
            text = spell_out_identifiers(queries[todo[0]])
            if text not in self._asked:
                self._asked = {text: self.embedder.embed([text], kind="query")[0]}
            vectors[todo[0]] = self._asked[text]
        elif todo:
            vectors[todo] = self.embedder.embed([spell_out_identifiers(queries[i]) for i in todo], kind="query")
        return vectors

    def _xl_available(self) -> bool:
        """Whether the index has cross-lingual vectors of the configured model."""
        return (self._xl_model is not None and self.index.xl_dense is not None
                and self.index.manifest.get("crosslingual") == self._xl_model)

    def reads(self, language: str) -> bool:
        """Whether the dense model reads questions in ``language`` ("en", "ko", "ja"; `dense_languages`)."""
        return self._dense_languages is None or language in self._dense_languages

    def _crosslingual(self, query: str, bm25: np.ndarray, allowed: np.ndarray) -> "crosslingual.XLRanking | None":
        """The cross-lingual ranking of a question the dense model cannot read, or None when the index has
        no cross-lingual vectors of the configured model (``embedding.crosslingual`` off, or an index
        written before: BM25 alone then)."""
        if not self._xl_available():
            return None
        return crosslingual.rank(self.index, query, bm25, allowed, self.settings.retrieval.candidates, self._xl_model)

    def question_tokens(self, question: str) -> list[str]:
        """``question``'s BM25 tokens as this index reads them (`knowledge.tokenize.question_tokens`, names
        split as `_read_names` says)."""
        return self._read_names(question_tokens(question), question)

    def topic_weights(self, question: str) -> dict[str, float]:
        """The idf of each token naming ``question``'s topic (`knowledge.tokenize.topic_tokens`, names split as
        `_read_names` says; `term_weights`): what coverage counts, for the passages' evidence and the reader."""
        return self.term_weights(self._read_names(topic_tokens(question), question))

    def _read_names(self, tokens: list[str], question: str) -> list[str]:
        """``tokens`` with each camelCase name of ``question`` that no chunk holds whole, but one chunk holds
        all the words of, replaced by those words.

        An on-call asker pastes the alert's name ("CPUThrottlingHigh only fires on old nodes") while its
        runbook spells it out in its title ("CPU Throttling High"): the name alone matched nothing and, as a
        word no page knows, weighed most in coverage (refused; the runbook 4th). A name some page writes whole
        stays one token (``ConfigDict``: its words are common, the name specific), and one whose words no chunk
        holds together stays unknown (an alert this index has no runbook for is still refused). As Lucene's
        word delimiter filter, split on a change of case (`knowledge.tokenize.compound_words`)."""
        bm25 = self.index.bm25
        compounds = compound_words(question)
        if bm25 is None or not compounds:
            return tokens
        out: list[str] = []
        for token in tokens:
            parts = compounds.get(token)
            spelled = parts and token not in bm25.vocab_dict and self._together(parts)
            out.extend(parts if spelled else [token])
        return out

    def _together(self, tokens: list[str]) -> bool:
        """Whether one chunk holds every one of ``tokens``."""
        if any(t not in self.index.bm25.vocab_dict for t in tokens):
            return False
        rows = set(self._rows_with(tokens[0]).tolist())
        for token in tokens[1:]:
            rows &= set(self._rows_with(token).tolist())
            if not rows:
                return False
        return True

    def term_weights(self, tokens: list[str]) -> dict[str, float]:
        """Lucene BM25 idf of each distinct token of a question, from the index's document frequencies;
        a token no chunk contains gets the largest idf (it weighs most in coverage: a question about
        something the corpus never mentions stays low)."""
        bm25 = self.index.bm25
        if bm25 is None:
            return {}
        vocab, indptr, n_docs = bm25.vocab_dict, bm25.scores["indptr"], bm25.scores["num_docs"]
        out = {}
        for token in dict.fromkeys(tokens):
            df = int(indptr[vocab[token] + 1] - indptr[vocab[token]]) if token in vocab else 0
            out[token] = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
        return out

    def _evidence(self, row: int, cosine: float, qvec: np.ndarray, bm25: np.ndarray, terms: dict[str, float],
                  language: str, dense_rank: dict[int, int], sparse_rank: dict[int, int]) -> tuple[dict, tuple]:
        """The evidence of chunk ``row`` (`knowledge.scoring.EVIDENCE_FEATURES`) and its units' cosines."""
        shift = self._language_shift(language)
        units = self._unit_cosines(row, qvec, language)
        unit_best = max([cosine, *(c - shift for _, _, c in units)])
        known = [t for t in terms if t in self.index.bm25.vocab_dict]
        evidence = {
            "cosine": cosine + shift,
            "unit_cosine": unit_best + shift,
            "coverage": lexical_coverage(set(terms), self._tokens_in_row(row, known), terms.get),
            "bm25_share": bm25_share(float(bm25[row]), [terms[t] for t in known], self.settings.retrieval.bm25_k1),
            "agreement": rank_agreement(dense_rank.get(row), sparse_rank.get(row)),
        }
        return evidence, units

    def _language_shift(self, language: str) -> float:
        return 0.0 if language == "en" else self.settings.answer.calibration.language_shift

    def _unit_cosines(self, row: int, qvec: np.ndarray, language: str) -> tuple:
        """``((start, end, cosine), ...)`` of chunk ``row``'s embedded units against ``qvec``, shifted as the
        passage cosine is for a question not in English; empty when the index has no unit vectors."""
        if self.index.units is None:
            return ()
        spans, vectors = self.index.units.of_row(row)
        shift = self._language_shift(language)
        best: dict[tuple[int, int], float] = {}
        for (a, b), x in zip(spans.tolist(), (vectors @ qvec).tolist()):  # an item: alone and after its lead-in
            best[a, b] = max(best.get((a, b), -1.0), x + shift)
        return tuple((a, b, x) for (a, b), x in best.items())

    def _read_on(self, passages: list[Passage], rows: list[int], qvec: np.ndarray, language: str) -> list[Passage]:
        """``passages`` (of chunk ``rows``) where a passage whose section goes on in the next chunk
        (`knowledge.continuation.continues`) holds that chunk too, in its place in the ranking. When both
        pieces were found, they become one passage at the better-ranked one's place, scored as the better
        scored one: the second piece's own passage is gone (its text is in the first's)."""
        chunks = self.index.chunks
        found = dict(zip(rows, passages))
        out, used = [], set()
        for row in rows:
            if row in used:
                continue
            first, second = self._piece_pair(row, found, used)
            used.update((first, second) if second is not None else (first,))
            if second is None:
                out.append(found[row])
                continue
            best = max((found[r] for r in (first, second) if r in found), key=lambda p: p.score)
            text, shift = joined(chunks[first]["text"], chunks[second]["text"])
            scores = [found[r].unit_scores if r in found else self._unit_cosines(r, qvec, language)
                      for r in (first, second)]
            units = joined_unit_scores(text, len(chunks[first]["text"]), *scores, shift)
            out.append(replace(best, chunk_id=chunks[first]["chunk_id"], text=text, unit_scores=units))
        return out

    def _piece_pair(self, row: int, found: dict, used: set[int]) -> tuple[int, int | None]:
        """``(first, second)``: chunk ``row`` and the next piece of its section, or the piece before it
        when that was found too; ``(row, None)`` when its section is not split there."""
        chunks, index = self.index.chunks, self.index
        before = next((r for r in found if r not in used and index.next_row(r) == row), None)
        if before is not None and continues(chunks[before], chunks[row]):
            return before, row
        after = index.next_row(row)
        if after is not None and after not in used and continues(chunks[row], chunks[after]):
            return row, after
        return row, None

    def only_on_expired_pages(self, terms: dict[str, float], where: SearchFilter | None = None) -> bool:
        """Whether a question's most specific word (the highest-IDF of its ``terms``, `term_weights`, that the
        index knows) is found only on pages past their ``expires_at``: "can I still use the SUMMER25 code?"
        names a code only the expired sale's page holds, so a current page that answers the rest ("one code per
        workspace") does not answer it."""
        known = [t for t in sorted(terms) if t in self.index.bm25.vocab_dict]
        if not known:
            return False
        where = where or SearchFilter()
        now = where.now or datetime.now(timezone.utc)
        docs = {self.index.chunks[row]["doc_id"] for row in self._rows_with(max(known, key=terms.get))}
        served = [self._serves(self.index.documents[d], d, replace(where, only_expired=False), now) for d in docs]
        expired = [self._serves(self.index.documents[d], d, replace(where, only_expired=True), now) for d in docs]
        return not any(served) and any(expired)

    def _replacement_rows(self, terms: set[str], bm25: np.ndarray, allowed: np.ndarray) -> list[int]:
        """The allowed chunks that say what replaces one of ``terms`` (`knowledge.replacements`), best BM25
        first, at most `REPLACEMENT_ROWS`: the line of a migration guide that maps ``dict()`` to
        ``model_dump()`` is the answer even when similarity ranks it below the pages that only mention ``dict``."""
        if not terms or self.index.bm25 is None:
            return []
        vocab = self.index.bm25.vocab_dict
        tokens = {t for term in terms for t in tokenize(term) if t in vocab}
        holding = {int(r) for t in tokens for r in self._rows_with(t) if allowed[r]}
        found = []
        for row in sorted(holding, key=lambda r: (-bm25[r], r)):
            text = self.index.chunks[row]["text"]
            if may_state_replacement(text, terms) and any(
                    states_replacement(u.display, u.kind, terms) for u in split_units(text) if u.answerable):
                found.append(row)
                if len(found) == REPLACEMENT_ROWS:
                    break
        return found

    def _section_rows(self, rows: list[int], kinds: frozenset[str], bm25: np.ndarray, allowed: np.ndarray) -> list[int]:
        """The allowed chunks of the first of ``rows``' page under a heading of one of ``kinds``
        (`knowledge.answer_type.path_kind`), best BM25 first, at most `SECTION_ROWS`, when the page is split into
        sections of at least two kinds (a runbook's Meaning, Impact, Diagnosis, Mitigation): "etcdNoLeader —
        what is the impact?" ranks the runbook's Meaning first (it restates the alert), and its Impact section is
        what was asked."""
        if not kinds or not rows:
            return []
        doc_id = self.index.chunks[rows[0]]["doc_id"]
        page = [(row, path_kind(self.index.chunks[row]["heading_path"])) for row in self.index.rows_of(doc_id)
                if allowed[row]]
        if len({kind for _, kind in page if kind}) < 2:  # not a page split into kinds (a FAQ of "How to …" headings)
            return []
        asked = [row for row, kind in page if kind in kinds]
        return sorted(asked, key=lambda r: (-bm25[r], r))[:SECTION_ROWS]

    def _as_replacement(self, passage: Passage) -> Passage:
        """``passage``, which states what replaces an identifier the question names, marked so
        (``evidence["replaces"]``) and cited: its score is raised to the high band, as an exact match of the
        name is what the question asked for (its similarity evidence is low: one row of a long table)."""
        return replace(passage, score=max(passage.score, self.settings.answer.high),
                       evidence={**passage.evidence, "replaces": 1.0})

    def _rows_with(self, token: str) -> np.ndarray:
        """The chunk rows whose BM25 document holds ``token`` (in the vocabulary), from the sparse index."""
        bm25 = self.index.bm25
        at = bm25.vocab_dict[token]
        return bm25.scores["indices"][bm25.scores["indptr"][at]:bm25.scores["indptr"][at + 1]]

    def _tokens_in_row(self, row: int, tokens: list[str]) -> set[str]:
        """Which of ``tokens`` (all in the BM25 vocabulary) chunk ``row`` contains, read from the index's
        sparse token → documents matrix instead of re-tokenizing the chunk."""
        return {t for t in tokens if np.any(self._rows_with(t) == row)}

    def _rank(self, bm25: np.ndarray, qvec: np.ndarray, allowed: np.ndarray,
              mode: str) -> tuple[list[int], dict[int, int], dict[int, int]]:
        """Allowed rows best first, and each candidate's rank (from 0) in the dense and the BM25 ranking;
        ``bm25``: the query's BM25 score per chunk (0 where not allowed)."""
        n = self.settings.retrieval.candidates
        dense, similarity = self._dense_top(qvec, allowed, n) if mode != "bm25" else ([], {})
        sparse = _top_rows(bm25, n) if mode != "dense" else []
        ranks = ({r: i for i, r in enumerate(dense)}, {r: i for i, r in enumerate(sparse)})
        if mode == "dense":
            return dense, *ranks
        if mode == "bm25":
            return sparse, *ranks
        cfg = self.settings.retrieval
        if cfg.fusion == "rrf":
            fused = reciprocal_rank_fusion([dense, sparse], k=cfg.rrf_k)
        else:
            fused = convex_fusion(similarity, {i: float(bm25[i]) for i in sparse}, cfg.dense_weight)
        return sorted(fused, key=lambda i: (-fused[i], i)), *ranks

    def _dense_top(self, qvec: np.ndarray, allowed: np.ndarray, n: int) -> tuple[list[int], dict[int, float]]:
        """The top ``n`` allowed rows by dense similarity, best first, and that similarity: a chunk is as close
        to the question as its closest sentence (list item, table row: its embedded units), or the chunk as a
        whole when that is closer.

        Sentence-level similarity finds the one line that answers inside a chunk about more than it ("If you
        are relocating for 120 days or less, you do not need to notify PeopleOps" is the closest unit of the
        corpus to "work from my parents' place for ~2 months, do I need to tell PeopleOps?", its chunk only the
        third closest), and it ranks a page whose sentences say what the question asks with BM25's ranking, so
        their agreement (`knowledge.scoring.rank_agreement`) separates answered from near-topic questions better:
        with the calibration refitted on it, kb-dev refuses 5 of 6 no-answer questions (4 before) and the
        never-fitted near-topic set 22 of 32 (20), answering 52/54 and 22/28 (53, 23) (benchmarks/fit_confidence.py).
        Rows come from hnswlib's top ``n`` chunks and the top ``n`` chunks by best unit (among the chunks of the
        `UNIT_NEIGHBOURS` nearest units).
        """
        n = min(n, int(allowed.sum()))
        if n == 0:
            return [], {}
        everything = bool(allowed.all())
        labels, distances = self.index.dense.knn_query(
            qvec, k=n, filter=None if everything else (lambda label: bool(allowed[label]))
        )
        similarity = {int(r): 1.0 - float(d) for r, d in zip(labels[0], distances[0])}
        units = self.index.units
        if units is not None and len(units.spans):
            extra = [r for r in units.nearest_rows(qvec, UNIT_NEIGHBOURS, allowed)[:n] if r not in similarity]
            cosines = np.einsum("ij,j->i", self.index.vectors[extra], qvec) if extra else []
            similarity.update((r, float(c)) for r, c in zip(extra, cosines))
            best_unit = units.best_of_rows(list(similarity), qvec)
            similarity = {r: max(c, best_unit.get(r, -1.0)) for r, c in similarity.items()}
        rows = sorted(similarity, key=lambda r: (-similarity[r], r))[:n]
        return rows, {r: similarity[r] for r in rows}

    def _bm25_scores(self, tokens: list[str], allowed: np.ndarray) -> np.ndarray:
        """BM25 score per chunk (n_chunks,) of the question's ``tokens``; 0 where not ``allowed``."""
        tokens = [t for t in tokens if t in self.index.bm25.vocab_dict]
        if not tokens:
            return np.zeros(len(self.index.chunks), dtype=np.float32)
        return self.index.bm25.get_scores(tokens) * allowed

    def _allowed_rows(self, where: SearchFilter) -> np.ndarray:
        """Boolean mask (n_chunks,) of chunks that pass the filters at query time (read-only: it is shared).

        Cached on the loaded generation per filter (the asker's collections and rights) and per configured
        visibility, until the next page expires: a pass over every document record took ~1.5 ms of a ~15 ms
        question (issue 24). Within that window the mask is the same as a fresh one, expiry included."""
        now = where.now or datetime.now(timezone.utc)
        key = (replace(where, now=None), tuple((s.name, s.visibility) for s in self.settings.sources))
        cached = self.index.masks.get(key)  # (mask, computed at, valid until)
        if cached is not None and cached[1] <= now < cached[2]:
            return cached[0]
        ok_docs = {doc_id for doc_id, doc in self.index.documents.items() if self._serves(doc, doc_id, where, now)}
        mask = self.index.rows_mask(ok_docs)
        mask.flags.writeable = False
        if len(self.index.masks) > MASK_CACHE_SIZE:
            self.index.masks.clear()
        self.index.masks[key] = (mask, now, _next_expiry(self.index.documents, now))
        return mask

    def _serves(self, doc: dict, doc_id: str, where: SearchFilter, now: datetime) -> bool:
        """Whether document ``doc_id`` passes the filters: active, in an allowed collection, not switched off
        or quarantined, visible to this asker, and unexpired (or expired, with ``where.only_expired``)."""
        return (doc.get("stage", "active") == "active"
                and (where.collections is None or doc["collection"] in where.collections)
                and doc["collection"] not in where.excluded and doc_id not in where.excluded_docs
                and (self._visibility(doc) != "restricted" or where.allow_restricted)
                and is_expired(doc, now) == where.only_expired)

    def _visibility(self, doc: dict) -> str:
        """The configured visibility of the document's collection (so restricting a collection takes effect
        at once, without a re-sync), else the visibility recorded at ingest."""
        for source in self.settings.sources:
            if source.name == doc["collection"]:
                return source.visibility
        return doc.get("visibility", "public")

    def _passage(self, row: int, cosine: float, evidence: dict, units: tuple, bm25: float,
                 readable: bool) -> Passage:
        """The chunk at ``row`` as a Passage scored from its ``evidence``: the profile's combined calibration
        when the dense model reads the question, else the lexical confidence (`LEXICAL_CALIBRATION`)."""
        chunk = self.index.chunks[row]
        doc = self.index.documents[chunk["doc_id"]]
        if readable:
            score = evidence_score(evidence, self.settings.answer.calibration)
        else:
            score = float(calibrate(evidence["coverage"], LEXICAL_CALIBRATION))
        return Passage(
            chunk_id=chunk["chunk_id"],
            doc_id=chunk["doc_id"],
            collection=doc["collection"],
            title=doc["title"],
            url=doc["url"],
            heading_path=tuple(chunk["heading_path"]),
            text=chunk["text"],
            score=score,
            dense_score=cosine,
            bm25_score=bm25,
            last_modified=datetime.fromisoformat(doc["last_modified"]),
            visibility=self._visibility(doc),
            outdated=bool(doc.get("outdated")),
            date_source=doc.get("date_source", ""),
            evidence={k: round(v, 4) for k, v in evidence.items()},
            unit_scores=units,
        )


def _with_page_confidence(passages: list[Passage], asked: list[bool]) -> list[Passage]:
    """``passages`` where the ``asked`` ones (sections of the best page that the question asks for,
    `Retriever._section_rows`) take their page's best score if higher, marked ``evidence["section"]``: the
    page is the confident match and the section is the part of it asked for."""
    if not any(asked):
        return passages
    best: dict[str, float] = {}
    for p in passages:
        best[p.doc_id] = max(best.get(p.doc_id, 0.0), p.score)
    return [replace(p, score=max(p.score, best[p.doc_id]), evidence={**p.evidence, "section": 1.0}) if is_asked else p
            for p, is_asked in zip(passages, asked)]


def _top_rows(scores: np.ndarray, n: int) -> list[int]:
    """Rows of the ``n`` highest positive ``scores``, best first (ties by row)."""
    n = min(n, len(scores))
    top = np.argpartition(-scores, n - 1)[:n]
    return [int(i) for i in sorted(top, key=lambda i: (-scores[i], i)) if scores[i] > 0]
