"""Block Kit rendering: escaping, mrkdwn conversion, grapheme-safe cutting and Slack's limits."""

from __future__ import annotations

from dataclasses import replace

import json
import unicodedata
from datetime import datetime, timedelta, timezone

import pytest
import regex

from bot.slack.blocks import (
    BLOCK_LIMIT,
    REPORT_WRONG_ACTION,
    FALLBACK_LIMIT,
    FEEDBACK_ACTION,
    SECTION_LIMIT,
    answer_blocks,
    escape,
    fallback_text,
    feedback_block,
    parse_vote_value,
    section_blocks,
    split_graphemes,
    to_mrkdwn,
    truncate,
)
from knowledge.types import Answer, Citation

NOW = datetime.now(timezone.utc)

FAMILY = "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466"  # 👨‍👩‍👧‍👦, 7 code points
THUMBS_MEDIUM = "\U0001F44D\U0001F3FD"  # 👍🏽
FLAGS = "\U0001F1F0\U0001F1F7\U0001F1EF\U0001F1F5"  # 🇰🇷🇯🇵, two flags
KEYCAP = "1\uFE0F\u20E3"  # 1️⃣
HANGUL_NFD = unicodedata.normalize("NFD", "한국어 지식")  # each syllable = 2-3 jamo code points
KANJI = "障害対応の手順"
E_ACUTE = "e\u0301"  # é as e + combining acute
TRICKY = [FAMILY, THUMBS_MEDIUM, FLAGS, KEYCAP, HANGUL_NFD, KANJI, E_ACUTE, "plain ascii ", "\n"]


def boundaries(text: str) -> set[int]:
    """Offsets where `regex`'s extended grapheme clusters (\\X) start or end."""
    return {0} | {m.end() for m in regex.finditer(r"\X", text)}


def assert_cut_on_graphemes(text: str, pieces: list[str], limit: int) -> None:
    assert "".join(pieces) == text
    offset = 0
    for piece in pieces:
        assert 0 < len(piece) <= limit
        offset += len(piece)
        assert offset in boundaries(text), f"cut inside a grapheme at {offset}: {piece[-3:]!r}"


# --- escaping and mrkdwn ----------------------------------------------------------------------------------


def test_escape() -> None:
    assert escape("a & b <c> d") == "a &amp; b &lt;c&gt; d"
    assert escape("&lt;") == "&amp;lt;"  # already-escaped text is escaped again, not trusted
    assert escape("<!channel> <!here> <@U12345>") == "&lt;!channel&gt; &lt;!here&gt; &lt;@U12345&gt;"


@pytest.mark.parametrize(
    ("markdown", "mrkdwn"),
    [
        ("See [the docs](https://wiki.example/a?b=1) now", "See <https://wiki.example/a?b=1|the docs> now"),
        ("[a|b](https://x.example)", "<https://x.example|a/b>"),  # "|" would end the link text
        ("**Pro** plan", "*Pro* plan"),
        ("## Limits by plan", "*Limits by plan*"),
        ("post <!channel> in #incidents", "post &lt;!channel&gt; in #incidents"),
        ("ping <@U12345> or <!subteam^S1>", "ping &lt;@U12345&gt; or &lt;!subteam^S1&gt;"),
        ("[<!here>](https://x.example)", "<https://x.example|&lt;!here&gt;>"),
        ("[click](javascript:alert(1))", "[click](javascript:alert(1))"),  # only http(s) links
        ("a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"),
        # code is only escaped: a Pydantic example showed `GenericModelint` for `GenericModel[int](a=1)`; its
        # fence loses its language, which Slack showed as the block's first line ("bash" above `sudo wg show`)
        ("```python\nm = G[int](a=1)  # **kw** <@U1>\n```\nthen **b**", "```\nm = G[int](a=1)  # **kw** "
         "&lt;@U1&gt;\n```\nthen *b*"),
        ("use `f(**kwargs)` or `[x](https://y.example)`", "use `f(**kwargs)` or `[x](https://y.example)`"),
        ("[set up a `CODE` highlight](https://x.example/a), **`x`**", "<https://x.example/a|set up a `CODE` highlight>, *`x`*"),
    ],
)
def test_to_mrkdwn(markdown: str, mrkdwn: str) -> None:
    assert to_mrkdwn(markdown) == mrkdwn


def test_to_mrkdwn_output_has_no_special_commands() -> None:
    hostile = "<!channel> <!here|here> <!everyone> <@U1> <#C1> <https://evil.example|x> & **<!here>**"
    assert "<" not in to_mrkdwn(hostile) and ">" not in to_mrkdwn(hostile)


# --- cutting on grapheme boundaries -----------------------------------------------------------------------


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5, 7, 8, 11, 13, 50])
def test_split_graphemes_never_splits_a_cluster(limit: int) -> None:
    text = "".join(TRICKY * 3).replace("\n", "x").replace(" ", "_")  # no whitespace: no piece is dropped
    pieces = split_graphemes(text, limit)
    if limit >= len(FAMILY):  # every cluster fits: the cut must respect all of them
        assert_cut_on_graphemes(text, pieces, limit)
    else:  # a cluster longer than the limit can only be hard-cut; all other cuts stay on boundaries
        assert "".join(pieces) == text and all(len(p) <= limit for p in pieces)


@pytest.mark.parametrize("emoji", [FAMILY, THUMBS_MEDIUM, FLAGS[:2], KEYCAP, HANGUL_NFD[:3], E_ACUTE])
def test_split_graphemes_keeps_each_cluster_whole_at_every_offset(emoji: str) -> None:
    for prefix in range(8):
        text = "a" * prefix + emoji * 4
        for limit in range(len(emoji), len(text) + 1):
            assert_cut_on_graphemes(text, split_graphemes(text, limit), limit)


def test_split_graphemes_prefers_line_ends_and_drops_blank_pieces() -> None:
    text = "first line\n" + "x" * 15
    assert split_graphemes(text, 16) == ["first line\n", "x" * 15]
    assert split_graphemes("", 10) == []
    assert split_graphemes("   \n   ", 3) == []


def test_text_without_line_breaks_is_cut_between_words() -> None:
    words = " ".join(f"word{i:04d}" for i in range(800))  # 7,199 characters, no line break

    pieces = split_graphemes(words, 3000)

    assert all(len(p) <= 3000 for p in pieces) and len(pieces) == 3
    assert all(len(p.rstrip().split(" ")[-1]) == 8 and p.startswith("word") for p in pieces)  # whole words
    assert "".join(pieces) == words


def test_split_graphemes_terminates_on_a_cluster_longer_than_the_limit() -> None:
    zalgo = "Z" + "\u0336\u0317" * 200  # one grapheme, 401 code points
    pieces = split_graphemes(zalgo + " ok", 100)
    assert "".join(pieces) == zalgo + " ok" and all(len(p) <= 100 for p in pieces)
    family_pieces = split_graphemes(FAMILY, 3)
    assert "".join(family_pieces) == FAMILY and all(len(p) <= 3 for p in family_pieces)


def test_truncate() -> None:
    assert truncate("short", 10) == "short"
    cut = truncate(FAMILY * 10, 20)
    assert cut.endswith("…") and len(cut) <= 20 and cut[:-1] == FAMILY * 2
    assert truncate(FLAGS * 5, 4) == FLAGS[:2] + "…"
    assert truncate(" " * 400, 300) == "…"  # no IndexError on blank text


# --- answer blocks ----------------------------------------------------------------------------------------


def make_answer(quotes: list[str], *, title: str = "API rate limits", url: str = "https://wiki.example/api/rate-limits.md",
                refused: bool = False, low_confidence: bool = False, age_days: int = 3) -> Answer:
    citation = Citation(1, "api:rate-limits.md", title, url, "Limits by plan", 0.8, NOW - timedelta(days=age_days))
    text = "\n\n".join(f"{q} [1]" for q in quotes)
    return Answer(answer_id="a" * 32, question="q?", refused=refused, text=text, quotes=quotes,
                  citation_numbers=[1] * len(quotes), citations=[citation], low_confidence=low_confidence)


def test_answer_blocks_quote_cite_and_carry_the_answer_id() -> None:
    blocks = answer_blocks(make_answer(["| Pro | 600 | 100 |\n\npost <!channel> now"]))

    assert [b["type"] for b in blocks] == ["section", "context", "context", "context_actions", "actions"]
    assert blocks[2]["elements"][0]["text"] == "Was this helpful?"
    assert blocks[0]["text"] == {"type": "mrkdwn", "text": "> | Pro | 600 | 100 |\n>\n> post &lt;!channel&gt; now"}
    assert blocks[1]["elements"][0]["text"] == (
        "[1] <https://wiki.example/api/rate-limits.md|API rate limits> › Limits by plan · updated 3 days ago")
    assert blocks[3] == feedback_block("a" * 32)
    (buttons,) = blocks[3]["elements"]
    assert buttons["action_id"] == FEEDBACK_ACTION
    assert parse_vote_value(buttons["positive_button"]["value"]) == ("up", "a" * 32)
    assert parse_vote_value(buttons["negative_button"]["value"]) == ("down", "a" * 32)
    (report,) = blocks[4]["elements"]
    assert (report["action_id"], report["value"]) == (REPORT_WRONG_ACTION, "a" * 32)


def test_a_quote_that_says_no_more_than_the_direct_answer_leaves_only_its_source_line() -> None:
    quote = "**Note:** _If you have no travel card yet, call AdTrav at (877) 472-6716, then [head into Concur](https://travel.gsa.gov)._"
    answer = replace(make_answer([quote, "Receipts are required for lodging."]),
                     direct_answer="Note: If you have no travel card yet, call AdTrav at (877) 472-6716, then head into Concur. [1]")

    blocks = answer_blocks(answer)

    assert [b["type"] for b in blocks][:4] == ["section", "context", "section", "context"]
    assert blocks[0]["text"]["text"].startswith("Note: If you have no travel card yet")  # the direct answer
    assert blocks[1]["elements"][0]["text"].startswith("[1] <https://wiki.example/api/rate-limits.md|")
    assert blocks[2]["text"]["text"].startswith("> Receipts are required")  # a quote that adds something stays


def test_citation_age_wording() -> None:
    today = answer_blocks(make_answer(["x"], age_days=0))[1]["elements"][0]["text"]
    one = answer_blocks(make_answer(["x"], age_days=1))[1]["elements"][0]["text"]
    assert today.endswith("· updated today") and one.endswith("· updated 1 day ago")
    # a page without a date of its own is dated by its file: a copy made today was no page maintained today
    answer = make_answer(["x"], age_days=0)
    answer.citations[0] = replace(answer.citations[0], date_source="mtime")
    assert answer_blocks(answer)[1]["elements"][0]["text"].endswith("· file changed today")


def test_citation_title_and_url_cannot_break_out_of_the_link() -> None:
    answer = make_answer(["x"], title="<!channel> & co", url="https://wiki.example/a|<!here> b.md")
    line = answer_blocks(answer)[1]["elements"][0]["text"]
    assert line.startswith("[1] <https://wiki.example/a%7C%3C!here%3E%20b.md|&lt;!channel&gt; &amp; co>")
    assert "<!" not in line


def test_low_confidence_answer_is_marked() -> None:
    blocks = answer_blocks(make_answer(["x"], low_confidence=True))
    assert blocks[0]["type"] == "context" and "Low confidence" in blocks[0]["elements"][0]["text"]


def test_refusal_is_one_section_without_buttons() -> None:
    answer = Answer(answer_id="b" * 32, question="q", refused=True, text="I couldn't find this in the knowledge base.")
    assert answer_blocks(answer) == [
        {"type": "section", "text": {"type": "mrkdwn", "text": "I couldn't find this in the knowledge base."}}]


def test_long_passage_is_split_into_sections_within_the_limit() -> None:
    long_quote = "\n".join(f"line {i} {FAMILY} {KANJI} & <b>" for i in range(400))
    blocks = answer_blocks(make_answer([long_quote]))
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert len(sections) > 1 and all(0 < len(t) <= SECTION_LIMIT for t in sections)
    assert all(regex.fullmatch(r"\X*", t) for t in sections)
    assert "".join(sections).count(FAMILY) == 400  # nothing lost, no emoji cut
    assert section_blocks("x" * (SECTION_LIMIT * 2 + 1)) and all(
        len(b["text"]["text"]) <= SECTION_LIMIT for b in section_blocks("x" * (SECTION_LIMIT * 2 + 1)))


def test_many_passages_stay_within_fifty_blocks_and_keep_the_buttons() -> None:
    blocks = answer_blocks(make_answer([f"passage {i}" for i in range(60)]))
    assert len(blocks) == BLOCK_LIMIT
    assert [b["type"] for b in blocks[-3:]] == ["context", "context_actions", "actions"]
    assert "cut to fit" in blocks[-4]["elements"][0]["text"]
    json.dumps(blocks)  # serialisable as sent


@pytest.mark.parametrize("text", [
    "x" * 1000,
    FAMILY * 200,
    "&" * 400,                     # escaping multiplies the length by five
    "a" * 297 + "&&&&&&",          # the cut falls inside "&amp;"
    "<!channel> " * 60,
    "line\n" * 200,
])
def test_fallback_text_is_short_escaped_and_whole(text: str) -> None:
    answer = make_answer([text])
    fallback = fallback_text(answer)
    full = escape(answer.text.replace("\n", " "))

    assert len(fallback) <= FALLBACK_LIMIT
    assert "<" not in fallback and ">" not in fallback and "\n" not in fallback
    assert regex.search(r"&(?!amp;|lt;|gt;)", fallback) is None  # no half entity such as "&am"
    assert fallback.endswith("…")
    kept = fallback[:-1]
    assert full.startswith(kept) and len(kept) in boundaries(full)  # a prefix cut between graphemes


def test_fallback_text_keeps_a_short_answer_as_is() -> None:
    assert fallback_text(make_answer(["600 requests per minute & more"])) == "600 requests per minute &amp; more [1]"


@pytest.mark.parametrize("value", ["", "up", "up:", "sideways:abc", "abc"])
def test_parse_vote_value_rejects_malformed_values(value: str) -> None:
    with pytest.raises(ValueError):
        parse_vote_value(value)


# --- the splitter keeps Slack markup whole ------------------------------------------------------------------


@pytest.mark.parametrize("atom", ["&amp;", "&lt;", "&gt;", "<https://wiki.example/a?b=1&amp;c=2|the page>",
                                  "<@U12345>", "<#C123|general>"])
def test_split_graphemes_never_cuts_an_entity_link_or_mention(atom: str) -> None:
    limit = len(atom) + 20
    for prefix in range(1, limit):
        text = "a" * prefix + atom + "b" * limit
        pieces = split_graphemes(text, limit)
        assert "".join(pieces) == text and all(len(p) <= limit for p in pieces)
        assert any(atom in piece for piece in pieces), (prefix, pieces)


def test_split_graphemes_keeps_the_quote_marker_on_every_continuation() -> None:
    quoted = "> " + " ".join(f"word{i} &amp;" for i in range(40)) + "\n>\n> short line\n[1]"
    pieces = split_graphemes(quoted, 50)
    assert len(pieces) > 5 and all(len(p) <= 50 for p in pieces)
    assert all(p.startswith(">") for p in pieces[:-1]) and pieces[-1].endswith("[1]")
    # Without the markers the splitter added, the text is whole.
    assert pieces[0] + "".join(p.removeprefix("> ") if not prev.endswith("\n") else p
                               for prev, p in zip(pieces, pieces[1:])) == quoted


def test_a_link_longer_than_the_limit_is_the_only_markup_cut() -> None:
    link = "<https://wiki.example/" + "x" * 100 + "|page>"
    pieces = split_graphemes("see " + link + " &amp; more", 40)
    assert "".join(pieces) == "see " + link + " &amp; more" and all(len(p) <= 40 for p in pieces)
    assert any("&amp;" in p for p in pieces)


def test_long_quoted_passage_keeps_markers_and_markup_in_every_section() -> None:
    line = "Use the `/vpn` page & see [the guide](https://wiki.example/vpn) — " * 60  # one line, ~3,900 chars
    blocks = answer_blocks(make_answer([line]))
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert len(sections) >= 2 and all(len(t) <= SECTION_LIMIT and t.startswith("> ") for t in sections)
    for text in sections:
        assert regex.search(r"&(?!amp;|lt;|gt;)", text) is None
        assert regex.sub(r"<https://wiki\.example/vpn\|the guide>", "", text).count("<") == 0


def test_fuzzer_findings_stay_fixed() -> None:
    # A link label across a line break str.splitlines knows (\x1e): the quoting would split the link in two.
    assert to_mrkdwn("[\x1e[the guide](https://wiki.example/a)") == "[\x1e<https://wiki.example/a|the guide>"
    # A prepend mark glued to a link too long to keep whole: the cut stays on a grapheme boundary.
    text = "\u0600<http://h/p|x/y>"
    pieces = split_graphemes(text, 8)
    assert "".join(pieces) == text and pieces[0].startswith("\u0600<")  # never between the mark and its "<"


def test_local_links_become_their_label_and_markdown_escapes_their_character() -> None:
    text = to_mrkdwn("If you [moved](#transferring-leave) see [the guide](../travel.md) or [docs](https://x.example/d). "
                     "Use Code 51 \\- Regular Military.")
    assert text == ("If you moved see the guide or <https://x.example/d|docs>. Use Code 51 - Regular Military.")


def test_a_title_with_a_line_break_keeps_its_citation_link_whole() -> None:
    blocks = answer_blocks(make_answer(["Quote."], title="API\nrate limits"))
    line, prompt = [b["elements"][0]["text"] for b in blocks if b["type"] == "context"]
    assert prompt == "Was this helpful?" and line.startswith("[1] <https://wiki.example/api/rate-limits.md|API rate limits>")


def test_images_and_mail_links_of_real_pages_read_as_slack_shows_them() -> None:
    """Issue 23: a Pydantic page's ``![logfire span details](../img/logfire_span.png)`` and a handbook page's
    ``[hspd12.security@gsa.gov](mailto:…)`` reached Slack as raw Markdown."""
    from tests.conftest import CORPUS

    logfire = CORPUS / "pydantic-docs" / "v2.13.4" / "integrations" / "logfire.md"
    piv = CORPUS / "tts-handbook" / "2025-02" / "getting-started" / "piv.md"
    if not (logfire.exists() and piv.exists()):
        pytest.skip("needs ../shared/corpus (the development checkout)")
    image = next(line for line in logfire.read_text(encoding="utf-8").splitlines() if "logfire_span.png" in line)
    mail = next(line for line in piv.read_text(encoding="utf-8").splitlines() if "mailto:hspd12" in line)

    assert to_mrkdwn(image) == "(logfire span details)"
    assert "<mailto:hspd12.security@gsa.gov|hspd12.security@gsa.gov>" in to_mrkdwn(mail)
    assert "](" not in to_mrkdwn(image) + to_mrkdwn(mail)


def test_bold_italic_becomes_slack_bold_italic_not_double_stars():
    """The handbook's SF-182 steps write "***NOTE:***": Slack showed "**NOTE:**" in the quote (issue 23)."""
    assert to_mrkdwn("- ***NOTE:*** Not seeing your supervisor's name?") == "- *_NOTE:_* Not seeing your supervisor's name?"
    assert "**" not in to_mrkdwn("***a*** and **b**")


def test_a_page_cited_but_not_quoted_again_gets_no_second_bare_source_line() -> None:
    """Sections the answer drew on beyond ``max_passages`` are cited, not quoted: three bare "[1] …" lines of
    one page under a Korean reply read as orphans."""
    answer = replace(make_answer(["Pro: 600 requests per minute.", "", ""]), direct_answer="600 a minute. [1]")

    blocks = answer_blocks(answer)

    sources = [b for b in blocks if b["type"] == "context" and b["elements"][0]["text"].startswith("[1]")]
    assert [b["type"] for b in blocks][:2] == ["section", "section"] and len(sources) == 1
