"""Which verifications one run asks (`jobs.verification.plan`, issue 25 item 3)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from config import Settings, SourceConfig
from jobs.verification import MAX_ASKS_PER_OWNER, plan

NOW = datetime(2027, 3, 1, 9, tzinfo=timezone.utc)


def _page(n: int, collection: str, days_ago: int) -> tuple[str, dict]:
    doc_id = f"{collection}:page-{n:03d}.md"
    return doc_id, {"doc_id": doc_id, "collection": collection, "stage": "active", "owner": "",
                    "indexed_at": (NOW - timedelta(days=days_ago)).isoformat()}


def test_an_owner_is_asked_about_a_few_pages_a_run_the_longest_overdue_first():
    """A whole source given an interval falls due in one day (the handbook: 240 pages): its owner is asked about
    `MAX_ASKS_PER_OWNER` of them per run, the others wait; another owner's pages are asked beside them."""
    settings = Settings(sources=[SourceConfig(name="hb", path=".", owner="S0HB", verify_days=30),
                                 SourceConfig(name="rb", path=".", owner="U0RB", verify_days=30)])
    docs = dict([_page(n, "hb", 40 + n % 7) for n in range(25)] + [_page(n, "rb", 35) for n in range(3)])

    asks, reminders = plan(docs, {}, settings, now=NOW)

    by_owner = {owner: [a for a in asks if a[1] == owner] for owner in ("S0HB", "U0RB")}
    assert len(by_owner["S0HB"]) == MAX_ASKS_PER_OWNER and len(by_owner["U0RB"]) == 3 and reminders == []
    longest = sorted((d["indexed_at"], doc_id) for doc_id, d in docs.items() if d["collection"] == "hb")
    assert {a[0] for a in by_owner["S0HB"]} == {doc_id for _, doc_id in longest[:MAX_ASKS_PER_OWNER]}
