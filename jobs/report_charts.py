"""The weekly report's charts as PNG bytes (matplotlib, object API: no pyplot state, no GUI backend).

Each function takes plain data and returns the PNG file's bytes, ready for a ``data:`` URI or a Slack
upload. matplotlib is imported on first use (about half a second), so importing `jobs` stays cheap.
"""

from __future__ import annotations

import functools
import io
from pathlib import Path
from collections.abc import Sequence
from datetime import datetime

DPI = 100
_UP, _DOWN, _NEUTRAL, _WARN = "#2e7d32", "#c62828", "#546e7a", "#ef6c00"


def coverage_heatmap(intents: Sequence[str], topics: Sequence[str], rates: Sequence[Sequence[float | None]],
                     counts: Sequence[Sequence[int]], *, metric: str,
                     gaps: Sequence[Sequence[bool]] | None = None) -> bytes:
    """Heatmap intent (rows) × topic (columns) of a rate in [0, 1], each cell annotated with its count.

    Args:
        intents, topics: row and column labels.
        rates: ``rates[i][j]`` for intent i and topic j; None = no questions (left blank).
        counts: questions per cell, same shape.
        metric: what the rate is, for the colour bar (e.g. "refusal rate").
        gaps: same shape; True = the cell holds questions of a coverage gap (`jobs.question_gaps`): outlined
            in red. When given, the colour scale is blue (not red-to-green), so only gap cells are red.
    """
    import numpy as np

    fig = _figure(max(6.0, 1.1 * len(topics) + 3), max(3.0, 0.5 * len(intents) + 1.8))
    ax = fig.add_subplot()
    grid = np.array([[np.nan if v is None else v for v in row] for row in rates], dtype=float)
    cmap = "RdYlGn_r" if gaps is None else "Blues"
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
    from matplotlib.patches import Rectangle

    for i, row in enumerate(gaps or []):
        for j, marked in enumerate(row):
            if marked:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2.5))
    ax.set_xticks(range(len(topics)), labels=[_short(t) for t in topics], rotation=35, ha="right")
    ax.set_yticks(range(len(intents)), labels=[_short(i) for i in intents])
    for i, row in enumerate(counts):
        for j, n in enumerate(row):
            if n:
                ax.text(j, i, f"{grid[i][j]:.0%}\nn={n}", ha="center", va="center", fontsize=7)
    fig.colorbar(image, ax=ax, label=metric)
    ax.set_title(f"Coverage: {metric} by intent × topic")
    return _png(fig)


def freshness_timeline(months: Sequence[str], fresh: Sequence[int], stale: Sequence[int], *, rule: str) -> bytes:
    """Stacked bars: documents by month of last modification, fresh vs stale."""
    fig = _figure(8, 3.5)
    ax = fig.add_subplot()
    x = range(len(months))
    ax.bar(x, fresh, color=_UP, label="fresh")
    ax.bar(x, stale, bottom=fresh, color=_WARN, label=f"stale: {rule}")
    step = max(1, len(months) // 12)
    ax.set_xticks(list(x)[::step], labels=list(months)[::step], rotation=35, ha="right")
    ax.set_ylabel("documents")
    ax.set_title("Freshness: active documents by last modification")
    ax.legend(loc="upper left")
    return _png(fig)


def stale_trend(dates: Sequence[str], stale: Sequence[int]) -> bytes:
    """Line: stale active documents at the end of each week (the freshness job's timeline)."""
    fig = _figure(8, 2.8)
    ax = fig.add_subplot()
    x = list(range(len(dates)))
    ax.plot(x, stale, marker="o", color=_WARN)
    step = max(1, len(dates) // 12)
    ax.set_xticks(x[::step], labels=list(dates)[::step], rotation=35, ha="right")
    ax.set_ylim(bottom=0)
    ax.set_ylabel("stale documents")
    ax.set_title("Stale active documents by week")
    return _png(fig)


def bad_documents(labels: Sequence[str], up_rates: Sequence[float], votes: Sequence[int], threshold: float) -> bytes:
    """Horizontal bars of 👍 rate for the worst documents (worst at the top), with the threshold line."""
    fig = _figure(8, max(2.5, 0.42 * len(labels) + 1.2))
    ax = fig.add_subplot()
    y = list(range(len(labels)))[::-1]
    colors = [_DOWN if r < threshold else _NEUTRAL for r in up_rates]
    ax.barh(y, up_rates, color=colors)
    for yi, rate, n in zip(y, up_rates, votes):
        ax.text(min(rate + 0.01, 0.9), yi, f"{rate:.0%} of {n} votes", va="center", fontsize=8)
    ax.axvline(threshold, color=_DOWN, linestyle="--", linewidth=1, label=f"threshold {threshold:.0%}")
    ax.set_yticks(y, labels=[_short(t, 40) for t in labels])
    ax.set_xlim(0, 1)
    ax.set_xlabel("thumbs-up rate of answers citing the document")
    ax.set_title("Bad documents: lowest thumbs-up rates")
    ax.legend(loc="lower right")
    return _png(fig)


def citation_trend(weeks: Sequence[datetime], per_answer: Sequence[float | None], no_citation: Sequence[float | None],
                   refusal: Sequence[float | None], *, min_per_answer: float, max_no_citation: float) -> bytes:
    """Weekly lines: citations per answer (left axis) and no-citation / refusal rates (right axis)."""
    fig = _figure(8, 3.5)
    ax = fig.add_subplot()
    labels = [w.strftime("%m-%d") for w in weeks]
    x = list(range(len(weeks)))
    ax.plot(x, [_nan(v) for v in per_answer], marker="o", color=_NEUTRAL, label="citations per answer")
    ax.axhline(min_per_answer, color=_NEUTRAL, linestyle=":", linewidth=1)
    ax.set_ylabel("citations per answer")
    ax.set_ylim(bottom=0)
    right = ax.twinx()
    right.plot(x, [_nan(v) for v in no_citation], marker="s", color=_DOWN, label="no-citation rate")
    right.plot(x, [_nan(v) for v in refusal], marker="^", color=_WARN, label="refusal rate")
    right.axhline(max_no_citation, color=_DOWN, linestyle=":", linewidth=1)
    right.set_ylim(0, 1)
    right.set_ylabel("rate")
    ax.set_xticks(x, labels=labels, rotation=35, ha="right")
    ax.set_title("Citation health by week (dotted: thresholds)")
    lines = ax.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    ax.legend(lines, [line.get_label() for line in lines], loc="upper left", fontsize=8)
    return _png(fig)


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    _use_cjk_fonts()
    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


#: Font packages whose files render Korean (NanumGothic) and Japanese (IPAexGothic) labels; DejaVu Sans,
#: matplotlib's default, has neither, and a Korean topic label became "VPN □□□".
CJK_FONT_PACKAGES = (("koreanize_matplotlib", "NanumGothic.ttf"), ("japanize_matplotlib", "ipaexg.ttf"))


@functools.cache
def _use_cjk_fonts() -> None:
    """Register the packaged CJK fonts once and make them matplotlib's fallbacks after DejaVu Sans
    (matplotlib ≥ 3.6 falls back glyph by glyph through ``font.family``)."""
    import importlib.util

    import matplotlib
    from matplotlib import font_manager

    families = ["DejaVu Sans"]
    for package, filename in CJK_FONT_PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        for path in Path(next(iter(spec.submodule_search_locations))).rglob(filename):
            font_manager.fontManager.addfont(str(path))
            families.append(font_manager.FontProperties(fname=str(path)).get_name())
            break
    matplotlib.rcParams["font.family"] = families


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def _short(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _nan(value: float | None) -> float:
    return float("nan") if value is None else value
