"""One reading of a page (`knowledge.markdown_tree`, issue 23): blocks with their lines, inline text from tokens,
and the answer units read from them (`knowledge.sentences.split_units`)."""

from __future__ import annotations

from knowledge.markdown_tree import CODE, HEADING, ITEM, LABEL, PARAGRAPH, ROW, TITLE, inline_text, parse_blocks
from knowledge.parsing import parse_document
from knowledge.sentences import CODE as CODE_UNIT
from knowledge.sentences import HEADING as HEADING_UNIT
from knowledge.sentences import SENTENCE, section_path, split_units
from tests.conftest import CORPUS, needs_shared

PYDANTIC = CORPUS / "pydantic-docs" / "v2.13.4"
HANDBOOK = CORPUS / "tts-handbook" / "2025-02"
RUNBOOKS = CORPUS / "prometheus-runbooks" / "runbooks"


def test_blocks_carry_their_lines_depth_number_and_header():
    text = ("# Plans\n\nIntro *one*. Two.\n\n1. First step\n   wrapped\n2. Second\n   - nested\n\n"
            "| Plan | Price |\n|---|---|\n| Pro | $49 |\n\n```python\nx = 1\n```\n")

    blocks = parse_blocks(text)

    assert [(b.kind, b.first, b.last) for b in blocks] == [
        (HEADING, 0, 1), (PARAGRAPH, 2, 3), (ITEM, 4, 6), (ITEM, 6, 7), (ITEM, 7, 8), (ROW, 11, 12), (CODE, 13, 16)]
    first, second, nested = blocks[2:5]
    assert (first.text, first.number, first.depth) == ("First step wrapped", 1, 1)
    assert (second.number, nested.depth, nested.number) == (2, 2, None)
    assert (blocks[5].header, blocks[5].cells) == (("Plan", "Price"), ("Pro", "$49"))


def test_site_extensions_are_structure_not_text():
    text = ('=== "Python 3.9"\n\n    Use `Optional`.\n\n=== "Python 3.10+"\n\n    Use `X | None`.\n\n'
            '!!! warning "Deprecated in v2"\n    Do not use it.\n\n!!! note\n    A plain note.\n\n'
            "/// version-added | v2.11\nNamed aliases work.\n///\n\n<details>\n<summary>Full context</summary>\n\n"
            "Why it fires.\n\n</details>\n\n<h3>Strictness</h3>\n")

    blocks = [(b.kind, b.text) for b in parse_blocks(text)]

    assert blocks == [(LABEL, "Python 3.9"), (PARAGRAPH, "Use `Optional`."), (LABEL, "Python 3.10+"),
                      (PARAGRAPH, "Use `X | None`."), (TITLE, "Deprecated in v2"), (PARAGRAPH, "Do not use it."),
                      (PARAGRAPH, "A plain note."), (TITLE, "Version added v2.11"), (PARAGRAPH, "Named aliases work."),
                      (PARAGRAPH, "Why it fires."), (HEADING, "Strictness")]


def test_inline_text_is_read_from_tokens():
    assert inline_text("A **bold** _word_ and `**kept**` code") == "A bold word and `**kept**` code"
    assert inline_text("Email [TTS Talent](mailto:tts@gsa.gov) or <mailto:a@gsa.gov>") == \
        "Email TTS Talent (tts@gsa.gov) or a@gsa.gov"
    assert inline_text("![diagram](d.png)A `List<String>` or List<String><br/>x &amp; y \\*<!-- old -->") == \
        "A `List<String>` or List<String> x & y *"
    assert inline_text("Post <!channel> or ping <@U12345>") == "Post <!channel> or ping <@U12345>"  # Slack's syntax
    assert inline_text("[Guide](https://x){target=_blank} and ## [ref][r]",
                       {"references": {"R": {"href": "https://r", "title": ""}}}) == "Guide and ## ref"


def test_a_tab_opening_a_continued_chunk_is_read_as_a_tab():
    """The chunker's overlap starts "…" right before a tab's line: the tab is still structure."""
    units = split_units('…=== "Annotated pattern"\n\n    Use `Annotated`. It works.')

    assert [(u.kind, u.display) for u in units] == [
        (HEADING_UNIT, "Annotated pattern"), (SENTENCE, "Use `Annotated`."), (SENTENCE, "It works.")]


def test_an_asides_caption_is_no_unit_and_ends_no_quote():
    """Pydantic's JSON page: the tip "Validating LLM Output" after the partial-JSON example, read as a heading,
    cut the quote of its sentence off from the example."""
    units = split_units('Parse it:\n\n```python\nfrom_json(data, allow_partial=True)\n```\n\n'
                        '!!! tip "Validating LLM Output"\n    This feature is particularly useful for LLM output.')

    assert [u.kind for u in units] == [SENTENCE, CODE_UNIT, SENTENCE]
    assert units[2].display == "This feature is particularly useful for LLM output."


@needs_shared
def test_a_migration_guide_tab_label_is_context_never_text():
    """Pydantic's migration guide shows its v1 imports in two tabs; the line reader joined each tab's marker to
    its first sentence ('=== "`pydantic>=1.10.17,<3`" As of `v1.10.17` …') and quotes showed it."""
    page = (PYDANTIC / "migration.md").read_text(encoding="utf-8")
    start = page.index("### Using Pydantic v1 features in a v1/v2 environment")
    text = page[start:page.index("\n## ", start)]

    units = split_units(text)

    assert not any("===" in u.display for u in units)
    first = next(k for k, u in enumerate(units) if u.display.startswith("As of `v1.10.17`"))
    assert units[first].kind == SENTENCE
    assert units[first].display == "As of `v1.10.17` the `.v1` namespace is available in V1, allowing imports as below:"
    assert [u.display for u in units if u.kind == HEADING_UNIT][1:3] == ["`pydantic>=1.10.17,<3`", "`pydantic<3`"]
    assert units[first + 1].kind == CODE_UNIT and "from pydantic.v1.fields import ModelField" in units[first + 1].display
    path = ("Migration Guide", "Continue using Pydantic V1 features", "Using Pydantic v1 features in a v1/v2 environment")
    assert section_path(path, text, units, first)[-2:] == (path[-1], "`pydantic>=1.10.17,<3`")


@needs_shared
def test_handbook_links_read_as_what_they_say():
    """The handbook's San Francisco page writes addresses as autolinks (``<mailto:peter.rowland@gsa.gov>``): the
    line reader kept them as written. Its links and emphasis read as words."""
    page = (HANDBOOK / "general-information-and-resources" / "san-francisco.md").read_text(encoding="utf-8")

    displays = [u.display for u in split_units(parse_document(page, "san-francisco.md").body)]

    locker = next(d for d in displays if d.startswith("If you would like a locker"))
    assert locker.endswith("please email peter.rowland@gsa.gov.")
    assert not any("<mailto:" in d or "](" in d or "**" in d for d in displays)


@needs_shared
def test_a_runbook_collapsible_is_no_text_but_its_content_is():
    """The runbooks wrap context in ``<details><summary>Full context</summary>``: the line reader made "Full
    context" a sentence of the page."""
    page = (RUNBOOKS / "general" / "TargetDown.md").read_text(encoding="utf-8")

    units = split_units(page)

    assert "Full context" not in [u.display for u in units]
    assert any(u.kind == SENTENCE and u.display.startswith("Prometheus works by sending an HTTP GET request")
               for u in units)


def test_a_github_alert_marker_reads_as_its_word():
    """A newcomer's page warned "> [!WARNING] Never print customer data…"; the reply showed the marker."""
    from knowledge.answering import tidy

    units = split_units("> [!WARNING]\n> Never print customer data in logs.\n\nThe printer is on floor 3.\n")

    assert units[0].display == "Warning: Never print customer data in logs."
    assert tidy("[!NOTE] Ask in #it first.") == "Note: Ask in #it first."


@needs_shared
def test_an_asides_example_with_two_blank_lines_in_it_is_one_code_block():
    """Pydantic's dataclasses page: the ``??? example`` under "Validators and initialization hooks" puts two blank
    lines between its classes (PEP 8). mdit-py-plugins ends an admonition at two blank lines, MkDocs does not: the
    rest of the example was read as sentences, and a Korean asker's direct answer led with
    "@model_validator(mode='before') @classmethod def before(cls, …"."""
    from config import ChunkingConfig
    from knowledge.chunking import chunk_document

    page = PYDANTIC / "concepts" / "dataclasses.md"
    doc = parse_document(page.read_text(encoding="utf-8"), "concepts/dataclasses.md")
    chunk = next(c for c in chunk_document(doc.title, doc.body, ChunkingConfig()) if "class Birth" in c.text)
    units = split_units(chunk.text)

    assert not [u for u in units if u.kind == SENTENCE and ("@dataclass" in u.display or "@model_validator" in u.display)]
    code = next(u for u in units if u.kind == CODE_UNIT and "class Birth" in u.display)
    assert "def after(self)" in code.display


def test_a_link_relative_to_its_page_leads_to_the_page_it_names():
    """A newcomer's leave page: "See the [expense policy](expenses.md) …" was quoted without its link, though the
    source's ``url_base`` says where the pages live (issue 23: relative links become absolute)."""
    from knowledge.markdown_tree import resolve_links

    page = "https://wiki.example/handbook/annual-leave.md"
    text = "See the [expense policy](expenses.md), [carry-over](#carry-over) and ![chart](chart.png)."

    assert resolve_links(text, page) == ("See the [expense policy](https://wiki.example/handbook/expenses.md), "
                                         "[carry-over](#carry-over) and ![chart](chart.png).")
    assert resolve_links(text, "annual-leave.md") == text  # no url_base: Slack shows the labels


@needs_shared
def test_an_accordions_html_heading_is_a_heading_and_its_button_no_text():
    """The external-speaking playbook's steps are accordions: ``<h3><button class="usa-accordion__button" …>Step 4:
    …</button></h3>`` then ``<div markdown=1>`` and the step's first paragraph with no blank line between. The
    button's tag had been read as text and led a direct answer (issue 22, hb-064)."""
    page = HANDBOOK / "training-and-development" / "external-speaking-request-playbook.md"
    doc = parse_document(page.read_text(encoding="utf-8"), page.name)

    units = split_units(doc.body)

    step = next(k for k, u in enumerate(units) if u.display == "Step 4: Prepare for your talk")
    assert units[step].kind == HEADING_UNIT
    assert units[step + 1].display.startswith("As your speaking engagement is moving through the approval process")
    assert not [u.display for u in units if "usa-accordion" in u.display or "<button" in u.display]
    assert inline_text("a <button\n  class='x'\n>Go</button> to List<String>") == "a Go to List<String>"


@needs_shared
def test_a_paragraph_that_is_one_bold_line_is_a_label_over_what_follows():
    """The security page titles its steps in bold ("**Getting ready to scan**"): read as a sentence, the label ran
    into an answer as "Getting ready to scan All of these tests must be conducted …" (issue 22)."""
    page = HANDBOOK / "launching-software" / "security.md"
    units = split_units(parse_document(page.read_text(encoding="utf-8"), page.name).body)

    kinds = {u.display: u.kind for u in units}
    assert kinds["Getting ready to scan"] == kinds["Greybox testing"] == HEADING_UNIT
    assert [b.kind for b in parse_blocks("**Never share it.**\n\nText.")][0] == PARAGRAPH  # a statement in bold
    assert [b.kind for b in parse_blocks("**a** and **b**\n\nText.")][0] == PARAGRAPH


def test_a_styling_tag_parts_no_words_and_a_break_does():
    """A newcomer's "Arrive at 9:30 on your <em>first day</em>." had read "… first day ." in the answer."""
    assert inline_text("Arrive at 9:30 on your <em>first day</em>.") == "Arrive at 9:30 on your first day."
    assert inline_text('a <span class="x">b</span>, c') == "a b, c"
    assert inline_text("line<br>next") == "line next"


def test_a_bold_line_over_text_on_the_next_lines_is_a_label_unless_it_leads_in():
    """A newcomer's "**Before you start**" with its first step on the next line read as one sentence, "Before you
    start Check the service catalogue …"; "**Warning:**" over an instruction stays one warning sentence."""
    blocks = parse_blocks("**Before you start**\nCheck the service catalogue first.\n")
    warning = parse_blocks("**Warning:**\nDo not raise the limits.\n")

    assert [(b.kind, b.text) for b in blocks] == [(LABEL, "Before you start"),
                                                   (PARAGRAPH, "Check the service catalogue first.")]
    assert [(b.kind, b.text) for b in warning] == [(PARAGRAPH, "Warning: Do not raise the limits.")]


def test_a_collapsible_titled_by_a_question_labels_what_it_folds():
    """A newcomer folded "What should I bring on the first day?" as a ``<details>`` caption over its answer: dropped
    as plumbing, the answer read as one more sentence of the page's opening."""
    blocks = parse_blocks("<details>\n<summary>What should I bring on the first day?</summary>\n\nBring your ID "
                          "card and your bank details.\n\n</details>\n")
    plumbing = parse_blocks("<details>\n<summary>Full context</summary>\n\nSome text.\n\n</details>\n")

    assert [(b.kind, b.text) for b in blocks] == [(LABEL, "What should I bring on the first day?"),
                                                   (PARAGRAPH, "Bring your ID card and your bank details.")]
    assert [(b.kind, b.text) for b in plumbing] == [(PARAGRAPH, "Some text.")]
