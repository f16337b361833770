"""Why a 👎: the private follow-up that offers the reasons, and the click on one of them (issue 9 item 8).

After a 👎 the voter's ephemeral confirmation carries one button per reason (DESIGN.md: outdated · wrong ·
incomplete · not what I asked). One click stores the reason in the voter's vote row
(`feedback.FeedbackStore.record_vote_reason`) and replaces the ephemeral message, through the click's
``response_url`` (ephemerals cannot be ``chat.update``d, bolt-python#1268), with a short thank-you.
Each button's value is ``"<reason>:<answer_id>"``, so an old message's buttons work after a restart.
"""

from __future__ import annotations

import asyncio
import re

import structlog

from feedback import VOTE_REASONS, FeedbackError, UnknownAnswer

log = structlog.get_logger(__name__)

#: action_id prefix of the reason buttons; each button is ``minerva_vote_reason:<reason>`` (action ids must
#: be unique within a block). Never rename: old messages still carry it.
VOTE_REASON_ACTION = "minerva_vote_reason"
#: Matches every reason button's action_id (for ``app.action``).
VOTE_REASON_PATTERN = re.compile(rf"^{VOTE_REASON_ACTION}(?::\w+)?$")
#: Button labels, in the order shown; the keys are `feedback.VOTE_REASONS`.
REASON_LABELS = {"outdated": "Outdated", "wrong": "Wrong", "incomplete": "Incomplete",
                 "not_what_i_asked": "Not what I asked"}
REASON_PROMPT = "What was wrong with it? One click tells the document owners (only you see this)."
REASON_THANKS = "Thanks — noted as *{label}*; the document owners will see it."
REASON_FAILED = "Sorry, I couldn't save the reason just now; please try again later."
REASON_UNKNOWN = "I no longer have a record of that answer, so the reason was not saved."

assert tuple(REASON_LABELS) == VOTE_REASONS, "a reason without a label (or a label without a reason)"


def reason_blocks(answer_id: str, confirmation: str) -> list[dict]:
    """The ephemeral confirmation of a 👎 with the reason buttons.

    Args:
        answer_id: the voted answer's id (carried by every button).
        confirmation: the vote's confirmation sentence, shown first (plain text from `bot.app`).

    Returns:
        A ``section`` with the confirmation and the prompt, and an ``actions`` block of four buttons.
    """
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"{confirmation}\n{REASON_PROMPT}"}},
        {
            "type": "actions",
            "block_id": "minerva_vote_reasons",
            "elements": [
                {"type": "button", "action_id": f"{VOTE_REASON_ACTION}:{reason}",
                 "text": {"type": "plain_text", "text": label}, "value": f"{reason}:{answer_id}"}
                for reason, label in REASON_LABELS.items()
            ],
        },
    ]


def parse_reason_value(value: str) -> tuple[str, str]:
    """``"outdated:<answer_id>"`` → ("outdated", answer_id). Raises ValueError on anything else."""
    reason, _, answer_id = (value or "").partition(":")
    if reason not in REASON_LABELS or not answer_id:
        raise ValueError(f"not a vote reason value: {value!r}")
    return reason, answer_id


async def store_reason(store, executor, body: dict, action: dict) -> str:
    """Store a click on a reason button with the clicker's vote; returns the text that confirms it.

    Args:
        store: the `feedback.FeedbackStore`.
        executor: thread pool for the database write.
        body: the ``block_actions`` payload (the clicking user is ``body["user"]["id"]``).
        action: the clicked button (its value is ``"<reason>:<answer_id>"``).
    """
    user = body.get("user", {}).get("id", "")
    try:
        reason, answer_id = parse_reason_value(action.get("value", ""))
        result = await asyncio.get_running_loop().run_in_executor(
            executor, store.record_vote_reason, answer_id, user, reason)
        text = REASON_THANKS.format(label=REASON_LABELS[reason])
        log.info("vote.reason", answer_id=answer_id, user=user, reason=reason, changed=result.changed)
    except (ValueError, UnknownAnswer) as exc:
        log.warning("vote.reason_rejected", reason=str(exc), value=action.get("value"))
        text = REASON_UNKNOWN
    except FeedbackError:
        log.exception("vote.reason_failed", value=action.get("value"))
        text = REASON_FAILED
    return text


async def confirm_reason(respond, text: str) -> None:
    """Replace the private reason prompt with ``text`` (Bolt's ``respond`` for the click's response_url)."""
    try:
        await respond(text=text, replace_original=True, response_type="ephemeral")
    except Exception:  # no response_url (or it expired): the reason is stored all the same
        log.warning("slack.reason_confirm_failed", exc_info=True)
