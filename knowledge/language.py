"""Language of a text by script: Korean, Japanese or English (the languages of DESIGN.md).

Rule from notes/retrieval.md: Hangul count >= kana+kanji count → Korean; else any kana/kanji → Japanese;
else English (kanji-only text is treated as Japanese). One addition: Korean or Japanese only when their
characters number at least a fifth of the Latin letters (`MIN_CJK_SHARE`), so an English page that names a
Japanese link ("サポート時間") stays English, while "etcdNoLeaderアラートが出ました" is Japanese.
"""

from __future__ import annotations

import regex

_HANGUL = regex.compile(r"\p{Hangul}")
_KANA_KANJI = regex.compile(r"[\p{Hiragana}\p{Katakana}\p{Han}]")
_LATIN = regex.compile(r"\p{Latin}")
LANGUAGES = ("en", "ko", "ja")
#: Least ratio of Hangul/kana/kanji characters to Latin letters for a Korean or Japanese text (a CJK
#: character carries roughly a word, a Latin letter a fifth of one).
MIN_CJK_SHARE = 0.2


def detect_language(text: str) -> str:
    """``"ko"``, ``"ja"`` or ``"en"`` for ``text`` by counting characters of each script."""
    hangul = len(_HANGUL.findall(text))
    kana_kanji = len(_KANA_KANJI.findall(text))
    if hangul + kana_kanji < MIN_CJK_SHARE * len(_LATIN.findall(text)):
        return "en"
    if hangul and hangul >= kana_kanji:
        return "ko"
    if kana_kanji:
        return "ja"
    return "en"
