"""What replaces a named identifier (issue 9): "what's the v2 replacement for .dict()?" is answered by the
migration guide's row, not by the pages that only mention ``dict``."""

from __future__ import annotations

import pytest

from knowledge.replacements import normalise, replacement_terms, states_replacement
from tests.conftest import CORPUS, needs_shared, synced_kb


@pytest.mark.parametrize("question, terms", [
    ("in pydantic v2 whats the replacement for .dict()? getting deprecation warnings everywhere", {"dict()"}),
    ("whats the v2 equivalent of @validator(..., pre=True)", {"validator", "pre"}),
    ("pydantic v2에서 update_forward_refs() 쓰면 경고가 뜨는데 뭘로 바꿔야 돼요?", {"update_forward_refs()"}),
    ("pydantic v2 で Field(regex=...) がエラーになります。代わりに何を使えばいいですか？", {"regex"}),
    ("orm_mode / from_orm dont work anymore in v2", {"orm_mode", "from_orm"}),
    ("how do I verify the webhook signature header?", set()),  # names no code
    ("what does model_dump() return?", set()),  # names code, asks no replacement
])
def test_the_identifiers_a_question_asks_a_replacement_for(question, terms):
    assert replacement_terms(question) == terms


def test_names_are_compared_without_call_syntax_or_module_path():
    assert normalise(".dict()") == "dict()" and normalise("`dict`".strip("`")) == "dict"
    assert normalise("@root_validator(pre=True)") == "root_validator"
    assert normalise("pydantic.BaseModel") == "basemodel"


@pytest.mark.parametrize("text, kind, says", [
    ("Pydantic V1: `dict()` · Pydantic V2: `model_dump()`", "row", True),
    ("`regex` (use `pattern` instead)", "item", True),
    ("`@validator` has been deprecated, and should be replaced with `@field_validator`.", "sentence", True),
    ("In V2, `model_rebuild()` replaced `update_forward_refs()` from V1.", "sentence", True),
    ("depreciate `values(...)` and replace with `.dict(...)`, #99", "item", False),  # dict is the new name here
    ("Call `dict()` to get a `dict` of the fields.", "sentence", False),  # no replacement
    ("Use `dict()` freely.", "sentence", False),  # no other identifier
    ("Use `Mapping` instead of `dict` for inputs.", "sentence", False),  # the type, not the method dict()
])
def test_a_unit_that_says_what_replaces_the_name(text, kind, says):
    terms = {"dict()", "regex", "validator", "update_forward_refs()"}
    assert states_replacement(text, kind, terms) is says


@pytest.fixture(scope="module")
def pydantic_kb(tmp_path_factory, sample_settings, embedder):
    """The real Pydantic v2 migration guide, its models page and its usage errors."""
    tmp = tmp_path_factory.mktemp("pydantic")
    docs = CORPUS / "pydantic-docs" / "v2.13.4"
    return synced_kb(tmp, {
        "migration.md": docs / "migration.md",
        "models.md": docs / "concepts" / "models.md",
        "usage_errors.md": docs / "errors" / "usage_errors.md",
    }, sample_settings, embedder)


@needs_shared
@pytest.mark.parametrize("question, first", [
    ("in pydantic v2 whats the replacement for .dict()? getting deprecation warnings everywhere",
     "Pydantic V1: `dict()` · Pydantic V2: `model_dump()` [1]"),
    ("whats the v2 equivalent of @validator(..., pre=True)", "migrate to `@field_validator`"),
])
def test_a_question_asking_what_replaces_a_name_is_answered_by_the_migration_guides_line(pydantic_kb, question,
                                                                                        first):
    """Checked by hand once: before, the first was answered with `allow_mutation` → `frozen` and the second
    with `@root_validator`'s `skip_on_failure`."""
    answer = pydantic_kb.ask(question)
    assert not answer.refused
    assert first.removesuffix(" [1]") in answer.direct_answer
    assert answer.citations[0].doc_id == "docs:migration.md"
