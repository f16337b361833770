"""Key figures over the feedback store: answers, refusal rate, 👍 rate, firing alerts, and weekly series.

Shown on App Home to admins (`bot.slack.home.admin_section`) and at the top of the weekly report. Rates come
with their counts, so a reader can tell 1 of 2 from 500 of 1,000 (avoid vanity metrics, DESIGN.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from feedback import windows
from jobs import alerts
from jobs._common import iso


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
    with store.snapshot() as conn:
        t = windows.answer_totals(conn, iso(now - timedelta(days=days)), iso(now))
    return KeyFigures(days, now, t["answers"], t["refused"], t["votes"], t["up"], alerts.firing_counts(store))


def weekly_series(store, *, now: datetime, weeks: int = 12) -> list[WeekPoint]:
    """``weeks`` consecutive 7-day buckets ending at ``now``, oldest first (empty weeks included)."""
    start = now - timedelta(days=7 * weeks)
    with store.snapshot() as conn:
        found = {r["week"]: r for r in windows.weekly_answers(conn, iso(start), iso(now))}
    points = []
    for w in range(weeks - 1, -1, -1):
        r = found.get(w, {})
        given = (r.get("answers") or 0) - (r.get("refused") or 0)
        points.append(WeekPoint(
            week_start=now - timedelta(days=7 * (w + 1)), answers=r.get("answers") or 0, refused=r.get("refused") or 0,
            citations_per_answer=(r["citations"] / given) if given else None,
            no_citation_rate=(r["uncited"] / given) if given else None,
            thumbs_up=r.get("up") or 0, thumbs_down=r.get("down") or 0,
        ))
    return points
