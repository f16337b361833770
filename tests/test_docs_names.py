"""Every command and config key the README and the `docs/` pages name exists (issue 24 item 1): a renamed
command or key fails here, not in a newcomer's shell.

- commands: each ``minerva …`` in inline code or a code block, global options skipped, must resolve to a
  command (and a subcommand of a group) of `bot.cli.main.cli`;
- config keys: each `` `section.key` `` whose section is a section of `config.Settings` must be a field of it, or
  a name the code emits (a log event such as ``slack.app_id_unchecked``); each key listed at the top level of a
  row of the configuration table (``| `section` | `key` (…), `key` …``) must be a field of that section.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import typing
from pathlib import Path

import click
import pytest

from bot.cli.main import cli
from config import settings as settings_module

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_INLINE = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
#: Options of the `minerva` group that take a value (skipped with it before the command's name).
_GROUP_OPTIONS = {"--config", "--home", "--log-level", "--log-format"}


def _section_classes() -> dict[str, type]:
    """``section`` → its dataclass, for the fields of `config.Settings` whose type is one (``X | None`` too)."""
    out = {}
    for name, kind in typing.get_type_hints(settings_module.Settings).items():
        kinds = [k for k in (typing.get_args(kind) or (kind,)) if dataclasses.is_dataclass(k)]
        if kinds:
            out[name] = kinds[0]
    out["sources"] = settings_module.SourceConfig  # a list of them
    out["channels"] = settings_module.ChannelConfig  # a mapping of them, by channel id
    return out


SECTIONS = _section_classes()


def _code_texts(text: str) -> list[str]:
    blocks = _FENCE.findall(text)
    inline = _INLINE.findall(_FENCE.sub("", text))
    return [line for block in blocks for line in block.splitlines()] + inline


def _commands(page: Path) -> list[list[str]]:
    found = []
    for code in _code_texts(page.read_text(encoding="utf-8")):
        for part in re.split(r"&&|\|\||;|\|", code):
            words = part.strip().split()
            if words[:1] != ["minerva"]:
                continue
            try:
                words = shlex.split(part.strip().split("#")[0])
            except ValueError:
                continue
            found.append(words[1:])
    return found


def _resolve(args: list[str]) -> str | None:
    """None when ``args`` name an existing command path; else what is missing."""
    group: click.Command = cli
    rest = list(args)
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option in _GROUP_OPTIONS and "=" not in option and rest:
            rest.pop(0)
    if not rest or rest[0] in ("--help", "…", "...") or rest[0].isupper():
        return None
    command = group.get_command(None, rest[0]) if isinstance(group, click.Group) else None
    if command is None:
        return f"no command {rest[0]!r}"
    if isinstance(command, click.Group) and len(rest) > 1 and not rest[1].startswith("-") and not rest[1].isupper():
        if command.get_command(None, rest[1]) is None:
            return f"no command {rest[0]} {rest[1]!r}"
    return None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_a_page_names_exists(page):
    missing = [f"minerva {' '.join(args)}: {why}" for args in _commands(page) if (why := _resolve(args))]
    assert missing == []


def _emitted_names() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for package in ("bot", "config", "feedback", "jobs", "knowledge")
                     for p in (REPO / package).rglob("*.py"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_config_key_a_page_names_exists(page):
    code = _emitted_names()
    text = page.read_text(encoding="utf-8")
    wrong = []
    for section, key in re.findall(r"`([a-z_]+)\.([a-z_]+)`", text):
        if section in SECTIONS and key not in {f.name for f in dataclasses.fields(SECTIONS[section])} \
                and f'"{section}.{key}"' not in code:
            wrong.append(f"{section}.{key}")
    for section, rest in re.findall(r"^\| `([a-z_]+)(?:\[\])?` \| (.+?) \|$", text, re.M):
        if section in SECTIONS:
            fields = {f.name for f in dataclasses.fields(SECTIONS[section])}
            wrong += [f"{section}.{key}" for key in _top_level_keys(rest) if key not in fields]
    assert wrong == []


def _top_level_keys(cell: str) -> list[str]:
    """The backticked identifiers that start each comma-separated item of ``cell`` outside parentheses and
    braces (``"`a` (x, `y`), `b`"`` → a, b); a cell that opens with words ("optional, absent = off: `k` …")
    starts at its first backtick."""
    items, depth, current = [], 0, ""
    for ch in cell[cell.find("`"):] if "`" in cell else "":
        depth += ch in "({"
        depth -= ch in ")}"
        if ch == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += ch
    items.append(current)
    keys = []
    for item in items:
        match = re.match(r"\s*`([a-z_][a-z_0-9]*)`", item)
        if match:
            keys.append(match.group(1))
    return keys


def test_the_configuration_page_lists_every_key():
    """docs/configuration.md says it holds "every key": every section of `config.Settings` has its row, and each
    row names every field of its section (a newcomer met keys the config accepted that the page left out)."""
    text = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([a-z_]+)(?:\[\])?` \| (.+?) \|$", text, re.M))
    missing = [section for section in SECTIONS if section not in rows]
    for section, cls in SECTIONS.items():
        listed = set(_top_level_keys(rows.get(section, "")))
        missing += [f"{section}.{f.name}" for f in dataclasses.fields(cls) if f.name not in listed]
    assert missing == []
