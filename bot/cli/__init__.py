"""The `minerva` command line: the click group and its commands (`bot.cli.main`, with the command groups that
`bot.cli.plugins` adds), `minerva doctor`'s checks, a local PostgreSQL server, and the sandbox, a fake Slack
workspace (`bot.cli.sandbox`). ``python -m bot.cli`` runs it as the ``minerva`` script does."""


def main() -> None:
    """Run the `minerva` command line (`bot.cli.main.main`). Kept because the console script of an install made
    before the command line became this package names ``bot.cli:main``; it works on until ``pip install -e .``
    writes the new one. Imported lazily so that ``bot.cli.logs`` does not load every command."""
    from bot.cli.main import main as run

    run()
