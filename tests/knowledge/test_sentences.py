"""One sentence splitter for units, grounding and page cleaning (`knowledge.sentences.sentences_of`, issue 23)."""

from __future__ import annotations

import pytest

from knowledge.grounding import split_sentences
from knowledge.parsing import variable_sentences
from knowledge.sentences import CODE, ITEM, SENTENCE, sentences_of, split_units


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


def test_a_continued_chunk_whose_next_block_names_a_language_opens_inside_code():
    """Pydantic's fields page: a chunk opens inside an example ("…height: float"), closes it with a bare fence,
    then opens another block that the chunk's end cuts off: four fences, the code read as sentences and shown
    flattened in a direct answer ("@computed_field @property def volume(self) …")."""
    text = ("…height: float\n    depth: float\n\n    @computed_field\n    def volume(self) -> float:\n"
            "        return self.width * self.height\n```\n\n1. If not specified, the method becomes a property.\n\n"
            "Here's an example:\n\n```python\nfrom pydantic import BaseModel\nclass Box(BaseModel):\n    width: float\n")

    units = split_units(text)

    assert [u.kind for u in units] == [CODE, ITEM, SENTENCE, CODE]
    assert units[0].partial and "def volume" in units[0].display
