"""Package layering, checked over the sources with `ast` (issue 13, "One owner for every table").

* `config` is the bottom layer: it never imports `jobs`, `bot` or `knowledge` (not even inside a function).
* The feedback store's private members (``_write``, ``_read``, ``_lock``, …) are used only inside `feedback`;
  everyone else goes through its public API (``store.write()`` / ``store.read()`` for transactions).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("bot", "config", "feedback", "jobs", "knowledge")
CONFIG_MUST_NOT_IMPORT = {"jobs", "bot", "knowledge"}


def _sources(*packages: str) -> list[Path]:
    return sorted(path for package in packages for path in (REPO / package).rglob("*.py"))


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


def test_the_store_has_the_private_members_this_test_guards() -> None:
    assert {"_write", "_read", "_lock"} <= _store_private_members()


def test_config_imports_no_upper_layer() -> None:
    offences = [f"{path.relative_to(REPO)}:{line} imports {package}"
                for path in _sources("config")
                for line, package in _imported_packages(ast.parse(path.read_text(encoding="utf-8")))
                if package in CONFIG_MUST_NOT_IMPORT]
    assert offences == [], "config must not import jobs/bot/knowledge:\n" + "\n".join(offences)


def test_only_feedback_uses_the_store_private_members() -> None:
    private = _store_private_members()
    outside = [p for p in _sources(*PACKAGES) if p.relative_to(REPO).parts[0] != "feedback"]
    offences = [f"{path.relative_to(REPO)}:{line} uses {use}"
                for path in outside
                for line, use in _foreign_private_uses(ast.parse(path.read_text(encoding="utf-8")), private)]
    assert offences == [], ("use FeedbackStore.write()/read() instead of its private members:\n"
                            + "\n".join(offences))


def test_the_checks_catch_the_old_offences() -> None:
    """The two patterns issue 13 found are reported (so the checks above are not vacuous)."""
    old_config = ast.parse("from jobs.findings import SEVERITIES\ndef f():\n    import bot.cli\n")
    assert [p for _, p in _imported_packages(old_config)] == ["jobs", "bot"]
    old_jobs = ast.parse("def writing(store):\n    with store._write():\n        yield store.db\n"
                         "def mine(self):\n    return self._lock\n")
    assert _foreign_private_uses(old_jobs, _store_private_members()) == [(2, "store._write")]
