"""What a channel's settings (`config.ChannelConfig`, issue 25 item 4) change about answering there.

- `channel_filter`: the collections a question may search, the asker's own permissions narrowed by the channel's
  ``collections`` (never widened: a restricted collection stays out of channels whatever the channel lists);
- `answers_message`: whether a plain message (no mention) in the channel is answered (``respond: questions``);
- `asks_something`: the rule that tells a question from chatter;
- `reply_language`: the labels' language when the question's own cannot be told.

Pure functions over config and message text: no Slack calls, no store, so the listeners and tests share them.
"""

from __future__ import annotations

import dataclasses

import regex

from config import ChannelConfig
from knowledge import SearchFilter
from knowledge.language import detect_language

#: Question words that start an English question ("how do I…", "where is…"); a yes/no question ("is the VPN
#: down") is caught by its question mark instead, since "do"/"can" also start instructions ("Do not deploy").
_EN_START = regex.compile(r"^\W*(what|what's|whats|how|why|when|where|who|whom|whose|which|anyone know|does anyone"
                          r"|is there|are there|can (i|we|you|someone|anyone)|could (i|we|you|someone|anyone)"
                          r"|should (i|we))\b", regex.I)
#: Korean question words (뭐/무엇 what, 어떻게 how, 왜 why, 언제 when, 어디 where, 누구/누가 who, 어느 which,
#: 몇 how many) anywhere, or a polite question ending (…나요, …까요, …습니까/ㅂ니까, …인가요, …는지요; not a bare …가요, which also ends "집에 가요", I'm going home).
_KO = regex.compile(r"(뭐|무엇|어떻게|왜|언제|어디|누구|누가|어느|몇)"
                   r"|(나요|까요|니까|인가요|는지요)\s*[.!]*\s*$")
#: Japanese question words (何/なに/なん what, どう/どうやって how, なぜ/どうして why, いつ when, どこ where,
#: 誰/だれ who, どれ/どの which, いくら how much) anywhere, or a sentence ending in the particle か (…ですか,
#: …ますか, …でしょうか).
_JA = regex.compile(r"(何|なに|なん|どう|なぜ|いつ|どこ|誰|だれ|どれ|どの|いくら)|か\s*[。.]?\s*$")
#: Slack references (``<https://x?a=1|label>``, ``<@U1>``): taken out first, so a link's "?" asks nothing.
_REFERENCE = regex.compile(r"<[^<>]*>")
#: A word of Latin letters (two or more), for `language_is_clear`.
_LATIN_WORD = regex.compile(r"\p{Latin}{2,}")
_CJK = regex.compile(r"[\p{Hangul}\p{Hiragana}\p{Katakana}\p{Han}]")
#: Latin words a text needs before its language is taken as English: "VPN?" or "v2 500" could be anyone's.
MIN_LATIN_WORDS = 2


#: Scopes a ``respond: questions`` channel needs to receive the messages posted in it (``message.channels`` /
#: ``message.groups`` events): public channels (C…) ``channels:history``, private ones (G…) ``groups:history``.
#: scope → the channel id prefix that needs it; `needed_history_scopes`.
CHANNEL_HISTORY_SCOPES = {"channels:history": "C", "groups:history": "G"}


def needed_history_scopes(channels: dict[str, ChannelConfig]) -> list[str]:
    """The `CHANNEL_HISTORY_SCOPES` the configured ``channels`` need ([] without a ``respond: questions`` one)."""
    prefixes = {channel_id[:1] for channel_id, channel in channels.items() if channel.respond == "questions"}
    return [scope for scope, prefix in CHANNEL_HISTORY_SCOPES.items() if prefix in prefixes]


def asks_something(text: str) -> bool:
    """Whether a channel message ``text`` (Slack markup) asks something: a ``?`` or full-width ``？``, an English
    message starting with a question word, or a Korean or Japanese question word or question ending.

    The rule favours missing a question over answering chatter: a ``respond: questions`` channel's people can
    always mention the bot, while a reply to "thanks, deploying now" is noise for the whole channel.
    """
    plain = _REFERENCE.sub(" ", text or "").strip()
    if not regex.search(r"[\p{L}\p{N}]", plain):
        return False
    if "?" in plain or "？" in plain:
        return True
    return bool(_EN_START.search(plain) or _KO.search(plain) or _JA.search(plain))


def answers_message(event: dict, channel: ChannelConfig) -> bool:
    """Whether a ``message`` event from a channel (not a DM) is answered although it does not mention the bot:
    the channel is ``respond: questions`` and the message is a person's top-level post (no thread, no bot, no
    subtype such as an edit or a join) that `asks_something`. A mention in it arrives as ``app_mention`` too;
    `bot.slack.app` claims each message once, so it is answered once."""
    if channel.respond != "questions" or event.get("subtype") or event.get("bot_id"):
        return False
    if event.get("thread_ts") and event.get("thread_ts") != event.get("ts"):
        return False
    text = event.get("text")
    return bool(event.get("user")) and isinstance(text, str) and asks_something(text)


def channel_filter(base: SearchFilter, channel: ChannelConfig) -> SearchFilter:
    """``base`` (what the asker may see, `bot.slack.replies.Responder._filter`) narrowed to ``channel.collections``.

    Returns ``base`` itself for a channel without ``collections``; otherwise a filter whose ``collections`` is
    the intersection (an empty intersection searches nothing, and the refusal says what was searched)."""
    if not channel.collections:
        return base
    allowed = frozenset(channel.collections)
    collections = allowed if base.collections is None else base.collections & allowed
    return dataclasses.replace(base, collections=collections)


def language_is_clear(text: str) -> bool:
    """Whether `detect_language` has something to go on: any Hangul, kana or kanji, or at least
    `MIN_LATIN_WORDS` Latin words. "VPN?", "v2", "500" and emoji are unclear."""
    return bool(_CJK.search(text)) or len(_LATIN_WORD.findall(text)) >= MIN_LATIN_WORDS


def reply_language(question: str, channel: ChannelConfig) -> str:
    """The language of a reply's labels: the question's (`detect_language`), or the channel's ``language`` when
    the question's cannot be told (`language_is_clear`) and the channel sets one."""
    if channel.language and not language_is_clear(question):
        return channel.language
    return detect_language(question)
