"""Ask an expert from a reply, and keep the expert's answer as knowledge (issue 25 items 1–2).

The flow, all through Slack's own surfaces:

1. Every reply and refusal carries "Ask an expert" (`ASK_EXPERT_ACTION`, value = the answer id) when someone
   can be asked (`whom_to_ask`). A click claims one request per answer in the store (`feedback.experts`:
   a double click, a Slack retry or a second replica claims nothing), posts the question, the bot's attempt
   and the asker to the experts with an "Answer" button, and confirms privately to the asker.
2. "Answer" (`EXPERT_ANSWER_ACTION`) opens a modal (``views.open``); its ``view_submission``
   (`EXPERT_MODAL`) resolves the request by one conditional update, so exactly one submission posts
   "Answered by @x" in the asker's thread, updates the experts' messages and keeps the answer; a later one
   is told who answered first. "the page cited is wrong" files an ``expert_correction`` review item on the
   cited page. "Answer this once" on a coverage gap (`GAP_ANSWER_ACTION`) opens the same modal for the gap's
   representative question; its answer is only kept (there is no thread).
3. A later question that means the same (`knowledge.KnowledgeBase.match_answer`, across en/ko/ja) is
   shown the kept answer first ("Answered by @x on 2026-12-04", with its own 👍/👎, `EXPERT_VOTE_ACTION`),
   then the usual page answer.

Handlers read everything from the store by the id the button or modal carries, so buttons in old messages
work after a restart. Every action_id here is shipped: never rename one.
"""

from __future__ import annotations

import asyncio
import functools
from concurrent.futures import Executor
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.blocks import BLOCK_LIMIT, escape, section_blocks, slack_reference, to_mrkdwn, truncate
from config import Settings, expert_target, slack_owner_id
from feedback import FeedbackError, InvalidRecord, UnknownAnswer
from feedback.windows import collection_of
from knowledge.language import detect_language
from knowledge.messages import message
from knowledge.types import Answer

log = structlog.get_logger(__name__)

ASK_EXPERT_ACTION = "minerva_ask_expert"
EXPERT_ANSWER_ACTION = "minerva_expert_answer"
GAP_ANSWER_ACTION = "minerva_gap_answer"
EXPERT_VOTE_ACTION = "minerva_expert_vote"
#: ``callback_id`` of the answer modal; its ``private_metadata`` is the request id, or ``gap:<fingerprint>``.
EXPERT_MODAL = "minerva_expert_modal"
ANSWER_BLOCK, ANSWER_INPUT = "expert_answer", "text"
PAGE_BLOCK, PAGE_INPUT = "expert_page", "wrong"
GAP_PREFIX = "gap:"
#: The bot's attempt as shown to the experts: its direct answer, cut (the page quotes stay in the thread).
ATTEMPT_CHARS = 500
#: Review-queue signal of a page an expert marked wrong (`jobs.review`).
CORRECTION_SIGNAL = "expert_correction"


def matching_answer(kb, store, question: str, *, now: datetime) -> dict | None:
    """The kept expert answer (a `FeedbackStore.active_expert_answers` row: not expired at ``now``, not retired
    by two users' 👎) whose question ``question`` asks again (`KnowledgeBase.match_answer`), or None."""
    active = store.active_expert_answers(now)
    if not active:
        return None
    # each kept answer is matched by its own question, the wordings a 👍 confirmed (`feedback.experts`) and its text
    kept = [([row["question"], *row.get("also_asked", [])], row["answer"]) for row in active]
    found = kb.match_answer(question, kept)
    if found is None:
        return None
    index, probability = found
    row = active[index]
    log.info("expert.answer_matched", expert_answer_id=row["expert_answer_id"], probability=round(probability, 4))
    return row


def whom_to_ask(settings: Settings, channel: str | None, collections: list[str]) -> str | None:
    """Whom "Ask an expert" asks for a reply in ``channel`` citing ``collections`` (first cited first).

    The first cited collection's ``experts`` (with nothing cited, the first of the channel's ``collections``),
    else the channel's ``experts`` (``off``: nobody at all), else ``experts.ask``. Returns the Slack id (user ``U…``/``W…``, user group ``S…`` or channel ``C…``/``G…``),
    or None when no one can be asked (then no button is shown).
    """
    by_collection = {s.name: s.experts for s in settings.sources}
    # a refusal cites nothing: a channel kept to some collections asks about theirs (its first one's experts)
    collections = collections or settings.channel(channel).collections
    first = by_collection.get(collections[0], "") if collections else ""
    if first:
        return expert_target(first)
    configured = settings.channel(channel).experts
    if configured == "off":
        return None
    return expert_target(configured) or expert_target(settings.experts.ask)


# --- blocks ---------------------------------------------------------------------------------------------------


def ask_button(answer_id: str, language: str) -> dict:
    return {"type": "button", "action_id": ASK_EXPERT_ACTION, "value": answer_id,
            "text": {"type": "plain_text", "text": message("expert.ask_button", language)}}


def with_ask_button(blocks: list[dict], answer_id: str, language: str) -> list[dict]:
    """``blocks`` with "Ask an expert": beside "Report a wrong answer" when the reply has it (no block more,
    so the block limit `bot.slack.blocks.answer_blocks` kept still holds), else in an actions block of its own."""
    blocks = list(blocks)
    button = ask_button(answer_id, language)
    if blocks and blocks[-1].get("type") == "actions":
        blocks[-1] = {**blocks[-1], "elements": [*blocks[-1]["elements"], button]}
    else:
        blocks = blocks[: BLOCK_LIMIT - 1] + [{"type": "actions", "elements": [button]}]
    return blocks


def expert_answer_blocks(row: dict, language: str, answer_id: str = "") -> list[dict]:
    """The kept answer shown first: its label ("Answered by <@U…> on 2026-12-04"), its text, its 👍/👎."""
    date = row["answered_at"][:10]
    # after `minerva privacy forget` the expert is "[forgotten]": no mention of nobody
    expert = f"<@{row['expert']}>" if slack_owner_id(row["expert"]) else message("expert.someone", language)
    label = message("expert.label", language, expert=expert, date=date)
    vote = [{"type": "button", "action_id": EXPERT_VOTE_ACTION, "value": f"{value}:{row['expert_answer_id']}:{answer_id}",
             "text": {"type": "plain_text", "text": emoji}} for value, emoji in (("up", "👍"), ("down", "👎"))]
    # the question it answered, so a reader sees at once whether it is theirs (a match is a similarity, not proof)
    asked = message("expert.asked_as", language, question=escape(truncate(" ".join(row["question"].split()), 150)))
    return [{"type": "context", "elements": [{"type": "mrkdwn", "text": f":bust_in_silhouette: *{label}*"},
                                             {"type": "mrkdwn", "text": asked}]},
            *section_blocks(to_mrkdwn(row["answer"])),
            {"type": "actions", "block_id": f"expert_vote_{row['expert_answer_id'][:16]}", "elements": vote},
            {"type": "divider"}]


def with_expert_answer(blocks: list[dict], row: dict, language: str, answer_id: str = "") -> list[dict]:
    """The kept answer's blocks, then the page answer's, within `BLOCK_LIMIT` (page blocks before the last
    three controls are dropped when it would not fit)."""
    head = expert_answer_blocks(row, language, answer_id)
    room = BLOCK_LIMIT - len(head)
    if len(blocks) > room:
        blocks = blocks[: room - 3] + blocks[-3:]
    return head + blocks


def request_blocks(request: dict, *, answered_by: str | None = None) -> list[dict]:
    """The experts' message: who asks, the question, the bot's attempt, the pages; "Answer" (or who did)."""
    language = "en"  # the experts' channel speaks the team's language; the question stays as asked
    asker = f"<@{request['asker']}>"
    lines = [f"*{message('expert.request_title', language, asker=asker)}*",
             message("expert.request_question", language, question=escape(request["question"])),
             message("expert.request_attempt", language, attempt=escape(truncate(request["attempt"], ATTEMPT_CHARS)))]
    if request.get("doc_ids"):
        pages = ", ".join(f"`{escape(d)}`" for d in request["doc_ids"][:5])
        lines.append(message("expert.request_pages", language, pages=pages))
    blocks = section_blocks("\n".join(lines))
    if answered_by:
        note = message("expert.answered_note", language, expert=f"<@{answered_by}>")
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": f":white_check_mark: {note}"}]})
    else:
        blocks.append({"type": "actions", "elements": [{
            "type": "button", "action_id": EXPERT_ANSWER_ACTION, "value": request["request_id"], "style": "primary",
            "text": {"type": "plain_text", "text": message("expert.answer_button", language)}}]})
    return blocks


def answer_modal(key: str, question: str, *, can_flag_page: bool, language: str = "en") -> dict:
    """The ``views.open`` modal: the question, a multiline answer, and (when pages were cited) the checkbox
    "the page cited is wrong". ``key`` (request id or ``gap:<fingerprint>``) rides in ``private_metadata``."""
    blocks = [
        {"type": "section", "text": {"type": "mrkdwn", "text": truncate(
            message("expert.request_question", language, question=escape(question)), 3000)}},
        {"type": "input", "block_id": ANSWER_BLOCK, "label": {"type": "plain_text", "text": message(
            "expert.answer_label", language)},
         "element": {"type": "plain_text_input", "action_id": ANSWER_INPUT, "multiline": True, "max_length": 3000}},
    ]
    if can_flag_page:
        blocks.append({"type": "input", "block_id": PAGE_BLOCK, "optional": True,
                       "label": {"type": "plain_text", "text": " "},
                       "element": {"type": "checkboxes", "action_id": PAGE_INPUT, "options": [
                           {"text": {"type": "plain_text", "text": message("expert.page_wrong_label", language)},
                            "value": "wrong"}]}})
    return {"type": "modal", "callback_id": EXPERT_MODAL, "private_metadata": key,
            "title": {"type": "plain_text", "text": truncate(message("expert.modal_title", language), 24)},
            "submit": {"type": "plain_text", "text": truncate(message("expert.modal_submit", language), 24)},
            "close": {"type": "plain_text", "text": truncate(message("expert.modal_close", language), 24)},
            "blocks": blocks}


def gap_button(fingerprint: str) -> dict:
    """"Answer this once" for a coverage gap's alert (`jobs.signals.coverage`); value = the fingerprint."""
    return {"type": "button", "action_id": GAP_ANSWER_ACTION, "value": fingerprint,
            "text": {"type": "plain_text", "text": message("expert.gap_button")}}


# --- the desk -------------------------------------------------------------------------------------------------


@dataclass
class Submission:
    """What one ``view_submission`` did: ``ack`` is the response to Slack (None = close the modal)."""

    ack: dict | None
    posted: bool = False


class ExpertDesk:
    """Escalations, the answer modal and kept answers, for the Slack listeners (`register`)."""

    def __init__(self, kb, store, settings: Settings, executor: Executor | None):
        self.kb, self.store, self.settings, self.executor = kb, store, settings, executor

    async def _run(self, fn, *args, **kwargs):
        return await asyncio.get_running_loop().run_in_executor(self.executor, functools.partial(fn, *args, **kwargs))

    # reply decoration ----------------------------------------------------------------------------------------

    async def decorate(self, answer: Answer, blocks: list[dict], channel: str | None) -> list[dict]:
        """A reply's blocks with a matching kept expert answer first and "Ask an expert" when someone can be
        asked; ``blocks`` unchanged when neither applies or the lookup fails (the reply matters more)."""
        try:
            kept = await self._run(self._matching_answer, answer.question)
        except Exception:
            log.exception("expert.match_failed", answer_id=answer.answer_id)
            kept = None
        if kept is not None:
            # a refusal under an expert's answer would contradict it: the kept answer stands alone
            blocks = with_expert_answer([] if answer.refused else blocks, kept, answer.language, answer.answer_id)
        whom = whom_to_ask(self.settings, channel, [collection_of(c.doc_id) for c in answer.citations])
        return with_ask_button(blocks, answer.answer_id, answer.language) if whom else blocks

    def _matching_answer(self, question: str) -> dict | None:
        return matching_answer(self.kb, self.store, question, now=datetime.now(timezone.utc))

    # "Ask an expert" -----------------------------------------------------------------------------------------

    async def escalate(self, client: AsyncWebClient, body: dict, action: dict) -> str:
        """Handle an "Ask an expert" click (already acknowledged); returns the private confirmation's text."""
        asker = (body.get("user") or {}).get("id", "")
        answer_id = str(action.get("value") or "")
        try:
            row = await self._run(self.store.get_answer, answer_id)
            if row is None or not asker:
                raise UnknownAnswer(answer_id)
            language = row.get("language") or "en"
            whom = whom_to_ask(self.settings, row.get("channel"), [collection_of(d) for d in row.get("cited_doc_ids") or []])
            if whom is None:
                return message("expert.nobody", language)
            attempt = (body.get("message") or {}).get("text") or ""
            request = {"request_id": answer_id, "question": row["question"], "attempt": attempt, "asker": asker,
                       "channel": row.get("channel"), "thread_ts": row.get("thread_ts"), "whom": whom,
                       "doc_ids": list(row.get("cited_doc_ids") or []), "language": language,
                       "requested_at": datetime.now(timezone.utc)}
            if not await self._run(self.store.claim_expert_request, **request):
                log.info("expert.already_asked", request_id=answer_id, user=asker)
                return message("expert.already_asked", language)
            posted = await post_to_experts(client, self.settings, whom, request)
            if not posted:  # an unreadable user group, a channel the bot is not in: nobody was asked
                log.error("expert.not_delivered", request_id=answer_id, whom=whom)
                await self._run(self.store.release_expert_request, answer_id)
                return message("expert.failed", language)
            await self._run(self.store.set_expert_request_posted, answer_id, posted)
            log.info("expert.asked", request_id=answer_id, whom=whom, asker=asker, messages=len(posted))
            return message("expert.asked", language, whom=slack_reference(whom))
        except UnknownAnswer:
            return message("expert.unknown")
        except FeedbackError:
            log.exception("expert.escalate_failed", value=answer_id)
            return message("expert.failed")

    # the modal -----------------------------------------------------------------------------------------------

    async def open_modal(self, client: AsyncWebClient, body: dict, action: dict) -> str | None:
        """Open the answer modal for an "Answer" or "Answer this once" click; returns a private note instead
        when there is nothing to answer (answered already, unknown), else None."""
        value = str(action.get("value") or "")
        gap = action.get("action_id") == GAP_ANSWER_ACTION
        try:
            if gap:
                question, doc_ids = await self._run(_gap_question, self.store, value)
                key = GAP_PREFIX + value
            else:
                request = await self._run(self.store.expert_request, value)
                if request is None:
                    return message("expert.unknown")
                if request["status"] == "resolved":
                    return message("expert.already_answered", expert=f"<@{request['answered_by']}>")
                question, doc_ids, key = request["question"], request["doc_ids"], value
        except (LookupError, ValueError, FeedbackError) as exc:
            log.warning("expert.modal_unavailable", value=value, reason=str(exc)[:200])
            return message("expert.unknown")
        try:
            await client.views_open(trigger_id=body.get("trigger_id"),
                                    view=answer_modal(key, question, can_flag_page=bool(doc_ids)))
            log.info("expert.modal_opened", key=key, user=(body.get("user") or {}).get("id"))
        except SlackApiError as exc:  # e.g. expired_trigger_id: the click was acked too late
            log.warning("expert.modal_failed", error=exc.response.get("error"), key=key)
            return message("expert.failed")
        return None

    async def submit(self, client: AsyncWebClient, body: dict, view: dict) -> Submission:
        """A ``view_submission`` of the modal: validate, resolve once, keep, post. Returns what to ack with."""
        expert = (body.get("user") or {}).get("id", "")
        text, page_wrong = _submitted(view)
        if not text:
            return Submission({"response_action": "errors", "errors": {ANSWER_BLOCK: message("expert.empty_answer")}})
        key = str(view.get("private_metadata") or "")
        now = datetime.now(timezone.utc)
        try:
            if key.startswith(GAP_PREFIX):
                return await self._keep_gap_answer(key, expert, text, page_wrong, now)
            return await self._answer_request(client, key, expert, text, page_wrong, now)
        except FeedbackError:
            log.exception("expert.submit_failed", key=key)
            return Submission({"response_action": "errors", "errors": {ANSWER_BLOCK: message("expert.failed")}})

    async def _answer_request(self, client, request_id: str, expert: str, text: str, page_wrong: bool,
                              now: datetime) -> Submission:
        if not await self._run(self.store.resolve_expert_request, request_id, expert=expert, answer=text, at=now):
            request = await self._run(self.store.expert_request, request_id)
            first = (request or {}).get("answered_by") or "someone"
            log.info("expert.answer_too_late", request_id=request_id, expert=expert, answered_by=first)
            return Submission(_notice_view(message("expert.already_answered", expert=f"<@{first}>")))
        request = await self._run(self.store.expert_request, request_id)
        await self._keep(request_id, request["question"], text, expert, request["doc_ids"], page_wrong,
                         request["language"], now)
        label = message("expert.thread_answer", request["language"], expert=f"<@{expert}>")
        thread_text = f"*{label}*\n{escape(text)}"
        # the asker's thread; an answer to /ask (no thread) goes to the asker directly, and in a channel whose
        # replies are private (`channels.<id>.private`) only the asker sees it, as they saw the bot's reply
        if request["thread_ts"] and self.settings.channel(request["channel"]).private:
            await _post_privately(client, channel=request["channel"], user=request["asker"],
                                  thread_ts=request["thread_ts"], text=thread_text)
        else:
            await _post(client, channel=request["channel"] if request["thread_ts"] else request["asker"],
                        thread_ts=request["thread_ts"], text=thread_text)
        for channel, ts in request["posted"]:
            try:
                await client.chat_update(channel=channel, ts=ts, blocks=request_blocks(request, answered_by=expert),
                                         text=message("expert.answered_note", expert=f"<@{expert}>"))
            except SlackApiError as exc:
                log.warning("expert.update_failed", error=exc.response.get("error"), channel=channel)
        log.info("expert.answered", request_id=request_id, expert=expert, page_wrong=page_wrong)
        return Submission(None, posted=True)

    async def _keep_gap_answer(self, key: str, expert: str, text: str, page_wrong: bool, now: datetime) -> Submission:
        question, doc_ids = await self._run(_gap_question, self.store, key[len(GAP_PREFIX):])
        kept = await self._keep(key, question, text, expert, doc_ids, page_wrong, detect_language(question), now)
        if kept is None:
            return Submission(_notice_view(message("expert.already_answered", expert="someone")))
        return Submission(_notice_view(message("expert.stored_gap")))

    async def _keep(self, request_id: str, question: str, text: str, expert: str, doc_ids: list[str],
                    page_wrong: bool, language: str, now: datetime) -> str | None:
        """Keep the answer as knowledge (`FeedbackStore.record_expert_answer`) and, when the expert ticked
        "the page cited is wrong", file a review item on the first cited page."""
        kept = await self._run(self.store.record_expert_answer, request_id=request_id, question=question,
                               answer=text, expert=expert, answered_at=now,
                               expires_at=now + timedelta(days=self.settings.experts.answer_days),
                               doc_ids=doc_ids, page_wrong=page_wrong, language=language)
        if kept and page_wrong and doc_ids:
            await self._run(file_correction, self.store, doc_ids[0], question=question, answer=text, expert=expert,
                            expert_answer_id=kept, now=now)
        return kept

    # votes ---------------------------------------------------------------------------------------------------

    async def vote(self, body: dict, action: dict) -> str:
        """Store a 👍/👎 on a kept answer; returns the private confirmation."""
        user = (body.get("user") or {}).get("id", "")
        # "up:<kept answer>:<the reply it was shown in>" (buttons before the reply id was added: no third part)
        value, _, rest = str(action.get("value") or "").partition(":")
        expert_answer_id, _, answer_id = rest.partition(":")
        try:
            changed = await self._run(self.store.record_expert_vote, expert_answer_id, user, value,
                                      datetime.now(timezone.utc))
            if value == "up" and answer_id:
                await self._run(self._learn_wording, expert_answer_id, answer_id)
            log.info("expert.vote", expert_answer_id=expert_answer_id, user=user, value=value, changed=changed)
            return message("expert.vote_thanks" if changed else "vote.unchanged")
        except (InvalidRecord, UnknownAnswer):
            return message("vote.unknown")
        except FeedbackError:
            log.exception("expert.vote_failed", value=action.get("value"))
            return message("vote.failed")


    def _learn_wording(self, expert_answer_id: str, answer_id: str) -> None:
        """A 👍 says the kept answer fits the question of reply ``answer_id``: keep that wording for matching."""
        shown_for = self.store.get_answer(answer_id)
        if shown_for and shown_for.get("question"):
            self.store.add_expert_answer_wording(expert_answer_id, shown_for["question"])


def register(app, desk: ExpertDesk, *, stored_then_acked, confirm) -> None:
    """Register the expert listeners on the Bolt ``app`` (`bot.slack.app.build_app`).

    Args:
        stored_then_acked, confirm: `bot.slack.app`'s ``_stored_then_acked`` (store a click, then ack it) and
            ``_confirm_privately`` (an ephemeral note to the clicker).
    """

    @app.action(ASK_EXPERT_ACTION)
    async def on_ask(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        await ack()  # posting to the experts takes longer than Slack's 3 s; the claim makes retries harmless
        await confirm(client, body, await desk.escalate(client, body, action))

    async def on_answer(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        await ack()  # at once: the trigger_id of views.open expires 3 s after the click
        note = await desk.open_modal(client, body, action)
        if note:
            await confirm(client, body, note)

    app.action(EXPERT_ANSWER_ACTION)(on_answer)
    app.action(GAP_ANSWER_ACTION)(on_answer)

    @app.view(EXPERT_MODAL)
    async def on_submit(ack, body: dict, view: dict, client: AsyncWebClient) -> None:
        # Resolving is one UPDATE (milliseconds), so the ack can say whether this submission won; the posts
        # to Slack come after the ack.
        submission = await desk.submit(client, body, view)
        await ack(**submission.ack) if submission.ack else await ack()

    @app.action(EXPERT_VOTE_ACTION)
    async def on_vote(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        await confirm(client, body, await stored_then_acked(ack, desk.vote(body, action)))


# --- helpers --------------------------------------------------------------------------------------------------


async def post_to_experts(client: AsyncWebClient, settings: Settings, whom: str, request: dict) -> list[tuple[str, str]]:
    """Post the request to ``whom``: a channel there; a user as a DM; a user group in
    ``slack.alert_channel`` mentioning it, else a DM to each member (``usergroups.users.list``).

    Returns:
        ``[(channel, ts)]`` of the messages posted (the DM channel as Slack names it), for `chat.update`.
    """
    blocks = request_blocks(request)
    text = message("expert.request_title", "en", asker=f"<@{request['asker']}>")
    if whom.startswith("S"):
        if settings.slack.alert_channel:
            targets, text = [settings.slack.alert_channel], f"<!subteam^{whom}> {text}"
            blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": f"<!subteam^{whom}>"}}, *blocks]
        else:
            try:
                targets = list((await client.usergroups_users_list(usergroup=whom)).get("users") or [])
            except SlackApiError as exc:
                log.warning("expert.usergroup_unreadable", usergroup=whom, error=exc.response.get("error"))
                targets = []
    else:
        targets = [whom]
    posted = []
    for target in targets:
        response = await _post(client, channel=target, text=text, blocks=blocks)
        if response is not None:
            posted.append((response.get("channel") or target, response.get("ts") or ""))
    return posted


async def _post(client: AsyncWebClient, **kwargs):
    """chat.postMessage, logged instead of raised; the response, or None when Slack refused."""
    try:
        return await client.chat_postMessage(unfurl_links=False, unfurl_media=False, **kwargs)
    except SlackApiError as exc:
        log.error("expert.post_failed", error=exc.response.get("error"), channel=kwargs.get("channel"))
        return None


async def _post_privately(client: AsyncWebClient, **kwargs) -> None:
    """chat.postEphemeral, logged instead of raised."""
    try:
        await client.chat_postEphemeral(**kwargs)
    except SlackApiError as exc:
        log.error("expert.post_failed", error=exc.response.get("error"), channel=kwargs.get("channel"))


def _submitted(view: dict) -> tuple[str, bool]:
    """(answer text stripped, page-wrong ticked) from a ``view_submission``'s state."""
    values = ((view.get("state") or {}).get("values") or {})
    text = ((values.get(ANSWER_BLOCK) or {}).get(ANSWER_INPUT) or {}).get("value") or ""
    ticked = ((values.get(PAGE_BLOCK) or {}).get(PAGE_INPUT) or {}).get("selected_options") or []
    return text.strip(), any(o.get("value") == "wrong" for o in ticked)


def _notice_view(text: str) -> dict:
    """A ``response_action: update`` turning the modal into a one-line note."""
    return {"response_action": "update", "view": {
        "type": "modal", "title": {"type": "plain_text", "text": truncate(message("expert.modal_title"), 24)},
        "close": {"type": "plain_text", "text": truncate(message("expert.modal_close"), 24)},
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": text}}]}}


def _gap_question(store, fingerprint: str) -> tuple[str, list[str]]:
    """A coverage gap alert's representative question and nearest pages (`jobs.signals.coverage`).

    Raises:
        LookupError / ValueError: no such alert, or it is no coverage gap.
    """
    from jobs.alerts import get_alert

    alert = get_alert(store, fingerprint)
    question = (alert.annotations or {}).get("question")
    if alert.alert != "coverage_gap" or not question:
        raise ValueError(f"alert {fingerprint} is no coverage gap with a question")
    nearest = [n.get("doc_id") for n in (alert.annotations or {}).get("nearest") or [] if n.get("doc_id")]
    return question, nearest[:1]


def file_correction(store, doc_id: str, *, question: str, answer: str, expert: str, expert_answer_id: str,
                    now: datetime) -> int:
    """A review item ("expert_correction", `jobs.review`) on ``doc_id``: an expert said it answers
    ``question`` wrongly. Returns the rows written (1)."""
    from jobs.review import Candidate, submit

    reason = truncate(f"Expert {expert} marked this page wrong for “{question}” and answered: {answer}", 1000)
    candidate = Candidate(problem=CORRECTION_SIGNAL, subject=doc_id, action="update_content", priority=2, weight=1,
                          reason=reason, details={"question": question, "answer": answer, "expert": expert,
                                                  "expert_answer_id": expert_answer_id})
    written = submit(store, CORRECTION_SIGNAL, [candidate], now=now)
    log.info("expert.correction_filed", doc_id=doc_id, expert=expert)
    return written
