"""Block Kit for an owner's direct message (`jobs.owners.OwnerReport`, issue 11 item 9).

One message: a header naming how many pages and findings, then one section per page (title linked, its
findings with their summaries and evidence). Slack caps a message at 50 blocks and a section at 3,000
characters (https://api.slack.com/reference/block-kit/blocks), so pages past `MAX_PAGES` are counted, not
listed, and evidence is cut to `MAX_EVIDENCE_CHARS` per finding.
"""

from __future__ import annotations

from bot.slack.blocks import BLOCK_LIMIT, escape, section_blocks, slack_link, truncate
from bot.slack.digest_blocks import SlackMessage, page_buttons
from jobs.page_actions import PROPOSE_QUARANTINE, QUARANTINE
from jobs.owners import OwnerReport, PageFinding

MAX_PAGES = 20
MAX_EVIDENCE_CHARS = 600
#: What each finding asks of the owner.
TODO = {
    "bad_document": "readers mark answers from this page as wrong or unhelpful: check and correct it",
    "wrong_answer_spike": "several readers reported answers quoting this page as wrong today: read the reports; if "
                          "the page is wrong, take it out of search with the button below until it is fixed",
    "stale_high_citation": "often quoted but not updated for a long time: confirm or update it",
    "stale_document": "not updated for a long time: confirm or update it",
    "outdated_cited": "marked outdated but still quoted: update it or archive it",
    "contradiction": "another current page states something else: decide which is right and fix the other",
    "near_duplicate": "repeats another page: merge them or make the difference clear",
}


#: Findings whose summary already names both pages, their dates and what each says: their evidence line only
#: repeated it as "doc a: date …, doc id …; statements: kind duration, sentence a …" (a newcomer's owner message).
SUMMARY_SAYS_ALL = frozenset({"contradiction"})


def owner_message(report: OwnerReport) -> SlackMessage:
    """The direct message for ``report`` (text fallback and blocks)."""
    pages: dict[str, list[PageFinding]] = {}
    for finding in report.findings:
        pages.setdefault(finding.doc_id, []).append(finding)
    head = f"Minerva found {len(report.findings)} thing(s) to look at on {len(pages)} page(s) you own."
    blocks: list[dict] = [{"type": "section", "text": {"type": "mrkdwn", "text": f"*{head}*"}}]
    lines = [head]
    for doc_id, found in list(pages.items())[:MAX_PAGES]:
        first = found[0]
        # page titles, summaries and evidence are document and user text: escaped, so none can ping anyone
        title = escape(" ".join((first.title or doc_id).split()))
        name = slack_link(first.url or "", title) or title
        body = [f"*{name}* (`{escape(doc_id)}`)"]
        for f in found:
            body.append(f"• *{escape(f.alert)}* ({f.severity}): {escape(f.summary)}")
            if advice := _advice(f):
                body.append(f"   _{advice}_")
            evidence = "" if f.alert in SUMMARY_SAYS_ALL else _evidence(f.evidence)
            if evidence:
                body.append(f"   evidence: {escape(evidence)}")
        text = "\n".join(body)
        blocks += [{"type": "divider"}, *section_blocks(text)]  # cut on safe boundaries, never inside a link
        proposed = next((f for f in found if f.alert in PROPOSE_QUARANTINE and f.fingerprint), None)
        if proposed and len(blocks) < BLOCK_LIMIT - 3:  # room for the "… more pages" line
            blocks.append({"type": "actions", "block_id": f"owner_{proposed.fingerprint}",
                           "elements": page_buttons(proposed.fingerprint, QUARANTINE, (doc_id,), one_page=True)})
        lines.append(text)
    if len(pages) > MAX_PAGES:
        more = f"…and {len(pages) - MAX_PAGES} more page(s): `minerva review` lists them all."
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": more}]})
        lines.append(more)
    return SlackMessage(text=truncate("\n".join(lines), 3900), blocks=blocks)


#: What to do with a page that a newer version replaces: retire it, do not fix it (issue 26).
RETIRE = "a newer version replaces this page ({newer}): retire it (archive it or mark it outdated), do not fix it"


def _advice(finding: PageFinding) -> str:
    """The action that fits the finding: retiring an old copy when its evidence names a newer version, else the
    finding's usual request (`TODO`)."""
    newer = (finding.evidence.get("evidence") or {}).get("newer_version") or finding.evidence.get("newer_version")
    if newer and finding.alert in ("bad_document", "outdated_cited", "stale_high_citation", "stale_document"):
        return RETIRE.format(newer=newer)
    return TODO.get(finding.alert, "")


def _evidence(evidence: dict) -> str:
    """The evidence as a reader takes it in, not as JSON: "sample questions: Which Tock code …, …; answer ids:
    a-17, a-21", empty fields left out ("owner": "" said nothing), cut to MAX_EVIDENCE_CHARS (issue 26: raw
    JSON in owner messages)."""
    parts = [f"{key.replace('_', ' ')}: {_said(value)}" for key, value in evidence.items() if _said(value)]
    text = "; ".join(parts)
    return text if len(text) <= MAX_EVIDENCE_CHARS else text[:MAX_EVIDENCE_CHARS] + "…"


def _said(value, depth: int = 0) -> str:
    """One evidence value in words: lists of up to 5 values joined by commas, objects as "key value" pairs."""
    if value is None or value == "" or value == [] or value == {}:
        return ""
    if isinstance(value, dict) and depth < 2:
        return ", ".join(f"{k.replace('_', ' ')} {_said(v, depth + 1)}" for k, v in value.items()
                         if _said(v, depth + 1))
    if isinstance(value, (list, tuple)) and depth < 2:
        shown = [_said(v, depth + 1) for v in value[:5]]
        return "; ".join(x for x in shown if x) + (f" (+{len(value) - 5} more)" if len(value) > 5 else "")
    if isinstance(value, float):
        return f"{value:.3g}"
    return " ".join(str(value).split())
