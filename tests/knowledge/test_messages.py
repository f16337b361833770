"""The message catalogue (issue 23 item 5): every English key has a Korean and a Japanese text with the same
fields, written in its language; a missing key or language falls back to English."""

from __future__ import annotations

import string

import pytest
import regex

from knowledge import messages
from knowledge.messages import MissingMessage, age_text, catalogue, message, normalise_language
from tests.conftest import REPO

HANGUL = regex.compile(r"\p{Hangul}")
KANA_KANJI = regex.compile(r"[\p{Hiragana}\p{Katakana}\p{Han}]")


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("language", ["ko", "ja"])
def test_every_english_key_exists_in_korean_and_japanese_with_the_same_fields(language):
    english, other = catalogue("en"), catalogue(language)
    assert len(english) > 40
    assert sorted(set(english) - set(other)) == []  # no key left to the English fallback
    assert sorted(set(other) - set(english)) == []  # no key English does not know (a typo)
    assert {k: _fields(v) for k, v in other.items()} == {k: _fields(v) for k, v in english.items()}


@pytest.mark.parametrize("language, script", [("ko", HANGUL), ("ja", KANA_KANJI)])
def test_each_translation_is_written_in_its_language(language, script):
    untranslated = [k for k, v in catalogue(language).items() if not script.search(v)]
    assert untranslated == []


def test_a_missing_key_or_language_falls_back_to_english(monkeypatch):
    real = catalogue

    def without_refusal(language):
        table = dict(real(language))
        if language == "ko":
            table.pop("answer.refusal")
        return table

    monkeypatch.setattr(messages, "catalogue", without_refusal)
    assert message("answer.refusal", "ko") == "I couldn't find this in the knowledge base."
    assert message("answer.closest_pages", "ko") == "가장 가까운 문서:"  # the other keys are still Korean
    monkeypatch.undo()
    for language in ("fr", "", None, "xx-YY"):
        assert message("answer.refusal", language) == "I couldn't find this in the knowledge base."
    assert message("answer.refusal", "ko-KR") == message("answer.refusal", "ko") != message("answer.refusal")


def test_a_translation_with_a_broken_field_says_it_in_english(monkeypatch):
    real = catalogue
    monkeypatch.setattr(messages, "catalogue",
                        lambda lang: {**real(lang), "citation.days_ago": "{dayz}일 전"} if lang == "ko" else real(lang))
    assert message("citation.days_ago", "ko", days=3) == "3 days ago"


def test_a_key_english_lacks_is_a_programming_error():
    with pytest.raises(MissingMessage):
        message("answer.no_such_key", "ko")


def test_values_fill_the_template_and_ages_read_naturally():
    assert [age_text(d) for d in (0, 1, 12)] == ["today", "1 day ago", "12 days ago"]
    assert [age_text(d, "ko") for d in (0, 1, 12)] == ["오늘", "1일 전", "12일 전"]
    assert [age_text(d, "ja") for d in (0, 1, 12)] == ["今日", "1日前", "12日前"]
    assert message("citation.updated", "ja", age=age_text(3, "ja")) == "3日前更新"
    assert normalise_language("JA_jp") == "ja"


def test_the_catalogue_ships_as_package_data():
    assert '"locales/*.yaml"' in (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert {p.name for p in (REPO / "knowledge" / "locales").glob("*.yaml")} == {"en.yaml", "ko.yaml", "ja.yaml"}
