"""Report charts render Korean and Japanese labels (no missing-glyph boxes)."""

from __future__ import annotations

import warnings

from jobs.report_charts import coverage_heatmap


def test_korean_and_japanese_topic_labels_have_glyphs():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        png = coverage_heatmap(["how-to"], ["VPN 연결 방법", "有給休暇の申請"], [[0.5, 0.2]], [[3, 4]],
                               metric="refusal rate")
    assert png.startswith(b"\x89PNG")
    assert not [w for w in caught if "missing from font" in str(w.message)]


def test_the_signal_jobs_panel_shows_times_as_a_reader_reads_them():
    """A newcomer's first report listed "since: 2026-09-06T06:25:32.342676+00:00" as a job's status."""
    from jobs.report import _status_panel

    html = _status_panel({"drift": {"since": "2026-09-06T06:25:32.342676+00:00", "answers_in_window": 12,
                                    "share_refused": 0.16666}})

    assert "since: 2026-09-06 06:25 UTC" in html and "answers in window: 12" in html
    assert "342676" not in html
