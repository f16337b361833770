"""Stated values in text: numbers with units (durations, percentages, sizes, prices, rates, counts, versions).

`extract_values` finds each value with what a contradiction check needs to compare it with another: its
kind and comparable unit, its magnitude in base units, a bound ("at least" / "up to"), the content words
around it, and the sentence it sits in with every value masked (so "times out after 30 seconds" and
"times out after 60 seconds" become the same statement). Korean and Japanese durations, business days and
sizes are read too ("30일 이내", "24時間", "10초 미만", "100MBを超える"); dates (4월 22일, 2026年4月22日)
are not amounts. Their prices, counts and rates are not read. Prices are read in dollars and in other
currencies (`CURRENCIES`: "€60", "45 EUR", "£3k"), each its own unit. A table cell takes the "per …" of its
column header ("Price per user" → per user), and a table row rendered for Slack ("Plan: Pro · Price per user:
€60", `knowledge.sentences`) reads like the Markdown row.

Example::

    >>> [(v.kind, v.magnitude, v.text) for v in extract_values("Deliveries time out after 30 seconds.")]
    [('duration', (30.0, 30.0), '30 seconds')]
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import regex

from knowledge.markdown_tree import inline_text
from knowledge.sentences import sentences_of
from knowledge.tokenize import tokenize

_DAY = 86_400.0
#: unit as written (lower case) → (kind, factor to the kind's base unit). Durations in seconds (a month is
#: 30.44 days, a year 365.25), sizes in bytes, percentages in percent.
UNITS: dict[str, tuple[str, float]] = {
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), ("duration", 1.0)),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), ("duration", 60.0)),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), ("duration", 3600.0)),
    **dict.fromkeys(("day", "days", "calendar day", "calendar days"), ("duration", _DAY)),
    **dict.fromkeys(("week", "weeks"), ("duration", 7 * _DAY)),
    **dict.fromkeys(("month", "months"), ("duration", 30.44 * _DAY)),
    **dict.fromkeys(("year", "years"), ("duration", 365.25 * _DAY)),
    # business days are not calendar days: a separate kind, never compared with "days"
    **dict.fromkeys(("business day", "business days", "working day", "working days", "workday", "workdays"),
                    ("business_days", 1.0)),
    **dict.fromkeys(("%", "percent", "per cent"), ("percent", 1.0)),
    **{u: ("size", f) for u, f in (("kb", 1e3), ("mb", 1e6), ("gb", 1e9), ("tb", 1e12), ("kib", 2.0**10),
                                    ("mib", 2.0**20), ("gib", 2.0**30), ("tib", 2.0**40))},
}
#: Nouns of two words that make a bare number a comparable count ("5 retry attempts" vs "3 retry attempts"); one
#: plural word does by itself (`_PLURAL_NOUN`: "3 devices", "5 retries").
COUNT_NOUNS = ("retry attempts", "api keys")
#: Rate units: "100 requests per minute", "100 requests/minute", "10 req/s"; normalised to per second.
_RATE_TIME = {"second": 1.0, "sec": 1.0, "s": 1.0, "minute": 60.0, "min": 60.0, "hour": 3600.0, "hr": 3600.0,
              "h": 3600.0, "day": _DAY}
_WORD_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                 "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40,
                 "forty-five": 45, "fifty": 50, "sixty": 60, "ninety": 90}
#: Words before a value that make it a lower or upper bound.
_MIN_WORDS = ("at least", "minimum of", "minimum", "more than", "over", "above", "no less than", "longer than")
_MAX_WORDS = ("up to", "at most", "maximum of", "maximum", "max", "less than", "no more than", "within",
              "under", "below", "fewer than", "no later than", "shorter than")
_MIN_AFTER = ("or more", "or longer", "or later", "minimum", "+")
_MAX_AFTER = ("or less", "or fewer", "or shorter", "or sooner", "maximum", "max")
#: Words too common to tell two values' subjects apart.
_CONTEXT_STOP = frozenset({"you", "your", "we", "our", "do", "doe", "has", "have", "are", "is", "was", "can",
                           "will", "may", "need", "must", "should", "which", "what", "there", "also"})

#: Korean and Japanese units right after a number ("30일", "24 時間", "3개월", "5営業日"): (kind, factor).
CJK_UNITS: dict[str, tuple[str, float]] = {
    **dict.fromkeys(("초", "秒"), ("duration", 1.0)),
    **dict.fromkeys(("분", "分", "分間"), ("duration", 60.0)),
    **dict.fromkeys(("시간", "時間"), ("duration", 3600.0)),
    **dict.fromkeys(("일", "日", "日間"), ("duration", _DAY)),
    **dict.fromkeys(("주", "주일", "週", "週間"), ("duration", 7 * _DAY)),
    **dict.fromkeys(("개월", "달", "か月", "ヶ月", "カ月", "ヵ月", "ケ月"), ("duration", 30.44 * _DAY)),
    **dict.fromkeys(("년", "年", "年間"), ("duration", 365.25 * _DAY)),
    **dict.fromkeys(("영업일", "営業日"), ("business_days", 1.0)),
    **{u: ("size", f) for u, f in (("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12), ("KiB", 2.0**10),
                                    ("MiB", 2.0**20), ("GiB", 2.0**30), ("TiB", 2.0**40))},
}
#: Words after a Korean or Japanese amount (a particle may come between: "30일이 지나면", "100MBを超える")
#: that make it an upper or a lower bound: 이내/以内 "within", 미만/未満 "less than", 이상/以上 "or more",
#: 초과/超 "over", 지나면/過ぎると "once … have passed", 째부터 "from the …th".
_CJK_MAX_AFTER = ("이내", "이하", "미만", "까지", "안에", "以内", "以下", "未満", "まで")
_CJK_MIN_AFTER = ("이상", "초과", "넘으면", "넘는", "넘게", "지나면", "째부터", "부터", "이후", "以上", "超", "過ぎ",
                  "経過", "以降")
_CJK_MAX_BEFORE = ("최대", "最大", "最長")
_CJK_MIN_BEFORE = ("최소", "最低", "少なくとも")
_CJK_VALUE = regex.compile(
    r"(?<![\d.,:/])(?P<lo>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:\s*[~〜～\-–]\s*(?P<hi>\d+(?:\.\d+)?))?\s?"
    r"(?P<unit>" + "|".join(regex.escape(u) for u in sorted(CJK_UNITS, key=len, reverse=True)) + r")"
    r"(?![기년本末])"  # not 1분기 (a quarter), 1주년 (an anniversary), 日本, 週末; 30日以内 and 2일차 are
)
_CJK_PARTICLE = regex.compile(r"^(?:이|가|을|를|은|는|が|を|は|の)\s*")
#: A day or year that is part of a date: "4월 22일", "12月29日", "2026년", "2026年".
_CJK_DATE_BEFORE = regex.compile(r"(?:\d\s*[월月]|매월|毎月)\s*$")

_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?|" + "|".join(sorted(_WORD_NUMBERS, key=len, reverse=True)) + r")"
_UNIT_WORDS = sorted((u for u in UNITS if u != "%"), key=len, reverse=True)
_SHORT_UNITS = {"s", "h", "min", "hr", "sec"}  # only right after a digit: "30s", "30 s", never "30 - s"
#: Currency signs and ISO codes → the currency's unit. "$" and "USD" stay plain "money" (the unit values had
#: before other currencies were read); amounts of two currencies never compare (no exchange rates here).
CURRENCIES: dict[str, str] = {"$": "money", "USD": "money", "€": "money:eur", "EUR": "money:eur",
                              "£": "money:gbp", "GBP": "money:gbp", "¥": "money:jpy", "JPY": "money:jpy",
                              "₹": "money:inr", "INR": "money:inr", "CHF": "money:chf"}
#: One or two words naming a kind of days, weeks or hours before the unit ("10 paid sick days", "20 vacation
#: days", "4 comp hours"): the amount is of that allowance. Never a word that changes the amount ("2 more days",
#: "3 extra weeks") or a preposition ("2 of the days").
_NAMED_DAYS = (r"(?:(?!(?:of|the|a|an|to|in|on|for|and|or|per|each|every|at|by|from|with|than|after|before|"
               r"more|less|fewer|extra|additional|other|these|those|such|consecutive)\b)[a-z]+\s+){1,2}"
               r"(?=(?:days?|weeks?|hours?)\b)")
#: Any other plural noun right after a number counts what it names ("3 devices", "5 laptops"): values compare only
#: with the same noun (unit "count:devices"), so two pages' "up to 3 devices" and "a maximum of 5 devices" meet.
#: Never a word that is an adverb or a unit's neighbour ("2 times", "3 others").
_PLURAL_NOUN = r"(?!(?:times|others|ones|ways|things|cases|items|steps|pieces|parts|kinds|types|sets|pairs)\b)[a-z]{3,}s"
_SIGNS = "".join(regex.escape(c) for c in CURRENCIES if len(c) == 1)
_CODES = "|".join(c for c in CURRENCIES if len(c) == 3)
_AMOUNT = r"\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?"
_VALUE = regex.compile(
    r"(?<![\w.$/#:" + _SIGNS + r"-])"
    # a sign or code before the amount ("$49", "€60", "EUR 60"), or one after it ("60 €", "45 EUR")
    r"(?:(?P<money>(?P<cur>[" + _SIGNS + r"]|(?-i:" + _CODES + r")\s)\s?"
    r"(?P<mval>" + _AMOUNT + r")(?P<mscale>\s?(?:k|K|million|M)\b)?)"
    r"|(?P<money2>(?P<mval2>" + _AMOUNT + r")(?P<mscale2>\s?(?:k|million)\b)?"
    r"(?:\s?(?P<cur2>[€£])|\s(?P<cur3>(?-i:" + _CODES + r"))\b))"
    r"|(?P<version>\b(?:v|version\s+)(?P<vval>\d+(?:\.\d+){0,2})(?!\.\d)\b)"
    r"|(?P<lo>" + _NUM + r")(?:\s*(?:-|–|to)\s*(?P<hi>" + _NUM + r"))?"
    r"(?:\s*-?\s*(?P<rate>(?:requests?|req|calls?|events?|messages?|queries)\s*(?:/|per\s+)\s*"
    r"(?P<rtime>second|sec|s|minute|min|hour|hr|h|day)s?\b)"
    r"|\s*(?P<rshort>rps|rpm|qps)\b"
    r"|(?P<pct>\s?%)"
    r"|[\s-]?(?:(?P<named>" + _NAMED_DAYS + r"))??(?P<unit>" + "|".join(regex.escape(u) for u in _UNIT_WORDS) + r")\b"
    r"|\s(?P<count>" + "|".join(COUNT_NOUNS) + r"|" + _PLURAL_NOUN + r")\b))",
    regex.IGNORECASE,
)
#: "per week", "a pay period", "/month", "each day" after a value: part of the unit ("3 days a week").
_PERIOD_NOUNS = r"(?:second|minute|hour|day|week|month|quarter|year|pay period|night|person|user|seat)s?\b"
_PER = regex.compile(r"^\s*(?:(?:per|each|every|/)\s*(?P<per>pay period|[a-z]+)|an?\s+(?P<per2>"
                     + _PERIOD_NOUNS + "))", regex.IGNORECASE)
#: Time periods among the "per …" qualifiers of a unit ("per month", "a week"), without a plural "s".
PERIODS = frozenset({"second", "minute", "hour", "day", "week", "month", "quarter", "year", "pay period", "night"})
#: "per <noun>" or "/<period, user, seat …>" in a label before a value ("Price per user:", "Cost (€/month):").
_LABEL_PER = regex.compile(r"\bper\s+(pay period|[a-z]+)|/\s*(?=" + _PERIOD_NOUNS + r")([a-z]+)")
#: Adjectives of a period in a label ("Monthly price:", "Annual fee:") → the period.
_PERIOD_ADJECTIVES = {"hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month", "quarterly": "quarter",
                      "yearly": "year", "annual": "year", "annually": "year", "nightly": "night"}
_LABEL_PERIOD = regex.compile(r"\b(" + "|".join(_PERIOD_ADJECTIVES) + r")\b")
#: The noun a hyphenated value modifies: "40-hour week", "30-day trial".
_MODIFIED = regex.compile(r"^\s+([A-Za-z]+)")
_ITEM_START = regex.compile(r"^(?:[-*+]\s|\d+[.)]\s|#)")
_HEADING_LINE = regex.compile(r"^#{1,6}(?:\s|$)")
_TABLE_RULE = regex.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")
#: One "header: cell" part of a rendered table row (`_rendered_row`): a header without ":", "·" or "|".
_RENDERED_CELL = regex.compile(r"^\s*([^:·|]{1,80}?):\s+(\S.*?)\s*$")
_ROW_BULLET = regex.compile(r"^(?:[•*+-]\s+)")
_CODE_BLOCK = regex.compile(r"```.*?(?:```|$)", regex.DOTALL)
_URL = regex.compile(r"https?://\S+|www\.\S+|\{\{[^}]*\}\}")
#: Markdown's own marks around words, left out of a statement: emphasis, code ticks, quote and heading markers. An
#: underscore inside a word stays ("skip_on_failure" read "skiponfailure" in an owner's contradiction message).
MARKUP = regex.compile(r"[*`>]+|(?<!\w)_+|_+(?!\w)|(?<!\w)#+(?=\s|$)")
#: Content words kept on each side of a value for its context.
CONTEXT_BEFORE, CONTEXT_AFTER = 6, 4


@dataclass(frozen=True)
class Value:
    """One value stated in a text.

    Attributes:
        kind: "duration" (base: seconds), "business_days" (days), "percent", "size" (bytes), "money" (in
            its currency, which the unit names: `CURRENCIES`), "rate" (per second), "count", or "version".
        unit: comparability key: values compare only when ``unit`` is equal (but see ``period_open``), e.g.
            "duration", "duration/week" ("3 days a week"), "count:retries", "version", "money" ($, USD),
            "money:eur/user/month" ("€45 per user per month").
        magnitude: (low, high) in base units; low == high for a single value, low < high for a range.
            A version is one number, major + minor·1e-3 + patch·1e-6, so 2.13 > 2.9.
        text: the value as written, e.g. "30 seconds", "$49", "3-5 days".
        bound: "min" ("at least 2 days"), "max" ("up to 30 s", "within 5 days") or "" (exact).
        context: stemmed content words around the value in its sentence (up to 6 before, 4 after).
        sentence: the sentence holding the value, Markdown stripped.
        statement: ``sentence`` with every value replaced by "N" + its unit, for comparing what is said; a
            table cell's starts with the header of its row's column ("Plan: Pro, Price per user: €N").
        row: for a table cell, its row's first cell in lower case (the row's key); "" outside tables.
        position: the value's place among the values of its sentence, from 0.
        period_open: True when the unit's "per …" qualifiers come from the label or column header the value
            follows and name no time period ("Price per user: €60"): a table often leaves the period to the
            page ("billed monthly"), so the value also compares with the same unit per a period (`comparable`);
            also for a named allowance with no period ("10 paid sick days", "12 … per year" on another page).
    """

    kind: str
    unit: str
    magnitude: tuple[float, float]
    text: str
    bound: str
    context: tuple[str, ...]
    sentence: str
    statement: str
    row: str = ""
    position: int = 0
    period_open: bool = False

    @property
    def with_unit(self) -> str:
        """The value as written with the "per …" of its unit, wherever the text said them: "€45 per user per
        month", "€60 per user" (a cell under "Price per user"), "3 days per week" ("3 days a week"), "30
        seconds". Rates and versions are their text."""
        if self.kind in ("rate", "version"):
            return self.text
        return self.text + "".join(f" per {q.split(':')[0]}" for q in self.unit.split("/")[1:])

    def same_amount(self, other: Value) -> bool:
        """True when both state the same amount (ranges must match exactly), within 0.5 % for rounding."""
        return all(abs(a - b) <= 0.005 * max(abs(a), abs(b), 1e-9) for a, b in zip(self.magnitude, other.magnitude))

    def admits(self, other: Value) -> bool:
        """True when this value is a bound that ``other``, an exact amount of the same unit, lies within: the
        rule applies to that amount. "less than 72 hours" (max) admits "2 days"; "more than $2,500" (min)
        admits "$3k"; "longer than 120 days" does not admit "2 months". Inclusive at the bound: whether "less
        than" excludes it is left to the sentence, which is shown."""
        if not self.bound or other.bound or self.unit != other.unit or other.magnitude[0] != other.magnitude[1]:
            return False
        amount = other.magnitude[0]
        return amount <= self.magnitude[1] if self.bound == "max" else amount >= self.magnitude[0]

    def conflicts_with(self, other: Value) -> bool:
        """True when both are comparable (same unit, compatible bounds) and state different amounts.

        A range conflicts with a single value only when the value lies outside it. Bounds conflict only
        when both are set and differ ("at least 2 days" vs "up to 5 days" is no contradiction). Cells of
        two different table rows never conflict.
        """
        if not comparable(self, other) or (self.bound and other.bound and self.bound != other.bound):
            return False
        if self.row and other.row and self.row != other.row:  # two different rows of a table
            return False
        (a_lo, a_hi), (b_lo, b_hi) = self.magnitude, other.magnitude
        if (a_lo == a_hi) != (b_lo == b_hi):  # one range, one single value
            inside = (a_lo <= b_lo <= a_hi) if a_lo != a_hi else (b_lo <= a_lo <= b_hi)
            return not inside
        return not self.same_amount(other)


def comparable(a, b) -> bool:
    """Whether two values (or identifiers, `knowledge.identifiers`) measure in one unit, so their amounts compare.

    True when the units are equal; and when one value's "per …" qualifiers come from a label that names no
    period (``period_open``: "Price per user: €60") and the other's unit is the same with one time period
    added ("€45 per user per month"): the table leaves to the page what the sentence says. Any other
    difference in qualifiers (per user / per workspace, per month / per year) keeps them apart.
    """
    if a.unit == b.unit:
        return True
    for x, y in ((a, b), (b, a)):
        if getattr(x, "period_open", False) and not getattr(y, "period_open", False):
            base, per = _unit_parts(x.unit)
            other_base, other_per = _unit_parts(y.unit)
            extra = [q for q in other_per if q not in per]
            if base == other_base and set(per) <= set(other_per) and len(extra) == 1 and extra[0] in PERIODS:
                return True
    return False


def _unit_parts(unit: str) -> tuple[str, list[str]]:
    """"money:eur/user/month" → ("money:eur", ["user", "month"])."""
    base, *per = unit.split("/")
    return base, per


#: Site plumbing no reader sees, never a statement (issue 26: Pydantic's "<!-- old anchor … -->" and
#: "[](){#ip-address-types}" were reported as two pages naming different channels): HTML comments, and
#: attribute lists of Markdown extensions ("{#anchor}", "{: .class}", "{ #id .class }").
_HIDDEN = regex.compile(r"<!--.*?(?:-->|$)|\{\s*[#:.][^{}\n]*\}", regex.S)


def clean_text(text: str) -> str:
    """Chunk text without code blocks, HTML comments, attribute lists, link targets, URLs or template tags; each
    line's inline Markdown read as the units read it (`markdown_tree.inline_text`: a link as its label, no inline
    HTML or images). Line by line: list markers, headings and table pipes are no inline Markdown and stay for
    `sentences` to read."""
    text = _CODE_BLOCK.sub(" ", text)
    text = _HIDDEN.sub(" ", text)
    text = "\n".join(inline_text(line) if line.strip() else "" for line in text.split("\n"))
    return _URL.sub(" ", text)


def sentences(text: str) -> list[tuple[str, str]]:
    """``(sentence, row)`` pairs of cleaned text: sentences and list items (``row`` "") and table cells.

    Hard-wrapped lines of a paragraph are joined first; a list item or heading starts a new one; a paragraph
    is split with `knowledge.sentences.sentences_of`, the splitter units and grounding use (it knows "e.g.",
    "i.e.", "vs.", decimals, versions and file names, and Korean and Japanese sentence ends); a label before a
    colon or a clause before a semicolon stays with its sentence ("Holiday pay: Yes - you receive 8 hours …"
    keeps what the 8 hours are). A
    Markdown table row becomes one sentence per cell after the first, each naming its row and column, so
    a cell keeps the words that say what its value is: ``| 5 days | 32 hours |`` under the header
    ``| Work week | Billable time |`` → ``("5 days, Billable time: 32 hours", "5 days")``.
    """
    return [(sentence, row) for sentence, row, _header in _sentences(text)]


def _sentences(text: str) -> list[tuple[str, str, str]]:
    """`sentences` with, for a table cell, the header of its row's first column ("Work week"), else ""."""
    out: list[tuple[str, str, str]] = []
    for block in _blocks(text):
        parts = block if isinstance(block, list) else [(part, "") for part in sentences_of(block)]
        header = MARKUP.sub("", getattr(block, "key_header", "")).strip()
        for part, row in parts:
            part = MARKUP.sub("", part).strip(" -+\t")
            if part:
                out.append((part, MARKUP.sub("", row).strip().lower(), header))
    return out


class _Row(list):
    """The cell sentences of one table row (``(sentence, row)`` pairs), with ``key_header``: the header of
    the row's first column ("Plan" above "| Pro | €60 |"), "" when the table has none."""

    def __init__(self, cells: list[tuple[str, str]], key_header: str = ""):
        super().__init__(cells)
        self.key_header = key_header


def _blocks(text: str) -> list[str | list[tuple[str, str]]]:
    """Paragraphs and list items (str, wrapped lines joined) and table rows (`_Row`: a list of (cell sentence,
    row)), Markdown or rendered for Slack (`_rendered_row`)."""
    blocks: list[str | list[tuple[str, str]]] = []
    paragraph: list[str] = []
    header: list[str] | None = None
    lines = text.split("\n")

    def flush() -> None:
        if paragraph:
            blocks.append(" ".join(paragraph))
            paragraph.clear()

    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("|") and stripped.count("|") >= 2:
            flush()
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            following = lines[number + 1].strip() if number + 1 < len(lines) else ""
            if _TABLE_RULE.match(stripped):
                continue
            if _TABLE_RULE.match(following):
                header = cells
                continue
            names = header if header and len(header) == len(cells) else [""] * len(cells)
            blocks.append(_Row([(f"{cells[0]}, {name}: {cell}".replace(", :", ","), cells[0])
                                for name, cell in zip(names[1:], cells[1:]) if cell], names[0]))
            continue
        header = None
        rendered = _rendered_row(stripped)
        if rendered:
            flush()
            blocks.append(rendered)
            continue
        if not stripped or _ITEM_START.match(stripped):
            flush()
        if stripped:
            paragraph.append(stripped)
        if _HEADING_LINE.match(stripped):  # a heading is a block of its own, blank line after it or not
            flush()
    flush()
    return blocks


def _rendered_row(line: str) -> list[tuple[str, str]] | None:
    """A table row as `knowledge.sentences` renders it for Slack ("Plan: Pro · Price per user: €60 · Storage:
    100 GB", maybe after a "•" bullet) as the cell sentences of a Markdown row (``[("Pro, Price per user:
    €60", "Pro"), ("Pro, Storage: 100 GB", "Pro")]``); None for any other line. Every part after the first
    must be "header: cell"; the first cell names the row, with its header or, where the table's first header is
    empty, alone ("API rate limit · Starter: 60 requests/minute · Team: 300 requests/minute": the plans are the
    columns, and read as a sentence its 60 had disagreed with another page's Team limit)."""
    parts = _ROW_BULLET.sub("", line).split(" · ")
    cells = [_RENDERED_CELL.match(part) for part in parts]
    if len(parts) < 2 or not all(cells[1:]):
        return None
    if cells[0] is None:  # a first column without a header: the row's name alone
        key, key_header = parts[0].strip(), ""
        if not key or ":" in key:
            return None
    elif ":" in cells[0].group(2):
        return None
    else:
        key, key_header = cells[0].group(2), cells[0].group(1).strip()
    return _Row([(f"{key}, {c.group(1).strip()}: {c.group(2)}", key) for c in cells[1:]], key_header)


def extract_values(text: str) -> list[Value]:
    """Every value with a unit stated in ``text`` (Markdown allowed), in reading order.

    Bare numbers, years and dates are not values: without a unit there is nothing to compare.
    """
    values = []
    for sentence, row, header in _sentences(clean_text(text)):
        matches = [m for m in _VALUE.finditer(sentence) if _plausible(m, sentence)]
        taken = [(m.start(), m.end()) for m in matches]
        cjk = [m for m in _CJK_VALUE.finditer(sentence) if _cjk_plausible(m, sentence)
               and not any(a < m.end() and m.start() < b for a, b in taken)]
        if not matches and not cjk:
            continue
        statement = _mask(sentence, matches, cjk)
        if header:  # a cell: say what its row key is ("Plan: Pro, Price per user: €N")
            statement = f"{header}: {statement}"
        edges = [0] + [m.end() + _per_phrases(sentence[m.end():])[1] for m in matches]
        ends = [m.start() for m in matches[1:]] + [len(sentence)]
        found = [(m.start(), _value(m, sentence, statement, left, right, row))
                 for m, left, right in zip(matches, edges, ends)]
        found += [(m.start(), _cjk_value(m, sentence, statement, row)) for m in cjk]
        ordered = [value for _, value in sorted(found, key=lambda f: f[0]) if value is not None]
        values += [dataclasses.replace(value, position=position) for position, value in enumerate(ordered)]
    return values


def _plausible(m: regex.Match, sentence: str) -> bool:
    """Reject readings that are not values: short units ("s", "h", "min") after a spelled-out number or a
    gap, and decades ("the 1990s")."""
    unit = (m.group("unit") or "").lower()
    if unit in _SHORT_UNITS:
        lo, gap = m.group("lo"), sentence[m.end("lo"):m.start("unit")]
        if not lo[0].isdigit() or gap not in ("", " ") or (unit == "h" and gap):
            return False
        if unit == "s" and 1900 <= _number(lo) <= 2099:
            return False
    return True


def _cjk_plausible(m: regex.Match, sentence: str) -> bool:
    """Reject Korean and Japanese readings that are dates, not amounts: a day after a month ("4월 22일",
    "12月29日", "매월 1일") and a year from 1900 on ("2026년")."""
    if _CJK_DATE_BEFORE.search(sentence[: m.start()]):
        return False
    return not (m.group("unit") in ("년", "年", "年間") and 1900 <= _number(m.group("lo")) <= 2099)


def _cjk_value(m: regex.Match, sentence: str, statement: str, row: str) -> Value:
    """The Korean or Japanese amount ``m`` (`_CJK_VALUE`) as a Value; its bound comes from the words right
    after it (`_CJK_MAX_AFTER`, `_CJK_MIN_AFTER`, past a particle) or right before it (최대, 最低)."""
    kind, factor = CJK_UNITS[m.group("unit")]
    before = sentence[: m.start()].rstrip(" *")
    if kind == "duration" and factor == _DAY and before.endswith(("영업일 기준", "営業日で")):
        kind, factor = "business_days", 1.0  # "영업일 기준 7일": 7 business days
    lo = _number(m.group("lo"))
    hi = _number(m.group("hi")) if m.group("hi") else lo
    after = sentence[m.end():].lstrip(" *")
    afters = (after, _CJK_PARTICLE.sub("", after, count=1))  # "30일 이내" and "30일이 지나면"
    bound = ("max" if any(a.startswith(_CJK_MAX_AFTER) for a in afters) or before.endswith(_CJK_MAX_BEFORE)
             else "min" if any(a.startswith(_CJK_MIN_AFTER) for a in afters) or before.endswith(_CJK_MIN_BEFORE)
             else "")
    return Value(kind=kind, unit=kind, magnitude=(lo * factor, hi * factor), text=m.group(0).strip(), bound=bound,
                 context=_context(sentence, m.start(), m.end()), sentence=sentence, statement=statement, row=row)


def _value(m: regex.Match, sentence: str, statement: str, left: int, right: int, row: str) -> Value | None:
    after = sentence[m.end():]
    per, consumed = _per_phrases(after)
    if m.group("money") or m.group("money2"):
        before = bool(m.group("money"))
        scale = (m.group("mscale" if before else "mscale2") or "").strip().lower()
        amount = _number(m.group("mval" if before else "mval2")) * {"k": 1e3, "million": 1e6, "m": 1e6}.get(scale, 1.0)
        kind, unit, magnitude = "money", CURRENCIES[_currency(m)], (amount, amount)
    elif m.group("version"):
        kind = unit = "version"
        parts = [int(p) for p in m.group("vval").split(".")] + [0, 0]
        version = parts[0] + parts[1] * 1e-3 + parts[2] * 1e-6
        magnitude = (version, version)
        per, consumed = [], 0
    else:
        lo = _number(m.group("lo"))
        hi = _number(m.group("hi")) if m.group("hi") else lo
        if hi < lo:  # "5 to 3" is not a range: e.g. a score "5-3"
            return None
        if m.group("rate") or m.group("rshort"):
            seconds = _RATE_TIME[m.group("rtime").lower()] if m.group("rate") else (
                {"rps": 1.0, "qps": 1.0, "rpm": 60.0}[m.group("rshort").lower()])
            kind, unit, factor, per, consumed = "rate", "rate", 1.0 / seconds, [], 0
        elif m.group("pct"):
            kind, factor = "percent", 1.0
            unit = kind
        elif m.group("unit"):
            kind, factor = UNITS[regex.sub(r"\s+", " ", m.group("unit").lower())]
            unit = kind
        else:
            kind, unit, factor = "count", "count:" + m.group("count").lower(), 1.0
        magnitude = (lo * factor, hi * factor)
    labelled = _label_per(sentence[left:m.start()]) if not per and kind not in ("version", "rate") else []
    unit += "".join("/" + p for p in per or labelled)
    modified = _MODIFIED.match(after) if m.group("unit") and "-" in m.group(0) else None
    if modified:  # "a 40-hour week" describes the week, it states no amount of hours: compare only with weeks
        unit += ":" + modified.group(1).lower()
    return Value(
        kind=kind,
        unit=unit,
        magnitude=magnitude,
        text=m.group(0).strip(),
        bound=_bound(sentence[: m.start()], after),
        context=_context(sentence[left:right], m.start() - left, min(m.end() + consumed, right) - left),
        sentence=sentence,
        statement=statement,
        row=row,
        # a named allowance without a period ("10 paid sick days") is one per some period the page leaves unsaid
        period_open=(bool(labelled) and not PERIODS & set(labelled)) or bool(m.group("named") and not per and not labelled),
    )


def _label_per(before: str) -> list[str]:
    """The "per …" qualifiers of the label a value follows, when it follows one ("Price per user: €60",
    the table cell "Pro, Price per user: €60", "Monthly fee: $5", "Annual price per user: €540" → ["user"],
    ["user"], ["month"], ["user", "year"]: a period last, as a sentence says it); [] when
    the text before the value does not end in a label (a colon) or the label has none. The label starts
    after the last sentence mark, "·" or "|" before it."""
    text = before.rstrip(" *_`")
    if not text.endswith(":"):
        return []
    label = regex.split(r"[.!?;·|]", text[:-1])[-1].lower()
    found = [(m.start(), m.group(1) or m.group(2)) for m in _LABEL_PER.finditer(label)]
    found += [(m.start(), _PERIOD_ADJECTIVES[m.group(1)]) for m in _LABEL_PERIOD.finditer(label)]
    nouns = list(dict.fromkeys(noun[:-1] if noun.endswith("s") else noun for _, noun in sorted(found)))
    return sorted(nouns, key=lambda noun: noun in PERIODS)  # "Annual price per user" → per user per year


def _currency(m: regex.Match) -> str:
    """The currency sign or code of a money match of `_VALUE`, as written ("$", "€", "EUR")."""
    return (m.group("cur") or m.group("cur2") or m.group("cur3")).strip()


def _per_phrases(after: str) -> tuple[list[str], int]:
    """The "per …" qualifiers right after a value ("per user per month" → ["user", "month"]) and how many
    characters they take; they become part of the unit, not of the context."""
    found, consumed = [], 0
    while match := _PER.match(after[consumed:]):
        noun = (match.group("per") or match.group("per2")).lower()
        found.append(noun[:-1] if noun.endswith("s") else noun)
        consumed += match.end()
    return found, consumed


def _number(text: str) -> float:
    word = text.lower()
    return float(_WORD_NUMBERS[word]) if word in _WORD_NUMBERS else float(text.replace(",", ""))


def _bound(before: str, after: str) -> str:
    tail = " " + regex.sub(r"\s+", " ", before.lower()).strip()[-20:]
    head = regex.sub(r"\s+", " ", after.lower()).strip()[:12]
    if any(tail.endswith(" " + w) for w in _MIN_WORDS) or head.startswith(_MIN_AFTER):
        return "min"
    if any(tail.endswith(" " + w) for w in _MAX_WORDS) or head.startswith(_MAX_AFTER):
        return "max"
    return ""


def _context(sentence: str, start: int, end: int) -> tuple[str, ...]:
    """Content words between the neighbouring values: up to CONTEXT_BEFORE before, CONTEXT_AFTER after."""
    before = [t for t in tokenize(sentence[:start]) if t not in _CONTEXT_STOP and not t[0].isdigit()]
    after = [t for t in tokenize(sentence[end:]) if t not in _CONTEXT_STOP and not t[0].isdigit()]
    return tuple(before[-CONTEXT_BEFORE:] + after[:CONTEXT_AFTER])


def _mask(sentence: str, matches: list[regex.Match], cjk: list[regex.Match] = ()) -> str:
    """``sentence`` with each value (``matches`` of `_VALUE`, ``cjk`` of `_CJK_VALUE`) replaced by "N" and its
    unit as written ("N seconds", "N%", "$N", "N일")."""
    spans = []
    for m in matches:
        unit = (m.group("named") or "") + (m.group("unit") or m.group("count") or m.group("rate") or m.group("rshort") or "")
        sign = _currency(m) if m.group("money") or m.group("money2") else ""
        label = (f"{sign}N" if m.group("money") and len(sign) == 1 else f"{sign} N" if m.group("money")
                 else f"N {sign}" if m.group("money2")
                 else "version N" if m.group("version") else f"N {unit}".strip())
        spans.append((m.start(), m.end(), "N%" if m.group("pct") else label))
    spans += [(m.start(), m.end(), "N" + m.group("unit")) for m in cjk]
    out, last = [], 0
    for start, end, label in sorted(spans):
        out += [sentence[last:start], label]
        last = end
    out.append(sentence[last:])
    return "".join(out)
