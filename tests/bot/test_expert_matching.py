"""`bot.slack.experts.matching_answer` over a real SQLite store and the sample knowledge base: which kept answer a
later question gets, by its wordings and its answer text, and never an expired or retired one."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from bot.slack.experts import matching_answer
from feedback import FeedbackStore

NOW = datetime(2026, 12, 5, 9, tzinfo=timezone.utc)
PARKING_Q = "how do I get a parking permit for the office garage?"
PARKING_A = ("Parking permits for the basement garage are issued by Facilities: fill in the Parking request form "
             "with your licence plate. A permit costs $40 a month, taken from your salary.")
GYM_Q = "does the company pay for a gym membership?"
GYM_A = "We reimburse up to $50 a month of a gym or fitness class membership; submit the receipt under Wellness."


@pytest.fixture
def store(tmp_path):
    with FeedbackStore.open(tmp_path / "minerva.sqlite") as opened:
        yield opened


def keep(store, question: str, answer: str, *, days: int = 30) -> str:
    return store.record_expert_answer(request_id=None, question=question, answer=answer, expert="UEXPERT",
                                      answered_at=NOW - timedelta(days=1), expires_at=NOW + timedelta(days=days),
                                      doc_ids=[], page_wrong=False, language="en")


def test_a_korean_re_asking_gets_the_kept_answer_of_its_topic(sample_kb, store) -> None:
    parking, gym = keep(store, PARKING_Q, PARKING_A), keep(store, GYM_Q, GYM_A)
    korean = matching_answer(sample_kb, store, "회사 주차장 주차권은 어떻게 신청하나요?", now=NOW)
    japanese = matching_answer(sample_kb, store, "ジムの会費は会社が負担してくれますか？", now=NOW)
    assert korean["expert_answer_id"] == parking and japanese["expert_answer_id"] == gym
    assert matching_answer(sample_kb, store, "where is the nearest post office?", now=NOW) is None


def test_a_wording_a_thumbs_up_taught_is_matched_too(sample_kb, store) -> None:
    gym = keep(store, GYM_Q, GYM_A)
    question = "헬스장 비용 회사에서 지원해 주나요?"
    store.add_expert_answer_wording(gym, question)
    found = matching_answer(sample_kb, store, question, now=NOW)
    assert found is not None and found["expert_answer_id"] == gym


def test_never_after_expiry_or_two_peoples_thumbs_down(sample_kb, store) -> None:
    parking = keep(store, PARKING_Q, PARKING_A, days=2)
    assert matching_answer(sample_kb, store, PARKING_Q, now=NOW)["expert_answer_id"] == parking
    assert matching_answer(sample_kb, store, PARKING_Q, now=NOW + timedelta(days=3)) is None
    gym = keep(store, GYM_Q, GYM_A)
    store.record_expert_vote(gym, "U1", "down", NOW)
    store.record_expert_vote(gym, "U1", "down", NOW)  # one person twice is one 👎
    assert matching_answer(sample_kb, store, GYM_Q, now=NOW)["expert_answer_id"] == gym
    store.record_expert_vote(gym, "U2", "down", NOW)
    assert matching_answer(sample_kb, store, GYM_Q, now=NOW) is None
