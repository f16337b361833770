"""Identifiers stated in a text: codes, namespaces, channels and config values (issue 11 item 6).

`knowledge.values` reads numbers with units; this module reads the other things two pages can state
differently for the same subject, with the same interface as `knowledge.values.Value` (``unit``,
``context``, ``statement``, ``row``, ``position``, ``same_amount``, ``conflicts_with``), so
`knowledge.contradictions` compares both kinds with one finder. Kinds and where each rule comes from:

- ``code``: a numeric code of a time-tracking line or similar, 3–5 digits: ``#670``, ``Line #1145``,
  ``Line 1858``, ``969 - GSA-mandated Non-Billable Work`` and ``Out of Office - #670`` (the TTS handbook's Tock
  pages, corpus/tts-handbook/2025-02/tools/tock.md, training-and-development/olu.md), and numeric cells of a
  table under a heading that says "code"/"line"/"ID" (about-us/tts-consulting/operations/tock.md). "Suite
  #200", "room #5685" and "issue #12" are addresses and references, not codes.
- ``namespace``: ``namespace `monitoring```, ```kube-system` namespace``, ``-n kube-system`` /
  ``--namespace=x`` in inline code (corpus/prometheus-runbooks); ``$NAMESPACE`` and ``<namespace>`` are
  placeholders and skipped. Fenced code blocks are dropped before reading (`values.clean_text`), as for values.
- ``channel``: Slack channels ``#ops-oncall`` (a letter and a hyphen or dot, so "#670" is a code) and the
  handbook's ``{% slack_channel "tock" %}`` tag.
- ``config``: inline code ``key: value``, ``key=value``, ``--flag value``, ``--flag=value``; comparable
  only for the same key or flag (``unit`` ``config:retention.days``).
- ``name``: a backticked token next to the noun saying what it is (```jobs-high` queue``, ``bucket `logs```);
  comparable only with the same noun (``unit`` ``name:queue``).

A code's ``label`` names what it is for (the name beside it, or its table row): two codes are about the
same thing when one label's words are all in the other's ("GSA-mandated" ⊂ "GSA-mandated Non-Billable
Work"). Other kinds have no label; the finder judges their statements as it does values'.

Example::

    >>> [(i.kind, i.text, i.label) for i in extract_identifiers("Code OLU time as `969 - GSA-mandated Work` in Tock.")]
    [('code', '969', ('gsa', 'mandat', 'work'))]
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from knowledge.sentences import sentences_of
from knowledge.tokenize import tokenize
from knowledge.values import _CONTEXT_STOP, CONTEXT_AFTER, CONTEXT_BEFORE, MARKUP, _blocks, clean_text

#: Kinds this module produces (the finder's `Contradiction.kind`).
IDENTIFIER_KINDS = frozenset({"code", "namespace", "channel", "config", "name"})
#: Words in a table's heading or column that make its numeric cells codes.
CODE_HEADING = regex.compile(r"\b(?:codes?|lines?|ids?|numbers?)\b", regex.IGNORECASE)
#: Words right before "#NNN" that make it an address or a reference, not a code.
_NOT_CODE_BEFORE = regex.compile(r"(?:suite|room|ste|unit|floor|issue|pr|pull request|ticket|no|number|step)\.?\s*$",
                                 regex.IGNORECASE)
#: Nouns that say what a backticked name is (kind ``name``).
NAME_NOUNS = ("queue", "topic", "bucket", "service", "label", "database", "table", "role", "group", "secret",
              "configmap", "deployment", "daemonset", "statefulset", "index", "cluster")
_CODE = r"(?P<code>\d{3,5})"
_PATTERNS = [
    # "969 - GSA-mandated Non-Billable Work" in backticks or bold: the code first, then its name
    ("code_named", regex.compile(r"(?:`|\*\*)\s*(?:line\s*)?#?" + _CODE + r"\s*[-–—]\s*(?P<label>[^`*]{3,80}?)\s*(?:`|\*\*)",
                                 regex.IGNORECASE)),
    # "**Out of Office - #670:**", "COE /Non-Billable Hours (Line #1145)": a name, then the code
    ("code_after", regex.compile(r"(?:(?<=\*\*)|^)(?P<label>[^*:#()`]{3,80}?)\s*(?:[-–—]|\()\s*(?:line\s*)?\\?#" + _CODE
                                 + r"\b", regex.IGNORECASE)),
    ("code", regex.compile(r"(?<![\w/&#])(?:line\s+#?|\\?#)" + _CODE + r"\b", regex.IGNORECASE)),
    ("namespace", regex.compile(r"\bnamespaces?\s+`(?P<id>[a-z0-9][a-z0-9-]{1,62})`|`(?P<id2>[a-z0-9][a-z0-9-]{1,62})`"
                                r"\s+namespace\b|`[^`]*?(?:\s-n\s+|--namespace[= ])(?P<id3>[a-z0-9][a-z0-9-]{1,62})[^`]*`",
                                regex.IGNORECASE)),
    ("channel", regex.compile(r"(?<![\w/&\\])#(?P<id>[a-z0-9][a-z0-9_]*[-.][a-z0-9._-]*[a-z0-9])\b|"
                              r"slack_channel\s+[\"'](?P<id2>[^\"']+)[\"']", regex.IGNORECASE)),
    ("config", regex.compile(r"`(?:(?P<key>--[a-z][\w.-]*)(?:=|\s+(?=[^-\s]))|(?P<key2>[a-z_][\w.-]*)\s*[:=]\s*)"
                             r"(?P<id>[^`\s]{1,60})`", regex.IGNORECASE)),
    ("name", regex.compile(r"`(?P<id>[a-z0-9][\w./-]{1,62})`\s+(?P<noun>" + "|".join(NAME_NOUNS) + r")\b|\b(?P<noun2>"
                           + "|".join(NAME_NOUNS) + r")\s+`(?P<id2>[a-z0-9][\w./-]{1,62})`", regex.IGNORECASE)),
]


@dataclass(frozen=True)
class Identifier:
    """One identifier stated in a text; duck-types `knowledge.values.Value` for the contradiction finder.

    Attributes:
        kind: "code", "namespace", "channel", "config" or "name".
        unit: comparability key: "code", "namespace", "channel", "config:<key>", "name:<noun>".
        text: the identifier as written, without markup ("670", "kube-system", "ops-oncall", "30d").
        label: stemmed words naming what a code is for (its name or table row); () when the text gives none.
        context: stemmed content words around it in its sentence (up to 6 before, 4 after).
        sentence: the sentence holding it, Markdown stripped.
        statement: ``sentence`` with the identifier replaced by "ID".
        row: for a table cell, its row's first cell in lower case; "" outside tables.
        position: its place among the identifiers of its sentence, from 0.
        bound, magnitude: always "" and (0.0, 0.0): identifiers have no bounds or amounts.
    """

    kind: str
    unit: str
    text: str
    label: tuple[str, ...]
    context: tuple[str, ...]
    sentence: str
    statement: str
    row: str = ""
    position: int = 0
    bound: str = ""
    magnitude: tuple[float, float] = (0.0, 0.0)

    @property
    def key(self) -> str:
        """The identifier compared: lower case, "#" and "line" dropped."""
        return self.text.lower().strip()

    def same_amount(self, other) -> bool:
        """True when both state the same identifier (case-insensitive)."""
        return getattr(other, "key", None) == self.key

    def conflicts_with(self, other) -> bool:
        """True when both are identifiers of the same unit that differ; cells of two different table rows
        never conflict (as for values)."""
        if not isinstance(other, Identifier) or self.unit != other.unit:
            return False
        if self.row and other.row and self.row != other.row:
            return False
        return self.key != other.key

    def same_subject(self, other) -> float | None:
        """1.0 / 0.0 when the labels decide whether two codes name the same thing, None when they cannot.

        Rule: both labelled → 1.0 when every word of the shorter label is in the longer one, else 0.0
        ("gsa-mandated" vs "gsa-mandated non-billable work" → 1.0; "18F non-billable work" vs
        "gsa-mandated non-billable work" → 0.0, two lines of one timesheet).
        """
        if not (self.label and other.label):
            return None
        small, large = sorted((set(self.label), set(other.label)), key=len)
        return 1.0 if small <= large else 0.0


#: A setting in a negated clause is what not to do, not what the page states ("you can no longer run with
#: `skip_on_failure=False`", "the `skip_on_failure=False` option is no longer available", beside "you must specify
#: `skip_on_failure=True`", were reported as pages stating different values): a negation within this many
#: characters before or after it, in the same clause.
NEGATION_REACH = 40
_NEGATION = r"\b(?:not|no longer|never|cannot|can't|don't|doesn't|won't|without|avoid)\b"
_NEGATED_BEFORE = regex.compile(_NEGATION + r"[^.;:!?]*$", regex.I)
_NEGATED_AFTER = regex.compile(r"^[^.;:!?]*?" + _NEGATION, regex.I)


def _negated(raw: str, start: int, end: int) -> bool:
    """Whether the setting at ``raw[start:end]`` sits in a negated clause (`NEGATION_REACH`)."""
    return bool(_NEGATED_BEFORE.search(raw[max(0, start - NEGATION_REACH):start])
                or _NEGATED_AFTER.search(raw[end:end + NEGATION_REACH]))


def extract_identifiers(text: str) -> list[Identifier]:
    """Every identifier stated in ``text`` (Markdown allowed), in reading order; see the module docstring."""
    found: list[Identifier] = []
    heading = ""
    for block in _blocks(clean_text(text)):
        if isinstance(block, list):  # table row: numeric cells under a "codes" heading are codes
            for position, (cell_sentence, row) in enumerate(block):
                match = regex.search(r":\s*\**\s*#?(\d{3,5})\s*\**\s*$", cell_sentence)
                column = cell_sentence[len(row):].rsplit(":", 1)[0]
                if match and (CODE_HEADING.search(heading) or CODE_HEADING.search(column)):
                    clean_row = MARKUP.sub("", row).strip().lower()
                    sentence = MARKUP.sub("", cell_sentence).strip()
                    found.append(Identifier(
                        "code", "code", match.group(1), _label(clean_row), _words(sentence.replace(match.group(1), " ")),
                        sentence, MARKUP.sub("", cell_sentence[:match.start(1)] + "ID"), clean_row, position))
            continue
        if regex.match(r"#{1,6}\s", block):
            heading = block
            continue
        for part in sentences_of(block):
            found.extend(_from_sentence(part))
    return found


def _from_sentence(raw: str) -> list[Identifier]:
    spans: list[tuple[int, int, str, str, tuple[str, ...], str]] = []  # start, end, kind, text, label, unit

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e, *_ in spans)

    for name, pattern in _PATTERNS:
        for m in pattern.finditer(raw):
            if name.startswith("code"):
                start, end = m.span("code")
                if name == "code" and _NOT_CODE_BEFORE.search(raw[:m.start()]):
                    continue
                label = _label(m.group("label")) if "label" in m.groupdict() and m.group("label") else ()
                if free(start, end):
                    spans.append((start, end, "code", m.group("code"), label, "code"))
            elif name in ("namespace", "channel"):
                group = next(g for g in ("id", "id2", "id3") if g in m.groupdict() and m.group(g))
                if free(*m.span(group)):
                    spans.append((*m.span(group), name, m.group(group).lower(), (), name))
            elif name == "config":
                if free(*m.span("id")) and not _negated(raw, *m.span()):
                    spans.append((*m.span("id"), "config", m.group("id"), (),
                                  "config:" + (m.group("key") or m.group("key2")).lower()))
            else:
                group, noun = ("id", "noun") if m.group("id") else ("id2", "noun2")
                if free(*m.span(group)):
                    spans.append((*m.span(group), "name", m.group(group), (), "name:" + m.group(noun).lower()))
    if not spans:
        return []
    spans.sort()
    sentence = MARKUP.sub("", raw).strip(" -+\t")
    masked, last = [], 0
    for start, end, *_ in spans:
        masked += [raw[last:start], "ID"]
        last = end
    statement = MARKUP.sub("", "".join(masked + [raw[last:]])).strip(" -+\t")
    edges = [0] + [end for _s, end, *_ in spans]
    ends = [start for start, *_ in spans[1:]] + [len(raw)]
    out = []
    for position, ((start, end, kind, ident, label, unit), left, right) in enumerate(zip(spans, edges, ends)):
        before = _words(MARKUP.sub(" ", raw[left:start]))[-CONTEXT_BEFORE:]
        after = _words(MARKUP.sub(" ", raw[end:right]))[:CONTEXT_AFTER]
        out.append(Identifier(kind, unit, ident, label, tuple(before + after), sentence, statement, "", position))
    return out


def _words(text: str) -> list[str]:
    return [t for t in tokenize(text) if t not in _CONTEXT_STOP and not t[0].isdigit()]


def _label(text: str) -> tuple[str, ...]:
    """Stemmed content words of a code's name, without the words every code line shares."""
    words = [t for t in tokenize(text) if t not in _CONTEXT_STOP and not t.isdigit()]  # "18f" stays: it names a team
    return tuple(dict.fromkeys(t for t in words if t not in {"line", "code", "tock", "the", "for", "of"}))
