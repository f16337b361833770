"""BM25 tokenization by script: routing of mixed text, Korean/Japanese analyzers, English stems."""

from __future__ import annotations

import bm25s

from knowledge import tokenize as tk
from knowledge.tokenize import script_runs, tokenize


def test_mixed_text_is_cut_into_zones_of_one_script():
    text = "API 키를 rotate 하려면? 返金の方法 漢字 v2.1 😀 done"

    assert script_runs(text) == [
        ("other", "API "),
        ("ko", "키를 rotate 하려면"),  # a zone takes in the Latin words between two Hangul runs
        ("other", "? "),
        ("ja", "返金の方法 漢字"),
        ("other", " v2.1 😀 done"),
    ]


def test_zones_end_where_the_other_cjk_script_starts():
    assert script_runs("결제는 어떻게, 하나요?") == [("ko", "결제는 어떻게, 하나요"), ("other", "?")]
    assert script_runs("東京 12 大阪") == [("ja", "東京 12 大阪")]
    assert script_runs("한국 日本 한국") == [("ko", "한국"), ("other", " "), ("ja", "日本"), ("other", " "), ("ko", "한국")]


def morphemes(text: str) -> list[str]:
    """The analyzer tokens of ``text``: `tokenize` without the CJK character bigrams."""
    runs = [run for script in ("ko", "ja") for run in tk._SCRIPT_CHARS[script].findall(text)]
    bigrams = tk._bigrams(runs)
    tokens = tokenize(text)
    for bigram in bigrams:
        tokens.remove(bigram)
    return tokens


def test_each_script_goes_to_its_own_analyzer():
    tokens = morphemes("API 키를 rotate 하려면 返金の方法は 2024年 😀 Running")

    # kiwi: 키 (particle 를 and light verb 하 dropped); Sudachi: 返金 方法 年; English: api rotat 2024 run
    assert sorted(tokens) == sorted(["api", "키", "rotat", "返金", "方法", "2024", "年", "run"])


def test_cjk_runs_also_give_overlapping_character_bigrams():
    assert sorted(tokenize("결제일로부터 14일")) == sorted(
        ["결제", "결제", "제일", "일로", "로부", "부터", "일", "14"]  # morphemes 결제 일, then bigrams, then 14
    )
    assert sorted(tokenize("東京都")) == sorted(["東京都", "東京", "京都"])
    assert tk._bigrams(["가", "日本"]) == ["日本"]  # a lone character gives no bigram


def test_latin_words_and_digits_inside_cjk_text_go_through_the_english_pipeline():
    assert sorted(morphemes("14일 이내에 refunds 신청")) == sorted(["14", "이내", "refund", "신청"])
    assert sorted(morphemes("サーバーのlogsを2回確認")) == sorted(["サーバー", "log", "2", "回", "確認"])


def test_korean_particles_are_split_off():
    assert morphemes("결제는") == morphemes("결제를") == morphemes("결제가") == ["결제"]
    assert sorted(morphemes("환불을 받으려면 14일 이내에 신청하세요")) == sorted(["환불", "받", "14", "이내", "신청"])


def test_japanese_is_segmented_into_normalized_content_words():
    assert sorted(morphemes("サポートの営業時間を教えてください。")) == sorted(["サポート", "営業", "時間", "教える"])
    assert morphemes("サーバを再起動しました") == morphemes("サーバーを再起動する")  # normalized form, verb lemma


def test_kanji_only_text_is_treated_as_japanese():
    assert script_runs("東京都") == [("ja", "東京都")]
    assert morphemes("東京都") == ["東京都"]


def test_english_keeps_stop_words_out_and_stems():
    assert tokenize("The runners are running 3 times, quickly!") == ["runner", "run", "3", "time", "quick"]


def test_latin_words_are_the_same_token_in_every_language():
    assert "api" in tokenize("API 키를 교체") and "api" in tokenize("APIキーを交換") and "api" in tokenize("API key")
    assert tokenize("ＡＰＩ") == tokenize("API") == ["api"]  # full-width forms are NFKC-normalised


def test_text_without_words_gives_no_tokens():
    assert tokenize("") == tokenize("😀 🎉 !!") == tokenize("。、") == []


def test_long_japanese_text_beyond_sudachis_input_limit():
    tokens = tokenize("東京の天気は晴れです。" * 3000)  # 33,000 characters ≈ 99 kB, Sudachi's limit is 49 kB

    assert tokens.count("天気") == 6000  # 3,000 words + 3,000 bigrams: nothing lost at the cuts


def test_analyzers_are_loaded_once_per_process():
    tokenize("한국어 日本語")

    assert tk._kiwi() is tk._kiwi() and tk._sudachi() is tk._sudachi()
    assert tk._kiwi.cache_info().currsize == 1 and tk._sudachi.cache_info().currsize == 1


def test_bm25_finds_korean_and_japanese_passages_by_their_words():
    passages = [
        "환불은 결제일로부터 14일 이내에 요청할 수 있습니다.",
        "데이터베이스 장애 조치 절차는 다음과 같습니다.",
        "サポートの営業時間は平日9時から18時までです。",
        "API rate limits are 100 requests per minute on the Pro plan.",
    ]
    retriever = bm25s.BM25(method="lucene")
    retriever.index([tokenize(p) for p in passages], show_progress=False)

    def best(query: str) -> int:
        docs, _ = retriever.retrieve([tokenize(query)], k=1, show_progress=False)
        return int(docs[0][0])

    assert best("환불을 받으려면?") == 0
    assert best("데이터베이스를 장애 조치하는 방법") == 1
    assert best("サポートは何時まで営業していますか") == 2
    assert best("what are the rate limits?") == 3


def test_slack_broadcast_mentions_on_a_page_mean_everyone():
    """The sample runbook says "post <!channel> in #incidents": it answers "how do I ping everyone for a sev1?"."""
    assert {"everyon", "notifi"} <= set(tokenize("For a SEV1, post <!channel> in #incidents"))
    assert "everyon" in tokenize("an @here in #ops-oncall is enough")
    assert "everyon" not in tokenize("email me@here.com or ask in #channel-help")


def test_a_sample_question_about_pinging_everyone_finds_the_broadcast_rule(sample_kb):
    answer = sample_kb.ask("how do I ping everyone for a sev1?")
    assert not answer.refused and "post <!channel> in #incidents" in answer.direct_answer


def test_a_questions_topic_has_no_interrogative_and_no_bigram_across_its_words():
    """Coverage counts these: "차는" (연차|는) and "가요" (an ending) are on no page and outweighed 연차."""
    assert tk.topic_tokens("연차는 며칠인가요?") == ["연차", "연차"]
    assert tk.topic_tokens("Growth 플랜 가격은 얼마예요?") == ["growth", "플랜", "가격", "플랜", "가격"]
    assert tk.topic_tokens("有給休暇は何日もらえますか？")[:3] == ["有給", "休暇", "貰う"]
    assert "何日" not in tk.topic_tokens("有給休暇は何日もらえますか？")
    # BM25 keeps every bigram of the question: they rank better (benchmarks/tokenizer_variants.py)
    assert "차는" in tk.question_tokens("연차는 며칠인가요?")


def test_a_short_korean_question_with_an_interrogative_is_answered_from_its_section(tmp_path, sample_settings, embedder):
    """A newcomer's "연차는 며칠인가요?" ("how many days of annual leave?") on their own leave policy was refused:
    the page covered 0.12 of the question's words, most of them endings and 며칠."""
    from tests.conftest import written_kb

    kb = written_kb(tmp_path, {"leave.md": (
        "---\ntitle: 휴가 규정\nlang: ko\n---\n# 휴가 규정\n\n## 연차\n\n"
        "정규직 직원은 입사 첫해에 연차 15일을 받습니다. 근속 2년마다 하루가 늘어나며 최대 25일입니다.\n\n"
        "## 병가\n\n유급 병가는 연간 10일까지입니다.\n")}, sample_settings, embedder)
    answer = kb.ask("연차는 며칠인가요?")
    assert not answer.refused
    assert "15일" in answer.direct_answer


def test_a_korean_particle_written_against_a_latin_word_is_no_word():
    """Read apart from "VPN", kiwipiepy took the 은 of "VPN은" for the noun "silver", 를 for the verb stem 르 and
    "는요" for 늘: each weighed in coverage like a topic word the page lacked."""
    assert tokenize("VPN은 어떻게 연결하나요?", bigrams=False) == ["vpn", "연결"]
    assert tokenize("API를 호출하면", bigrams=False) == ["api", "호출"]
    assert tokenize("v2는요?", bigrams=False) == ["v2"]
    assert tokenize("GitHub가 느려요", bigrams=False) == ["github", "느리"]
