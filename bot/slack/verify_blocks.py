"""Block Kit for an owner's verification message (`jobs.verification.VerificationAsk`, issue 25 item 3) and the
citation badges of replies.

The message names the page, why it is due, its signals in sentences (citations, 👎 reasons, open findings:
never JSON) and three buttons whose value is ``"{doc_id}|{asked_at}"``: the handler (`bot.slack.verify_buttons`)
reads everything else from the store and the index, so a button in an old message still works after a
restart, and a click answers the ask it came with and no later one. Words come from `knowledge.messages` in
the page's language; page titles and findings are document text and are escaped.
"""

from __future__ import annotations

from datetime import datetime

from bot.slack.blocks import escape, section_blocks, slack_link, truncate
from bot.slack.digest_blocks import SlackMessage
from knowledge.messages import message

#: action_ids of the three buttons. Never rename: old messages carry them.
VERIFY_OK_ACTION = "minerva_verify_ok"
VERIFY_UPDATE_ACTION = "minerva_verify_update"
VERIFY_NOT_MINE_ACTION = "minerva_verify_not_mine"
VERIFY_ACTIONS = (VERIFY_OK_ACTION, VERIFY_UPDATE_ACTION, VERIFY_NOT_MINE_ACTION)
#: Slack caps a button's value at 2,000 characters (https://api.slack.com/reference/block-kit/block-elements).
VALUE_LIMIT = 2000


def verification_message(ask) -> SlackMessage:
    """The direct message asking ``ask.owner`` to verify ``ask.doc_id`` (or reminding them once)."""
    language = ask.language
    title = page_name(ask.title, ask.url, ask.doc_id)
    head = message("verification.remind_head" if ask.reminder else "verification.ask_head", language, title=title)
    lines = [message("verification.interval", language, days=ask.interval_days, date=ask.due_at.date().isoformat()),
             *signal_sentences(ask.signals, language)]
    # the page's name is bold inside the sentence; a bold sentence around it would nest asterisks
    blocks = [*section_blocks(f"{head}\n" + "\n".join(lines)),
              {"type": "actions", "block_id": "minerva_verify", "elements": buttons(ask.doc_id, ask.asked_at, language)}]
    return SlackMessage(text=truncate(_plain(head), 300), blocks=blocks)


def signal_sentences(signals, language: str) -> list[str]:
    """The page's signals as sentences: citations, 👎 reasons ("Outdated ×2, Wrong ×1"), open findings."""
    days = signals.window_days
    out = [message("verification.citations", language, count=signals.citations, days=days) if signals.citations
           else message("verification.no_citations", language, days=days)]
    if signals.down_reasons:
        reasons = ", ".join(f"{_reason_label(r, language)} ×{n}" for r, n in
                            sorted(signals.down_reasons.items(), key=lambda kv: (-kv[1], kv[0])))
        out.append(message("verification.down_reasons", language, reasons=reasons))
    else:
        out.append(message("verification.no_down_reasons", language))
    if signals.findings:
        shown = "; ".join(escape(truncate(" ".join(f.split()), 200)) for f in signals.findings)
        out.append(message("verification.findings", language, findings=shown))
    else:
        out.append(message("verification.no_findings", language))
    return out


def buttons(doc_id: str, asked_at: str, language: str) -> list[dict]:
    """"Still correct" (primary), "Needs an update", "Not mine", each carrying ``doc_id|asked_at``."""
    value = f"{doc_id}|{asked_at}"[:VALUE_LIMIT]
    spec = ((VERIFY_OK_ACTION, "verification.button_ok", "primary"), (VERIFY_UPDATE_ACTION, "verification.button_update", None),
            (VERIFY_NOT_MINE_ACTION, "verification.button_not_mine", None))
    out = []
    for action_id, key, style in spec:
        button = {"type": "button", "action_id": action_id, "value": value,
                  "text": {"type": "plain_text", "text": message(key, language)}}
        if style:
            button["style"] = style
        out.append(button)
    return out


def parse_value(value: str) -> tuple[str, str]:
    """A button's ``(doc_id, asked_at)``. Raises ValueError on anything else."""
    doc_id, sep, asked_at = (value or "").rpartition("|")
    if not sep or not doc_id or len(asked_at) < 19 or not asked_at[:4].isdigit():
        raise ValueError(f"not a verification button value: {value!r}")
    return doc_id, asked_at


def answered_message(key: str, language: str, *, title: str, user: str, date: datetime | None = None) -> SlackMessage:
    """What the DM becomes once answered (its buttons gone): ``verification.verified`` / ``needs_update`` /
    ``handed_over`` naming who answered."""
    text = message(key, language, who=f"<@{user}>", title=title, date=date.date().isoformat() if date else "")
    return SlackMessage(text=truncate(_plain(text), 300), blocks=section_blocks(text))


def page_name(title: str, url: str, doc_id: str) -> str:
    """The page as mrkdwn: its escaped title, linked when it has a web address, else with its id."""
    name = escape(" ".join((title or doc_id).split()))
    return slack_link(url or "", f"*{name}*") or f"*{name}* (`{escape(doc_id)}`)"


def badge_text(verified_by: str | None, days_ago: int | None, overdue: bool, language: str, *, slack: bool) -> str:
    """A citation's badge: "verified by <@U…> 12 days ago" (``slack``; the bare id in a terminal) or
    "verification overdue"; "" when neither applies."""
    if overdue:
        return message("verification.badge_overdue", language)
    if verified_by and days_ago is not None:
        from knowledge.messages import age_text

        who = f"<@{verified_by}>" if slack else verified_by
        return message("verification.badge_verified", language, who=who, age=age_text(days_ago, language))
    return ""


def _reason_label(reason: str, language: str) -> str:
    try:
        return message(f"vote_reason.{reason}", language)
    except KeyError:  # a reason this version does not name: shown as stored
        return escape(reason)


def _plain(mrkdwn: str) -> str:
    """Notification text: the mrkdwn without its bold stars."""
    return mrkdwn.replace("*", "")
