"""Why a 👎: the private follow-up that offers the reasons, and the click on one of them (issue 9 item 8).

After a 👎 the voter's ephemeral confirmation carries one button per reason (DESIGN.md: outdated · wrong ·
incomplete · not what I asked). One click stores the reason in the voter's vote row
(`feedback.FeedbackStore.record_vote_reason`) and replaces the ephemeral message, through the click's
``response_url`` (ephemerals cannot be ``chat.update``d, bolt-python#1268), with a short thank-you.
Each button's value is ``"<reason>:<answer_id>"``, so an old message's buttons work after a restart.
Labels and confirmations are in the language of the answer voted on (its stored row's ``language``,
`answer_language`; English when the row cannot be read); action ids and values never change with it.
"""

from __future__ import annotations

import asyncio
import re

import structlog

from feedback import VOTE_REASONS, FeedbackError, UnknownAnswer
from knowledge.messages import DEFAULT_LANGUAGE, message, normalise_language

log = structlog.get_logger(__name__)

#: action_id prefix of the reason buttons; each button is ``minerva_vote_reason:<reason>`` (action ids must
#: be unique within a block). Never rename: old messages still carry it.
VOTE_REASON_ACTION = "minerva_vote_reason"
#: Matches every reason button's action_id (for ``app.action``).
VOTE_REASON_PATTERN = re.compile(rf"^{VOTE_REASON_ACTION}(?::\w+)?$")
#: Button labels in English, in the order shown; the keys are `feedback.VOTE_REASONS` (catalogue keys
#: ``vote_reason.<reason>``, `reason_labels` for another language).
REASON_LABELS = {reason: message(f"vote_reason.{reason}") for reason in ("outdated", "wrong", "incomplete",
                                                                         "not_what_i_asked")}
REASON_PROMPT = message("vote_reason.prompt")
REASON_THANKS = message("vote_reason.thanks", label="{label}")
REASON_FAILED = message("vote_reason.failed")
REASON_UNKNOWN = message("vote_reason.unknown")

assert tuple(REASON_LABELS) == VOTE_REASONS, "a reason without a label (or a label without a reason)"


def reason_labels(language: str = DEFAULT_LANGUAGE) -> dict[str, str]:
    """Reason → its button label in ``language``, in the order shown."""
    return {reason: message(f"vote_reason.{reason}", language) for reason in REASON_LABELS}


def answer_language(store, answer_id: str) -> str:
    """The language of the stored answer ``answer_id`` (``"en"``, ``"ko"``, ``"ja"``), for the words of a
    click's confirmation; English when the row is missing or cannot be read (a confirmation never fails)."""
    try:
        row = store.get_answer(answer_id) if answer_id else None
    except Exception:
        log.warning("vote.language_lookup_failed", answer_id=answer_id, exc_info=True)
        return DEFAULT_LANGUAGE
    return normalise_language((row or {}).get("language"))


def reason_blocks(answer_id: str, confirmation: str, language: str = DEFAULT_LANGUAGE) -> list[dict]:
    """The ephemeral confirmation of a 👎 with the reason buttons.

    Args:
        answer_id: the voted answer's id (carried by every button).
        confirmation: the vote's confirmation sentence, shown first (plain text from `bot.slack.app`).
        language: the words of the prompt and the buttons' labels (the voted answer's language).

    Returns:
        A ``section`` with the confirmation and the prompt, and an ``actions`` block of four buttons.
    """
    return [
        {"type": "section", "text": {"type": "mrkdwn",
                                     "text": f"{confirmation}\n{message('vote_reason.prompt', language)}"}},
        {
            "type": "actions",
            "block_id": "minerva_vote_reasons",
            "elements": [
                {"type": "button", "action_id": f"{VOTE_REASON_ACTION}:{reason}",
                 "text": {"type": "plain_text", "text": label}, "value": f"{reason}:{answer_id}"}
                for reason, label in reason_labels(language).items()
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
    """Store a click on a reason button with the clicker's vote; returns the text that confirms it, in the
    language of the answer voted on (English when that cannot be told).

    Args:
        store: the `feedback.FeedbackStore`.
        executor: thread pool for the database write.
        body: the ``block_actions`` payload (the clicking user is ``body["user"]["id"]``).
        action: the clicked button (its value is ``"<reason>:<answer_id>"``).
    """
    user = body.get("user", {}).get("id", "")
    try:
        reason, answer_id = parse_reason_value(action.get("value", ""))
        result, language = await asyncio.get_running_loop().run_in_executor(
            executor, _record_reason, store, answer_id, user, reason)
        text = message("vote_reason.thanks", language, label=reason_labels(language)[reason])
        log.info("vote.reason", answer_id=answer_id, user=user, reason=reason, changed=result.changed)
    except (ValueError, UnknownAnswer) as exc:
        log.warning("vote.reason_rejected", reason=str(exc), value=action.get("value"))
        text = REASON_UNKNOWN
    except FeedbackError:
        log.exception("vote.reason_failed", value=action.get("value"))
        text = REASON_FAILED
    return text


def _record_reason(store, answer_id: str, user: str, reason: str):
    """Stores the reason (`FeedbackStore.record_vote_reason`); returns its result and the answer's language."""
    return store.record_vote_reason(answer_id, user, reason), answer_language(store, answer_id)


async def confirm_reason(respond, text: str) -> None:
    """Replace the private reason prompt with ``text`` (Bolt's ``respond`` for the click's response_url)."""
    try:
        await respond(text=text, replace_original=True, response_type="ephemeral")
    except Exception:  # no response_url (or it expired): the reason is stored all the same
        log.warning("slack.reason_confirm_failed", exc_info=True)
