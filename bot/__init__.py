"""Minerva's front ends: `bot.slack`, the Slack edge (the app, its gate, Block Kit, App Home, posting digests),
and `bot.cli`, the `minerva` command line (which starts the Slack edge with ``serve`` and fakes Slack with
``sandbox``). The CLI may import the Slack edge; the Slack edge never imports the CLI (`tests/test_layering.py`).
`bot.records` is what both share: how an answer is kept in the feedback store."""
