"""Package layering, checked over the sources with `ast` (issue 13, "One owner for every table").

* `config` is the bottom layer: it never imports `jobs`, `bot` or `knowledge` (not even inside a function).
* `bot` is its Slack edge and its command line (issue 24 item 6): `bot.slack` never imports `bot.cli` (not even
  inside a function); the CLI may import the Slack edge (``serve``, ``sandbox``).
* The feedback store's private members (``_lock``, ``_translating_errors``, …) are used only inside
  `feedback`; everyone else goes through its public API (``store.transaction()`` / ``store.snapshot()``).
* SQL over the feedback store's tables is written only inside `feedback`: no string in `bot`, `jobs`,
  `knowledge` or `config` is a statement naming one of its tables (`feedback.schema`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from feedback.schema import METADATA

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("bot", "config", "feedback", "jobs", "knowledge")
CONFIG_MUST_NOT_IMPORT = {"jobs", "bot", "knowledge"}
#: A string that starts like a SQL statement (upper-case keywords, as every query here is written).
SQL_START = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|PRAGMA|WITH)\b")
FEEDBACK_TABLES = set(METADATA.tables)


def _sources(*packages: str) -> list[Path]:
    return sorted(path for package in packages for path in (REPO / package).rglob("*.py"))


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, dotted module) of every absolute import in ``tree``, at any depth; ``from bot import cli`` counts as
    ``bot.cli``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _imports_bot_cli(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import of `bot.cli` or a module under it."""
    return [(line, name) for line, name in _imported_modules(tree) if name == "bot.cli" or name.startswith("bot.cli.")]


def _imported_packages(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, top-level package) of every absolute import in ``tree``, at any depth."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


def _store_private_members() -> set[str]:
    """The single-underscore methods and ``self._x`` attributes of `feedback.store.FeedbackStore`."""
    tree = ast.parse((REPO / "feedback" / "store.py").read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "FeedbackStore")
    names = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    names |= {n.attr for n in ast.walk(cls)
              if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"}
    return {name for name in names if name.startswith("_") and not name.startswith("__")}


def _foreign_private_uses(tree: ast.AST, private: set[str]) -> list[tuple[int, str]]:
    """(line, ``obj._name``) for every ``<not self/cls>._name`` attribute or ``getattr(obj, "_name")``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in private:
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append((node.lineno, f"{ast.unparse(node.value)}.{node.attr}"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr") and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and node.args[1].value in private):
            found.append((node.lineno, f"{node.func.id}(…, {node.args[1].value!r})"))
    return found


def _sql_over_feedback_tables(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, first words) of every string constant (f-string parts joined) that is a SQL statement naming a
    table of the feedback store."""
    found = []
    parts = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    for node in ast.walk(tree):
        if id(node) in parts:  # a piece of an f-string, judged with the whole string
            continue
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        if SQL_START.match(text) and FEEDBACK_TABLES & set(re.findall(r"[a-z_]+", text)):
            found.append((node.lineno, " ".join(text.split())[:60]))
    return found


def test_the_store_has_the_private_members_this_test_guards() -> None:
    assert {"_lock", "_translating_errors"} <= _store_private_members()


def test_config_imports_no_upper_layer() -> None:
    offences = [f"{path.relative_to(REPO)}:{line} imports {package}"
                for path in _sources("config")
                for line, package in _imported_packages(ast.parse(path.read_text(encoding="utf-8")))
                if package in CONFIG_MUST_NOT_IMPORT]
    assert offences == [], "config must not import jobs/bot/knowledge:\n" + "\n".join(offences)


def test_the_slack_edge_never_imports_the_command_line() -> None:
    sources = _sources("bot/slack")
    assert len(sources) > 10, "bot/slack holds the Slack edge"
    offences = [f"{path.relative_to(REPO)}:{line} imports {name}"
                for path in sources
                for line, name in _imports_bot_cli(ast.parse(path.read_text(encoding="utf-8")))]
    assert offences == [], "bot.slack must not import bot.cli (move the shared piece down):\n" + "\n".join(offences)


def test_only_feedback_uses_the_store_private_members() -> None:
    private = _store_private_members()
    outside = [p for p in _sources(*PACKAGES) if p.relative_to(REPO).parts[0] != "feedback"]
    offences = [f"{path.relative_to(REPO)}:{line} uses {use}"
                for path in outside
                for line, use in _foreign_private_uses(ast.parse(path.read_text(encoding="utf-8")), private)]
    assert offences == [], ("use FeedbackStore.transaction()/snapshot() instead of its private members:\n"
                            + "\n".join(offences))


def test_sql_over_the_feedback_tables_lives_only_in_feedback() -> None:
    outside = [p for p in _sources(*PACKAGES) if p.relative_to(REPO).parts[0] != "feedback"]
    offences = [f"{path.relative_to(REPO)}:{line}: {sql}"
                for path in outside
                for line, sql in _sql_over_feedback_tables(ast.parse(path.read_text(encoding="utf-8")))]
    assert offences == [], ("move these queries into a feedback module and call it:\n" + "\n".join(offences))


def test_the_checks_catch_the_old_offences() -> None:
    """The two patterns issue 13 found are reported (so the checks above are not vacuous)."""
    old_config = ast.parse("from jobs.findings import SEVERITIES\ndef f():\n    import bot.cli\n")
    assert [p for _, p in _imported_packages(old_config)] == ["jobs", "bot"]
    edge = ast.parse("from bot.cli.logs import say\nfrom bot import cli\ndef f():\n    import bot.cli.main\n"
                     "from bot.records import record_answer\nfrom bot.slack.blocks import escape\n")
    assert [line for line, _ in _imports_bot_cli(edge)] == [1, 2, 4]
    old_jobs = ast.parse("def writing(store):\n    with store._lock:\n        yield store.db\n"
                         "def mine(self):\n    return self._lock\n")
    assert _foreign_private_uses(old_jobs, _store_private_members()) == [(2, "store._lock")]
    old_sql = ast.parse('rows = db.execute(f"SELECT doc_id, count(*) FROM citations WHERE x > {n}")\n'
                        'ok = "SELECT 1"\nprose = "Select the votes you want"\n')
    assert [line for line, _ in _sql_over_feedback_tables(old_sql)] == [1]
