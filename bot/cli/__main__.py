"""``python -m bot.cli``: the `minerva` command line."""

from bot.cli.main import main

main()
