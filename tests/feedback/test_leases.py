"""Job leases on both backends: one taker per slot, newer slots win, and racing replicas get exactly one run."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

import pytest

from feedback import FeedbackStore
from feedback.errors import InvalidRecord
from feedback.leases import lease_of, take_lease

SLOT = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)
NOW = SLOT + timedelta(seconds=2)


@pytest.fixture
def store(store_target):
    with FeedbackStore.open(store_target) as opened:
        yield opened


def take(store: FeedbackStore, slot: datetime, holder: str = "a:1", job: str = "coverage") -> bool:
    with store.transaction() as conn:
        return take_lease(conn, job, slot, holder=holder, now=NOW)


def test_a_slot_is_taken_once_and_a_newer_slot_wins(store: FeedbackStore) -> None:
    assert take(store, SLOT, "a:1")
    assert not take(store, SLOT, "b:2")  # the same slot on another replica
    assert not take(store, SLOT - timedelta(minutes=5), "b:2")  # an older slot (a late replica)
    assert take(store, SLOT + timedelta(minutes=5), "b:2")
    assert take(store, SLOT, "a:1", job="drift")  # leases are per job
    with store.snapshot() as conn:
        row = lease_of(conn, "coverage")
    assert row["holder"] == "b:2" and row["slot"].startswith("2026-12-01T09:05:00")


def test_naive_times_and_empty_names_are_refused(store: FeedbackStore) -> None:
    with pytest.raises(InvalidRecord):
        take(store, SLOT.replace(tzinfo=None))
    with pytest.raises(InvalidRecord):
        take(store, SLOT, job="")


def test_replicas_racing_for_one_slot_run_it_once(store_target) -> None:
    """Eight replicas (own stores, own connections) fire together on 20 slots: each slot has one winner."""
    FeedbackStore.open(store_target).close()
    replicas = [FeedbackStore.open(store_target) for _ in range(8)]

    def replica(index: int) -> list[int]:
        """The slots (minutes) this replica won."""
        return [minute for minute in range(20) if take(replicas[index], SLOT + timedelta(minutes=minute), f"r:{index}")]

    with ThreadPoolExecutor(8) as pool:
        won = list(pool.map(replica, range(8)))
    for opened in replicas:
        opened.close()
    winners: dict[int, list[int]] = {}
    for index, minutes in enumerate(won):
        for minute in minutes:
            winners.setdefault(minute, []).append(index)
    # every slot has exactly one winner; a replica that was behind may skip slots, never double them
    assert all(len(taken) == 1 for taken in winners.values())
    assert 19 in winners
