"""Plain-text rendering of an answer for the terminal (`minerva ask`)."""

from __future__ import annotations

from knowledge.types import Answer


def render_answer_text(answer: Answer) -> str:
    """The answer text followed by numbered sources with heading and age, one per line."""
    lines = [answer.text]
    if answer.citations:
        lines.append("")
        lines.append("Sources:")
        for c in answer.citations:
            heading = f" › {c.heading}" if c.heading else ""
            outdated = ", OUTDATED" if c.outdated else ""  # front matter `outdated: true`
            lines.append(f"  [{c.number}] {c.title}{heading} — {c.url} (updated {c.age_text()}, score "
                         f"{c.score:.2f}{outdated})")
    return "\n".join(lines)
