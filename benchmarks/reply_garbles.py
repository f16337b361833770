"""Issue 23: what a reader sees in Slack, counted. Every reply to kb-dev, kb-dev-v2 and the sample set, rendered
as Slack shows it (`bot.slack.blocks.answer_blocks`, the mrkdwn of its section blocks), checked for each garble the
issue names.

Usage:
    python benchmarks/reply_garbles.py [--real-home var-real] [--sample-home var] [--examples 3]
        [--out benchmarks/results/reply_garbles.json]

Counted per garble: replies with at least one, and up to ``--examples`` of them (question id and the piece).

- ``raw_markdown``: Markdown Slack does not render: ``**``, ``__``, ``[label](target)``, a link left open before a
  citation mark (``[OLU Job [1]``), a heading's ``#`` at
  the start of a line;
- ``relative_link``: a link target that only works on the source site: ``#anchor``, ``../``, ``./``, a bare
  ``page.md`` or ``page.md#…``;
- ``site_tag``: ``{% … %}``, ``{{ … }}``, a Hugo shortcode ``{{< … >}}``, a "Full context" leftover, a PyMdown
  block's ``///`` fence, an HTML element's tag;
- ``empty_parentheses``: ``()`` or ``( )`` outside code, where a removed link or tag left a hole;
- ``colon_without_list``: a line of the direct answer ending on ":" with no item or code after it (or after the
  lead-in that follows it: a tab's label "pip:" under "To install … along with Pydantic:");
- ``repeated_sentence``: a sentence (≥ 6 words) said twice: in the direct answer and a quote below, or twice in
  the direct answer;
- ``abbreviation_cut``: a piece ending on "e.g." / "i.e." / "vs." / "cf." followed by a citation mark or the
  end of a line: a sentence split after an abbreviation ("etc." may end a sentence);
- ``english_frame``: a Korean or Japanese question whose reply's labels (buttons, notes) are English.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _output import emit  # noqa: E402
from bot.slack.blocks import answer_blocks  # noqa: E402
from bot.cli.logs import configure_logging  # noqa: E402
from config import load_settings  # noqa: E402
from knowledge import KnowledgeBase  # noqa: E402
from knowledge.calibration import load_questions  # noqa: E402
from knowledge.markdown_tree import HTML_NAMES  # noqa: E402

SHARED = ROOT.parent / "shared"
_CODE = re.compile(r"```.*?```|`[^`\n]+`", re.S)
_CHECKS = {
    "raw_markdown": re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__|(?<!\\)\[[^\]\n]+\]\([^)\n]*\)|^#{1,6} "
                              r"|\[[^\]\n\[]{1,80}(?= \[\d+\])", re.M),  # or a link left open: "[OLU Job [1]"
    "relative_link": re.compile(r"<(?:#|\.\.?/)[^|>]*\||\]\((?:#|\.\.?/)[^)]*\)|<[\w./-]+\.md(?:#[^|>]*)?\||"
                                r"\]\([\w./-]+\.md(?:#[^)]*)?\)"),
    # site tags and the site's own markup: Jekyll/Hugo tags, PyMdown blocks, tabs (=== "…") and admonitions
    # (!!! note), MkDocs attribute lists ({#anchor}, {: .class}), HTML elements' tags (an accordion's <button>)
    "site_tag": re.compile(r"\{%.*?%\}|\{\{.*?\}\}|\{\{<|Full context|(?:^|\s)///(?:\s|$)|^(?:> )?=== \"|"
                           r"^(?:> )?[!?]{3}\+? ?\w|\{#[\w-]+\}|\{:[^}\n]*\}|"
                           r"</?(?:" + "|".join(HTML_NAMES) + r")\b[^>]*>",
                           re.S | re.M),
    "empty_parentheses": re.compile(r"\(\s*\)"),
    "abbreviation_cut": re.compile(r"\b(?:e\.g|i\.e|vs|cf)\.(?=\s*(?:\[\d+\])?\s*$)", re.M | re.I),
}
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")
_ENGLISH_LABELS = ("Was this helpful", "Report a wrong answer", "Low confidence", "Sources disagree")


def texts_of(blocks: list[dict]) -> list[str]:
    """Every mrkdwn/plain text a reader sees in ``blocks`` (sections, context elements, button labels)."""
    out = []
    for block in blocks:
        if block.get("text"):
            out.append(block["text"].get("text", ""))
        for element in block.get("elements", []) or []:
            text = element.get("text")
            out.append(text.get("text", "") if isinstance(text, dict) else (text or ""))
    return out


def _flat(text: str) -> str:
    """``text`` lower-cased on one line, without citation marks, list bullets or quote markers."""
    text = re.sub(r"\s*\[\d+\]", "", text)
    text = re.sub(r"(?m)^\s*(?:[•>]\s*)+", "", text)
    return " ".join(text.split()).lower()


def _long_sentences(text: str) -> list[str]:
    """The sentences of ``text`` of six words or more, as `_flat` reads them, one per list line too."""
    out = []
    for line in text.splitlines():
        out += [plain for sentence in _SENTENCE.split(_flat(line)) if len((plain := sentence.strip()).split()) >= 6]
    return out


def garbles(answer, question: dict) -> dict[str, str]:
    """The garbles of one reply: name → the first offending piece."""
    if answer.refused:
        return {}
    blocks = answer_blocks(answer)
    shown = "\n".join(texts_of(blocks))
    # code is not prose (a word keeps "(`limit`)" from reading as "( )"); a page's "<" is "&lt;" in Slack's text
    prose = _CODE.sub("CODE", shown).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    found = {}
    for name, pattern in _CHECKS.items():
        match = pattern.search(prose)
        if match:
            found[name] = prose[max(0, match.start() - 40):match.end() + 20].replace("\n", " ⏎ ")
    lines, in_code = [], False
    for line in answer.direct_answer.splitlines():
        if line.strip().startswith("```"):
            in_code = not in_code
            lines.append("```")
        elif line.strip() and not in_code:  # a comment in code ("# with the `email` extra:") is no lead-in
            lines.append(re.sub(r"\s*\[\d+\]$", "", line.strip()))

    def followed(i: int) -> bool:  # by its items or code, or by a lead-in that is (a tab's label "pip:")
        after = lines[i + 1] if i + 1 < len(lines) else ""
        return bool(re.match(r"^(?:•|◦|-|\d+[.)]|```)", after)) or (after.endswith(":") and followed(i + 1))

    for i, line in enumerate(lines):
        if line.endswith(":") and not followed(i):
            found.setdefault("colon_without_list", line[-80:])
    quoted = _flat(" ".join(answer.quotes))
    direct = _flat(answer.direct_answer)
    seen: set[str] = set()
    for plain in _long_sentences(answer.direct_answer):  # said again in a quote, or twice in the answer itself
        if plain in quoted or plain in seen:
            found.setdefault("repeated_sentence", plain[:80])
        seen.add(plain)
    for plain in _long_sentences(" ".join(answer.quotes)):  # a quote's sentence the answer already holds
        if plain in direct:
            found.setdefault("repeated_sentence", plain[:80])
    if question.get("lang") in ("ko", "ja") and any(label in shown for label in _ENGLISH_LABELS):
        found["english_frame"] = next(label for label in _ENGLISH_LABELS if label in shown)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real-home", default="var-real")
    parser.add_argument("--sample-home", default="var")
    parser.add_argument("--examples", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    configure_logging("ERROR", "console")  # stdout stays JSON
    sets = []
    if (SHARED / "eval" / "kb-dev-v2" / "questions.jsonl").exists():
        real = KnowledgeBase(load_settings(ROOT / "config" / "real-corpora.yaml"), Path(args.real_home))
        sets += [("kb-dev-v2", real, load_questions(SHARED / "eval" / "kb-dev-v2" / "questions.jsonl")),
                 ("kb-dev", real, load_questions(SHARED / "eval" / "kb-dev" / "questions.jsonl"))]
    sample = KnowledgeBase(load_settings(ROOT / "config" / "minerva.yaml"), Path(args.sample_home))
    sets.append(("sample", sample, load_questions(ROOT / "knowledge" / "sample_kb_questions.jsonl")))
    result = {"replies": 0, "refusals": 0, "garbles": {name: {"replies": 0, "examples": []} for name in
                                                       [*_CHECKS, "colon_without_list", "repeated_sentence",
                                                        "english_frame"]}}
    for name, kb, questions in sets:
        for q in questions:
            answer = kb.ask(q["question"])
            result["replies"] += 1
            result["refusals"] += answer.refused
            for garble, piece in garbles(answer, q).items():
                entry = result["garbles"][garble]
                entry["replies"] += 1
                if len(entry["examples"]) < args.examples:
                    entry["examples"].append({"set": name, "id": q.get("id", q["question"][:40]), "piece": piece})
    emit(result, args.out)


if __name__ == "__main__":
    main()
