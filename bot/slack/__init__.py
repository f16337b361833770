"""The Slack edge: everything that talks to Slack or renders Block Kit.

`bot.slack.server` serves `bot.slack.app` (slack-bolt) over HTTP or Socket Mode behind `bot.slack.gate`;
`bot.slack.replies` answers a question in a thread; `bot.slack.blocks` and the ``*_blocks`` modules render
Block Kit; `bot.slack.digests` posts alerts and digests for `jobs`. Nothing here imports `bot.cli`.
"""
