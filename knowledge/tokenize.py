"""BM25 tokenization: English stop words and the Snowball (Porter2) stemmer.

bm25s takes pre-tokenized input, so documents and queries go through the same function here. The stop
word list is bm25s's English list; the stemmer is PyStemmer's "english" (the setup that reproduces the
published BM25 figures on BEIR SciFact, notes/retrieval.md).
"""

from __future__ import annotations

from functools import lru_cache

import regex
import Stemmer
from bm25s.stopwords import STOPWORDS_EN

_WORD = regex.compile(r"\w\w+|\d")
_STOPWORDS = frozenset(STOPWORDS_EN)


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def tokenize(text: str) -> list[str]:
    """Lower-cased, stop-word-free, stemmed word tokens of ``text`` (may be empty)."""
    words = [w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS]
    return _stemmer().stemWords(words)
