"""structlog set-up: readable console lines, JSON lines for a server outside a terminal or when asked for.

Called once by the entry point (`bot.cli`); library code only asks for loggers. Both structlog's loggers and
the standard library's (APScheduler, aiohttp's access log, slack-bolt) go through one handler on stderr with
one renderer, so that ``MINERVA_LOG_FORMAT=json`` makes every line JSON (issue 28; structlog's "Rendering
using structlog-based formatters within logging" recipe).
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import datetime, timezone

import click
import structlog

#: Libraries whose INFO lines are noise for an operator (bm25s sets its own logger to DEBUG at import).
NOISY = ("sentence_transformers", "httpx", "bm25s", "urllib3", "filelock")


_as_json = False  # what the last `configure_logging` chose


def configure_logging(level: str = "INFO", fmt: str = "auto", *, service: bool = False) -> None:
    """Route structlog and stdlib logging to stderr, each line rendered the same way.

    Args:
        level: "DEBUG", "INFO", "WARNING" or "ERROR".
        fmt: "json", "console", or "auto": for a ``service`` (`minerva serve`, whose lines a log collector reads)
            console when stderr is a terminal, else JSON; for any other command console (a newcomer's
            ``minerva ingest 2>&1 | less`` showed its warnings as JSON records among plain lines).
        service: whether the process is a long-running server.
    """
    as_json = fmt == "json" or (fmt == "auto" and service and not sys.stderr.isatty())
    global _as_json
    _as_json = as_json
    renderer = structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer(colors=False)
    numeric = logging.getLevelName(level.upper())
    shared = [structlog.stdlib.add_log_level, structlog.processors.TimeStamper(fmt="iso", utc=True)]
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(numeric)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name, structlog.stdlib.ExtraAdder()],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    structlog.processors.format_exc_info, renderer],
    ))
    logging.basicConfig(level=numeric, handlers=[handler], force=True)
    for noisy in NOISY:
        logging.getLogger(noisy).setLevel(logging.WARNING)
    structlog.configure(
        processors=[structlog.contextvars.merge_contextvars, *shared,
                    structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,
    )


def json_lines() -> bool:
    """Whether log lines are JSON (`configure_logging`): progress bars and other terminal output stay off then."""
    return _as_json


def say(text: str, event: str, level: str = "info", **fields) -> None:
    """Tell the operator ``text`` on stderr whatever the log level (the server's start lines): as is in a terminal,
    as a JSON line with ``event``, ``message``, ``fields`` and ``level`` ("info", "warning") when lines are JSON,
    so that a log collector never meets a line it cannot parse."""
    if not _as_json:
        click.echo(text, err=True)
        return
    stamp = datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")
    entry = {"event": event, "message": text, **fields, "level": level, "timestamp": stamp}
    click.echo(json.dumps(entry, ensure_ascii=False, default=str), err=True)
