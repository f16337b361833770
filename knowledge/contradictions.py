"""Contradictions: two active documents that state different values for the same thing.

Seed 000, "Cross-validation": source A says the payment timeout is 30 seconds, source B says 60 seconds →
flag both, someone decides which is current. The check runs in three steps, from cheap and broad to
precise:

1. **Same topic**: chunk pairs from different documents whose cosine similarity is at least ``threshold``
   (0.70 by default, see `TOPIC_THRESHOLD`), found with hnswlib's k nearest neighbours per chunk, never an
   n×n matrix; and, whatever their similarity, chunks that restate one sentence of at least `RESTATED_WORDS`
   words with another value (a short "Per diem" section merged into a "Trips that need approval" chunk);
   and a chunk holding a table cell with a chunk whose sentence or list item names the cell's row and a word
   of its column or a "per …" of its unit ("| Pro | €60 |" under "Price per user" / "The Pro plan costs €45
   per user per month.", issue 28: a pricing table and an FAQ are two topics to the chunk model).
2. **Different values**: stated values (`knowledge.values`) of the same unit and compatible bounds whose
   amounts differ, where neither is *corroborated* (stated again, with the same amount, by a similar
   sentence anywhere in the other document). Corroboration keeps identical and near-identical passages
   silent, and two copies of one table in different chunks from pairing the wrong rows.
3. **Same thing**: the two value-masked sentences ("the webhook timeout is N seconds") must say the same
   thing: at least one shared content word next to the values, and identical masked sentences or an
   embedding cosine >= ``statement_threshold`` (0.80). Parallel sentences that swap a word ("client
   certificate" / "server certificate") name two things, cells of different table rows never match, and a
   cell matches a sentence only when the sentence names its row. A cell's statement starts with its row's
   header ("Plan: Pro, Price per user: €N"), so the model reads what the row key is.

Identifiers too (issue 11 item 6): codes, namespaces, channels and config values (`knowledge.identifiers`)
go through the same three steps, and a code whose name or table row says what it is for ("Out of Office -
#670", "| GSA-mandated | 1347 |") is also paired by that name with every other page naming the same thing,
however different the two chunks are (a training page and a timesheet page state one Tock line). Two
documents of one version family, or one that ``supersedes`` the other, are never compared: a version and its
successor is supersession, not a contradiction (archived and deprecated versions are not active anyway).

Precision matters more than recall here: a report full of noise is ignored.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from difflib import SequenceMatcher

import numpy as np

from knowledge.embedding import Embedder
from knowledge.embedding_profiles import model_cosine
from knowledge.identifiers import IDENTIFIER_KINDS, Identifier, extract_identifiers
from knowledge.index import LoadedIndex
from knowledge.tokenize import tokenize
from knowledge.values import _CONTEXT_STOP, PERIODS, Value, comparable, extract_values

#: Chunk cosine at or above which two chunks are about the same topic. 0.70, below the issue's example
#: 0.80: the sample KB's webhook timeout pair (api/webhooks.md 30 s vs runbooks/webhook-failures.md 60 s)
#: sits at 0.74, and on the two TTS handbook snapshots 0.70 finds 14 pairs, all real, where 0.80 finds 12
#: and 0.60 adds 6 false ones (benchmarks/contradictions.py).
TOPIC_THRESHOLD = 0.70
#: Cosine of two value-masked sentences at or above which they state the same thing (tuned on the two
#: TTS handbook snapshots, benchmarks/contradictions.py).
STATEMENT_THRESHOLD = 0.80
#: Content words a value's context needs before it is compared (see `_has_subject`).
MIN_SUBJECT_WORDS = 2
#: Stemmed context words that make a version a claim about the current state rather than a mention.
VERSION_CLAIM_WORDS = frozenset({"current", "latest", "minimum", "requir", "support", "recommend", "default",
                                 "stabl", "deprec"})
#: Characters of a statement embedded (MiniLM reads ~256 word pieces; longer sentences only cost time).
STATEMENT_CHARS = 400
#: Neighbours examined per chunk.
NEIGHBOURS = 10


@dataclass(frozen=True)
class Contradiction:
    """Two sources stating different values for the same thing.

    Attributes:
        doc_a, doc_b: the two documents (``doc_a`` sorts first).
        collection_a, collection_b: their collections.
        chunk_a, chunk_b: the chunks holding the two statements.
        kind: what the values measure: "duration", "percent", "money", "size", "rate", "count", …
        value_a, value_b: the values as written, e.g. "30 seconds" and "60 seconds".
        sentence_a, sentence_b: the sentences stating them (Markdown stripped).
        similarity: cosine of the two chunks, in [threshold, 1].
        statement_similarity: cosine of the two value-masked sentences, in [statement_threshold, 1].
        stated_a, stated_b: each value with its unit's "per …" (`Value.with_unit`), e.g. "€60 per user"
            (a cell under "Price per user") and "€45 per user per month"; the text for identifiers.
    """

    doc_a: str
    doc_b: str
    collection_a: str
    collection_b: str
    chunk_a: str
    chunk_b: str
    kind: str
    value_a: str
    value_b: str
    sentence_a: str
    sentence_b: str
    similarity: float
    statement_similarity: float
    stated_a: str = ""
    stated_b: str = ""

    def to_json(self) -> dict:
        """A JSON-ready dict; similarities rounded to 4 decimals."""
        data = asdict(self)
        data["similarity"] = round(self.similarity, 4)
        data["statement_similarity"] = round(self.statement_similarity, 4)
        return data


def find_contradictions(
    index: LoadedIndex,
    embedder: Embedder,
    *,
    threshold: float | None = None,
    statement_threshold: float | None = None,
    across_collections: bool = False,
    neighbours: int = NEIGHBOURS,
    now: datetime | None = None,
) -> list[Contradiction]:
    """Pairs of active documents stating different values for the same thing, most certain first.

    Args:
        index: a loaded generation (its hnswlib index finds the similar chunks).
        embedder: the dense model, for the value-masked sentences (any model; the index's is best).
        threshold: chunk cosine in [-1, 1] from which two chunks count as the same topic; None =
            `TOPIC_THRESHOLD` (MiniLM scale) converted to the index's model (`model_cosine`).
        statement_threshold: cosine from which two value-masked sentences state the same thing; None =
            `STATEMENT_THRESHOLD` converted to ``embedder``'s scale.
        across_collections: True compares only documents of different collections (e.g. two sources
            of one handbook); False any two different documents.
        neighbours: nearest chunks examined per chunk (>= 1).
        now: expiry is checked against it (UTC); None = now. Archived, deprecated and expired
            documents are never compared.

    Returns:
        One Contradiction per pair of conflicting statements, sorted by statement similarity, then chunk
        similarity (both descending). The same two sentences met through overlapping chunks count once.
    """
    if threshold is None:
        threshold = model_cosine(index.manifest.get("model", ""), TOPIC_THRESHOLD)
    if statement_threshold is None:
        statement_threshold = model_cosine(getattr(embedder, "name", ""), STATEMENT_THRESHOLD)
    active = _active_rows(index, now or datetime.now(timezone.utc))
    values = _ValueCache(index)
    candidates = []
    pairs = _similar_pairs(index, active, threshold, neighbours, across_collections)
    seen = {(i, j) for i, j, _c in pairs}
    pairs += [p for p in _labelled_pairs(index, values, active, across_collections) if (p[0], p[1]) not in seen]
    seen = {(i, j) for i, j, _c in pairs}
    pairs += [p for p in _restated_pairs(index, values, active, across_collections) if (p[0], p[1]) not in seen]
    seen = {(i, j) for i, j, _c in pairs}
    pairs += [p for p in _cell_pairs(index, values, active, across_collections) if (p[0], p[1]) not in seen]
    seen = {(i, j) for i, j, _c in pairs}
    pairs += [p for p in _named_pairs(index, values, active, across_collections) if (p[0], p[1]) not in seen]
    for i, j, cosine in pairs:
        if _supersession(index, index.chunks[i]["doc_id"], index.chunks[j]["doc_id"]):
            continue
        if any(a.conflicts_with(b) for a in values.chunk(i) for b in values.chunk(j)):
            candidates.append((i, j, cosine))
    same_statement = _statement_judge(embedder, values, candidates, statement_threshold)
    found: dict[tuple, Contradiction] = {}
    for i, j, cosine in candidates:
        doc_i, doc_j = index.chunks[i]["doc_id"], index.chunks[j]["doc_id"]
        pairs = _conflicts(values.chunk(i), values.chunk(j), values.document(doc_i), values.document(doc_j),
                           same_statement)
        for a, b, sim in pairs:
            item = _contradiction(index, i, j, a, b, cosine, sim)
            key = (item.doc_a, item.doc_b, item.sentence_a, item.sentence_b, item.value_a, item.value_b)
            if key not in found or found[key].similarity < item.similarity:
                found[key] = item
    return sorted(found.values(), key=lambda c: (-c.statement_similarity, -c.similarity, c.doc_a, c.doc_b))


def changed_values(old_text: str, new_text: str) -> list[tuple[Value, Value]]:
    """Values that two near-identical texts state differently: ``(old value, new value)`` pairs.

    For the ingest gate: a new chunk at cosine >= 0.92 with an existing one is no duplicate when it
    changes a number ("36 hours" → "32 hours" leaves the cosine at ~0.97); dropping it would keep the
    stale value. Text only, no model: a pair counts when both sentences read the same once values are
    masked, share a context word, and the new text does not state the old amount in that sentence too.

    Example::

        >>> [(a.text, b.text) for a, b in changed_values("Bill at least 36 hours a week to projects.",
        ...                                               "Bill at least 32 hours a week to projects.")]
        [('36 hours', '32 hours')]
    """
    old, new = extract_values(old_text), extract_values(new_text)
    return [(a, b) for a in old for b in new
            if a.conflicts_with(b) and _cheap_verdict(a, b) == 1.0
            and not any(comparable(o, a) and o.same_amount(a) and _cheap_verdict(a, o) == 1.0 for o in new)]


class _ValueCache:
    """Values of chunks and of whole documents, extracted once."""

    def __init__(self, index: LoadedIndex):
        self.index = index
        self._chunks: dict[int, list[Value]] = {}
        self._docs: dict[str, list[Value]] = {}
        self._rows_of: dict[str, list[int]] = {}
        for row, chunk in enumerate(index.chunks):
            self._rows_of.setdefault(chunk["doc_id"], []).append(row)

    def chunk(self, row: int) -> list[Value]:
        if row not in self._chunks:
            text = self.index.chunks[row]["text"]
            self._chunks[row] = extract_values(text) + extract_identifiers(text)
        return self._chunks[row]

    def document(self, doc_id: str) -> list[Value]:
        if doc_id not in self._docs:
            self._docs[doc_id] = [v for row in self._rows_of.get(doc_id, []) for v in self.chunk(row)]
        return self._docs[doc_id]


def _statement_judge(embedder: Embedder, values: _ValueCache, candidates, statement_threshold: float):
    """A function (a, b) → similarity of two values' statements, or 0.0 when they do not say the same thing.

    Only pairs the cheap checks (`_cheap_verdict`) leave open need the model: conflicting values of the
    candidate chunks, and values of the other document that could corroborate them (same unit and
    amount). Their statements are embedded in one batch.
    """
    needed = set()
    for i, j, _cosine in candidates:
        vi, vj = values.chunk(i), values.chunk(j)
        doc_i, doc_j = (values.document(values.index.chunks[r]["doc_id"]) for r in (i, j))
        conflicting = _possible_conflicts(vi, vj)
        open_i = {id(a) for a, _b in conflicting}
        open_j = {id(b) for _a, b in conflicting}
        corroborating = [(v, o) for mine, keep, other in ((vi, open_i, doc_j), (vj, open_j, doc_i))
                         for v in mine if id(v) in keep for o in other if comparable(o, v) and o.same_amount(v)]
        for a, b in conflicting + corroborating:
            if _cheap_verdict(a, b) is None:
                needed.update((_clip(a), _clip(b)))
    statements = sorted(needed)
    vectors = dict(zip(statements, embedder.embed(statements, kind="passage"))) if statements else {}

    def vector(v: Value) -> np.ndarray:
        text = _clip(v)
        if text not in vectors:  # not foreseen above: embed it on its own
            vectors[text] = embedder.embed([text], kind="passage")[0]
        return vectors[text]

    def same_statement(a: Value, b: Value) -> float:
        verdict = _cheap_verdict(a, b)
        if verdict is not None:
            return verdict
        cosine = float(vector(a) @ vector(b))
        return cosine if cosine >= statement_threshold else 0.0

    return same_statement


def _possible_conflicts(va: list[Value], vb: list[Value]) -> list[tuple[Value, Value]]:
    """Value pairs of two chunks with different amounts that the text alone does not rule out."""
    return [(a, b) for a in va for b in vb if a.conflicts_with(b) and _has_subject(a) and _has_subject(b)
            and _cheap_verdict(a, b) != 0.0]


def _cheap_verdict(a: Value, b: Value) -> float | None:
    """1.0 or 0.0 when the text alone decides whether two values' statements say the same thing, else None.

    Two labelled codes are decided by their labels alone (`Identifier.same_subject`)."""
    if isinstance(a, Identifier) and isinstance(b, Identifier) and a.kind == b.kind == "code":
        verdict = a.same_subject(b)
        if verdict is not None:
            return verdict
    if (a.row and b.row and a.row != b.row) or not set(a.context) & set(b.context):
        return 0.0
    if bool(a.row) != bool(b.row) and not _names_row(*((a, b) if a.row else (b, a))):
        return 0.0
    if a.statement == b.statement:  # the same sentence but for its values: compare value i with value i
        return 1.0 if a.position == b.position else 0.0
    if _names_another_thing(a.statement, b.statement):
        return 0.0
    if _same_by_words(a, b):
        return 1.0
    return None


def _same_by_words(a: Value, b: Value) -> bool:
    """Two values of one unit around enough shared words to state one thing without the model: counts of one noun
    with `COUNT_SHARED_CONTEXT` or more ("each employee can register up to 3 devices for single sign-on" /
    "employees may register a maximum of 5 devices with Okta single sign-on", 4 shared: the statement model put
    them at 0.76, under its 0.80, so the job never told the pages' owners what `ask` warned), any other value
    with `NAMED_SHARED_CONTEXT` or more that are not periods ("full-time employees get 20 days of paid vacation
    per year" / "gives every full-time employee 25 days of paid vacation per year": full, time, employee, paid,
    vacation; statement cosine 0.74)."""
    if a.unit != b.unit or a.kind != b.kind:
        return False
    shared = set(a.context) & set(b.context)
    if a.kind == "count":
        return len(shared) >= COUNT_SHARED_CONTEXT
    return len(shared - _PERIOD_WORDS) >= NAMED_SHARED_CONTEXT


def _row_words(v: Value) -> set[str]:
    """Content words of a table cell's row key ("Pro plan" → {"pro", "plan"}; "5 days" → {"day"})."""
    return {t for t in tokenize(v.row) if t not in _CONTEXT_STOP and not t[0].isdigit()}


def _in_row_key(v: Value) -> bool:
    """Whether a table value is its row's key ("5 days" in "5 days, Billable time: 32 hours"), not a cell
    under a column header."""
    return bool(v.row) and v.text.lower() in v.row


def _names_row(cell: Value, other: Value) -> bool:
    """Whether ``other``, a sentence or list item, is about ``cell``'s table row: every content word of the row
    key is among the words around ``other``'s value ("Pro" in "The Pro plan costs €45 …"). A cell of the
    "Starter" row says nothing about the Pro plan, however alike the two statements are; so a row key
    without content words ("5") pairs with no sentence."""
    words = _row_words(cell)
    return bool(words) and words <= set(other.context)


def _clip(v: Value) -> str:
    """The statement, cut to its first STATEMENT_CHARS characters so a run-on sentence embeds quickly."""
    return v.statement if len(v.statement) <= STATEMENT_CHARS else v.statement[:STATEMENT_CHARS]


def _conflicts(va: list[Value], vb: list[Value], doc_a: list[Value], doc_b: list[Value],
               same_statement) -> list[tuple[Value, Value, float]]:
    """Value pairs of two chunks that state the same thing with different amounts.

    A value is left out when the other document (any of its chunks) states the same amount in a similar
    statement: the two sources agree on it, whatever else differs.

    Each value is used once: pairs are taken greedily by statement similarity, then by how many other
    values the two sentences share (the row key of a table: "5 days, billable time: 32 hours" pairs with
    "5 days, billable time: 36 hours", not with the "4 days" row), then by shared context words.
    """

    def corroborated(v: Value, others: list[Value]) -> bool:
        return any(comparable(o, v) and o.same_amount(v) and same_statement(v, o) > 0 for o in others)

    def anchors(a: Value, b: Value) -> int:
        return sum(1 for x in va if x.sentence == a.sentence for y in vb
                   if y.sentence == b.sentence and comparable(x, y) and x.same_amount(y))

    possible = _possible_conflicts(va, vb)
    settled: dict[int, bool] = {}
    scored = []
    for a, b in possible:
        for v, other in ((a, doc_b), (b, doc_a)):
            if id(v) not in settled:
                settled[id(v)] = corroborated(v, other)
        if settled[id(a)] or settled[id(b)] or (sim := same_statement(a, b)) == 0:
            continue
        key = (round(sim, 3), anchors(a, b), a.bound == b.bound, len(set(a.context) & set(b.context)))
        scored.append((key, id(a), id(b), a, b, sim))
    used, pairs = set(), []
    for _key, ia, ib, a, b, sim in sorted(scored, key=lambda x: x[0], reverse=True):
        if ia not in used and ib not in used:
            used |= {ia, ib}
            pairs.append((a, b, sim))
    return pairs


def _names_another_thing(statement_a: str, statement_b: str) -> bool:
    """True when two statements are word for word the same except for swapped words ("renew its client
    certificate" vs "renew its server certificate"): parallel sentences about two different things."""
    opcodes = SequenceMatcher(None, tokenize(statement_a), tokenize(statement_b), autojunk=False).get_opcodes()
    kinds = {op for op, *_ in opcodes}
    return "replace" in kinds and kinds <= {"equal", "replace"}


def _has_subject(v: Value) -> bool:
    """At least MIN_SUBJECT_WORDS content words besides units: a bare table cell ("8 hours") says nothing
    about what it measures. A version must be stated as a requirement or status ("the minimum supported
    version is 2.13"): docs that name versions ("in Pydantic V1 …, in V2 …") compare them on purpose."""
    if v.kind == "version" and not VERSION_CLAIM_WORDS & set(v.context):
        return False
    if v.kind in IDENTIFIER_KINDS and getattr(v, "label", ()):  # a named code says what it is for
        return True
    return len(set(v.context)) >= MIN_SUBJECT_WORDS


def _contradiction(index: LoadedIndex, i: int, j: int, a: Value, b: Value, cosine: float,
                   sim: float) -> Contradiction:
    ca, cb = index.chunks[i], index.chunks[j]
    if cb["doc_id"] < ca["doc_id"]:
        ca, cb, a, b = cb, ca, b, a
    return Contradiction(
        doc_a=ca["doc_id"], doc_b=cb["doc_id"],
        collection_a=index.documents[ca["doc_id"]]["collection"],
        collection_b=index.documents[cb["doc_id"]]["collection"],
        chunk_a=ca["chunk_id"], chunk_b=cb["chunk_id"], kind=a.kind, value_a=a.text, value_b=b.text,
        sentence_a=a.sentence, sentence_b=b.sentence, similarity=cosine, statement_similarity=sim,
        stated_a=getattr(a, "with_unit", a.text), stated_b=getattr(b, "with_unit", b.text),
    )


def _active_rows(index: LoadedIndex, now: datetime) -> np.ndarray:
    """Boolean mask (n_chunks,): chunks of documents in stage "active" and not expired at ``now``."""
    ok = {
        doc_id for doc_id, doc in index.documents.items()
        if doc.get("stage", "active") == "active"
        and not (doc.get("expires_at") and datetime.fromisoformat(doc["expires_at"]) <= now)
    }
    return np.fromiter((c["doc_id"] in ok for c in index.chunks), dtype=bool, count=len(index.chunks))


def _similar_pairs(index: LoadedIndex, active: np.ndarray, threshold: float, neighbours: int,
                   across_collections: bool) -> list[tuple[int, int, float]]:
    """(i, j, cosine) with i < j, both active, different documents, cosine >= threshold; each pair once."""
    rows = np.flatnonzero(active)
    if index.dense is None or len(rows) < 2:
        return []
    k = min(neighbours + 1, len(rows))
    everything = bool(active.all())
    accept = None if everything else (lambda label: bool(active[label]))
    # one thread with a Python filter: hnswlib's threads would contend for the GIL (see knowledge.dedup)
    labels, distances = index.dense.knn_query(index.vectors[rows], k=k, filter=accept,
                                              num_threads=1 if accept else -1)
    docs = [c["doc_id"] for c in index.chunks]
    collection = {d: doc["collection"] for d, doc in index.documents.items()}
    pairs = {}
    for i, row_labels, row_distances in zip(rows, labels, distances):
        for j, distance in zip(row_labels, row_distances):
            i_, j_ = int(min(i, j)), int(max(i, j))
            cosine = 1.0 - float(distance)
            if cosine < threshold or docs[i_] == docs[j_] or (i_, j_) in pairs:
                continue
            if across_collections and collection[docs[i_]] == collection[docs[j_]]:
                continue
            pairs[(i_, j_)] = cosine
    return [(i, j, c) for (i, j), c in sorted(pairs.items())]


def _labelled_pairs(index: LoadedIndex, values: "_ValueCache", active: np.ndarray | None = None,
                    across_collections: bool = False) -> list[tuple[int, int, float]]:
    """(i, j, cosine) for chunks of two different active documents holding labelled codes whose labels
    match (`Identifier.same_subject`) and whose codes differ, whatever the chunks' similarity.

    Codes are indexed by the rarest word of their label, so only codes that can match are compared.
    """
    rows = np.flatnonzero(active) if active is not None else range(len(index.chunks))
    codes = [(int(r), v) for r in rows for v in values.chunk(int(r))
             if isinstance(v, Identifier) and v.kind == "code" and v.label]
    by_word: dict[str, list[int]] = {}
    for n, (_r, v) in enumerate(codes):
        for word in set(v.label):
            by_word.setdefault(word, []).append(n)
    found = []
    for n, (r, v) in enumerate(codes):
        rarest = min(v.label, key=lambda w: len(by_word[w]))
        found += [(r, codes[m][0]) for m in by_word[rarest]
                  if v.conflicts_with(codes[m][1]) and v.same_subject(codes[m][1]) == 1.0]
    return _across_documents(index, found, across_collections)


def _across_documents(index: LoadedIndex, rows: list[tuple[int, int]],
                      across_collections: bool) -> list[tuple[int, int, float]]:
    """(i, j, cosine) with i < j for the chunk row pairs ``rows`` of two different documents (of different
    collections with ``across_collections``), each pair once, sorted."""
    docs = [c["doc_id"] for c in index.chunks]
    collection = {d: doc["collection"] for d, doc in index.documents.items()}
    pairs: dict[tuple[int, int], float] = {}
    for r, r2 in rows:
        i, j = min(r, r2), max(r, r2)
        if docs[i] == docs[j] or (i, j) in pairs:
            continue
        if across_collections and collection[docs[i]] == collection[docs[j]]:
            continue
        pairs[(i, j)] = float(index.vectors[i] @ index.vectors[j]) if index.vectors is not None else 0.0
    return [(i, j, c) for (i, j), c in sorted(pairs.items())]


#: Fewest words a value-masked sentence needs for its restatement elsewhere to pair two chunks whatever their
#: similarity (`_restated_pairs`): "The limit is N requests per minute." (6) may name two endpoints' limits;
#: "While travelling you can spend up to $N per day on meals, including tips." (13) is one rule.
RESTATED_WORDS = 8


def _restated_pairs(index: LoadedIndex, values: "_ValueCache", active: np.ndarray,
                    across_collections: bool = False) -> list[tuple[int, int, float]]:
    """(i, j, cosine) for chunks of two different active documents that state the same sentence with a
    different value ("… up to $75 per day on meals …" / "… up to $60 per day …"), whatever the chunks'
    similarity: a short section merged into another topic's chunk (`knowledge.chunking`) fell below the topic
    threshold. Only sentences of at least `RESTATED_WORDS` words, matched word for word once the values are
    masked."""
    by_statement: dict[str, list[tuple[int, Value]]] = {}
    for r in np.flatnonzero(active):
        for v in values.chunk(int(r)):
            statement = " ".join(v.statement.lower().split()) if isinstance(v, Value) else ""
            if len(statement.split()) >= RESTATED_WORDS:
                by_statement.setdefault(statement, []).append((int(r), v))
    found = [(r, r2) for stated in by_statement.values() for n, (r, v) in enumerate(stated)
             for r2, w in stated[n + 1:] if v.conflicts_with(w)]
    return _across_documents(index, found, across_collections)


def _named_pairs(index: LoadedIndex, values: "_ValueCache", active: np.ndarray,
                   across_collections: bool = False) -> list[tuple[int, int, float]]:
    """(i, j, cosine) for chunks of two different active documents stating one named thing differently
    (`_same_by_words`: a count of one noun, an allowance around the same words), whatever the chunks' similarity:
    an IT FAQ's answer and the device policy sat at cosine 0.66, a benefits list and a leave policy at 0.58, under
    the topic threshold."""
    by_unit: dict[str, list[tuple[int, Value]]] = {}
    for r in np.flatnonzero(active):
        for v in values.chunk(int(r)):
            if isinstance(v, Value) and _has_subject(v):
                by_unit.setdefault(v.unit, []).append((int(r), v))
    found = [(r, r2) for counted in by_unit.values() for n, (r, v) in enumerate(counted) for r2, w in counted[n + 1:]
             if v.conflicts_with(w) and _same_by_words(v, w)]
    return _across_documents(index, found, across_collections)


def _cell_pairs(index: LoadedIndex, values: "_ValueCache", active: np.ndarray,
                across_collections: bool = False) -> list[tuple[int, int, float]]:
    """(i, j, cosine) for a chunk holding a table cell and a chunk of another active document whose sentence
    or list item states a different amount for that cell's row and column (`_same_subject`, amounts within
    `MAX_AMOUNT_RATIO`), whatever the chunks' similarity: to the chunk embedding a pricing table and an FAQ
    answer are two topics (issue 28: "| Pro | €60 |" under "Price per user" against "The Pro plan costs €45
    per user per month." sit at cosine 0.51). Sentences are indexed by context word, so each cell is
    compared only with the sentences naming the rarest word of its row key."""
    rows = [int(r) for r in np.flatnonzero(active)]
    by_word: dict[str, list[tuple[int, Value]]] = {}
    cells = []
    for r in rows:
        for v in values.chunk(r):
            if not isinstance(v, Value) or not _has_subject(v):
                continue
            if v.row:
                if not _in_row_key(v):
                    cells.append((r, v))
            else:
                for word in set(v.context):
                    by_word.setdefault(word, []).append((r, v))
    found = []
    for r, cell in cells:
        words = _row_words(cell)
        if not words:
            continue
        rarest = min(words, key=lambda w: len(by_word.get(w, ())))
        found += [(r, r2) for r2, v in by_word.get(rarest, ())
                  if cell.conflicts_with(v) and _same_subject(cell, v) and _comparable_amounts(cell, v)]
    return _across_documents(index, found, across_collections)


def _supersession(index: LoadedIndex, doc_a: str, doc_b: str) -> bool:
    """True when two documents are versions of one page (same non-empty ``version_family`` in one collection)
    or one ``supersedes`` the other: their differences are changes, never contradictions."""
    a, b = index.documents.get(doc_a, {}), index.documents.get(doc_b, {})
    family = a.get("version_family")
    if family and family == b.get("version_family") and a.get("collection") == b.get("collection"):
        return True
    return a.get("supersedes") == doc_b or b.get("supersedes") == doc_a


#: Largest ratio of two amounts read as two statements of one thing: "60 seconds" vs "30 seconds" is a
#: disagreement, "24 hours" (a retry window) vs "60 seconds" (a timeout) is two different things.
MAX_AMOUNT_RATIO = 10.0


def _comparable_amounts(a: Value, b: Value) -> bool:
    """Whether the two amounts are within `MAX_AMOUNT_RATIO` of each other (versions always are)."""
    if a.kind == "version":
        return True
    x, y = abs(a.magnitude[1]), abs(b.magnitude[1])
    return min(x, y) > 0 and max(x, y) / min(x, y) <= MAX_AMOUNT_RATIO


#: Content words two values' contexts must share to be "about the same thing" without a model: one shared
#: word ("raised") paired a Pro plan's temporary limit with a changelog line about the Team plan.
MIN_SHARED_CONTEXT = 2
#: Shared context words for two counts to state the same thing without the model (`_same_by_words`): one more than
#: `MIN_SHARED_CONTEXT`, as a count's noun is often generic. On everything in ../shared/corpus, 2 paired a division
#: "made up of four teams" with another team "made up of two teams", and "around 8,000 packages on PyPI" with
#: "8,119 packages on PyPI"; 3 pairs neither.
COUNT_SHARED_CONTEXT = MIN_SHARED_CONTEXT + 1
#: Shared context words, periods and "per" left out, for two other values of one unit to state the same thing
#: without the model (`_same_by_words`). On the two handbook snapshots (`python benchmarks/contradictions.py`, where
#: the job's other constants were set) 5 leaves the findings at the defaults as they were (21, precision 1.0 on
#: those judged), 4 adds 15 at precision 0.88; 5 finds a newcomer's 20 vs 25 days of paid vacation.
NAMED_SHARED_CONTEXT = 5
_PERIOD_WORDS = frozenset({"per", "annual", *(t for period in PERIODS for t in tokenize(period))}) - {"pay"}


def _same_subject(a: Value, b: Value) -> bool:
    """The text-only test of `passage_conflicts` that two values are about one thing.

    Two sentences (or two cells of one row): at least `MIN_SHARED_CONTEXT` shared context words. A table
    cell and a sentence: the sentence names the cell's row (`_names_row`), and it shares a word of the
    cell's column header ("storage" in "Pro, Storage: 100 GB" / "Pro includes 50 GB of storage") or the
    two units share a "per …" that is not a period ("Price per user: €60" / "€45 per user per month"): the
    row says which thing, the column which of its values. The row key alone would pair a plan's SLA with
    its discount.
    """
    if bool(a.row) == bool(b.row):
        return len(set(a.context) & set(b.context)) >= MIN_SHARED_CONTEXT
    cell, other = (a, b) if a.row else (b, a)
    if _in_row_key(cell) or not _names_row(cell, other):  # a row key has no column to say what it is
        return False
    column = set(cell.context) - _row_words(cell) - {"per"}  # "per" of "Price per user" names nothing
    per = (set(cell.unit.split("/")[1:]) & set(other.unit.split("/")[1:])) - PERIODS
    return bool(column & set(other.context)) or bool(per)


def passage_conflicts(text_a: str, text_b: str) -> list[tuple[Value, Value]]:
    """Values two texts state differently for the same thing, decided from the text alone (no model).

    Meant for the sentences of two quoted passages that answer one question (seed 004 §13.6: warn the
    reader when an answer quotes both): there the question already says what the values are about, so
    the pairs `find_contradictions` would consider (same unit, different amounts, both with a subject,
    at least `MIN_SHARED_CONTEXT` shared context words, not parallel sentences about two things) are taken,
    without its statement-similarity model. A table cell (a Markdown row, or one rendered as "Plan: Pro ·
    Price per user: €60") and a sentence or list item are about the same thing when the sentence names the
    cell's row and shares a word of its column or a "per …" of its unit (`_same_subject`). Each value is
    used once; ~1 ms.

    Returns:
        ``(value in a, value in b)`` pairs; [] when the texts agree.
    """
    pairs, used = [], set()
    for a, b in _possible_conflicts(extract_values(text_a), extract_values(text_b)):
        if not _same_subject(a, b) or not _comparable_amounts(a, b):
            continue
        if id(a) not in used and id(b) not in used:
            used |= {id(a), id(b)}
            pairs.append((a, b))
    return pairs
