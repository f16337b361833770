"""One error root (issue 24 item 6): every error a user can cause derives from `config.MinervaError`, so that
the CLI turns it into ``Error: …`` in one place (`bot.cli.main.MinervaGroup`) and anything else stays a bug.

The exception classes are found in the sources (`ast`, as tests/test_layering.py does), so a new one that
forgets the root fails here without anyone adding it to a list.
"""

from __future__ import annotations

import ast
import builtins
import importlib
from pathlib import Path

from config import MinervaError

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("bot", "config", "feedback", "jobs", "knowledge")
#: Raised on a programming error, never by something the user did: these keep their traceback.
PROGRAMMING_ERRORS = {"knowledge.messages.MissingMessage"}
_BUILTIN_EXCEPTIONS = {name for name, value in vars(builtins).items()
                       if isinstance(value, type) and issubclass(value, BaseException)}


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _exception_classes() -> list[str]:
    """``module.Class`` of every module-level class of the packages whose bases name a built-in exception or,
    by name, another class found so (repeated until nothing is added). Names only: the caller imports each
    and checks the real class."""
    bases: dict[tuple[str, str], set[str]] = {}
    for path in sorted(p for package in PACKAGES for p in (REPO / package).rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                bases[(_module_name(path), node.name)] = {ast.unparse(b).split(".")[-1] for b in node.bases}
    names, found = set(_BUILTIN_EXCEPTIONS), set()
    while new := {key for key, named in bases.items() if key not in found and named & names}:
        found |= new
        names |= {name for _, name in new}
    return sorted(f"{module}.{name}" for module, name in found)


def _load(qualified: str) -> type:
    module, _, name = qualified.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_every_error_a_user_can_cause_derives_from_minerva_error() -> None:
    classes = {name: _load(name) for name in _exception_classes()}
    errors = {name: cls for name, cls in classes.items() if issubclass(cls, BaseException)}  # a name clash aside
    outside = sorted(name for name, cls in errors.items()
                     if not issubclass(cls, MinervaError) and name not in PROGRAMMING_ERRORS)
    assert outside == [], ("derive these from config.MinervaError (or list a programming error in "
                           "PROGRAMMING_ERRORS):\n" + "\n".join(outside))
    assert not any(issubclass(errors[name], MinervaError) for name in PROGRAMMING_ERRORS)


def test_the_walk_finds_each_package_root_and_the_stand_alone_errors() -> None:
    """Not vacuous: the roots and the classes issue 24 named are among those checked."""
    assert {"config.settings.ConfigError", "knowledge.errors.KnowledgeError", "knowledge.generator.GeneratorUnavailable",
            "feedback.errors.FeedbackError", "feedback.copy.TargetNotEmpty", "feedback.alerting.UnknownAlert",
            "jobs.review.UnknownReviewItem", "jobs.runner.UnknownJob", "jobs.notify.Undelivered",
            "bot.slack.check.SlackCredentialError", "bot.slack.server.MissingSecret",
            "bot.cli.local_postgres.PgserverMissing",
            "knowledge.messages.MissingMessage"} <= set(_exception_classes())


def test_the_other_bases_are_kept() -> None:
    """Code that catches LookupError, ValueError or RuntimeError still catches these."""
    for qualified, base in (("jobs.review.UnknownReviewItem", LookupError), ("jobs.runner.UnknownJob", LookupError),
                            ("feedback.errors.UnknownAnswer", LookupError), ("feedback.alerting.UnknownAlert", LookupError),
                            ("feedback.errors.InvalidRecord", ValueError),
                            ("bot.cli.local_postgres.PgserverMissing", RuntimeError)):
        assert issubclass(_load(qualified), base), qualified


def test_a_minerva_error_exits_1_and_has_no_hint_unless_it_says_so() -> None:
    from feedback import StoreUnavailable

    assert (MinervaError.exit_code, MinervaError.hint) == (1, None)
    assert "MINERVA_DATABASE_URL" in StoreUnavailable("cannot open feedback database x").hint
