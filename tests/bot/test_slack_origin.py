"""Which workspace and app a Slack request names, and which are answered (`bot.slack.origin`, issue 27).

The refusal itself, over signed HTTP and Socket Mode, is tested end to end in test_slack_e2e.py and
test_slack_socket_mode.py; here are the rules on payload shapes Slack sends (events, clicks, commands, views,
Enterprise Grid) and on shapes it does not.
"""

from __future__ import annotations

import pytest

from bot.slack.check import SlackIdentity, identity_of
from bot.slack.origin import AllowedOrigin, Origin, allowed_origin, is_unscoped, request_origin
from config import SlackConfig

EVENT = {"type": "event_callback", "team_id": "T1", "api_app_id": "A1", "event": {"type": "app_mention"},
         "authorizations": [{"enterprise_id": None, "team_id": "T1", "user_id": "UBOT", "is_bot": True}]}
CLICK = {"type": "block_actions", "team": {"id": "T1", "domain": "x"}, "user": {"id": "U1", "team_id": "T1"},
         "api_app_id": "A1", "actions": [{"action_id": "x"}]}
COMMAND = {"command": "/ask", "team_id": "T1", "api_app_id": "A1", "enterprise_id": "", "user_id": "U1"}
#: A click through an org-wide install on Enterprise Grid: no team, the organisation instead.
ORG_CLICK = {"type": "block_actions", "team": None, "enterprise": {"id": "E1", "name": "Org"},
             "is_enterprise_install": True, "user": {"id": "W1", "team_id": "T5"}, "api_app_id": "A1"}
ONLY_T1 = AllowedOrigin(frozenset({"T1"}), "A1")


@pytest.mark.parametrize(("body", "expected"), [
    (EVENT, Origin(("T1",), (), "A1")),
    (CLICK, Origin(("T1",), (), "A1")),
    (COMMAND, Origin(("T1",), (), "A1")),
    (ORG_CLICK, Origin((), ("E1",), "A1")),
    ({"type": "view_submission", "team": {"id": "T1", "enterprise_id": "E1"}, "api_app_id": "A1",
      "view": {"app_installed_team_id": "T2", "team_id": "T1"}}, Origin(("T1", "T2"), ("E1",), "A1")),
    ({**EVENT, "team_id": "T1", "authorizations": [{"team_id": "T2", "enterprise_id": "E9"}]},
     Origin(("T1", "T2"), ("E9",), "A1")),
], ids=["event", "click", "command", "org-wide click", "view", "event for another install"])
def test_request_origin_reads_every_id_slack_gives(body: dict, expected: Origin) -> None:
    assert request_origin(body) == expected


@pytest.mark.parametrize("body", [
    {}, {"team_id": 7, "team": ["T1"], "enterprise": 5, "authorizations": "x", "api_app_id": {"id": "A1"}},
    {"team": {"id": None}, "authorizations": [None, 3, {"team_id": []}], "view": "v", "api_app_id": ""},
])
def test_request_origin_skips_ids_of_the_wrong_shape(body: dict) -> None:
    assert request_origin(body) == Origin((), (), None)


@pytest.mark.parametrize(("allowed", "origin", "reason"), [
    (ONLY_T1, Origin(("T1",), (), "A1"), None),
    (ONLY_T1, Origin(("T1",), ("E1",), "A1"), None),  # a workspace install inside an organisation
    (ONLY_T1, Origin(("T2",), (), "A1"), "another workspace"),
    (ONLY_T1, Origin(("T2",), ("E1",), "A1"), "another workspace"),  # another install in the same organisation
    (ONLY_T1, Origin(("T1", "T2"), (), "A1"), "another workspace"),  # every id it names must be allowed
    (ONLY_T1, Origin((), (), "A1"), "the request names no workspace"),
    (ONLY_T1, Origin(("T1",), (), "A2"), "another app"),
    (ONLY_T1, Origin(("T1",), (), None), "the request names no app"),
    (AllowedOrigin(frozenset({"T1"})), Origin(("T1",), (), "A2"), None),  # app unknown: not checked
    (AllowedOrigin(frozenset({"E1"}), "A1"), Origin(("T5",), ("E1",), "A1"), None),  # org-wide: any of its workspaces
    (AllowedOrigin(frozenset({"E1"}), "A1"), Origin(("T5",), ("E2",), "A1"), "another workspace"),
    (AllowedOrigin(frozenset({"T1", "T3"}), "A1"), Origin(("T3",), (), "A1"), None),
])
def test_refusal(allowed: AllowedOrigin, origin: Origin, reason: str | None) -> None:
    assert allowed.refusal(origin) == reason


def test_slacks_url_checks_name_no_workspace_and_are_let_through() -> None:
    assert is_unscoped({"type": "url_verification", "challenge": "c"}) and is_unscoped({"ssl_check": "1", "token": "t"})
    assert not is_unscoped(EVENT) and not is_unscoped(COMMAND)


IDENTITY = SlackIdentity("Minerva Test", "T1", "minerva", "UBOT", "BBOT")


@pytest.mark.parametrize(("cfg", "identity", "expected"), [
    (SlackConfig(), IDENTITY, AllowedOrigin(frozenset({"T1"}), "")),
    (SlackConfig(), SlackIdentity("Org", "T5", "m", "W1", "B1", enterprise_id="E1", enterprise_install=True,
                                  app_id="A1"), AllowedOrigin(frozenset({"E1"}), "A1")),
    (SlackConfig(), SlackIdentity("Ws", "T5", "m", "W1", "B1", enterprise_id="E1"), AllowedOrigin(frozenset({"T5"}))),
    (SlackConfig(workspaces=["T2", "T3"], app_id="A9"), IDENTITY, AllowedOrigin(frozenset({"T2", "T3"}), "A9")),
    (SlackConfig(app_id="A9"), None, AllowedOrigin(frozenset(), "A9")),  # the gate asks auth.test itself
], ids=["auth.test", "org-wide install", "workspace in an organisation", "config first", "no identity"])
def test_allowed_origin_is_the_config_then_the_bots_own(cfg, identity, expected: AllowedOrigin) -> None:
    assert allowed_origin(cfg, identity) == expected


def test_identity_of_an_auth_test_answer() -> None:
    answer = {"ok": True, "team": "Org", "team_id": "T5", "user": "minerva", "user_id": "W1", "bot_id": "B1",
              "enterprise_id": "E1", "is_enterprise_install": True, "app_id": None}

    identity = identity_of(answer, ("chat:write",), socket_mode=True)

    assert identity == SlackIdentity("Org", "T5", "minerva", "W1", "B1", ("chat:write",), True, enterprise_id="E1",
                                     enterprise_install=True, app_id="")
