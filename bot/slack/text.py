"""Slack message text → the plain question a person typed.

Slack sends a message's text in its own markup (https://api.slack.com/reference/surfaces/formatting):
``<@U123>`` and ``<#C123|general>`` references, ``<https://x|label>`` links, ``<!here>`` and
``<!subteam^S1|@team>`` commands, ``&amp;``/``&lt;``/``&gt;`` entities and ``:emoji_codes:``. Left in, they
lower retrieval scores and end up in the stored question (issue 9 item 6), so the listeners clean every
question here before it reaches `knowledge`. Slack-specific, so it lives in ``bot/``.

Usage::

    normalise_question("<@UBOT> what's <https://x.example|the VPN> &amp; :lock: setup?")
    # → "what's the VPN & setup?"
"""

from __future__ import annotations

import regex

#: ``<…>`` references. Slack never puts ``<`` or ``>`` inside one (they arrive as entities).
_REFERENCE = regex.compile(r"<([^<>|]*)(?:\|([^<>]*))?>")
#: ``:thumbsup:``, ``:+1::skin-tone-2:`` (a run of codes); not the ":30:" of "10:30:45" (no word character before it).
_EMOJI_CODE = regex.compile(r"(?<![\w:])(?::[a-z0-9_+'-]+:)+(?![\w:])", regex.I)
_ENTITIES = {"&lt;": "<", "&gt;": ">", "&amp;": "&"}
_ENTITY = regex.compile(r"&(?:lt|gt|amp);")
_SPACE = regex.compile(r"\s+")
#: Something a retriever can use: a letter or a digit, in any script.
_WORD = regex.compile(r"[\p{L}\p{N}]")


def normalise_question(text: str) -> str:
    """The question in ``text`` with Slack's markup resolved or removed, on one line.

    - user mentions (``<@U123>``, ``<@U123|ann>``) and special commands (``<!here>``, ``<!channel>``) are
      removed; a user group (``<!subteam^S1|@ops>``) or date (``<!date^…|Jan 1>``) keeps its label;
    - channel references become ``#name`` (``<#C123|general>``) or are removed when unnamed;
    - links become their label (``<https://x|label>``) or their URL (``<https://x>``);
    - ``&amp;``, ``&lt;``, ``&gt;`` become ``&``, ``<``, ``>`` (after the references, so an escaped ``&lt;``
      in the text can never form a new reference);
    - ``:emoji_codes:`` are removed; runs of whitespace become one space.

    Args:
        text: a message's ``text`` as Slack sends it (any string; None-safe callers pass "").

    Returns:
        The cleaned question; "" when nothing is left. Never raises.
    """
    text = _REFERENCE.sub(_resolve_reference, text)
    text = _EMOJI_CODE.sub(" ", text)
    text = _ENTITY.sub(lambda m: _ENTITIES[m.group()], text)
    return _SPACE.sub(" ", text).strip()


def has_words(question: str) -> bool:
    """True when ``question`` holds at least one letter or digit (in any script): something to search for."""
    return _WORD.search(question) is not None


def _resolve_reference(match: regex.Match) -> str:
    target, label = match.group(1), match.group(2)
    if target.startswith("@"):
        return " "
    if target.startswith("#"):
        return f"#{label}" if label else " "
    if target.startswith("!"):
        return label if label and not target.startswith(("!here", "!channel", "!everyone")) else " "
    return label if label else target
