"""Helpers for the monitoring-signal tests: a fresh store per test, a JobContext, and feedback events.

Events go through the real `FeedbackStore` API (record_answer, record_vote, record_flag) into SQLite files in
tmp_path, citing the real doc ids of the bundled sample knowledge base. Import the fixtures into a test module
with ``from tests.jobs.monitoring_helpers import ctx, store  # noqa: F401``.
"""

from __future__ import annotations

import dataclasses
import itertools
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from config.monitoring import MonitoringConfig, load_monitoring_config
from feedback import FeedbackStore
from jobs.findings import JobContext

_ids = itertools.count()


@pytest.fixture
def store(tmp_path):
    with FeedbackStore.open(tmp_path / "minerva.sqlite") as opened:
        yield opened


@pytest.fixture
def any_store(store_target):
    """The store on each backend in turn: a SQLite file, then a real PostgreSQL database (`tests.postgres`)."""
    with FeedbackStore.open(store_target) as opened:
        yield opened


@pytest.fixture
def ctx(store, tmp_path, sample_settings, sample_kb):
    """A JobContext over the sample knowledge base (read-only) and this test's store, now = the real time."""
    return make_ctx(store, tmp_path, sample_settings, sample_kb)


def make_ctx(store, home, settings, kb, *, now: datetime | None = None, **sections) -> JobContext:
    """A JobContext with the bundled monitoring config, sections overridden by keyword.

    Example: ``make_ctx(..., bad_docs={"auto_deprecate": True})``.
    """
    cfg = load_monitoring_config()
    cfg = with_overrides(cfg, **sections)
    return JobContext(settings=settings, home=home, store=store, now=now or datetime.now(timezone.utc), kb=kb,
                      extra={"monitoring": cfg})


def with_overrides(cfg: MonitoringConfig, **sections) -> MonitoringConfig:
    """A copy of ``cfg`` with fields of named sections replaced (``drift={"min_window_count": 10}``)."""
    changes = {name: dataclasses.replace(getattr(cfg, name), **values) for name, values in sections.items()}
    return dataclasses.replace(cfg, **changes)


def add_answer(
    store: FeedbackStore,
    *,
    question: str = "how do I rotate an API key?",
    cited: tuple[str, ...] = (),
    refused: bool | None = None,
    top_score: float | None = None,
    created_at: datetime | None = None,
    votes: tuple[str, ...] = (),
    flags: int = 0,
    language: str = "en",
    retrieved: list[dict] | None = None,
    answered_from: list[str] | None = None,
) -> str:
    """Records one answer (and its votes and flags); returns its id.

    Args:
        cited: doc ids cited (empty and ``refused`` None → a refusal).
        votes: "up"/"down" values, one voter each.
        flags: wrong-answer reports, one reporter each.
        retrieved: passages; default: one chunk per cited doc at ``top_score`` (0.8), plus two weak ones.
        answered_from: the cited docs the direct answer came from (None: all of them).
    """
    answer_id = f"t{next(_ids):07d}"
    refused = not cited if refused is None else refused
    top = (0.1 if refused else 0.8) if top_score is None else top_score
    if retrieved is None:
        retrieved = [{"chunk_id": f"{d}#0", "doc_id": d, "score": top} for d in cited]
        retrieved += [{"chunk_id": "api:pagination.md#3", "doc_id": "api:pagination.md", "score": 0.1},
                      {"chunk_id": "plans:sla.md#2", "doc_id": "plans:sla.md", "score": 0.05}]
    store.record_answer(
        answer_id=answer_id, question=question, channel="C1", thread_ts=None, user_id="U1", retrieved=retrieved,
        cited_doc_ids=list(cited), refused=refused, top_score=top, latency_ms=100.0, language=language,
        created_at=created_at or datetime.now(timezone.utc) - timedelta(hours=1), answered_from=answered_from,
    )
    moment = created_at or datetime.now(timezone.utc) - timedelta(hours=1)
    for i, value in enumerate(votes):
        store.record_vote(answer_id, f"V{i}", value, voted_at=moment)
    for i in range(flags):
        store.record_flag(answer_id, f"F{i}", "wrong", created_at=moment)
    return answer_id


def label(store: FeedbackStore, answer_id: str, intent: str, topic_id: int) -> None:
    """Labels an answer directly (creating the topic when missing), for tests that control the labels."""
    from feedback.db import run, scalar

    with store.transaction() as conn:
        created = scalar(conn, "SELECT created_at FROM answers WHERE answer_id = :id", id=answer_id)
        run(conn, "INSERT INTO topics (topic_id, label, model, centroid, n, created_at, updated_at) "
                  "VALUES (:id, :label, 'test', :centroid, 0, :at, :at) ON CONFLICT (topic_id) DO NOTHING",
            id=topic_id, label=f"topic {topic_id}", centroid=np.zeros(4, np.float32).tobytes(), at=created)
        run(conn, "INSERT INTO answer_labels (answer_id, intent, topic_id, created_at, labelled_at) "
                  "VALUES (:id, :intent, :topic_id, :at, :at)", id=answer_id, intent=intent, topic_id=topic_id,
            at=created)


def by_alert(findings, alert: str) -> list:
    """The findings named ``alert``."""
    return [f for f in findings if f.alert == alert]


@pytest.fixture
def private_kb(tmp_path, sample_settings, embedder):
    """A knowledge base of its own (two sample API pages copied to tmp_path), for tests that touch sources.

    Returns:
        (kb, folder): the synced `KnowledgeBase` and the folder holding the copied pages.
    """
    import shutil

    from config import SourceConfig
    from knowledge import KnowledgeBase
    from tests.conftest import SAMPLE_KB

    folder = tmp_path / "api-pages"
    folder.mkdir()
    for name in ("errors.md", "pagination.md"):
        shutil.copy(SAMPLE_KB / "api" / name, folder / name)
    settings = dataclasses.replace(sample_settings, sources=[
        SourceConfig(name="api", path=str(folder), url_base="https://wiki.nimbus.example/api/")])
    kb = KnowledgeBase(settings, tmp_path / "home", embedder=embedder)
    kb.sync()
    return kb, folder
