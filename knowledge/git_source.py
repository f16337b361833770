"""Git repository sources: list tracked files and the files changed since the last synced commit.

With ``git: true`` a source folder inside a Git work tree is synced by commit: only files changed between
the last synced commit and HEAD are re-read (issue 3, "Pruning and change detection"); files no longer
tracked are pruned like deleted files. Uncommitted edits are not synced until they are committed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from config import SourceConfig
from knowledge.errors import SourceMissing
from knowledge.sources import SourceFile, list_folder


def _git(folder: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=60, check=True)
    except FileNotFoundError as exc:
        raise SourceMissing("git is not installed; install git or set `git: false` for this source") from exc
    except subprocess.CalledProcessError as exc:
        raise SourceMissing(f"git {' '.join(args)} failed in {folder}: {exc.stderr.strip()}") from exc
    return done.stdout


def list_git(source: SourceConfig, since: str | None) -> tuple[list[SourceFile], list[tuple[str, str]], set[str] | None, str]:
    """Tracked files of a Git-backed source and what changed since commit ``since``.

    Returns:
        (files, ignored, changed, head): files as `list_folder` gives them but only tracked ones; ``changed``
        is the set of paths (relative to the source folder) changed between ``since`` and HEAD, or None when
        there is no usable ``since`` (first sync, or history rewritten): then every file is checked.

    Raises:
        SourceMissing: the folder is missing or not inside a Git work tree.
    """
    folder = Path(source.path)
    files, ignored = list_folder(source)
    head = _git(folder, "rev-parse", "HEAD").strip()
    tracked = set(_git(folder, "ls-files", "-z", "--", ".").split("\0")) - {""}
    untracked = [f for f in files if f.rel_path not in tracked]
    ignored.extend((f.doc_id, "not tracked by git (commit it to sync it)") for f in untracked)
    files = [f for f in files if f.rel_path in tracked]
    changed = None
    if since:
        try:
            names = _git(folder, "diff", "--name-only", "--no-renames", "--relative", since, head, "--", ".")
            changed = set(names.splitlines())
        except SourceMissing:
            changed = None  # the old commit is gone (rebased history): fall back to checking every file
    return files, ignored, changed, head
