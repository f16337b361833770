"""The message catalogue: every sentence Minerva says to a user, in English, Korean and Japanese (issue 23 item 5).

One YAML file per language under ``knowledge/locales/`` (package data), loaded once. Keys are dotted paths
(``"answer.refusal"``); values are `str.format` templates (``"{days} days ago"``). English is the reference:
a key or a language missing elsewhere falls back to it, so a reply is never left without a sentence. Only the
framing is translated (labels, hints, refusals, buttons, confirmations); quoted page text stays in its own
language. Lives in `knowledge` so both `knowledge` (refusals, low-confidence notes) and `bot` (Slack blocks,
confirmations) use it; `knowledge` never imports `bot`.
"""

from __future__ import annotations

import functools
from importlib import resources

import yaml

#: The reference language: every key exists in it, and any other falls back to it.
DEFAULT_LANGUAGE = "en"
#: Languages with a catalogue (`knowledge.language.LANGUAGES`).
CATALOGUE_LANGUAGES = ("en", "ko", "ja")


class MissingMessage(KeyError):
    """A key that is not even in the English catalogue: a programming error, never a user's."""


@functools.cache
def catalogue(language: str) -> dict[str, str]:
    """The flat catalogue of ``language`` (dotted key → template), read once; {} for a language without one."""
    if language not in CATALOGUE_LANGUAGES:
        return {}
    path = resources.files("knowledge").joinpath("locales", f"{language}.yaml")
    return _flatten(yaml.safe_load(path.read_text(encoding="utf-8")) or {})


def _flatten(tree: dict, prefix: str = "") -> dict[str, str]:
    """``{"a": {"b": "x"}}`` → ``{"a.b": "x"}``."""
    flat: dict[str, str] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = str(value)
    return flat


def normalise_language(language: str | None) -> str:
    """``"ko"`` for ``"ko"``, ``"KO"`` or ``"ko-KR"``; `DEFAULT_LANGUAGE` for None, "" or a language without a
    catalogue."""
    code = (language or "").strip().lower().replace("_", "-").split("-")[0]
    return code if code in CATALOGUE_LANGUAGES else DEFAULT_LANGUAGE


def message(key: str, language: str | None = DEFAULT_LANGUAGE, **values: object) -> str:
    """The sentence ``key`` in ``language``, its ``{fields}`` filled from ``values``.

    Args:
        key: dotted catalogue key, e.g. ``"answer.refusal"``.
        language: ``"en"``, ``"ko"``, ``"ja"`` (a region such as ``"ko-KR"`` is ignored); anything else, or a
            key this language lacks, gives the English sentence.
        values: the template's fields (``message("citation.days_ago", "ja", days=3)`` → ``"3日前"``).

    Raises:
        MissingMessage: ``key`` is not in the English catalogue.
    """
    english = catalogue(DEFAULT_LANGUAGE)
    if key not in english:
        raise MissingMessage(key)
    template = catalogue(normalise_language(language)).get(key, english[key])
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError):  # a translation naming a field English does not: say it in English
        return english[key].format(**values)


def stated_date(day: str, date_source: str, language: str | None = DEFAULT_LANGUAGE) -> str:
    """A page's date ``day`` (YYYY-MM-DD) as a reader should take it: as is, or "file date 2026-12-05" when it is
    only its file's modification time (``date_source`` "mtime": no front matter date, no Git history), the day the
    file was copied; a page copied today looked like the current one against a page dated in its front matter (a
    newcomer's 20 vs 25 vacation days)."""
    return message("answer.file_date", language, date=day) if day and date_source == "mtime" else day


def age_text(days: int, language: str | None = DEFAULT_LANGUAGE) -> str:
    """How long ago a source changed, as replies say it: "today", "1 day ago", "12 days ago" (or the
    ``language``'s words for them)."""
    if days <= 0:
        return message("citation.today", language)
    if days == 1:
        return message("citation.one_day_ago", language)
    return message("citation.days_ago", language, days=days)
