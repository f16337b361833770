"""The `minerva` command line: the click group and its commands (`bot.cli.main`, with the command groups that
`bot.cli.plugins` adds), `minerva doctor`'s checks, a local PostgreSQL server, and the sandbox, a fake Slack
workspace (`bot.cli.sandbox`). ``python -m bot.cli`` runs it as the ``minerva`` script does."""
