"""The ``page_verifications`` table (issue 25 item 3) on SQLite and on a real PostgreSQL (`store_target`):
an ask is claimed once per due date, a reminder once per ask, an answer once per ask, and a failed message
can be undone."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from feedback import FeedbackStore, InvalidRecord

NOW = datetime(2030, 3, 1, 9, 0, tzinfo=timezone.utc)
DOC = "api:rate-limits.md"


@pytest.fixture
def store(store_target):
    with FeedbackStore.open(store_target) as opened:
        yield opened


def test_an_ask_is_claimed_once_until_the_page_falls_due_again(store):
    due = NOW - timedelta(days=1)
    assert store.claim_verification_ask(DOC, "S0APITEAM", due_at=due, now=NOW)
    assert not store.claim_verification_ask(DOC, "S0APITEAM", due_at=due, now=NOW + timedelta(hours=1))
    row = store.page_verifications([DOC])[DOC]
    assert (row["owner"], row["state"], row["reminded_at"]) == ("S0APITEAM", "due", None)
    # verified for 90 days: asked again only once that has passed
    until = NOW + timedelta(days=90)
    assert store.answer_verification(DOC, "verified", asked_at=row["asked_at"], by="U1", now=NOW, verified_until=until)
    assert not store.claim_verification_ask(DOC, "S0APITEAM", due_at=NOW, now=NOW + timedelta(days=30))
    assert store.claim_verification_ask(DOC, "S0APITEAM", due_at=until, now=until + timedelta(hours=1))
    again = store.page_verifications([DOC])[DOC]
    assert again["state"] == "due" and again["verified_by"] == "U1"  # the last verification stays known


def test_a_double_click_answers_once_and_an_old_ask_is_refused(store):
    store.claim_verification_ask(DOC, "U0OWNER", due_at=NOW, now=NOW)
    asked = store.page_verifications()[DOC]["asked_at"]
    until = NOW + timedelta(days=30)
    assert store.answer_verification(DOC, "verified", asked_at=asked, by="U0OWNER", now=NOW, verified_until=until)
    assert not store.answer_verification(DOC, "verified", asked_at=asked, by="U0OWNER", now=NOW, verified_until=until)
    assert not store.answer_verification(DOC, "needs_update", asked_at=asked, by="U0OWNER", now=NOW)
    assert not store.answer_verification(DOC, "verified", asked_at="2020-01-01T00:00:00.000000+00:00", by="U2",
                                         now=NOW, verified_until=until)
    row = store.page_verifications()[DOC]
    assert (row["state"], row["verified_by"], row["verified_until"][:10]) == ("verified", "U0OWNER", "2030-03-31")
    with pytest.raises(InvalidRecord):
        store.answer_verification(DOC, "verified", asked_at=asked, by="U0OWNER", now=NOW)


def test_needs_update_then_still_correct_and_handing_over_to_a_new_owner(store):
    store.claim_verification_ask(DOC, "U0OLD", due_at=NOW, now=NOW)
    asked = store.page_verifications()[DOC]["asked_at"]
    assert store.answer_verification(DOC, "needs_update", asked_at=asked, by="U0OLD", now=NOW)
    assert store.answer_verification(DOC, "handed_over", asked_at=asked, by="U0OLD", now=NOW)
    # the same owner is not asked again; a new owner is
    assert not store.claim_verification_ask(DOC, "U0OLD", due_at=NOW, now=NOW + timedelta(days=1))
    assert store.claim_verification_ask(DOC, "U0NEW", due_at=NOW, now=NOW + timedelta(days=1))
    assert store.page_verifications()[DOC]["owner"] == "U0NEW"


def test_one_reminder_per_ask_and_failed_messages_undone(store):
    store.claim_verification_ask(DOC, "U0OWNER", due_at=NOW, now=NOW)
    asked = store.page_verifications()[DOC]["asked_at"]
    later = NOW + timedelta(days=8)
    assert store.claim_verification_reminder(DOC, asked_at=asked, now=later)
    assert not store.claim_verification_reminder(DOC, asked_at=asked, now=later)
    store.release_verification_reminder(DOC, asked_at=asked)
    assert store.claim_verification_reminder(DOC, asked_at=asked, now=later)
    # a failed first ask leaves no row; a failed later ask leaves the row as it was
    other = "api:errors.md"
    assert store.claim_verification_ask(other, "U0OWNER", due_at=NOW, now=NOW)
    store.release_verification_ask(other, asked_at=store.page_verifications()[other]["asked_at"], previous=None)
    assert other not in store.page_verifications()
    before = store.page_verifications()[DOC]
    assert store.claim_verification_ask(DOC, "U0OWNER", due_at=later, now=later + timedelta(days=1))
    store.release_verification_ask(DOC, asked_at=store.page_verifications()[DOC]["asked_at"], previous=before)
    assert store.page_verifications()[DOC] == before


def test_the_messages_of_an_ask_are_kept_until_it_is_asked_again(store):
    assert store.page_verifications() == {}
    store.claim_verification_ask(DOC, "S0APITEAM", due_at=NOW, now=NOW)
    asked = store.page_verifications()[DOC]["asked_at"]
    assert store.page_verifications()[DOC]["posted"] == []
    assert store.record_verification_messages(DOC, asked_at=asked, posted=[("D1", "1.000001"), ("D2", "1.000002")])
    # the reminder's copies are added; one stored twice is kept once
    assert store.record_verification_messages(DOC, asked_at=asked, posted=[("D1", "9.000001"), ("D2", "1.000002")])
    assert store.page_verifications()[DOC]["posted"] == [["D1", "1.000001"], ["D2", "1.000002"], ["D1", "9.000001"]]
    assert not store.record_verification_messages(DOC, asked_at="2020-01-01T00:00:00.000000+00:00",
                                                  posted=[("D3", "2.0")])  # an ask that is not the row's
    assert not store.record_verification_messages("api:none.md", asked_at=asked, posted=[("D3", "2.0")])
    with pytest.raises(InvalidRecord):
        store.record_verification_messages(DOC, asked_at=asked, posted=[("D3", "")])
    # a failed new ask gives the old one back with its messages; a new ask starts with none
    before = store.page_verifications()[DOC]
    later = NOW + timedelta(days=40)
    assert store.claim_verification_ask(DOC, "S0APITEAM", due_at=later, now=later)
    assert store.page_verifications()[DOC]["posted"] == []
    store.release_verification_ask(DOC, asked_at=store.page_verifications()[DOC]["asked_at"], previous=before)
    assert store.page_verifications()[DOC] == before
