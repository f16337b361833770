"""Question classification: an intent and a topic for every answered question (seed 004 §3, "C21").

Intent: the question's embedding is compared with each intent's prototype questions (best cosine), and an
intent whose cue (a regular expression, any language) matches the text gets ``cue_bonus`` on top; the
highest score wins, "other" when it stays below ``other_below``. Before scoring, each intent's ``rules``
(regular expressions in en/ko/ja, config order: troubleshooting, policy, how-to, lookup) decide outright: a
firing alert or an error → troubleshooting; "can I / am I allowed / do I need to" → policy; "how do I" →
how-to; "what is / how much / when" → lookup. Measured in ``benchmarks/intent_agreement.py``.

Topic: online nearest-centroid clustering that keeps topics stable. A question joins the nearest existing
topic when their cosine is at least ``topic_similarity`` (the centroid then moves to the running mean of its
members); otherwise it starts a new topic, labelled once with that question. Topic ids are never reused,
renumbered or renamed, and old questions are never re-assigned, so an intent × topic cell means the same
thing from one run to the next. Centroids are tied to the embedding model; after a model change new
questions form new topics.

Usage::

    report = label_pending(store, kb.embedder, cfg.classification, now=datetime.now(timezone.utc))
    report.labelled, report.new_topics
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from config.monitoring import OTHER_INTENT, ClassificationConfig
from feedback import labels as stored_labels
from jobs._common import iso

#: Longest topic label, in characters (the first question of the topic, cut).
MAX_LABEL_CHARS = 80


@dataclass
class LabelReport:
    """What one `label_pending` run did.

    Attributes:
        labelled: answers that got an intent and a topic.
        new_topics: topics created.
        intents: intent → answers labelled with it in this run.
        pending_left: unlabelled answers left (when ``limit`` stopped the run early).
    """

    labelled: int = 0
    new_topics: int = 0
    intents: dict[str, int] = field(default_factory=dict)
    pending_left: int = 0

    def to_json(self) -> dict:
        """A JSON-ready dict of this report."""
        return {"labelled": self.labelled, "new_topics": self.new_topics, "intents": dict(self.intents),
                "pending_left": self.pending_left}


class IntentClassifier:
    """Scores questions against the configured intents (see the module docstring).

    Args:
        cfg: classification settings (intents with prototypes and cues, ``cue_bonus``, ``other_below``).
        embedder: anything with ``embed(texts, kind="query") -> float32 (n, dim)`` unit vectors.
    """

    def __init__(self, cfg: ClassificationConfig, embedder):
        self.cfg = cfg
        self.names = [intent.name for intent in cfg.intents]
        texts = [p for intent in cfg.intents for p in intent.prototypes]
        self._owner = np.array([i for i, intent in enumerate(cfg.intents) for _ in intent.prototypes])
        self._prototypes = embedder.embed(texts, kind="query") if texts else np.zeros((0, 1), np.float32)
        self._cues = [re.compile("|".join(f"(?:{c})" for c in intent.cues), re.IGNORECASE) if intent.cues else None
                      for intent in cfg.intents]
        self._rules = [re.compile("|".join(f"(?:{r})" for r in intent.rules), re.IGNORECASE) if intent.rules else None
                       for intent in cfg.intents]

    def rule(self, text: str) -> str | None:
        """The first intent (config order) with a rule matching ``text``, or None (then the scores decide)."""
        for name, rule in zip(self.names, self._rules):
            if rule is not None and rule.search(text):
                return name
        return None

    def scores(self, texts: list[str], vectors: np.ndarray) -> np.ndarray:
        """float array (len(texts), n_intents): best prototype cosine plus the cue bonus where a cue matches."""
        if not self.names:
            return np.zeros((len(texts), 0))
        sims = vectors @ self._prototypes.T
        best = np.full((len(texts), len(self.names)), -1.0)
        for i in range(len(self.names)):
            best[:, i] = sims[:, self._owner == i].max(axis=1)
        for i, cue in enumerate(self._cues):
            if cue is not None:
                best[:, i] += [self.cfg.cue_bonus if cue.search(t) else 0.0 for t in texts]
        return best

    def classify(self, texts: list[str], vectors: np.ndarray) -> list[str]:
        """One intent name per text ("other" when no intent scores at least ``other_below``)."""
        if not self.names:
            return [OTHER_INTENT] * len(texts)
        scores = self.scores(texts, vectors)
        best = scores.argmax(axis=1)  # first maximum: config order breaks ties
        return [self.rule(texts[i]) or (self.names[j] if scores[i, j] >= self.cfg.other_below else OTHER_INTENT)
                for i, j in enumerate(best)]


class TopicSpace:
    """The topics of one embedding model, loaded from and written back to the ``topics`` table.

    Args:
        conn: a connection inside the store's write transaction (`FeedbackStore.transaction`), after
            `feedback.labels.lock_topics`.
        model: embedding model name; only topics of this model are matched.
        dim: vector length of that model.
    """

    def __init__(self, conn, model: str, dim: int):
        self.conn = conn
        self.model = model
        found = stored_labels.load_topics(conn, model)
        self.ids = [t.topic_id for t in found]
        self.n = [t.n for t in found]
        self.centroids = [np.frombuffer(t.centroid, dtype=np.float32).copy() for t in found]
        if any(len(c) != dim for c in self.centroids):
            raise ValueError(f"topics of model {model!r} have another dimension than {dim}")
        self._dirty: set[int] = set()
        self._new: list[tuple[int, str]] = []  # (position, label)

    def assign(self, texts: list[str], vectors: np.ndarray, threshold: float) -> list[int]:
        """Topic id per question, creating topics as needed (see the module docstring)."""
        known = len(self.centroids)
        if known:
            matrix = np.vstack(self.centroids)
            matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
            sims = vectors @ matrix.T
        else:
            sims = np.zeros((len(texts), 0), dtype=np.float32)
        assigned = []
        for i, vector in enumerate(vectors):
            best, best_sim = -1, -2.0
            if known:
                best = int(sims[i].argmax())
                best_sim = float(sims[i, best])
            for pos in range(known, len(self.centroids)):  # topics created earlier in this batch
                c = self.centroids[pos]
                sim = float(vector @ c / max(np.linalg.norm(c), 1e-12))
                if sim > best_sim:
                    best, best_sim = pos, sim
            if best < 0 or best_sim < threshold:
                best = self._create(texts[i], vector)
            else:
                self.n[best] += 1
                self.centroids[best] += (vector - self.centroids[best]) / self.n[best]
                self._dirty.add(best)
            assigned.append(best)
        return assigned

    def _create(self, text: str, vector: np.ndarray) -> int:
        self.centroids.append(vector.astype(np.float32).copy())
        self.n.append(1)
        self.ids.append(None)
        self._new.append((len(self.centroids) - 1, _label(text)))
        return len(self.centroids) - 1

    def save(self, now: str) -> dict[int, int]:
        """Writes changed and new topics; returns position → topic id for every position used."""
        for pos, label in self._new:
            self.ids[pos] = stored_labels.insert_topic(
                self.conn, label=label, model=self.model, centroid=self.centroids[pos].astype(np.float32).tobytes(),
                n=self.n[pos], at=now)
        new_positions = {pos for pos, _ in self._new}
        for pos in self._dirty - new_positions:
            stored_labels.update_topic(self.conn, self.ids[pos], centroid=self.centroids[pos].astype(np.float32).tobytes(),
                                       n=self.n[pos], at=now)
        return dict(enumerate(self.ids))

    @property
    def created(self) -> int:
        """Topics created since loading."""
        return len(self._new)


def label_pending(store, embedder, cfg: ClassificationConfig, *, now: datetime, limit: int | None = None) -> LabelReport:
    """Gives every unlabelled answer an intent and a topic, oldest first, one transaction per batch.

    Questions are embedded outside the transaction; the topics are re-read inside it, so two runs at once
    (the scheduler and ``minerva classify``) never create duplicate labels or lose centroid updates.

    Args:
        store: the feedback store.
        embedder: the knowledge base's embedder (``name``, ``dim``, ``embed(texts, kind="query")``).
        cfg: classification settings.
        now: time recorded as ``labelled_at``.
        limit: label at most this many answers (None = all).

    Returns:
        A `LabelReport`.

    Raises:
        StoreUnavailable: the store failed; batches already written stay written.
    """
    report = LabelReport()
    intents: Counter[str] = Counter()
    classifier = None
    stamp = iso(now)
    pending = _pending(store, limit)
    for start in range(0, len(pending), cfg.batch_size):
        batch = pending[start:start + cfg.batch_size]
        texts = [q for _, q, _ in batch]
        unique = list(dict.fromkeys(texts))
        vectors_unique = np.asarray(embedder.embed(unique, kind="query"), dtype=np.float32)
        position = {t: i for i, t in enumerate(unique)}
        vectors = vectors_unique[[position[t] for t in texts]]
        if classifier is None:
            classifier = IntentClassifier(cfg, embedder)
        labels = classifier.classify(texts, vectors)
        with store.transaction() as conn:
            stored_labels.lock_topics(conn)
            space = TopicSpace(conn, embedder.name, int(embedder.dim))
            positions = space.assign(texts, vectors, cfg.topic_similarity)
            ids = space.save(stamp)
            report.labelled += stored_labels.insert_labels(conn, [
                {"answer_id": answer_id, "intent": intent, "topic_id": ids[pos], "created_at": created_at,
                 "labelled_at": stamp}
                for (answer_id, _, created_at), intent, pos in zip(batch, labels, positions)
            ])
            report.new_topics += space.created
        intents.update(labels)
    report.intents = dict(intents)
    if limit is not None:
        with store.snapshot() as conn:
            report.pending_left = count_pending(conn)
    return report


def _pending(store, limit: int | None) -> list[tuple[str, str, str]]:
    with store.snapshot() as conn:
        return stored_labels.pending_answers(conn, limit)


def count_pending(conn) -> int:
    """Answers without a label (``conn``: from `FeedbackStore.snapshot`). An answer whose question the
    retention policy removed (``redacted_at`` set) is never labelled: there is no text left to classify."""
    return stored_labels.count_pending(conn)


def topic_labels(conn) -> dict[int, str]:
    """topic_id → label of every topic (``conn``: from `FeedbackStore.snapshot`)."""
    return stored_labels.topic_labels(conn)


def _label(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_LABEL_CHARS else text[: MAX_LABEL_CHARS - 1].rstrip() + "…"


def label_before_signal(ctx, cfg: ClassificationConfig) -> LabelReport | None:
    """Labels pending answers before a signal reads labels, when configured and a model is at hand.

    Returns None (and loads no model) when ``label_before_signals`` is off, ``ctx.kb`` is None, or nothing
    is pending.
    """
    if not cfg.label_before_signals or ctx.kb is None:
        return None
    with ctx.store.snapshot() as conn:
        if count_pending(conn) == 0:
            return None
    return label_pending(ctx.store, ctx.kb.embedder, cfg, now=ctx.now)
