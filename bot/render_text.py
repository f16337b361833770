"""Plain-text rendering of an answer for the terminal (`minerva ask`), framed in the question's language
(`knowledge.messages`, as the Slack blocks are)."""

from __future__ import annotations

from knowledge.messages import message
from knowledge.types import Answer, Citation


def render_answer_text(answer: Answer) -> str:
    """The answer text followed by numbered sources with heading and age, one per line."""
    lines = [answer.text]
    if answer.citations:
        lines.append("")
        lines.append(message("citation.sources", answer.language))
        lines += [_source_line(c, answer.language) for c in answer.citations]
    return "\n".join(lines)


def _source_line(c: Citation, language: str) -> str:
    """``  [n] title › heading — url (updated N days ago, score 0.83[, OUTDATED])`` in ``language``."""
    heading = f" › {c.heading}" if c.heading else ""
    outdated = f", {message('citation.outdated_upper', language)}" if c.outdated else ""  # front matter `outdated: true`
    updated = message("citation.updated", language, age=c.age_text(language=language))
    score = message("citation.score", language)
    return f"  [{c.number}] {c.title}{heading} — {c.url} ({updated}, {score} {c.score:.2f}{outdated})"
