"""Slack markup → clean question (`bot.slack.text`), hand-worked cases."""

from __future__ import annotations

import pytest

from bot.slack.text import has_words, normalise_question


@pytest.mark.parametrize("text, question", [
    ("<@UBOT> how do I set up the VPN?", "how do I set up the VPN?"),
    ("<@UBOT|minerva> hi <@W123>", "hi"),
    ("see <#C123|general> please", "see #general please"),
    ("in <#C123> please", "in please"),
    ("read <https://wiki.example/vpn|the VPN page> first", "read the VPN page first"),
    ("read <https://wiki.example/vpn> first", "read https://wiki.example/vpn first"),
    ("<mailto:it@example.com|it@example.com> owns it?", "it@example.com owns it?"),
    ("Q&amp;A &lt;b&gt; tags", "Q&A <b> tags"),
    ("&amp;lt;not a tag&amp;gt;", "&lt;not a tag&gt;"),  # one level of unescaping only
    ("&lt;@U123&gt; typed literally", "<@U123> typed literally"),
    (":wave: hello :+1::skin-tone-2: there", "hello there"),
    ("meeting at 10:30:45 ok?", "meeting at 10:30:45 ok?"),
    ("<!here> <!channel> ping <!subteam^S1|@ops>", "ping @ops"),
    ("due <!date^1392734382^{date}|Feb 18, 2014>?", "due Feb 18, 2014?"),
    ("  multi\n\nline\tquestion  ", "multi line question"),
    ("<@UBOT>", ""),
    ("", ""),
])
def test_normalise_question(text: str, question: str) -> None:
    assert normalise_question(text) == question


@pytest.mark.parametrize("question, expected", [
    ("", False), ("?! …", False), ("👍🎉", False), ("#", False),
    ("vpn", True), ("한국어", True), ("障害", True), ("42", True),
])
def test_has_words(question: str, expected: bool) -> None:
    assert has_words(question) is expected
