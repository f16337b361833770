"""What replaces a named identifier: "what's the v2 replacement for `.dict()`?" (issue 9).

A question that names code (``.dict()``, ``@validator(..., pre=True)``, ``update_forward_refs()``,
``Field(regex=...)``, ``orm_mode``) and asks what to use instead is answered by one line of a migration
guide: a table row ``| `dict()` | `model_dump()` |``, "`@validator` … should be replaced with
`@field_validator`", "`regex` (use `pattern` instead)", "`orm_mode` → `from_attributes`". Similarity search
misses that line: the identifier is one token among many in a long table, and "dict" is also the word of
every page about dictionaries. So the line is looked up: the chunks holding the identifier *written as
code* next to another identifier and a word of replacement. This is exact-match lookup of a named entity,
the step question-answering systems run beside ranked retrieval for names (as a search engine answers a
product code from its catalogue rather than from page similarity).

kb-dev: 4 of its 30 hand-checked answers (dev-032, dev-035, dev-056, dev-058) named a V1 identifier and
were answered from pages that mention it without its replacement.
"""

from __future__ import annotations

import regex

from knowledge.sentences import ROW

#: What a question says when it asks what to use instead of something (English, Korean, Japanese).
_ASKS_INSTEAD = regex.compile(
    r"replac|equivalent|instead|alternative|deprecat|migrat|renam|successor|substitut|"
    r"\bwhat (do|should|can) (i|we) use\b|\bno longer\b|\bdoes ?n[o']t work\b|\bdont work\b|\bin v\d\b|\bv\d equivalent\b|"
    r"바꿔|바꾸|대신|대체|代わり|置き換|移行|非推奨", regex.I)
#: Code in a question: `backticked`, name(...) calls and .method(), @decorators, snake_case names, key= arguments.
_QUESTION_CODE = regex.compile(
    r"`(?P<tick>[^`\n]+)`|(?<![\w.])[.@]?(?P<call>[A-Za-z_][\w.]*)\((?P<args>[^)\n]{0,60})\)|(?<![\w.])@(?P<deco>[A-Za-z_]\w*)"
    r"|(?<![\w.])(?P<snake>[A-Za-z]\w*_\w+)|(?<![\w.])(?P<kwarg>[A-Za-z_]\w*)\s*=")
_KWARG = regex.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*=")
_CODE_SPAN = regex.compile(r"`([^`\n]+)`")
#: A unit that says one thing replaces another: replaced, renamed, "use X instead", "in favour of", an arrow.
_SAYS_REPLACED = regex.compile(r"replac|renam|instead|in favou?r of|deprecat|\bnow\b|\buse\b|→|->|\bmoved\b|\bbecome", regex.I)
#: Words right before a name that make it the new one ("replace with `.dict()`", "renamed to `x`") or the old
#: one ("`model_rebuild()` replaced `update_forward_refs()`").
_NEW_NAME_BEFORE = regex.compile(r"\b(with|to|by|into|becomes?|use)\s*$", regex.I)
_OLD_NAME_BEFORE = regex.compile(r"\b(replaced|replaces|supersedes|instead of|in place of)\s*$", regex.I)
#: Words too general to look up as code ("True", "None", "self").
_NOT_NAMES = frozenset({"true", "false", "none", "self", "cls", "str", "int", "x", "y", "v", "value", "field"})


def replacement_terms(question: str) -> set[str]:
    """The identifiers ``question`` asks a replacement for, normalised (`normalise`): ``{"dict"}`` for
    "whats the replacement for .dict()?", ``{"validator", "pre"}`` for "v2 equivalent of
    @validator(..., pre=True)"; empty when it names no code or does not ask what to use instead."""
    if not _ASKS_INSTEAD.search(question):
        return set()
    terms = set()
    for m in _QUESTION_CODE.finditer(question):
        name = m.group("tick") or (m.group(0) if m.group("call") else None) or m.group("deco") or m.group("snake") \
            or m.group("kwarg")
        terms.add(normalise(name))
        terms.update(normalise(k) for k in _KWARG.findall(m.group("args") or ""))
    # a call's own name ("Field" of Field(regex=...)) is kept only when nothing more specific is named
    specific = {t for t in terms if t.removesuffix("()") not in _NOT_NAMES}
    return specific or {t for t in terms if t not in {"true", "false", "none", ""}}


def normalise(code: str) -> str:
    """An identifier as compared: lower case, without a leading ``.``/``@``, a module path, arguments or a
    trailing ``=``; a call keeps ``()`` (the method ``dict()`` is not the type ``dict``), a decorator does not:
    ``.dict(...)`` → ``dict()``, ``@root_validator(pre=True)`` → ``root_validator``, ``pydantic.BaseModel`` →
    ``basemodel``."""
    code = code.strip()
    call = "(" in code and not code.startswith("@")  # a method: `dict()` is not the type `dict`
    name = code.split("(", 1)[0].rstrip("=: ").lstrip(".@").rsplit(".", 1)[-1].lower()
    return f"{name}()" if call and name else name


def states_replacement(text: str, kind: str, terms: set[str]) -> bool:
    """Whether one answer unit (``text``, of ``kind`` from `knowledge.sentences`) says what replaces one of
    ``terms``: it holds the term as inline code and another identifier as inline code, it is a table row (a
    table of old and new names) or says "replaced", "renamed", "instead", "→", and the term is the old name:
    written first, or right after "replaced"/"instead of", never right after "with"/"to"/"by"."""
    spans = [(m.start(), normalise(m.group(1))) for m in _CODE_SPAN.finditer(text)]
    named = [at for at, name in spans if name in terms]
    if not named or all(name in terms for _, name in spans):
        return False
    if not (kind == ROW or _SAYS_REPLACED.search(text)):
        return False
    # the named identifier must be the old name: "`dict()` → `model_dump()`", not "replace … with `.dict()`"
    before = text[:named[0]]
    if _NEW_NAME_BEFORE.search(before):
        return False
    return bool(_OLD_NAME_BEFORE.search(before)) or any(at > named[0] for at, name in spans if name not in terms)


def may_state_replacement(text: str, terms: set[str]) -> bool:
    """A cheap test of a chunk's raw text before its units are split: one of ``terms`` appears in inline code."""
    return any(normalise(s) in terms for s in _CODE_SPAN.findall(text))
