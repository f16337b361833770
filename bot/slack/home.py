"""App Home (``views.publish`` on ``app_home_opened``): what each user sees on the bot's Home tab.

Every user: how to ask, the knowledge base's size, and each configured channel's settings (issue 25 item 4).
A page owner (`is_owner`: their user id, or a user group they are in, is a page's front matter ``owner`` or its
collection's ``owner``; `jobs.owners.owner_of`) also sees `owner_section`: the open findings and review items on
their pages. A ``slack.admins`` member (or a member of an admin group) also sees `admin_section`: the week's key
figures (`jobs.key_figures`).

The view speaks the user's language (`home_language`): the one most of their latest questions were asked in
(`FeedbackStore.recent_languages`), else English. Slack's own locale of the user is not consulted: reading it
(``users.info`` with ``include_locale``) needs the ``users:read`` scope, which ``manifest.yml`` does not ask for.

The view is built by small pure builders from what `gather` read off the event loop; `fit_view` keeps it within
Block Kit's limits (https://api.slack.com/reference/block-kit/blocks: at most 100 blocks in a Home view, at
most 3000 characters in a section's text, 2000 in a field). Whatever fails to load is left out: the Home tab
must open even before the first ingest or while the store is down.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone

import aiohttp
import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.blocks import escape, slack_link, slack_reference, truncate
from config import ChannelConfig, Settings, expert_target
from jobs.owners import owner_of, source_owners
from knowledge.messages import DEFAULT_LANGUAGE, message, normalise_language

log = structlog.get_logger(__name__)

#: Block Kit limits (see the module docstring).
MAX_BLOCKS = 100
MAX_TEXT_CHARS = 3000
MAX_FIELD_CHARS = 2000
#: Channels shown one per block; more are summed up in one line (room for the owner and admin sections).
MAX_CHANNELS = 40
#: Findings and review items an owner sees on Home; the daily owner message (`jobs.owners`) has them all.
MAX_OWNER_ITEMS = 20
#: User groups asked for their members per Home opening (one ``usergroups.users.list`` call each): a bound, so a
#: config naming hundreds of groups cannot make a Home tab take seconds.
MAX_GROUPS_CHECKED = 30
#: Seconds App Home trusts a user group's member list before asking Slack again (`GroupMembers`). Without it every
#: Home opening calls ``usergroups.users.list`` once per owner or admin group, and Slack allows that method about
#: 20 calls a minute per workspace (Tier 2, https://api.slack.com/methods/usergroups.users.list): a handful of
#: people opening the tab at once, with a few owning groups configured, would be rate limited. Membership
#: changes rarely, and five minutes is how long someone just added to an owning group waits for their part.
GROUP_MEMBERS_TTL_S = 300.0
#: A user's latest questions the Home tab's language is taken from (`home_language`): a few rather than one, so
#: a single short question read as English ("VPN?", a code) among Korean ones does not switch the tab, while
#: someone who changed language is followed after three questions.
LANGUAGE_SAMPLE = 5


@dataclass
class HomeFacts:
    """What the Home view of one user is built from.

    Attributes:
        size: (documents, passages, index name), or None when the index cannot be read (``not_ready`` says why).
        owner: True when the user owns a page (or is in an owning group).
        findings: `jobs.owners.PageFinding` on the user's pages, most severe first.
        reviews: open review items (`jobs.review.items` rows) whose subject is one of the user's pages.
        figures: `jobs.key_figures.KeyFigures` for an admin, else None; ``open_reviews`` all open review items.
    """

    size: tuple[int, int, str] | None = None
    not_ready: str = ""
    owner: bool = False
    findings: list = field(default_factory=list)
    reviews: list[dict] = field(default_factory=list)
    due: list[dict] = field(default_factory=list)
    figures: object | None = None
    open_reviews: int = 0


class GroupMembers:
    """User group id (S…) → its members' user ids, as ``usergroups.users.list`` answered less than ``ttl``
    seconds ago. The app keeps one (`bot.slack.replies.Responder`), so opening App Home again within the TTL asks Slack
    nothing; each replica has its own.

    A group Slack does not list (``no_such_subteam``, ``missing_scope``, a network error) is not kept: the next
    opening asks again rather than hiding an owner's part for the whole TTL after one failure.
    """

    def __init__(self, ttl: float = GROUP_MEMBERS_TTL_S, clock: Callable[[], float] = time.monotonic):
        self.ttl = ttl
        self._clock = clock
        self._members: dict[str, tuple[float, frozenset[str]]] = {}  # group → (when Slack answered, members)

    async def members(self, client: AsyncWebClient, group: str) -> frozenset[str] | None:
        """The members of ``group``, from Slack when not known or older than ``ttl``; None (logged as
        ``slack.home_group_failed``) when Slack does not answer for it. Never raises for a Slack error."""
        now = self._clock()
        known = self._members.get(group)
        if known is not None and now - known[0] < self.ttl:
            return known[1]
        try:
            response = await client.usergroups_users_list(usergroup=group)
        except SlackApiError as exc:
            log.warning("slack.home_group_failed", group=group, error=exc.response.get("error"))
            return None
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            log.warning("slack.home_group_failed", group=group, error=repr(exc))
            return None
        members = frozenset(response.get("users") or [])
        self._members[group] = (now, members)
        return members


async def publish_home(client: AsyncWebClient, user: str, *, kb, store, settings: Settings,
                       executor: ThreadPoolExecutor, language: str | None = None,
                       groups: GroupMembers | None = None) -> None:
    """Builds and publishes ``user``'s Home view; a Slack error is logged (``slack.home_failed``), never raised.

    Args:
        kb: the `knowledge.KnowledgeBase` (its live index is read for the size and the pages' owners).
        store: the feedback store (findings, review items, figures, the user's question languages).
        language: of the labels; None (the default) takes the user's (`user_language`).
        groups: the app's cache of user groups' members; None asks Slack afresh (a cache for this call only).
    """
    loop = asyncio.get_running_loop()
    if language is None:
        language = await loop.run_in_executor(executor, user_language, store, user)
    documents = await loop.run_in_executor(executor, _documents, kb)
    defaults = source_owners(settings)
    owners = {owner_of(doc, defaults) for doc in documents.values()} - {""}
    group_ids = {g for g in owners | set(settings.slack.admins) if g.startswith("S")}
    ids = {user} | await member_groups(client, user, group_ids, members=groups)
    facts = await loop.run_in_executor(executor, functools.partial(
        gather, kb, store, settings, documents, ids, now=datetime.now(timezone.utc)))
    try:
        blocks = fit_view(home_blocks(facts, settings.channels, language))
    except Exception:  # a bug in one part must not leave the tab blank: how to ask is always shown
        log.exception("slack.home_build_failed", user=user)
        blocks = intro_section(facts, language)
    try:
        await client.views_publish(user_id=user, view={"type": "home", "blocks": blocks})
        log.info("slack.home_published", user=user, owner=facts.owner, admin=facts.figures is not None,
                 blocks=len(blocks), language=language)
    except SlackApiError as exc:
        log.warning("slack.home_failed", error=exc.response.get("error"))


def user_language(store, user: str) -> str:
    """The language ``user``'s Home tab speaks: `home_language` of their last `LANGUAGE_SAMPLE` questions
    (`FeedbackStore.recent_languages`). English when they never asked, or when the store cannot be read (logged
    as ``slack.home_language_failed``: the tab must still open). Runs in an executor thread."""
    try:
        return home_language(store.recent_languages(user, LANGUAGE_SAMPLE))
    except Exception:
        log.exception("slack.home_language_failed", user=user)
        return DEFAULT_LANGUAGE


def home_language(languages: list[str]) -> str:
    """The language most of ``languages`` (a user's latest questions' languages, newest first) are in, a tie
    going to the one used most recently; codes without a catalogue count as English. English for []."""
    if not languages:
        return DEFAULT_LANGUAGE
    codes = [normalise_language(code) for code in languages]
    # max keeps the first of equal keys, and codes[0] is the newest, so a tie goes to the most recent
    return max(dict.fromkeys(codes), key=codes.count)


async def member_groups(client: AsyncWebClient, user: str, groups: set[str], *,
                        members: GroupMembers | None = None) -> set[str]:
    """The user groups among ``groups`` (S… ids) that ``user`` is in (``usergroups.users.list``, needs
    ``usergroups:read``, through ``members``, the app's `GroupMembers`: each group asked at most once per
    `GROUP_MEMBERS_TTL_S`); a group Slack does not answer for is left out and logged (``slack.home_group_failed``).
    At most `MAX_GROUPS_CHECKED` groups are looked at, in id order."""
    members = members if members is not None else GroupMembers()
    found = set()
    for group in sorted(groups)[:MAX_GROUPS_CHECKED]:
        if user in (await members.members(client, group) or ()):
            found.add(group)
    return found


def gather(kb, store, settings: Settings, documents: dict[str, dict], ids: set[str], *, now: datetime) -> HomeFacts:
    """`HomeFacts` for a user known by ``ids`` (their user id and the groups they are in). Runs in an executor
    thread: it reads the index and the store. Each part that fails is logged and left empty."""
    facts = HomeFacts()
    try:
        index = kb.index()
        facts.size = (len(index.documents), len(index.chunks), index.name)
    except Exception as exc:  # an App Home must open even before the first ingest
        facts.not_ready = str(exc)
    defaults = source_owners(settings)
    pages = {doc_id for doc_id, doc in documents.items() if owner_of(doc, defaults) in ids}
    facts.owner = bool(pages)
    if facts.owner:
        try:
            facts.findings, facts.reviews = owner_items(store, settings, documents, defaults, ids, pages, now=now)
        except Exception:
            log.exception("slack.home_owner_failed")
        try:
            facts.due = due_verifications(store, settings, documents, pages, now=now)
        except Exception:
            log.exception("slack.home_verifications_failed")
    if ids & set(settings.slack.admins):
        try:
            facts.figures, facts.open_reviews = admin_figures(store, now=now)
        except Exception:
            log.exception("slack.home_figures_failed")
    return facts


def owner_items(store, settings: Settings, documents: dict[str, dict], defaults: dict[str, str], ids: set[str],
                pages: set[str], *, now: datetime) -> tuple[list, list[dict]]:
    """(findings, review items) on the pages an owner known by ``ids`` owns: the findings the daily owner
    message tells (`jobs.owners.collect`) and the open review items (`jobs.review.items`) about ``pages``."""
    from config.alerts import alerts_config_for
    from jobs import owners, review

    reports = owners.collect(store, alerts_config_for(settings), documents, defaults, now=now)
    findings = [f for r in reports if r.owner in ids for f in r.findings]
    order = {"critical": 0, "warning": 1, "info": 2}
    findings.sort(key=lambda f: (order.get(f.severity, 3), f.doc_id, f.alert))
    reviews = [item for item in review.items(store, status="open") if item["subject"] in pages]
    return findings, reviews


def due_verifications(store, settings: Settings, documents: dict[str, dict], pages: set[str], *,
                      now: datetime) -> list[dict]:
    """The owner's ``pages`` whose verification is due or overdue (`jobs.verification.overdue_pages`: dicts with
    ``title``, ``url``, ``due_at``, ``days_overdue``), most overdue first."""
    from jobs.verification import overdue_pages, source_intervals

    mine = {doc_id: documents[doc_id] for doc_id in pages}
    return overdue_pages(mine, store.page_verifications(list(mine)), source_intervals(settings), now)


def admin_figures(store, *, now: datetime) -> tuple[object, int]:
    """The week's `jobs.key_figures.KeyFigures` and the number of open review items."""
    from jobs import review
    from jobs.key_figures import key_figures

    return key_figures(store, now=now), len(review.items(store, status="open"))


# --- builders: pure, one section each ---------------------------------------------------------------------


def home_blocks(facts: HomeFacts, channels: dict[str, ChannelConfig], language: str = "en") -> list[dict]:
    """The whole view's blocks, in reading order: how to ask, channels, then the owner's and the admin's parts."""
    blocks = intro_section(facts, language) + channels_section(channels, language)
    if facts.owner:
        due = [message("home.verification_line", language, title=_page(e["title"], e["url"]), due=e["due_at"][:10])
               for e in facts.due]
        blocks += owner_section(facts.findings, facts.reviews, language, more=due)
    if facts.figures is not None:
        blocks += admin_section(facts.figures, facts.open_reviews, language)
    return blocks


def intro_section(facts: HomeFacts, language: str = "en") -> list[dict]:
    """Header, how to ask, and the knowledge base's size (or why it is not ready)."""
    if facts.size is not None:
        documents, passages, index = facts.size
        size = message("home.size", language, documents=f"{documents:,}", passages=f"{passages:,}", index=index)
    else:
        size = message("home.not_ready", language, reason=facts.not_ready)
    return [
        {"type": "header", "text": {"type": "plain_text", "text": "Minerva"}},
        _section(message("home.how_to_ask", language)),
        {"type": "context", "elements": [{"type": "mrkdwn", "text": escape(size)}]},
    ]


def channels_section(channels: dict[str, ChannelConfig], language: str = "en") -> list[dict]:
    """One line per configured channel (`channel_line`), at most `MAX_CHANNELS`, then how many more."""
    blocks = [{"type": "divider"}, _header(message("home.channels_header", language))]
    if not channels:
        return blocks + [_section(message("home.no_channels", language))]
    shown = sorted(channels.items())[:MAX_CHANNELS]
    blocks += [_section(channel_line(channel_id, config, language)) for channel_id, config in shown]
    if len(channels) > len(shown):
        blocks.append(_context(message("home.channels_more", language, count=len(channels) - len(shown))))
    return blocks


def channel_line(channel_id: str, config: ChannelConfig, language: str = "en") -> str:
    """``<#C…> · searches handbook, runbooks · answers mentions and `/ask` · replies in the thread · experts:
    <!subteam^S…>``: one channel's settings, the channel as a Slack reference (shown as its name)."""
    collections = ", ".join(escape(c) for c in config.collections) or message("home.all_collections", language)
    line = message("home.channel_line", language, channel=f"<#{channel_id}>", collections=collections,
                   mode=message(f"home.mode_{config.respond}", language),
                   replies=message("home.replies_private" if config.private else "home.replies_public", language),
                   experts=_experts(config.experts, language))
    if config.language:
        line += message("home.channel_language", language, default=config.language)
    return line


def owner_section(findings: list, reviews: list[dict], language: str = "en", *, more: list[str] = ()) -> list[dict]:
    """An owner's part: their pages' open findings (`jobs.owners.PageFinding`: ``title``, ``url``, ``doc_id``,
    ``summary``), open review items (``subject``, ``todo``, ``reason``), then ``more``: further mrkdwn lines of
    other kinds (e.g. due verifications), already escaped; together at most `MAX_OWNER_ITEMS` lines, then how
    many more."""
    blocks = [{"type": "divider"}, _header(message("home.owner_header", language))]
    lines = [message("home.finding_line", language, title=_page(f.title or f.doc_id, f.url),
                     summary=escape(f.summary)) for f in findings]
    lines += [message("home.review_line", language, subject=escape(item["subject"]), todo=escape(item.get("todo") or
              item.get("action", "")), reason=escape(item.get("reason", ""))) for item in reviews]
    lines += list(more)
    if not lines:
        return blocks + [_section(message("home.owner_none", language))]
    blocks += [_section(line) for line in lines[:MAX_OWNER_ITEMS]]
    if len(lines) > MAX_OWNER_ITEMS:
        blocks.append(_context(message("home.owner_more", language, count=len(lines) - MAX_OWNER_ITEMS)))
    return blocks


def admin_section(figures, open_reviews: int, language: str = "en") -> list[dict]:
    """An admin's part: the week's questions, the answered share, 👍/👎, refusals and open findings (firing
    alerts per severity and open review items), from `jobs.key_figures.KeyFigures` (``answers``, ``refused``,
    ``votes``, ``thumbs_up``, ``firing``)."""
    answered = figures.answers - figures.refused
    share = "–" if not figures.answers else f"{answered / figures.answers:.0%}"
    firing = figures.firing
    fields = [
        (message("home.figure_questions", language), f"{figures.answers:,}"),
        (message("home.figure_answered", language), message("home.share_of", language, share=share,
                                                            total=f"{figures.answers:,}")),
        (message("home.figure_votes", language), f"{figures.thumbs_up:,} / {figures.votes - figures.thumbs_up:,}"),
        (message("home.figure_refusals", language), f"{figures.refused:,}"),
        (message("home.figure_findings", language), message(
            "home.findings_value", language, critical=firing.get("critical", 0), warning=firing.get("warning", 0),
            info=firing.get("info", 0), reviews=open_reviews)),
    ]
    return [{"type": "divider"}, _header(message("home.admin_header", language)),
            {"type": "section", "fields": [{"type": "mrkdwn", "text": f"*{escape(name)}*\n{value}"}
                                           for name, value in fields]}]


def fit_view(blocks: list[dict]) -> list[dict]:
    """``blocks`` within Block Kit's limits: texts cut to `MAX_TEXT_CHARS` (fields to `MAX_FIELD_CHARS`), and at
    most `MAX_BLOCKS` blocks (the last ones dropped; the builders cap their own lists well below)."""
    fitted = []
    for block in blocks[:MAX_BLOCKS]:
        block = dict(block)
        if isinstance(block.get("text"), dict):
            block["text"] = {**block["text"], "text": truncate(block["text"]["text"], MAX_TEXT_CHARS)}
        if block.get("fields"):
            block["fields"] = [{**f, "text": truncate(f["text"], MAX_FIELD_CHARS)} for f in block["fields"]]
        if block.get("type") == "context":
            block["elements"] = [{**e, "text": truncate(e["text"], MAX_TEXT_CHARS)} if "text" in e else e
                                 for e in block["elements"]]
        fitted.append(block)
    if len(blocks) > MAX_BLOCKS:
        log.warning("slack.home_cut", blocks=len(blocks), kept=MAX_BLOCKS)
    return fitted


def _experts(experts: str | bool, language: str) -> str:
    """Who a channel's "Ask an expert" asks, as a Slack reference (``<@U…>``, ``<!subteam^S…>``, ``<#C…>``)."""
    if experts == "off":
        return message("home.experts_off", language)
    target = expert_target(experts) if experts else None
    if target is None:
        return message("home.experts_default", language)
    return slack_reference(target)


def _page(title: str, url: str) -> str:
    label = escape(title)
    return slack_link(url, label) or label


def _section(mrkdwn: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}}


def _header(text: str) -> dict:
    return {"type": "header", "text": {"type": "plain_text", "text": truncate(text, 150)}}


def _context(mrkdwn: str) -> dict:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": mrkdwn}]}


def _documents(kb) -> dict[str, dict]:
    """doc_id → index record of the live generation; {} before the first ingest."""
    try:
        return kb.index().documents
    except Exception:
        return {}
