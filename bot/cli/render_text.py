"""Plain-text rendering of an answer for the terminal (`minerva ask`), framed in the question's language
(`knowledge.messages`, as the Slack blocks are)."""

from __future__ import annotations

import re

from knowledge.messages import message
from knowledge.markdown_tree import WEB_LINK
from knowledge.sentences import readable
from knowledge.types import Answer, Citation

_FENCE = re.compile(r"^\s*(```|~~~)")
_QUOTE = re.compile(r"^(?:> ?)?")  # the plain text marks quoted lines "> " (`knowledge.answering.plain_text`)
_INDENT = re.compile(r"^(\s*(?:[-*+•]\s+|\d{1,3}[.)]\s+)?)(.*)$")


def render_answer_text(answer: Answer, badges: dict[str, str] | None = None) -> str:
    """The answer as plain text (no Markdown: issue 23, "the terminal shows the same reply as plain text"),
    followed by numbered sources with heading and age, one per line; ``badges``: doc_id → verification badge
    (`bot.slack.verification_badges`, issue 25), added to its source line."""
    lines = [plain(answer.text)]
    if answer.citations:
        lines.append("")
        lines.append(message("citation.sources", answer.language))
        lines += [_source_line(c, answer.language, (badges or {}).get(c.doc_id, "")) for c in answer.citations]
    return "\n".join(lines)


def _source_line(c: Citation, language: str, badge: str = "") -> str:
    """``  [n] title › heading — url (updated N days ago, score 0.83[, OUTDATED])`` in ``language``."""
    heading = f" › {c.heading}" if c.heading else ""
    outdated = f", {message('citation.outdated_upper', language)}" if c.outdated else ""  # front matter `outdated: true`
    updated = c.updated_text(language=language)
    score = message("citation.score", language)
    badge = f", {badge}" if badge else ""
    return f"  [{c.number}] {c.title}{heading} — {c.url} ({updated}, {score} {c.score:.2f}{outdated}{badge})"


def plain(text: str) -> str:
    """``text`` as a terminal shows it: each line's Markdown emphasis and links read as words (`readable`: the
    label, and the address of a mail link; a web link's address in brackets after it), its bullet or number
    and indentation kept; code blocks as written,
    inside a quote too ("> " lines: a quoted `GenericModel[int](a=1)` read as a link and lost its brackets, and
    the code its indentation)."""
    out, in_code = [], False
    for line in text.split("\n"):
        quote = _QUOTE.match(line).group(0)
        body = line[len(quote):]
        if _FENCE.match(body):
            in_code = not in_code
            out.append(line)
            continue
        if in_code or not body.strip():
            out.append(line)
            continue
        lead, rest = _INDENT.match(body).groups()
        out.append(quote + lead + readable(WEB_LINK.sub(r"\1 (\2)", rest)))
    return "\n".join(out)
