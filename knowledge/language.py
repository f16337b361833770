"""Language of a text by script: Korean, Japanese or English (the languages of DESIGN.md).

Rule from notes/retrieval.md: Hangul count >= kana+kanji count → Korean; else any kana/kanji → Japanese;
else English (kanji-only text is treated as Japanese).
"""

from __future__ import annotations

import regex

_HANGUL = regex.compile(r"\p{Hangul}")
_KANA_KANJI = regex.compile(r"[\p{Hiragana}\p{Katakana}\p{Han}]")
LANGUAGES = ("en", "ko", "ja")


def detect_language(text: str) -> str:
    """``"ko"``, ``"ja"`` or ``"en"`` for ``text`` by counting characters of each script."""
    hangul = len(_HANGUL.findall(text))
    kana_kanji = len(_KANA_KANJI.findall(text))
    if hangul and hangul >= kana_kanji:
        return "ko"
    if kana_kanji:
        return "ja"
    return "en"
