"""The fake Slack Web API, re-exported from the package (`bot.cli.sandbox.slack_api`), where `minerva sandbox`
uses it."""

from bot.cli.sandbox.slack_api import APP_ID, BOT_ID, BOT_SCOPES, BOT_USER_ID, TEAM_ID, FakeSlack  # noqa: F401
