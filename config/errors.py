"""`MinervaError`, the root of every error Minerva raises on purpose.

It lives in `config`, the bottom layer, so that every package (`config`, `feedback`, `knowledge`, `jobs`,
`bot`) can derive its own errors from it without importing a layer above its own.
"""

from __future__ import annotations


class MinervaError(Exception):
    """A problem the user can fix: a broken config, a missing index, a rejected token, an unknown id.

    The message is one line that says what is wrong and what to do; the `minerva` CLI prints it as
    ``Error: <message>`` (then ``→ <hint>`` when there is one) and exits with `exit_code`, without a
    traceback (`bot.cli.main.MinervaGroup`). Any other exception is a bug and keeps its traceback.

    Each package has its own subclass (`config.ConfigError`, `knowledge.KnowledgeError`,
    `feedback.FeedbackError`, …); classes that callers also catch as ``LookupError``, ``ValueError`` or
    ``RuntimeError`` keep that base too.

    Attributes:
        exit_code: the CLI's exit status for this error (1 unless a subclass or instance says otherwise).
        hint: what to check, when the code that raises cannot know it (the store is reached through a
            setting it never sees); None when the message says it all.
    """

    exit_code: int = 1
    hint: str | None = None
