"""Block Kit for alert digests and critical alerts, within Slack's limits.

A digest is one main message (header with counts per severity, one section per alert type with its top
items, a footer with the window and thresholds) and, when it does not all fit, thread replies with the
rest. Every item carries Ack and "Silence 24h" buttons whose value is the alert's fingerprint; the bot
reads the alert from SQLite by that value, so buttons in old digests keep working (bolt-python#264).
Limits (notes/slack.md): <= 50 blocks and about 13,000 characters per message, <= 3,000 characters per
section; alert text comes from documents and is escaped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import regex

from bot.slack.blocks import BLOCK_LIMIT, FALLBACK_LIMIT, SECTION_LIMIT, escape, slack_link, truncate
from bot.slack.experts import gap_button
from jobs.alerts import Notice
from jobs.digest import Digest, DigestGroup, DigestItem
from jobs.page_actions import QUARANTINE, RELEASE

#: action_ids of the digest buttons. Never rename: old digests carry them.
ALERT_ACK_ACTION = "minerva_alert_ack"
ALERT_QUARANTINE_ACTION = "minerva_alert_quarantine"
ALERT_RELEASE_ACTION = "minerva_alert_release"
ALERT_SILENCE_ACTION = "minerva_alert_silence"
#: Characters of block text per message; Slack rejects about 13,000 (msg_blocks_too_long).
MESSAGE_CHAR_BUDGET = 11_000
SUMMARY_LIMIT = 400
_LEADS = {"firing": "Critical alert", "escalated": "Escalated to critical", "reminder": "Still firing"}
#: The alert of a coverage gap (`jobs.signals.coverage.ALERT`): its items carry "Answer this once".
COVERAGE_GAP = "coverage_gap"
_ICONS = {"critical": ":red_circle:", "warning": ":large_orange_circle:", "info": ":large_blue_circle:"}


@dataclass(frozen=True)
class SlackMessage:
    """``text`` (notification fallback) and ``blocks`` for one chat.postMessage; ``fingerprints`` names the
    alerts whose items it carries (so a failed post leaves exactly those undelivered)."""

    text: str
    blocks: list[dict]
    fingerprints: tuple[str, ...] = ()


@dataclass(frozen=True)
class DigestMessages:
    """The main message and the thread replies carrying the overflow (possibly none)."""

    main: SlackMessage
    thread: list[SlackMessage]


def digest_messages(digest: Digest, *, top_items: int = 3, chart_attached: bool = False) -> DigestMessages:
    """Render ``digest``: up to ``top_items`` items per alert type in the main message, the rest in the thread.

    Items that would push the main message past 50 blocks or the character budget also go to the thread.
    """
    counts = digest.counts
    title = f"Minerva {digest.kind} digest · {digest.window_end.strftime('%Y-%m-%d')}"
    fallback = f"{title}: " + ", ".join(f"{counts.get(s, 0)} {s}" for s in ("critical", "warning", "info")) + " firing"
    head = [
        {"type": "header", "text": {"type": "plain_text", "text": truncate(title, 150), "emoji": True}},
        _section(_counts_line(digest)),
    ]
    main, used_chars = list(head), _chars(head)
    in_main: list[str] = []
    overflow: list[tuple[DigestGroup, list[DigestItem]]] = []
    for group in digest.groups:
        group_head = _section(_group_title(group))
        shown = 0
        for item in group.items[:top_items]:
            blocks = ([] if shown else [group_head]) + _item_blocks(item)
            note = 1 if len(group.items) > shown + 1 else 0  # room for "+N more in the thread"
            if (len(main) + len(blocks) + note + 1 > BLOCK_LIMIT  # + 1: the footer
                    or used_chars + _chars(blocks) > MESSAGE_CHAR_BUDGET):
                break
            main.extend(blocks)
            used_chars += _chars(blocks)
            in_main.append(item.fingerprint)
            shown += 1
        rest = group.items[shown:]
        if rest:
            overflow.append((group, rest))
            if shown:
                main.append(_context(f"+{len(rest)} more {escape(group.alert)} in the thread"))
    if digest.experts_waiting and len(main) < BLOCK_LIMIT - 1:
        main.append(_section(_waiting_text(digest)))
    if digest.empty and len(main) < BLOCK_LIMIT - 1:
        main.append(_section(_nothing_here(digest)))
    main.append(_context(_footer(digest, chart_attached, sum(len(rest) for _, rest in overflow))))
    thread = _overflow_messages(overflow)
    return DigestMessages(SlackMessage(_fallback(fallback), main, tuple(in_main)), thread)


def alert_messages(notices: list[Notice]) -> list[tuple[list[Notice], SlackMessage]]:
    """Critical alerts for the alert channel, batched: one message for alerts due at the same time (one page,
    not one per alert), split when a message would pass 50 blocks or the character budget.

    Returns:
        (the notices in the message, the message) pairs, in order.
    """
    batches: list[tuple[list[Notice], list[dict]]] = []
    for notice in notices:
        blocks = _alert_blocks(notice)
        if not batches or len(batches[-1][1]) + len(blocks) > BLOCK_LIMIT or \
                _chars(batches[-1][1] + blocks) > MESSAGE_CHAR_BUDGET:
            batches.append(([], []))
        batches[-1][0].append(notice)
        batches[-1][1].extend(blocks)
    messages = []
    for batch, blocks in batches:
        first = batch[0].alert
        lead = _LEADS.get(batch[0].kind, "Alert")
        text = f"{lead}: {first.alert} · {first.summary}" if len(batch) == 1 else \
            f"{len(batch)} critical alerts: " + ", ".join(sorted({n.alert.alert for n in batch}))
        messages.append((batch, SlackMessage(_fallback(text), blocks, tuple(n.alert.fingerprint for n in batch))))
    return messages


def _alert_blocks(notice: Notice) -> list[dict]:
    a = notice.alert
    item = DigestItem.of(a, new=notice.kind == "firing")
    return [_section(f":rotating_light: *{_LEADS.get(notice.kind, 'Alert')}: {escape(a.alert)}*"), *_item_blocks(item)]


def parse_alert_value(value: str) -> str:
    """The fingerprint a button carries (16 hex digits). Raises ValueError on anything else."""
    value = (value or "").strip()
    if not regex.fullmatch(r"[0-9a-f]{4,64}", value):
        raise ValueError(f"not an alert fingerprint: {value!r}")
    return value


def parse_page_value(value: str) -> tuple[str, str | None]:
    """A page button's ``(fingerprint, doc_id or None)`` (`page_buttons`). Raises ValueError on anything else."""
    fingerprint, _, doc_id = (value or "").partition("|")
    return parse_alert_value(fingerprint), (doc_id.strip() or None)


# --- pieces ---------------------------------------------------------------------------------------------


def _nothing_here(digest: Digest) -> str:
    """What an empty digest says: all clear, or, when alerts fire elsewhere (the counts line counts every route),
    that none of them is this digest's: "2 warning firing" over "Nothing firing" read as a contradiction."""
    if not any(digest.counts.get(s, 0) for s in ("critical", "warning", "info")):
        return "Nothing firing on this route. :white_check_mark:"
    other = "daily" if digest.kind == "weekly" else "weekly"
    return (f"None of them is this digest's: alerts go by severity (critical at once, warning daily, info weekly); "
            f"see the {other} digest or `minerva alerts`.")


def _counts_line(digest: Digest) -> str:
    parts = [f"{_ICONS[s]} *{digest.counts.get(s, 0)}* {s}" for s in ("critical", "warning", "info")]
    extra = []
    if digest.muted:
        extra.append(f"{digest.muted} muted (silenced, acknowledged or re-indexing)")
    if digest.resolved:
        extra.append(f"{digest.resolved} resolved in this window")
    return " · ".join(parts) + " firing" + ("\n" + " · ".join(extra) if extra else "")


def _group_title(group: DigestGroup) -> str:
    return f"{_ICONS[group.severity]} *{escape(group.alert)}* — {len(group.items)} firing"


def _item_blocks(item: DigestItem) -> list[dict]:
    labels = " ".join(f"`{escape(k)}={escape(str(v))}`" for k, v in sorted(item.labels.items()))
    facts = [f"value *{_num(item.value)}* vs threshold *{_num(item.threshold)}*"]
    if item.n is not None:
        facts.append(f"n={item.n}")
    facts.append(f"since {_since(item.since)}" + (" :new:" if item.new else ""))
    link = _link(item.link)
    if link:
        facts.append(link)
    text = f"{escape(truncate(item.summary, SUMMARY_LIMIT))}\n{labels}\n{' · '.join(facts)} · `{item.fingerprint}`"
    return [
        _section(truncate(text, SECTION_LIMIT)),
        {"type": "actions", "block_id": f"alert_{item.fingerprint}", "elements": [
            {"type": "button", "action_id": ALERT_ACK_ACTION, "value": item.fingerprint,
             "text": {"type": "plain_text", "text": "Ack"}},
            {"type": "button", "action_id": ALERT_SILENCE_ACTION, "value": item.fingerprint,
             "text": {"type": "plain_text", "text": "Silence 24h"}},
            *page_buttons(item.fingerprint, item.action, item.documents),
            *([gap_button(item.fingerprint)] if item.alert == COVERAGE_GAP else []),  # the owner answers it once
        ]},
    ]


def _waiting_text(digest: Digest) -> str:
    """"Waiting for an expert": the count of reminded, unanswered requests and the oldest few."""
    lines = [f":hourglass: *Waiting for an expert* — {digest.experts_waiting} unanswered after a reminder"]
    for request in digest.oldest_waiting:
        # no <@asker>: a mention in a daily digest would notify the asker every day until someone answers
        lines.append(f"• asked {request['requested_at'][:10]}: “{escape(truncate(request['question'], 200))}”")
    return truncate("\n".join(lines), SECTION_LIMIT)


def page_buttons(fingerprint: str, action: str, documents: tuple[str, ...], *, one_page: bool = False) -> list[dict]:
    """The button that takes an alert's pages out of search ("quarantine", with Slack's confirmation dialog: it
    changes what everyone is answered from) or puts a quarantined page back ("release"); none for other
    alerts. Only the pages' owners and ``slack.admins`` may use them (`bot.slack.alert_buttons`, issue 26).
    ``one_page``: the button acts on ``documents[0]`` alone (an owner's message names one page; its value is
    ``"{fingerprint}|{doc_id}"``, `parse_page_value`)."""
    value = f"{fingerprint}|{documents[0]}" if one_page and documents else fingerprint
    if action == QUARANTINE:
        pages = ", ".join(documents)
        return [{"type": "button", "action_id": ALERT_QUARANTINE_ACTION, "value": value, "style": "danger",
                 "text": {"type": "plain_text", "text": "Take out of search"},
                 "confirm": {"title": {"type": "plain_text", "text": "Take out of search?"},
                             "text": {"type": "mrkdwn", "text": truncate(
                                 f"No question will be answered from {escape(pages)} until someone puts it back. "
                                 "Only the page's owner or an admin can do this.", 300)},
                             "confirm": {"type": "plain_text", "text": "Take out"},
                             "deny": {"type": "plain_text", "text": "Cancel"}}}]
    if action == RELEASE:
        return [{"type": "button", "action_id": ALERT_RELEASE_ACTION, "value": value, "style": "primary",
                 "text": {"type": "plain_text", "text": "Put back in search"}}]
    return []


def _overflow_messages(overflow: list[tuple[DigestGroup, list[DigestItem]]]) -> list[SlackMessage]:
    messages: list[SlackMessage] = []
    blocks: list[dict] = []
    carried: list[str] = []
    chars = 0
    for group, items in overflow:
        current_group = None
        for item in items:
            item_blocks = _item_blocks(item)
            head = [] if current_group is group and blocks else [_section(_group_title(group) + " (continued)")]
            if blocks and (len(blocks) + len(head) + len(item_blocks) > BLOCK_LIMIT
                           or chars + _chars(head + item_blocks) > MESSAGE_CHAR_BUDGET):
                messages.append(SlackMessage(f"Digest, continued ({len(messages) + 1})", blocks, tuple(carried)))
                blocks, carried, chars = [], [], 0
                head = [_section(_group_title(group) + " (continued)")]
            blocks.extend(head + item_blocks)
            carried.append(item.fingerprint)
            chars += _chars(head + item_blocks)
            current_group = group
    if blocks:
        messages.append(SlackMessage(f"Digest, continued ({len(messages) + 1})", blocks, tuple(carried)))
    return messages


def _footer(digest: Digest, chart_attached: bool, in_thread: int) -> str:
    window = f"{digest.window_start.strftime('%Y-%m-%d %H:%M')} – {digest.window_end.strftime('%Y-%m-%d %H:%M')} UTC"
    rules = []
    for group in digest.groups:
        limits = ", ".join(_num(t) for t in group.thresholds) or "–"
        rules.append(f"{escape(group.alert)}: threshold {limits}, fires after {group.fire_after} run(s), "
                     f"repeats every {group.repeat_interval_hours:g} h")
    text = f"Window: {window}"
    if rules:
        text += " · " + "; ".join(rules)
    if in_thread:
        text += f" · {in_thread} more item(s) in the thread"
    if chart_attached:
        text += " · weekly quality chart in the thread"
    return truncate(text + " · buttons: Ack stops reminders until resolved; Silence mutes 24 h", 2000)


def _section(mrkdwn: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": truncate(mrkdwn, SECTION_LIMIT)}}


def _context(mrkdwn: str) -> dict:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": mrkdwn}]}


def _chars(blocks: list[dict]) -> int:
    total = 0
    for block in blocks:
        text = block.get("text")
        if isinstance(text, dict):
            total += len(text.get("text", ""))
        for element in block.get("elements", []):
            if isinstance(element.get("text"), str):
                total += len(element["text"])
    return total


def _link(url: str) -> str:
    if not url.startswith(("http://", "https://")):
        return f"`{escape(truncate(url, 200))}`" if url else ""
    return slack_link(url, "open")


def _since(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _num(value) -> str:
    if value is None:
        return "–"
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _fallback(text: str) -> str:
    # Cut before escaping, with room for the entities, so a cut never leaves half of "&amp;".
    return escape(truncate(text.replace("\n", " "), FALLBACK_LIMIT // 5 * 4))
