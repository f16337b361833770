"""One sentence splitter for units, grounding and page cleaning (`knowledge.sentences.sentences_of`, issue 23)."""

from __future__ import annotations

import pytest

from knowledge.grounding import split_sentences
from knowledge.parsing import variable_sentences
from knowledge.sentences import sentences_of


@pytest.mark.parametrize("text, expected", [
    ("Use a tool, e.g. Zoom. It works.", ["Use a tool, e.g. Zoom.", "It works."]),  # cut after "e.g." before
    ("Retries back off, e.g. 1 s then 2 s. Next.", ["Retries back off, e.g. 1 s then 2 s.", "Next."]),
    ("Pick one, i.e. Tock. Then file it.", ["Pick one, i.e. Tock.", "Then file it."]),
    ("Install v2.13.4 first. Then run it.", ["Install v2.13.4 first.", "Then run it."]),
    ("再試行は3回です。次です！", ["再試行は3回です。", "次です！"]),
])
def test_sentences_end_where_a_reader_says_they_do(text, expected):
    assert sentences_of(text) == expected


def test_grounding_and_page_cleaning_split_as_units_do():
    assert [s for s, _ in split_sentences("Use a tool, e.g. Zoom [1]. It works.")] == [
        "Use a tool, e.g. Zoom [1].", "It works."]
    assert variable_sentences("Mail us, e.g. Support. Or mail {{ site.email }} today.") == [
        "Or mail {{ site.email }} today."]
