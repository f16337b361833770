"""A fake Slack workspace on this machine: `minerva sandbox`, and the fakes the tests drive the bot with.

- `bot.cli.sandbox.slack_api`: `FakeSlack`, the Slack Web API over real HTTP on 127.0.0.1 (records every call),
  with Socket Mode (`bot.cli.sandbox.socket_mode`) on the same `bot.cli.sandbox.local_server.LocalServer`;
- `bot.cli.sandbox.signing`: requests as Slack sends them (signed headers, event envelopes, mentions, clicks);
- `bot.cli.sandbox.conversation`: `minerva sandbox` itself, in one process or over several replicas;
- `bot.cli.sandbox.replicas`: real ``minerva serve`` subprocesses on one shared store.

Nothing here is imported by the bot when it serves; nothing listens beyond 127.0.0.1.
"""
