"""structlog set-up: readable console lines in a terminal, JSON lines otherwise (production, CI).

Called once by the entry point (`bot.cli`); library code only asks for loggers.
"""

from __future__ import annotations

import logging
import sys

import structlog


def configure_logging(level: str = "INFO", fmt: str = "auto") -> None:
    """Route structlog and stdlib logging to stderr.

    Args:
        level: "DEBUG", "INFO", "WARNING" or "ERROR".
        fmt: "json", "console", or "auto" (console when stderr is a terminal, else JSON).
    """
    as_json = fmt == "json" or (fmt == "auto" and not sys.stderr.isatty())
    renderer = structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer(colors=False)
    numeric = logging.getLevelName(level.upper())
    logging.basicConfig(level=numeric, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s", force=True)
    for handler in logging.root.handlers:
        handler.setLevel(numeric)  # bm25s sets its own logger to DEBUG at import; the handler still filters
    for noisy in ("sentence_transformers", "httpx", "bm25s", "urllib3", "filelock"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
