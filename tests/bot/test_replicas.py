"""Two `minerva serve` replicas on one PostgreSQL: a Slack retry delivered to the other replica is still one
answer, vote clicks spread over both lose nothing, and a replica killed right after a burst loses no click it
acknowledged (a vote is stored before its click is acknowledged). Real subprocesses, real signed HTTP, the fake Slack Web API, a real PostgreSQL server."""

from __future__ import annotations

import asyncio
import itertools

import aiohttp
import pytest

from feedback import FeedbackStore
from feedback.db import scalar
from tests.fakes.replicas import Cluster, answer_id_of, start_replicas, stop_replicas

QUESTIONS = ["what is the API rate limit on the Pro plan?", "how do I announce a SEV1 incident?",
             "how much does the team plan cost per seat?", "what's the webhook timeout?",
             "how do I rotate an API key?", "what's the parental leave policy?"]

pytestmark = pytest.mark.slow


@pytest.fixture
async def cluster(fake_slack, postgres_url, sample_home, tmp_path):
    replicas = await start_replicas(2, workdir=tmp_path, database_url=postgres_url,
                                    index_dir=sample_home / "index", slack_url=fake_slack.url)
    try:
        async with aiohttp.ClientSession() as session:
            yield Cluster(replicas, session)
    finally:
        await stop_replicas(replicas)


def count(url: str, sql: str) -> int:
    with FeedbackStore.open(url) as store, store.snapshot() as conn:
        return scalar(conn, sql)


async def test_retries_on_the_other_replica_and_votes_over_both(cluster: Cluster, fake_slack, postgres_url) -> None:
    first = cluster.replicas[0]
    envelopes = [cluster.mention_envelope(q, user=f"U{i}") for i, q in enumerate(QUESTIONS)]
    # every event goes to one replica and, at the same time, its retry to the other
    statuses = await asyncio.gather(*itertools.chain.from_iterable(
        (cluster.deliver(cluster.replicas[i % 2], e), cluster.deliver(cluster.replicas[(i + 1) % 2], e, retry_num=1))
        for i, e in enumerate(envelopes)))
    assert set(statuses) == {200}
    await fake_slack.wait_for("chat.postMessage", count=len(QUESTIONS), timeout=120)
    await asyncio.sleep(2.0)  # a duplicate would be posted by now
    posts = [c["body"] for c in fake_slack.calls_to("chat.postMessage")]
    assert sorted(p["thread_ts"] for p in posts) == sorted(e["event"]["ts"] for e in envelopes)
    assert count(postgres_url, "SELECT count(*) FROM answers") == len(QUESTIONS)

    answered = next(p for p in posts if "context_actions" in {b["type"] for b in p.get("blocks") or []})
    answer_id = answer_id_of(answered)
    clicks = [cluster.click(cluster.replicas[n % 2], "up" if n % 3 else "down", answered, f"UV{n}",
                            fake_slack.response_url(f"v{n}")) for n in range(40)]
    assert set(await asyncio.gather(*clicks)) == {200}
    # a burst of 40 more voters over both replicas; the first dies as soon as its clicks are acknowledged: a vote
    # is stored before its click is acknowledged, so nothing acknowledged is lost, not even on the dead replica
    burst = [cluster.click(cluster.replicas[n % 2], "up", answered, f"UB{n}", fake_slack.response_url(f"b{n}"))
             for n in range(40)]
    assert set(await asyncio.gather(*burst)) == {200}
    first.kill()
    with FeedbackStore.open(postgres_url) as store:
        votes = store.votes_for(answer_id)
    assert len(votes) == 80 and len({v["user_id"] for v in votes}) == 80
    assert sum(v["value"] == "down" for v in votes) == len([n for n in range(40) if n % 3 == 0])
