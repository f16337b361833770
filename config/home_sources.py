"""Sources recorded by folder ingests: ``{MINERVA_HOME}/sources.yaml``.

``minerva ingest ./docs`` records the folder here (name = the folder's name, absolute path), so a later plain
``minerva ingest`` syncs it with the configured sources instead of pruning its pages, and every
per-collection command (``killswitch``, ``docs --collection``, ...) knows the name. ``minerva sources list``
shows them, ``minerva sources remove NAME`` forgets one (its pages are pruned by the next plain ingest).

File format (written by Minerva; editing by hand is fine)::

    # Folders recorded by `minerva ingest FOLDER` ...
    sources:
      - name: docs
        path: /home/me/docs
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path

import yaml

from config.settings import ConfigError, Settings, SourceConfig, _build, read_yaml_mapping

#: The state file's name under MINERVA_HOME.
HOME_SOURCES_FILE = "sources.yaml"
_HEADER = ("# Folders recorded by `minerva ingest FOLDER`: a plain `minerva ingest` syncs them with the configured\n"
           "# sources. Forget one with `minerva sources remove NAME`; for url_base, versions etc. move it into\n"
           "# your config file (see `minerva init`).\n")


def home_sources_path(home: str | Path) -> Path:
    """``{home}/sources.yaml``."""
    return Path(home) / HOME_SOURCES_FILE


def load_home_sources(home: str | Path) -> list[SourceConfig]:
    """The sources recorded under ``home`` ([] when the file does not exist).

    Raises:
        ConfigError: the file is unreadable, not valid YAML, or an entry has an unknown key or a wrong type.
    """
    path = home_sources_path(home)
    if not path.is_file():
        return []
    raw = read_yaml_mapping(path, "recorded sources")
    items = raw.get("sources") or []
    if not isinstance(items, list):
        raise ConfigError(f"{path}: `sources` must be a list")
    try:
        return [_build(SourceConfig, item, where=f"sources[{i}].") for i, item in enumerate(items)]
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def with_home_sources(settings: Settings, home: str | Path) -> Settings:
    """``settings`` with the sources recorded under ``home`` appended (the config's sources come first).

    A recorded source whose name is already configured is left out (the config wins); ``settings`` itself
    is not changed.

    Raises:
        ConfigError: the state file is broken (see `load_home_sources`).
    """
    configured = {s.name for s in settings.sources}
    extra = [s for s in load_home_sources(home) if s.name not in configured]
    if not extra:
        return settings
    return dataclasses.replace(settings, sources=[*settings.sources, *extra])


def record_home_sources(home: str | Path, settings: Settings, sources: list[SourceConfig]) -> list[SourceConfig]:
    """Record folder sources under ``home`` so later plain ingests keep them.

    Args:
        home: MINERVA_HOME.
        settings: the loaded settings (with recorded sources merged or not): a source already configured
            or recorded with the same name and path is not recorded again.
        sources: the folder sources to record (name, absolute path).

    Returns:
        The sources newly recorded (those already known are left out).

    Raises:
        ConfigError: a given name is taken by a configured or recorded source with another path (the
            message says which and how to resolve it).
    """
    recorded = load_home_sources(home)
    known = {s.name: s for s in [*settings.sources, *recorded]}
    added = []
    for source in sources:
        other = known.get(source.name)
        if other is not None:
            if Path(other.path).resolve() != Path(source.path).resolve():
                raise ConfigError(
                    f"a source named {source.name!r} already exists with path {other.path}; rename the folder, "
                    f"or `minerva sources remove {source.name}` first if it was recorded by an earlier ingest")
            continue
        known[source.name] = source
        recorded.append(source)
        added.append(source)
    if added:
        _write(home, recorded)
    return added


def remove_home_source(home: str | Path, name: str) -> SourceConfig:
    """Forget the recorded source ``name``; returns it.

    Raises:
        ConfigError: no source of that name was recorded under ``home`` (the message lists those that were).
    """
    recorded = load_home_sources(home)
    match = [s for s in recorded if s.name == name]
    if not match:
        raise ConfigError(f"no recorded source named {name!r} in {home_sources_path(home)}; "
                          f"recorded: {[s.name for s in recorded]} (configured sources are edited in the config file)")
    _write(home, [s for s in recorded if s.name != name])
    return match[0]


def _write(home: str | Path, sources: list[SourceConfig]) -> None:
    """Write the state file atomically (a temp file renamed over it)."""
    path = home_sources_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    defaults = SourceConfig(name="", path="")
    entries = [{k: v for k, v in dataclasses.asdict(s).items()
                if k in ("name", "path") or v != getattr(defaults, k)} for s in sources]
    text = _HEADER + yaml.safe_dump({"sources": entries}, sort_keys=False, allow_unicode=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".sources-", suffix=".yaml")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(tmp, path)
