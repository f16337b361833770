"""Block Kit rendering of answers, within Slack's limits and safe against quoted mentions.

Slack limits (notes/slack.md): 3,000 characters of text per section, 50 blocks per message, about 13,000
characters in all. Quoted document text is escaped (``&``, ``<``, ``>``) so a page containing ``<!channel>``
can never ping anyone; links are built by us from Markdown links after escaping. Text is cut on grapheme
boundaries so an emoji, a flag or a Hangul syllable is never split.
"""

from __future__ import annotations

from urllib.parse import quote

import regex

from knowledge.answering import repeats_direct_answer
from knowledge.messages import message
from knowledge.types import Answer

SECTION_LIMIT = 3000
BLOCK_LIMIT = 50
FALLBACK_LIMIT = 300
#: action_id of the 👍/👎 element. Never rename a shipped action_id: old messages still carry it.
FEEDBACK_ACTION = "minerva_feedback"
#: Legacy two-button form (an ``actions`` block); kept handled so old messages keep working.
VOTE_UP_ACTION = "minerva_vote_up"
VOTE_DOWN_ACTION = "minerva_vote_down"
#: "Report a wrong answer" button; its value is the answer id.
REPORT_WRONG_ACTION = "minerva_report_wrong"

#: A label never spans a line break of any kind `str.splitlines` knows: the quoting splits lines with it.
_MD_LINK = regex.compile(r"(?<!!)\[([^\]\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+)\]\(((?:https?|mailto):[^)\s]+)\)")
#: A Markdown image: Slack shows no images in text, so its description (alt text) stands in for it.
_MD_IMAGE = regex.compile(r"!\[([^\]\n]*)\]\([^)\n]*\)")
#: A Markdown link whose target is not http(s): an in-page anchor or a path relative to the page.
_MD_LOCAL_LINK = regex.compile(r"(?<!!)\[([^\]\n]+)\]\((?![a-zA-Z][a-zA-Z0-9+.-]*:)[^)\s]*\)")
#: A backslash escape of Markdown punctuation (markdownify writes "\-", "\_", "\*").
_MD_ESCAPE = regex.compile(r"\\([-_*#.!+()\[\]`])")
_MD_BOLD = regex.compile(r"\*\*(.+?)\*\*")
_MD_BOLD_ITALIC = regex.compile(r"\*\*\*(.+?)\*\*\*")
_MD_HEADING = regex.compile(r"^#{1,6}\s+(.+?)\s*#*$", regex.M)
_GRAPHEME = regex.compile(r"\X")
#: The start of ``&amp;``/``&lt;``/``&gt;`` left at the end of a cut escaped text.
_PARTIAL_ENTITY = regex.compile(r"&[a-z]{0,3}$")
#: Characters that would end or split a ``<url|text>`` link; percent-encoded in citation URLs.
_URL_BREAKERS = regex.compile(r"[<>|\s]")
#: Markup a cut must keep whole: an entity (``&amp;``, ``&#39;``) or a ``<url|label>`` link, ``<@U…>`` mention
#: or ``<!date…>`` we built (escaped text has no other ``<``).
_ATOM = regex.compile(r"&[A-Za-z]{2,8};|&#[0-9]{1,7};|<[^<>\n]*>")
#: A code fence line.
_FENCE_LINE = regex.compile(r"^[ \t]*(?:```|~~~)")
_FENCE_INFO = regex.compile(r"^([ \t]*(?:```|~~~))[^`\n]*")
#: An inline code span, and the placeholder that stands for one while the prose around it is converted.
_INLINE_CODE = regex.compile(r"`[^`\n]+`")
_SET_ASIDE = regex.compile("\ue000(\\d+)\ue001")
#: Repeated at the start of the continuation of a quoted line that a cut splits in two.
QUOTE_MARKER = "> "


def escape(text: str) -> str:
    """Escape ``&``, ``<`` and ``>`` (Slack's control characters) in untrusted text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_mrkdwn(markdown: str) -> str:
    """Escaped Slack mrkdwn from document Markdown: headings and ``**bold**`` become ``*bold*``, http(s) and
    mailto links become ``<url|text>``, other links (anchors, relative paths) their label, an image its
    description in parentheses (Slack shows no image in text; issue 23: ``![span details](../img/x.png)`` was
    shown raw), ``\-``-style escapes their character. Code, fenced or inline, is only escaped: a quoted
    ``GenericModel[int](a=1)`` lost its brackets as if it were a link. Nothing in the input can produce a
    mention or a special command."""
    return "".join(escape(_bare_fence(part)) if code else _prose_mrkdwn(part)
                   for code, part in _code_and_prose(markdown))


def _bare_fence(code: str) -> str:
    """A fenced block without its opening fence's language: Slack has no syntax highlighting and shows the word
    as the block's first line ("bash" above `sudo wg show`, a newcomer's VPN quote)."""
    return _FENCE_INFO.sub(r"\1", code, count=1)


def _prose_mrkdwn(markdown: str) -> str:
    """`to_mrkdwn` of text outside fenced code; its inline code spans are set aside while the rest is converted
    (a span may sit inside a link's label or a bold run: "[set up a `code` highlight](#food)")."""
    spans: list[str] = []

    def set_aside(m: regex.Match) -> str:
        spans.append(m.group(0))
        return f"\ue000{len(spans) - 1}\ue001"

    text = _convert(_INLINE_CODE.sub(set_aside, markdown.replace("\ue000", "").replace("\ue001", "")))
    return _SET_ASIDE.sub(lambda m: escape(spans[int(m.group(1))]), text)


def _convert(markdown: str) -> str:
    """Escaped mrkdwn of prose: headings, bold, links, images and backslash escapes (`to_mrkdwn`)."""
    text = escape(markdown)
    text = _MD_HEADING.sub(r"*\1*", text)
    text = _MD_BOLD_ITALIC.sub(r"*_\1_*", text)  # "***NOTE:***" (the handbook's) was left as "**NOTE:**"
    text = _MD_BOLD.sub(r"*\1*", text)
    text = _MD_ESCAPE.sub(r"\1", text)  # markdownify's "\-" shows its backslash in Slack
    text = _MD_IMAGE.sub(lambda m: f"({m.group(1).strip()})" if m.group(1).strip() else "", text)
    text = _MD_LINK.sub(lambda m: f"<{m.group(2)}|{m.group(1).replace('|', '/')}>", text)  # mailto: opens too
    return _MD_LOCAL_LINK.sub(r"\1", text)  # "[label](#anchor)", "[label](../page.md)": no link Slack can open


def _code_and_prose(markdown: str) -> list[tuple[bool, str]]:
    """``markdown`` as consecutive ``(is code, text)`` parts, lines kept whole with their line ends: a fenced
    block, its fences included, is code."""
    parts: list[tuple[bool, str]] = []
    in_code = False
    for line in markdown.splitlines(keepends=True):
        fence = bool(_FENCE_LINE.match(line))
        code = in_code or fence
        if fence:
            in_code = not in_code
        if parts and parts[-1][0] == code:
            parts[-1] = (code, parts[-1][1] + line)
        else:
            parts.append((code, line))
    return parts


def split_graphemes(text: str, limit: int) -> list[str]:
    """Cut mrkdwn ``text`` into pieces of at most ``limit`` characters, at line ends when possible, never
    inside a grapheme cluster, an entity (``&amp;``) or a ``<url|label>`` link / ``<@U…>`` mention. A quoted
    line (starting with ``>``) cut in two continues with ``"> "`` so every piece keeps its quote marker.

    Args:
        text: escaped mrkdwn (see `escape`, `to_mrkdwn`).
        limit: characters per piece, >= 1 (Slack's section limit is `SECTION_LIMIT`).

    Returns:
        The pieces in order; [] for empty text; whitespace-only pieces are dropped. Without quoted lines cut in
        two, ``"".join(pieces)`` is ``text`` (up to the dropped whitespace).

    Two cases must be cut inside, or the limit could not be kept: a single cluster longer than ``limit`` (a
    letter carrying hundreds of combining marks, "zalgo" text) and a link longer than ``limit``.
    """
    pieces, rest = [], text
    while rest:
        if len(rest) <= limit:
            pieces.append(rest)
            break
        floor = len(QUOTE_MARKER) if pieces and rest.startswith(QUOTE_MARKER) else 0  # a cut must move forward
        cut = _cut_position(rest, limit, floor)
        pieces.append(rest[:cut])
        rest = _continuation(rest[:cut], rest[cut:], limit)
    return [p for p in pieces if p.strip()]


def _cut_position(text: str, limit: int, floor: int) -> int:
    """Where to cut ``text`` (longer than ``limit``): the last line end past half the limit, else the last
    space past half the limit, else the last grapheme boundary outside any entity or link, else (an oversized cluster) the last offset outside one,
    else (an oversized link) the last grapheme boundary; always in (``floor``, ``limit``]."""
    inside = _inside_atoms(text, limit)
    best = line_end = space = boundary = None
    for cluster in _GRAPHEME.finditer(text):
        end = cluster.end()
        if end > limit:
            break
        if end <= floor:
            continue
        boundary = end
        if end not in inside:
            best = end
            if text[end - 1] == "\n":
                line_end = end
            elif text[end - 1].isspace():
                space = end
    if line_end is not None and line_end > limit // 2 + 1:
        return line_end
    if space is not None and space > limit // 2 + 1:  # text without line breaks: between words, not inside one
        return space
    if best is not None:
        return best
    free = next((p for p in range(limit, floor, -1) if p not in inside), None)
    return free or boundary or limit


def _inside_atoms(text: str, limit: int) -> set[int]:
    """Offsets <= ``limit`` strictly inside an entity or a ``<…>`` link that fits in a piece (with a quote
    marker): a cut there would break it. One too long to fit is cut anyway, so it protects nothing."""
    inside: set[int] = set()
    for atom in _ATOM.finditer(text, 0, 2 * limit + 2):
        if atom.start() >= limit:
            break
        start, end = _atom_extent(text, atom.start(), atom.end())
        if end - start <= limit - len(QUOTE_MARKER):
            inside.update(range(start + 1, min(end, limit + 1)))
    return inside


def _atom_extent(text: str, start: int, end: int) -> tuple[int, int]:
    """An entity or link at ``text[start:end]`` widened to whole grapheme clusters: a prepended mark such as
    U+0600 joins the "&" that follows it into one cluster, so neither can be kept whole without the other."""
    for cluster in _GRAPHEME.finditer(text, max(0, start - 16), min(len(text), end + 16)):
        if cluster.start() < start < cluster.end():
            start = cluster.start()
        if cluster.start() < end < cluster.end():
            end = cluster.end()
    return start, end


def _continuation(head: str, tail: str, limit: int) -> str:
    """``tail``, with the quote marker again when the cut split a quoted line of ``head``."""
    line = head[head.rfind("\n") + 1:]
    if line.startswith(">") and tail.strip() and limit > 2 * len(QUOTE_MARKER):
        return QUOTE_MARKER + tail
    return tail


def truncate(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters on a grapheme boundary, with "…" when cut."""
    if len(text) <= limit:
        return text
    return text[: _prefix_length(text, limit - 1)].rstrip() + "…"


def _prefix_length(text: str, limit: int) -> int:
    """Length of the longest prefix of ``text`` that has at most ``limit`` characters and ends on a grapheme
    boundary; ``limit`` itself when even the first cluster is longer (see `split_graphemes`)."""
    size = 0
    for g in _GRAPHEME.finditer(text):
        if g.end() > limit:
            break
        size = g.end()
    return size or min(limit, len(text))


def section_blocks(mrkdwn: str) -> list[dict]:
    """One or more ``section`` blocks carrying ``mrkdwn`` (already escaped), each <= 3,000 characters."""
    return [{"type": "section", "text": {"type": "mrkdwn", "text": piece}} for piece in split_graphemes(mrkdwn, SECTION_LIMIT)]


def answer_blocks(answer: Answer, badges: dict[str, str] | None = None) -> list[dict]:
    """Blocks for an answer: warnings, the direct answer, quoted passages with a citation context each,
    and 👍/👎 buttons. Every label, note and button is in the question's language (``answer.language``,
    `knowledge.messages`); quoted page text stays as the page writes it.

    ``badges``: doc_id → the page's verification badge (`bot.slack.verification_badges`, mrkdwn we built), shown
    on its citation lines. A refusal gets one section with the refusal sentence and no buttons.
    """
    language = answer.language
    if answer.refused:
        closest = message("answer.closest_pages", language)
        blocks = section_blocks(escape(answer.text.split(f" {closest} ")[0]))
        if answer.closest:  # links to read, never a quoted passage that does not answer
            links = [slack_link(c["url"], escape(c["title"])) or escape(c["title"]) for c in answer.closest]
            blocks.append(_context(f"{escape(closest)} " + " · ".join(links)))
        return blocks
    blocks: list[dict] = []
    if answer.low_confidence:
        blocks.append(_context(_low_confidence_line(answer)))
    for warning in answer.warnings:
        blocks.append(_context(f":warning: {escape(warning)}"))
    if answer.direct_answer:  # the answer first (issue 9); the quotes below are its evidence
        blocks.extend(section_blocks(to_mrkdwn(answer.direct_answer)))
        if answer.generated:
            blocks.append(_context(":robot_face: " + escape(message("answer.generated_note", language))))
    by_number = {c.number: c for c in answer.citations}
    named: set[int] = set()
    for i, (text, number) in enumerate(zip(answer.quotes, answer.citation_numbers)):
        if text and not repeats_direct_answer(text, answer.direct_answer):  # else its source line alone says where from
            quoted = "\n".join("> " + line if line.strip() else ">" for line in to_mrkdwn(text).splitlines())
            blocks.extend(section_blocks(quoted))  # the source line right below names it, "[n]" and all
        elif number in named:  # a page already named: another bare line of it under the answer is noise
            continue
        named.add(number)
        # each quote names its own section; the citation lists every section of the page for JSON and text
        heading = answer.passages[i].heading if i < len(answer.passages) else None
        blocks.append(_context(_citation_line(by_number[number], heading=heading, language=language,
                                              badge=(badges or {}).get(by_number[number].doc_id, ""))))
    # "Was this helpful?" in words: Slack's feedback buttons carry no text of their own
    controls = [_context(escape(message("button.prompt", language))), feedback_block(answer.answer_id, language),
                report_block(answer.answer_id, language)]
    room = BLOCK_LIMIT - len(controls)
    if len(blocks) > room:
        blocks = blocks[: room - 1] + [_context(escape(message("answer.passages_cut", language)))]
    return blocks + controls


def _low_confidence_line(answer: Answer) -> str:
    """``:warning: *Low confidence*: <why>; please check the source.`` in the answer's language."""
    language = answer.language
    reason = answer.low_confidence_reason or message("answer.reason_weak", language)
    label = f"*{escape(message('answer.low_confidence_label', language))}*"
    return ":warning: " + message("answer.low_confidence_note", language, label=label, reason=escape(reason))


def fallback_text(answer: Answer) -> str:
    """Top-level ``text``: the notification and screen-reader fallback (<= 300 characters, escaped).

    Escaped before it is cut, so ``&``/``<`` cannot push it past the limit, and a cut never leaves half an
    entity such as ``&am``.
    """
    text = escape((answer.direct_answer or answer.text).replace("\n", " "))
    if len(text) <= FALLBACK_LIMIT:
        return text
    head = text[: _prefix_length(text, FALLBACK_LIMIT - 1)]
    return _PARTIAL_ENTITY.sub("", head).rstrip() + "…"


def feedback_block(answer_id: str, language: str = "en") -> dict:
    """Slack's native 👍/👎 ``feedback_buttons`` in a ``context_actions`` block; values carry the answer id,
    the screen-reader labels are in ``language``."""
    return {
        "type": "context_actions",
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": FEEDBACK_ACTION,
                "positive_button": {
                    "text": {"type": "plain_text", "text": "👍"},
                    "value": f"up:{answer_id}",
                    "accessibility_label": message("button.helpful", language),
                },
                "negative_button": {
                    "text": {"type": "plain_text", "text": "👎"},
                    "value": f"down:{answer_id}",
                    "accessibility_label": message("button.not_helpful", language),
                },
            }
        ],
    }


def report_block(answer_id: str, language: str = "en") -> dict:
    """An ``actions`` block with the "Report a wrong answer" button (``context_actions`` only takes
    feedback and icon buttons), labelled in ``language``; its value is the answer id."""
    return {
        "type": "actions",
        "elements": [
            {
                "type": "button",
                "action_id": REPORT_WRONG_ACTION,
                "text": {"type": "plain_text", "text": message("button.report_wrong", language)},
                "value": answer_id,
            }
        ],
    }


def parse_vote_value(value: str) -> tuple[str, str]:
    """``"up:<answer_id>"`` → ("up", answer_id). Raises ValueError on anything else."""
    vote, _, answer_id = (value or "").partition(":")
    if vote not in ("up", "down") or not answer_id:
        raise ValueError(f"not a vote value: {value!r}")
    return vote, answer_id


def _citation_line(citation, heading: str | None = None, language: str = "en", badge: str = "") -> str:
    """``[n] <url|title> › heading · updated N days ago`` (its words in ``language``); ``heading`` overrides
    the citation's."""
    title = escape(truncate(" ".join(citation.title.split()), 150))  # a line break would end the <url|title> link
    link = slack_link(citation.url, title) or f"{title} ({escape(citation.url)})"
    heading = citation.heading if heading is None else heading
    heading = f" › {escape(truncate(' '.join(heading.split()), 150))}" if heading else ""
    updated = escape(citation.updated_text(language=language))
    outdated = ""
    if getattr(citation, "outdated", False):  # front matter `outdated: true`
        outdated = " · :warning: " + escape(message("citation.outdated", language))
    verified = f" · {badge}" if badge else ""  # built by bot.slack.verify_blocks.badge_text: a mention, not page text
    return truncate(f"[{citation.number}] {link}{heading} · {updated}{outdated}{verified}", SECTION_LIMIT)


def slack_link(url: str, label: str) -> str:
    """``<url|label>`` for an http(s) ``url`` (characters that would end or split the link percent-encoded;
    ``label`` must already be escaped and on one line), else ``""``."""
    if not url.startswith(("http://", "https://")):
        return ""
    return f"<{_URL_BREAKERS.sub(lambda m: quote(m.group()), url)}|{label}>"


def slack_reference(target: str) -> str:
    """How mrkdwn names a Slack id: ``<!subteam^S…>`` for a user group, ``<#C…>`` for a channel (``G…`` too),
    ``<@U…>`` for a user."""
    if target.startswith("S"):
        return f"<!subteam^{target}>"
    return f"<#{target}>" if target.startswith(("C", "G")) else f"<@{target}>"


def _context(mrkdwn: str) -> dict:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": mrkdwn}]}
