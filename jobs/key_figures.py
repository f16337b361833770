"""Key figures over the feedback store: answers, refusal rate, 👍 rate, firing alerts, and weekly series.

Shown on App Home (`bot.replies.Responder.publish_home`) and at the top of the weekly report. Rates come
with their counts, so a reader can tell 1 of 2 from 500 of 1,000 (avoid vanity metrics, DESIGN.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from jobs import alerts
from jobs._store import iso, reading, rows


@dataclass(frozen=True)
class KeyFigures:
    """Figures over the ``days`` before ``until``.

    Attributes:
        answers: questions answered or refused.
        refused: refusals among them.
        votes, thumbs_up: votes on those answers, and the 👍 among them.
        firing: firing alerts per severity (now, not windowed).
    """

    days: int
    until: datetime
    answers: int
    refused: int
    votes: int
    thumbs_up: int
    firing: dict[str, int]

    @property
    def refusal_rate(self) -> float | None:
        """refused / answers in [0, 1]; None without answers."""
        return self.refused / self.answers if self.answers else None

    @property
    def thumbs_up_rate(self) -> float | None:
        """thumbs_up / votes in [0, 1]; None without votes."""
        return self.thumbs_up / self.votes if self.votes else None


@dataclass(frozen=True)
class WeekPoint:
    """One week of answers (``week_start`` inclusive, 7 days), for trend charts.

    Attributes:
        citations_per_answer: average citations of the non-refused answers; None without any.
        no_citation_rate: share of non-refused answers without a citation; None without any.
    """

    week_start: datetime
    answers: int
    refused: int
    citations_per_answer: float | None
    no_citation_rate: float | None
    thumbs_up: int
    thumbs_down: int


def key_figures(store, *, now: datetime, days: int = 7) -> KeyFigures:
    """Figures for the ``days`` before ``now`` (aware)."""
    start = iso(now - timedelta(days=days))
    with reading(store) as db:
        a = rows(db, "SELECT count(*) AS n, coalesce(sum(refused), 0) AS refused FROM answers "
                     "WHERE created_at >= ? AND created_at <= ?", [start, iso(now)])[0]
        v = rows(db, "SELECT count(*) AS n, coalesce(sum(v.value = 'up'), 0) AS up FROM votes v "
                     "JOIN answers a ON a.answer_id = v.answer_id WHERE a.created_at >= ? AND a.created_at <= ?",
                 [start, iso(now)])[0]
    return KeyFigures(days, now, a["n"], a["refused"], v["n"], v["up"], alerts.firing_counts(store))


def weekly_series(store, *, now: datetime, weeks: int = 12) -> list[WeekPoint]:
    """``weeks`` consecutive 7-day buckets ending at ``now``, oldest first (empty weeks included)."""
    start = now - timedelta(days=7 * weeks)
    params = {"now": iso(now), "start": iso(start)}
    bucket = "CAST((julianday(:now) - julianday(a.created_at)) / 7 AS INTEGER)"
    with reading(store) as db:
        answered = {r["w"]: r for r in rows(db, f"""
            SELECT {bucket} AS w, count(*) AS answers, sum(a.refused) AS refused,
                   sum(CASE WHEN a.refused = 0 THEN json_array_length(a.cited_doc_ids) ELSE 0 END) AS citations,
                   sum(CASE WHEN a.refused = 0 AND json_array_length(a.cited_doc_ids) = 0 THEN 1 ELSE 0 END) AS uncited
            FROM answers a WHERE a.created_at >= :start AND a.created_at <= :now GROUP BY w""", params)}
        voted = {r["w"]: r for r in rows(db, f"""
            SELECT {bucket} AS w, sum(v.value = 'up') AS up, sum(v.value = 'down') AS down
            FROM votes v JOIN answers a ON a.answer_id = v.answer_id
            WHERE a.created_at >= :start AND a.created_at <= :now GROUP BY w""", params)}
    points = []
    for w in range(weeks - 1, -1, -1):
        r = answered.get(w, {})
        given = (r.get("answers") or 0) - (r.get("refused") or 0)
        points.append(WeekPoint(
            week_start=now - timedelta(days=7 * (w + 1)), answers=r.get("answers") or 0, refused=r.get("refused") or 0,
            citations_per_answer=(r["citations"] / given) if given else None,
            no_citation_rate=(r["uncited"] / given) if given else None,
            thumbs_up=(voted.get(w) or {}).get("up") or 0, thumbs_down=(voted.get(w) or {}).get("down") or 0,
        ))
    return points
