"""Git repository sources: list tracked files and the files changed since the last synced commit.

With ``git: true`` a source folder inside a Git work tree is synced by commit: only files changed between
the last synced commit and HEAD are re-read (issue 3, "Pruning and change detection"); files no longer
tracked are pruned like deleted files. Uncommitted edits are not synced until they are committed.
"""

from __future__ import annotations

import subprocess
from datetime import datetime, timezone
from pathlib import Path

import structlog

from config import SourceConfig
from knowledge.errors import SourceMissing
from knowledge.sources import SourceFile, list_folder

log = structlog.get_logger(__name__)


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


def uncommitted_edits(source: SourceConfig) -> list[str]:
    """Tracked files of a ``git: true`` source (paths relative to its folder, sorted) whose edits are not
    committed: a sync by commit leaves them as they were until they are (a newcomer's edit was not picked up,
    with no word). Empty when git cannot tell.
    """
    try:
        names = _git(Path(source.path), "diff", "--name-only", "--no-renames", "--relative", "HEAD", "--", ".")
    except SourceMissing:
        return []
    return sorted(n for n in names.splitlines() if n)


def git_work_tree(folder: Path) -> bool:
    """True when ``folder`` is inside a Git work tree (a ``.git`` folder or file in it or an ancestor)."""
    folder = Path(folder).resolve()
    return any((parent / ".git").exists() for parent in (folder, *folder.parents))


class FileDates:
    """A page's ``last_modified`` when its front matter has none: its last commit in a Git source, else mtime.

    A source is a Git source when it sets ``git: true`` or its folder is inside a Git work tree (a cloned
    folder's mtimes are the clone's time; its history knows the real dates). The history is read once, on
    the first lookup, with ONE ``git log --name-only`` over the folder (and one ``git diff`` for files with
    uncommitted edits, which keep their mtime, as do untracked files). If git fails, every file uses mtime
    (logged once).
    """

    def __init__(self, source: SourceConfig):
        self.folder = Path(source.path)
        self.use_git = source.git or git_work_tree(self.folder)
        self._commits: dict[str, datetime] | None = None

    def last_modified(self, file: SourceFile) -> tuple[datetime, str]:
        """``(date, where from)``: ``(last commit's committer date, "git")`` or ``(file.mtime, "mtime")``."""
        if self.use_git:
            if self._commits is None:
                self._commits = self._read_history()
            when = self._commits.get(file.rel_path)
            if when is not None:
                return when, "git"
        return file.mtime, "mtime"

    def _read_history(self) -> dict[str, datetime]:
        try:
            log_text = _git(self.folder, "-c", "core.quotepath=off", "log", "--format=%x01%cI", "--name-only",
                            "--no-renames", "--relative", "--", ".")
            dirty = set(_git(self.folder, "-c", "core.quotepath=off", "diff", "--name-only", "--relative",
                             "HEAD", "--", ".").splitlines())
        except SourceMissing as exc:
            log.warning("git_dates.unavailable", folder=str(self.folder), reason=str(exc))
            return {}
        commits: dict[str, datetime] = {}
        when = None
        for line in log_text.splitlines():
            if line.startswith("\x01"):
                when = datetime.fromisoformat(line[1:].strip()).astimezone(timezone.utc)
            elif line and when is not None and line not in commits and line not in dirty:
                commits[line] = when  # newest first: the first commit naming a path is its last change
        log.info("git_dates.read", folder=str(self.folder), files=len(commits), uncommitted=len(dirty))
        return commits
