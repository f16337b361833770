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
