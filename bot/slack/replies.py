"""Answering in Slack: run the question off the event loop, record it, post it in the thread.

A reply in a thread the bot answered is a follow-up: the thread's earlier questions come from the store
(`FeedbackStore.thread_answers`, no Slack call) and an elliptical reply is asked with them
(`knowledge.ask_in_thread`); the stored answer names the earlier one (``follow_up_of``). With a ``generator``
configured, `knowledge.improve_answer` rewrites the direct answer before it is recorded and posted; the event
was acknowledged long before (Bolt acks first), and past ``timeout_s`` the extractive answer is posted.

Whatever fails, the asker gets a short message (never silence, onyx #10978), and the log gets the detail.
"""

from __future__ import annotations

import asyncio
import functools
import os
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

import aiohttp
import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.blocks import answer_blocks, fallback_text
from bot.slack.channels import channel_filter, language_is_clear, reply_language
from bot.slack.experts import ExpertDesk
from bot.slack.home import GroupMembers
from bot.records import record_answer
from bot.slack.text import has_words, normalise_question
from config import ChannelConfig, Settings
from feedback import FeedbackStore
from knowledge.language import detect_language
from knowledge.messages import message
from knowledge import (
    Answer,
    IndexNotBuilt,
    KnowledgeBase,
    QuestionInvalid,
    SearchFilter,
    ask_in_thread,
    follow_up_query,
    improve_answer,
)

log = structlog.get_logger(__name__)

#: Slack errors after which the same reply can succeed later: it is kept and posted again (`jobs.notify`).
RETRYABLE_ERRORS = frozenset({"ratelimited", "internal_error", "service_unavailable", "fatal_error",
                              "request_timeout", "unknown_error"})
#: The English texts of the replies that are no answer; the asker gets them in the question's language.
FAILURE_TEXT = message("reply.failure")
NOT_READY_TEXT = message("reply.not_ready")
NO_WORDS_TEXT = message("reply.no_words")


class Responder:
    """Answers questions for the Slack listeners. Stateless apart from its collaborators."""

    def __init__(self, kb: KnowledgeBase, store: FeedbackStore, settings: Settings, executor: ThreadPoolExecutor):
        self.kb = kb
        self.store = store
        self.settings = settings
        self.executor = executor
        generator = settings.generator
        # The generator's API key: a secret, so read here at the edge (config names the variable only).
        self.generator_key = os.environ.get(generator.api_key_env) if generator and generator.api_key_env else None
        self.experts = ExpertDesk(kb, store, settings, executor)  # "Ask an expert" and kept answers (issue 25)
        self.home_groups = GroupMembers()  # user groups' members for App Home, kept a few minutes

    async def answer_in_thread(self, client: AsyncWebClient, event: dict, *, question: str, is_dm: bool) -> None:
        """Answer a mention or DM with one threaded reply (``thread_ts`` = the thread or the message); in a
        ``private`` channel the reply is ephemeral (`_answer_privately`)."""
        channel, user = event.get("channel"), event.get("user")
        thread_ts = event.get("thread_ts") or event.get("ts")
        text, blocks, answer_id = await self._answer(question, channel=channel, thread_ts=thread_ts, user=user,
                                                     is_dm=is_dm)
        if self.channel_settings(channel, is_dm).private:
            await _answer_privately(client, event, text, blocks, answer_id)
            return
        try:
            # An empty blocks array is rejected by Slack (invalid_blocks): omit it for text-only replies.
            await client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=text, blocks=blocks or None,
                                          unfurl_links=False, unfurl_media=False)
        except SlackApiError as exc:
            error = exc.response.get("error") or "unknown_error"
            log.error("slack.post_failed", error=error, channel=channel, answer_id=answer_id)
            if answer_id and error in RETRYABLE_ERRORS:  # Slack is busy: the sweep posts it again
                await self._keep(answer_id, channel, thread_ts, text, blocks, error)
            elif blocks:  # e.g. invalid_blocks / msg_too_long: still tell the user something
                await _post_quietly(client, channel=channel, thread_ts=thread_ts,
                                    text=message("reply.failure", detect_language(question)))
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            log.error("slack.post_failed", error=repr(exc), channel=channel, answer_id=answer_id)
            if answer_id:
                await self._keep(answer_id, channel, thread_ts, text, blocks, "network_error")

    async def _keep(self, answer_id: str, channel: str, thread_ts: str | None, text: str, blocks: list[dict],
                    error: str) -> None:
        """Stores a reply Slack did not take, to be posted again by the monitoring sweep (issue 27 item 4)."""
        keep = functools.partial(self.store.keep_undelivered_reply, answer_id, channel=channel, thread_ts=thread_ts,
                                 text=text, blocks=blocks, error=error, now=datetime.now(timezone.utc))
        try:
            await asyncio.get_running_loop().run_in_executor(self.executor, keep)
            log.warning("reply.kept_for_retry", answer_id=answer_id, channel=channel, error=error)
        except Exception:
            log.exception("reply.keep_failed", answer_id=answer_id)

    async def answer_command(self, command: dict, respond) -> None:
        """Answer ``/ask question`` through the command's response_url, visible in the channel (only to the
        asker in a ``private`` channel)."""
        is_dm = command.get("channel_name") == "directmessage"
        text, blocks, _ = await self._answer(command.get("text", ""), channel=command.get("channel_id"), thread_ts=None,
                                          user=command.get("user_id"), is_dm=is_dm)
        public = blocks and not self.channel_settings(command.get("channel_id"), is_dm).private
        try:
            await respond(text=text, blocks=blocks or None, response_type="in_channel" if public else "ephemeral")
        except Exception:
            log.exception("slack.respond_failed")

    async def publish_home(self, client: AsyncWebClient, user: str) -> None:
        """App Home for ``user`` (`bot.slack.home.publish_home`, which builds it)."""
        from bot.slack.home import publish_home

        await publish_home(client, user, kb=self.kb, store=self.store, settings=self.settings,
                           executor=self.executor, groups=self.home_groups)

    def channel_settings(self, channel: str | None, is_dm: bool = False) -> ChannelConfig:
        """The settings of ``channel`` (`config.Settings.channel`); the defaults in a DM, whatever its id, and for
        a channel field that is no string (a malformed event)."""
        return ChannelConfig() if is_dm or not isinstance(channel, str) else self.settings.channel(channel)

    async def _answer(self, question: str, *, channel, thread_ts, user, is_dm: bool
                      ) -> tuple[str, list[dict], str | None]:
        """(fallback text, blocks, answer id) for a question in Slack markup; blocks are [] and the id None for
        error messages and hints.

        The question is cleaned (`bot.slack.text.normalise_question`) before retrieval and before it is stored;
        one with no words left gets a hint and is not recorded (it is no refusal: there was nothing to answer).
        """
        question = normalise_question(question)
        settings = self.channel_settings(channel, is_dm)
        # Of the question as asked (the words of a hint or an apology), or the channel's when it cannot be told.
        language = reply_language(question, settings)
        if question and not has_words(question):
            return message("reply.no_words", language), [], None
        loop = asyncio.get_running_loop()
        try:
            earlier = await loop.run_in_executor(self.executor, self._thread, channel, thread_ts)
            # A reply in a thread the bot answered is a follow-up: its thread's question gives it context.
            ask = functools.partial(ask_in_thread, self.kb, question, [row["question"] for row in earlier],
                                    where=channel_filter(self._filter(user, is_dm), settings))  # keyword-only
            answer = await loop.run_in_executor(self.executor, ask)
            answer.follow_up_of = earlier[-1]["answer_id"] if earlier else None
        except QuestionInvalid as exc:
            return str(exc), [], None
        except IndexNotBuilt:
            return message("reply.not_ready", language), [], None
        except Exception:
            log.exception("answer.failed", channel=channel, user=user)
            return message("reply.failure", language), [], None
        answer = await self._generate(answer, [row["question"] for row in earlier])
        if settings.language and not language_is_clear(question):
            answer.language = language  # its labels, buttons and later confirmations (issue 25 item 4)
        try:
            await loop.run_in_executor(self.executor, self._record, answer, channel, thread_ts, user)
        except Exception:  # the answer is still worth posting; the log has the detail
            log.exception("answer.record_failed", answer_id=answer.answer_id)
            return fallback_text(answer), answer_blocks(answer, await self._badges(answer)), None
        # a kept expert answer first, and "Ask an expert" (issue 25): only for a recorded answer, which the
        # button's handler reads back
        blocks = await self.experts.decorate(answer, answer_blocks(answer, await self._badges(answer)), channel)
        return fallback_text(answer), blocks, answer.answer_id

    async def _badges(self, answer: Answer) -> dict[str, str]:
        """The cited pages' verification badges (`bot.slack.verification_badges`, issue 25 item 3), off the loop."""
        from bot.slack.verification_badges import answer_badges

        def lookup() -> dict[str, str]:
            try:
                documents = self.kb.index().documents
            except Exception:  # no index: no badges
                return {}
            return answer_badges(self.store, self.settings, documents, answer, now=datetime.now(timezone.utc))

        return await asyncio.get_running_loop().run_in_executor(self.executor, lookup)

    def _filter(self, user: str | None, is_dm: bool) -> SearchFilter:
        """Channels never see restricted collections; DMs see those whose ``allowed`` list names the user."""
        restricted = {s.name for s in self.settings.sources if s.visibility == "restricted" and user in s.allowed}
        if not is_dm or not restricted:
            return SearchFilter()
        public = {s.name for s in self.settings.sources if s.visibility == "public"}
        return SearchFilter(collections=frozenset(public | restricted), allow_restricted=True)

    async def _generate(self, answer: Answer, earlier: list[str]) -> Answer:
        """The configured generator's grounded direct answer (`knowledge.improve_answer`), or ``answer`` as it
        was: the generator is optional, bounded by its ``timeout_s`` and never fails the reply.

        Args:
            answer: the extractive answer.
            earlier: the thread's earlier questions; the generator sees what was retrieved for (a follow-up
                with its thread's question).
        """
        if self.settings.generator is None:
            return answer
        try:
            query = follow_up_query(answer.question, earlier) or answer.question
            return await improve_answer(answer, query, self.settings.generator, api_key=self.generator_key)
        except Exception:
            log.exception("generator.crashed", answer_id=answer.answer_id)
            return answer

    def _thread(self, channel: str | None, thread_ts: str | None) -> list[dict]:
        """The bot's earlier answers in this thread, oldest first; [] outside a thread or when the store fails."""
        if not channel or not thread_ts:
            return []
        try:
            return self.store.thread_answers(channel, thread_ts)
        except Exception:  # a follow-up without its context is still worth answering
            log.exception("answer.thread_lookup_failed", channel=channel, thread_ts=thread_ts)
            return []

    def _record(self, answer: Answer, channel, thread_ts, user) -> None:
        record_answer(self.store, answer, source="slack", channel=channel, thread_ts=thread_ts, user=user)


async def _answer_privately(client: AsyncWebClient, event: dict, text: str, blocks: list[dict],
                            answer_id: str | None) -> None:
    """The reply as ``chat.postEphemeral`` to the asker (``private: true`` channels): in the thread when the
    question was asked in one, else in the channel. An ephemeral reply is not kept for the retry sweep, which
    posts publicly (`jobs.notify`); the asker sees a failure instead and can ask again."""
    channel, user = event.get("channel"), event.get("user")
    thread_ts = event.get("thread_ts")
    try:
        await client.chat_postEphemeral(channel=channel, user=user, thread_ts=thread_ts, text=text,
                                        blocks=blocks or None)
        log.info("reply.ephemeral", channel=channel, answer_id=answer_id)
    except (SlackApiError, aiohttp.ClientError, asyncio.TimeoutError) as exc:
        error = exc.response.get("error") if isinstance(exc, SlackApiError) else repr(exc)
        log.error("slack.post_failed", error=error, channel=channel, answer_id=answer_id, ephemeral=True)
        if blocks:
            try:
                await client.chat_postEphemeral(channel=channel, user=user, thread_ts=thread_ts,
                                                text=message("reply.failure", detect_language(text)))
            except Exception:
                log.exception("slack.post_failed", channel=channel, ephemeral=True)


async def _post_quietly(client: AsyncWebClient, **kwargs) -> None:
    try:
        await client.chat_postMessage(**kwargs)
    except SlackApiError as exc:
        log.error("slack.post_failed", error=exc.response.get("error"), channel=kwargs.get("channel"))
