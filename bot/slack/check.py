"""Check the Slack credentials before `minerva serve` starts: fail fast with one line that says what to fix.

`check_credentials` reads SLACK_BOT_TOKEN, SLACK_APP_TOKEN, SLACK_SIGNING_SECRET and SLACK_API_URL, rejects
tokens of the wrong type by their prefix (an app-level ``xapp-`` token where the bot token belongs, and the
reverse), requires the signing secret in HTTP mode, then calls ``auth.test`` with the bot token (and, in
Socket Mode, ``apps.connections.open`` with the app token), each with a short timeout and no retries, so a
bad, revoked or wrong-type token is reported within seconds instead of retried forever.

It imports only slack_sdk, so the check runs before the model and the index are loaded.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

import structlog

from config.errors import MinervaError

log = structlog.get_logger(__name__)

#: Seconds each check call may take (two calls at most: well inside the 5 s a failing start may take).
TIMEOUT = 2.0
_WHERE_BOT = ("copy the Bot User OAuth Token (xoxb-…) from your app's OAuth & Permissions page at "
              "https://api.slack.com/apps (install the app to the workspace first)")
_WHERE_APP = ("create an app-level token (xapp-…) with the connections:write scope under Basic Information → "
              "App-Level Tokens at https://api.slack.com/apps, or unset SLACK_APP_TOKEN for HTTP mode")
_WHERE_SECRET = ("copy the Signing Secret from Basic Information → App Credentials at https://api.slack.com/apps, "
                 "or set SLACK_APP_TOKEN (xapp-…) for Socket Mode")
#: auth.test errors that mean "this token will never work".
_REJECTED = {"invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive",
             "not_allowed_token_type", "invalid_token", "no_permission", "missing_scope"}


class SlackCredentialError(MinervaError):
    """A Slack credential is missing, of the wrong type, or rejected; the message is one line naming the
    variable and how to get a right value."""


@dataclass(frozen=True)
class SlackIdentity:
    """Who the bot token belongs to (``auth.test``).

    Attributes:
        team: workspace name; ``team_id`` its id.
        user: the bot user's name; ``user_id`` its id; ``bot_id`` the bot's id.
        scopes: the token's OAuth scopes (``x-oauth-scopes``), () when Slack did not say.
        socket_mode: True when SLACK_APP_TOKEN is set (and was accepted).
        enterprise_id: the Enterprise Grid organisation (``E…``), "" outside one; ``enterprise_install`` True
            for an org-wide install (then the organisation, not one workspace, is the bot's own).
        app_id: the app's id (``A…``) when ``auth.test`` names it ("" otherwise: Slack omits it for bot tokens).
    """

    team: str
    team_id: str
    user: str
    user_id: str
    bot_id: str
    scopes: tuple[str, ...] = ()
    socket_mode: bool = False
    enterprise_id: str = ""
    enterprise_install: bool = False
    app_id: str = ""


#: A disabled logger for the SDK's own error lines during the start-up check.
_QUIET = logging.getLogger("minerva.slack_check.sdk")
_QUIET.disabled = True


def check_credentials(env: dict | None = None, *, timeout: float = TIMEOUT) -> SlackIdentity:
    """Validate the Slack credentials in ``env`` (default ``os.environ``) against the Web API.

    Args:
        env: the environment to read SLACK_BOT_TOKEN, SLACK_APP_TOKEN, SLACK_SIGNING_SECRET, SLACK_API_URL from.
        timeout: seconds per Web API call.

    Returns:
        The bot's identity.

    Raises:
        SlackCredentialError: a token is missing, of the wrong type (by prefix, or ``bot_id`` missing from
            ``auth.test``), or rejected by Slack; HTTP mode lacks SLACK_SIGNING_SECRET; or the Web API cannot
            be reached within ``timeout``.
    """
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError

    env = os.environ if env is None else env
    bot_token = env.get("SLACK_BOT_TOKEN", "").strip()
    app_token = env.get("SLACK_APP_TOKEN", "").strip()
    api_url = env.get("SLACK_API_URL", "").strip() or WebClient.BASE_URL
    _check_shapes(bot_token, app_token, env.get("SLACK_SIGNING_SECRET", "").strip())

    def call(token: str, method: str, variable: str, where: str):
        # the SDK logs a failed request at error level before raising; our one line below says it better
        client = WebClient(token=token, base_url=api_url, timeout=timeout, retry_handlers=[], logger=_QUIET)
        try:
            return client.api_call(method)
        except SlackApiError as exc:
            error = exc.response.get("error", "unknown_error") if exc.response is not None else "unknown_error"
            if error in _REJECTED or exc.response.status_code in (401, 403):
                raise SlackCredentialError(f"{variable} was rejected by Slack ({error}): {where}") from None
            raise SlackCredentialError(f"Slack answered {method} with {error} for {variable}; "
                                       f"check the app's status at https://status.slack.com and retry") from None
        except Exception as exc:  # URLError, timeout, connection refused: the API is not reachable
            raise SlackCredentialError(f"cannot reach the Slack Web API at {api_url} to check {variable} "
                                       f"({type(exc).__name__}: {exc}); check the network, proxy or SLACK_API_URL"
                                       ) from None

    response = call(bot_token, "auth.test", "SLACK_BOT_TOKEN", _WHERE_BOT)
    if not response.get("bot_id"):
        raise SlackCredentialError(f"SLACK_BOT_TOKEN belongs to user {response.get('user')!r}, not to a bot: "
                                   + _WHERE_BOT)
    scopes = tuple(s for s in (response.headers.get("x-oauth-scopes") or "").split(",") if s)
    if app_token:
        call(app_token, "apps.connections.open", "SLACK_APP_TOKEN", _WHERE_APP)
    identity = identity_of(response.data, scopes, socket_mode=bool(app_token))
    log.info("slack.credentials_ok", team=identity.team, team_id=identity.team_id, user=identity.user,
             bot_id=identity.bot_id, socket_mode=identity.socket_mode)
    return identity


def identity_of(auth_test: dict, scopes: tuple[str, ...] = (), *, socket_mode: bool = False) -> SlackIdentity:
    """The `SlackIdentity` in an ``auth.test`` answer (its JSON body); a field Slack left out (or null) is ""."""

    def text(key: str) -> str:
        value = auth_test.get(key)
        return "" if value is None else str(value)

    return SlackIdentity(text("team"), text("team_id"), text("user"), text("user_id"), text("bot_id"), scopes,
                         socket_mode, enterprise_id=text("enterprise_id"),
                         enterprise_install=auth_test.get("is_enterprise_install") is True, app_id=text("app_id"))


def _check_shapes(bot_token: str, app_token: str, signing_secret: str) -> None:
    """The checks that need no network: presence and token prefixes."""
    if not bot_token:
        raise SlackCredentialError(f"SLACK_BOT_TOKEN is not set: {_WHERE_BOT}")
    if bot_token.startswith("xapp-"):
        raise SlackCredentialError("SLACK_BOT_TOKEN holds an app-level token (xapp-…), which belongs in "
                                   f"SLACK_APP_TOKEN: {_WHERE_BOT}")
    if bot_token.startswith("xoxp-"):
        raise SlackCredentialError(f"SLACK_BOT_TOKEN holds a user token (xoxp-…), not a bot token: {_WHERE_BOT}")
    if app_token and not app_token.startswith("xapp-"):
        kind = "a bot token (xoxb-…)" if app_token.startswith("xoxb-") else "no app-level token"
        raise SlackCredentialError(f"SLACK_APP_TOKEN holds {kind}; Socket Mode needs an app-level token: {_WHERE_APP}")
    if not app_token and not signing_secret:
        raise SlackCredentialError(f"HTTP mode (SLACK_APP_TOKEN unset) needs SLACK_SIGNING_SECRET: {_WHERE_SECRET}")
