"""Which workspace and app the bot answers: a request from any other is refused (issue 27, "Nothing leaks").

A valid signature (or the app's own Socket Mode connection) proves that Slack sent a request, not that it
comes from the configured workspace: the app installed in a second workspace sends its requests signed with the
same secret, and the bot answered them; in a DM the reply quoted a page restricted to its own workspace's users.

`AllowedOrigin` is what may come in: the workspaces / Enterprise Grid organisations of ``slack.workspaces``
(default: the bot token's own, from ``auth.test``) and the app of ``slack.app_id`` (default: the one Slack
names, when it does). `request_origin` reads the ids a payload names; `AllowedOrigin.refusal` says why it is
refused, or None. The gate (`bot.slack.gate.GatedApp`) acknowledges a refused request, so Slack does not retry
it, logs ``slack.foreign_workspace`` and does nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.slack.check import SlackIdentity
from config import SlackConfig

#: Payload types that name no workspace and carry nothing from a user: Slack's checks of the request URL.
_UNSCOPED_TYPES = ("url_verification",)


@dataclass(frozen=True)
class Origin:
    """The ids a request names.

    Attributes:
        team_ids: workspace ids (``T…``) from ``team_id``, ``team`` / ``team.id``, ``authorizations[].team_id``
            and ``view.app_installed_team_id``; in payload order, without repeats.
        enterprise_ids: organisation ids (``E…``) from ``enterprise_id``, ``enterprise`` / ``enterprise.id``,
            ``team.enterprise_id`` and ``authorizations[].enterprise_id``.
        app_id: ``api_app_id``; None when absent or not text.
    """

    team_ids: tuple[str, ...] = ()
    enterprise_ids: tuple[str, ...] = ()
    app_id: str | None = None

    def fields(self) -> dict[str, Any]:
        """The ids as log fields."""
        return {"team_ids": list(self.team_ids), "enterprise_ids": list(self.enterprise_ids),
                "api_app_id": self.app_id}


@dataclass(frozen=True)
class AllowedOrigin:
    """Where requests may come from.

    Attributes:
        workspaces: workspace (``T…``) and organisation (``E…``) ids; empty means "not known yet" (the gate
            then asks ``auth.test`` itself before it lets the first request in).
        app_id: the app (``A…``); "" = not known, the app is not checked.
    """

    workspaces: frozenset[str] = frozenset()
    app_id: str = ""

    def refusal(self, origin: Origin) -> str | None:
        """Why a request naming ``origin`` is refused, or None when it may come in.

        A request comes in when every workspace id it names is allowed, or, for an organisation (org-wide
        install), every organisation id it names is; and, when the app is known, its ``api_app_id`` is the
        app's. A request naming no workspace and no organisation at all is refused: Slack names one in every
        event, click and command.
        """
        if not origin.team_ids and not origin.enterprise_ids:
            return "the request names no workspace"
        by_team = bool(origin.team_ids) and set(origin.team_ids) <= self.workspaces
        by_org = bool(origin.enterprise_ids) and set(origin.enterprise_ids) <= self.workspaces
        if not (by_team or by_org):
            return "another workspace"
        if self.app_id and origin.app_id != self.app_id:
            return "another app" if origin.app_id else "the request names no app"
        return None

    def fields(self) -> dict[str, Any]:
        """The allowed ids as log fields."""
        return {"allowed_workspaces": sorted(self.workspaces), "allowed_app_id": self.app_id or None}


def allowed_origin(cfg: SlackConfig, identity: SlackIdentity | None = None) -> AllowedOrigin:
    """What ``slack.workspaces`` / ``slack.app_id`` allow, the bot's own ids (``identity``, from ``auth.test``)
    filling in what the config leaves empty. Workspaces stay empty when neither names one (see `AllowedOrigin`)."""
    workspaces = frozenset(cfg.workspaces) or (own_workspaces(identity) if identity else frozenset())
    return AllowedOrigin(workspaces, cfg.app_id or (identity.app_id if identity else ""))


def own_workspaces(identity: SlackIdentity) -> frozenset[str]:
    """The bot token's own workspace: its organisation for an org-wide install, else its workspace."""
    if identity.enterprise_install and identity.enterprise_id:
        return frozenset({identity.enterprise_id})
    return frozenset({identity.team_id} - {""})


def is_unscoped(body: dict) -> bool:
    """True for Slack's checks of the request URL (``url_verification``, ``ssl_check``), which name no workspace
    and carry nothing from a user: they are let through."""
    return body.get("type") in _UNSCOPED_TYPES or "ssl_check" in body


def request_origin(body: dict) -> Origin:
    """The ids ``body`` (a parsed Slack request body or Socket Mode payload) names; never raises, whatever
    the shapes of its fields (ids that are not non-empty text are skipped)."""
    team, enterprise = body.get("team"), body.get("enterprise")
    authorizations = body.get("authorizations") if isinstance(body.get("authorizations"), list) else []
    team_ids = [body.get("team_id"), team, _field(team, "id"), _field(body.get("view"), "app_installed_team_id"),
                *(_field(a, "team_id") for a in authorizations)]
    enterprise_ids = [body.get("enterprise_id"), enterprise, _field(enterprise, "id"), _field(team, "enterprise_id"),
                      *(_field(a, "enterprise_id") for a in authorizations)]
    app_id = body.get("api_app_id")
    return Origin(_ids(team_ids), _ids(enterprise_ids), app_id if isinstance(app_id, str) and app_id else None)


def _field(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _ids(values: list[Any]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for v in values if isinstance(v, str) and v))
