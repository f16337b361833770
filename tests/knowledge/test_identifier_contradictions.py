"""Contradictions in identifiers (issue 11 item 6): codes, namespaces, channels and config values.

Real pair (checked by hand in corpus/tts-handbook/2025-02): training-and-development/olu.md says OLU time is
coded "`969 - GSA-mandated Non-Billable Work`", while about-us/tts-consulting/operations/tock.md's table of
"Common nonbillable TTSC Tock codes" gives GSA-mandated as 1347 (969 is the 2021 snapshot's line, gone from
2025's tools/tock.md). tools/tock.md's "18F Non-Billable Work - #968" is another line, and its "#1814" for
administrative work agrees with the table's 18F column: neither may be flagged. The 2021-12 and 2025-02
versions of tools/tock.md differ in codes, but a version and its successor is supersession, never a contradiction.
"""

from __future__ import annotations

import pytest

from config import Settings, SourceConfig
from knowledge import KnowledgeBase
from knowledge.contradictions import find_contradictions
from knowledge.identifiers import extract_identifiers
from tests.conftest import CORPUS, copy_pages, needs_shared

HANDBOOK = CORPUS / "tts-handbook"
CURRENT = ("training-and-development/olu.md", "about-us/tts-consulting/operations/tock.md", "tools/tock.md")


def _ids(text: str) -> list[tuple[str, str, str]]:
    return [(i.unit, i.text, " ".join(i.label)) for i in extract_identifiers(text)]


def test_identifiers_of_each_kind_are_read_with_what_they_name():
    assert _ids("- **Out of Office - #670:** Any time you are out.") == [("code", "670", "out offic")]
    assert _ids("Time is coded as `969 - GSA-mandated Non-Billable Work` in Tock.") == [
        ("code", "969", "gsa mandat non billabl work")]
    assert _ids("Check the `kube-proxy` pods in the `kube-system` namespace.") == [("namespace", "kube-system", "")]
    assert _ids("Run `kubectl -n monitoring logs alertmanager-main-0`.") == [("namespace", "monitoring", "")]
    assert _ids("Page the team in #ops-oncall.") == [("channel", "ops-oncall", "")]
    assert _ids("Set `retention_days: 30` and start with `--log-level debug`.") == [
        ("config:retention_days", "30", ""), ("config:--log-level", "debug", "")]
    assert _ids("Jobs go to the `jobs-high` queue.") == [("name:queue", "jobs-high", "")]
    # addresses, references and placeholders are not identifiers
    assert _ids("Pick it up in Suite #200, room #5685; see issue #1077 and `kubectl -n $NAMESPACE get pods`.") == []


@needs_shared
def test_a_setting_after_a_negation_is_no_statement_of_it():
    """Pydantic's migration guide says you "can no longer run with `skip_on_failure=False`"; its usage errors say
    you "MUST specify `skip_on_failure=True`": the whole-corpus run reported them as stating True and False."""
    docs = CORPUS / "pydantic-docs" / "v2.13.4"
    migration = (docs / "migration.md").read_text(encoding="utf-8")
    usage = (docs / "errors" / "usage_errors.md").read_text(encoding="utf-8")

    def settings(text):
        return {i.text for i in extract_identifiers(text) if i.unit == "config:skip_on_failure"}

    assert settings(migration) <= {"True"} and settings(usage) == {"True"}
    assert [i.text for i in extract_identifiers("Do not set `debug: true` in production.")] == []


def test_table_cells_under_a_codes_heading_are_codes_of_their_row():
    table = ("##### Common Tock codes\n\n| Work type | CoE feds | 18F |\n|---|---|---|\n"
             "| GSA-mandated | 1347 | *NA* |\n| Staffing | *NA* | 1812 |\n")
    assert _ids(table) == [("code", "1347", "gsa mandat"), ("code", "1812", "staf")]
    assert _ids(table.replace("Common Tock codes", "Who to ask")) == []  # numbers in any table are not codes


def test_labelled_codes_name_the_same_thing_only_when_one_name_holds_the_other():
    (a,), (b,), (c,) = (extract_identifiers(t) for t in (
        "Code it as `969 - GSA-mandated Non-Billable Work`.", "- **18F Non-Billable Work - #968:** Other time.",
        "##### Tock codes\n\n| Work | CoE |\n|---|---|\n| GSA-mandated | 1347 |\n"))
    assert a.conflicts_with(c) and a.same_subject(c) == 1.0
    assert a.conflicts_with(b) and a.same_subject(b) == 0.0  # two lines of one timesheet


def _kb(root, home, embedder, *, versions: str = "") -> KnowledgeBase:
    settings = Settings(sources=[SourceConfig(name="handbook", path=str(root), versions=versions)])
    settings.hygiene.gate = False
    kb = KnowledgeBase(settings, home, embedder=embedder)
    kb.sync()
    return kb


@needs_shared
def test_a_code_contradiction_between_two_current_real_pages_is_found(tmp_path, embedder):
    root = copy_pages(tmp_path / "handbook", {p: HANDBOOK / "2025-02" / p for p in CURRENT})
    found = find_contradictions(_kb(root, tmp_path / "home", embedder).index(), embedder)
    codes = [c for c in found if c.kind == "code"]
    olu = [c for c in codes if {c.doc_a, c.doc_b} == {"handbook:about-us/tts-consulting/operations/tock.md",
                                                       "handbook:training-and-development/olu.md"}]
    assert olu and {olu[0].value_a, olu[0].value_b} == {"1347", "969"}, [c.to_json() for c in codes]
    assert "GSA-mandated" in olu[0].sentence_a and "OLU" in olu[0].sentence_b
    assert not [c for c in codes if "968" in (c.value_a, c.value_b)]  # "18F Non-Billable Work" is another line
    assert not [c for c in codes if "1814" in (c.value_a, c.value_b)]  # the table's 18F column agrees


@needs_shared
def test_two_versions_of_one_page_never_contradict(tmp_path, embedder):
    for snapshot in ("2021-12", "2025-02"):
        copy_pages(tmp_path / "handbook" / snapshot, {"tools/tock.md": HANDBOOK / snapshot / "tools/tock.md"})
    kb = _kb(tmp_path / "handbook", tmp_path / "home", embedder, versions="folders")
    assert find_contradictions(kb.index(), embedder) == []
    # without the setting the dated folders are still read as versions of the page (issue 28)
    assert find_contradictions(_kb(tmp_path / "handbook", tmp_path / "home2", embedder).index(), embedder) == []
    # the same two texts as two current pages do disagree (36 vs 32 billable hours): the version rule, not
    # the text, keeps a page and its successor apart
    for folder, snapshot in (("finance", "2021-12"), ("people", "2025-02")):
        copy_pages(tmp_path / "pages" / folder, {"tools/tock.md": HANDBOOK / snapshot / "tools/tock.md"})
    assert find_contradictions(_kb(tmp_path / "pages", tmp_path / "home3", embedder).index(), embedder)


@needs_shared
def test_an_html_comment_and_an_anchor_are_never_a_channel():
    """Issue 26 item 3: Pydantic's ``<!-- old anchor … -->`` and ``[](){#ip-address-types}`` were read as a Slack
    channel and paired with another page's anchor as a contradiction."""
    from knowledge.identifiers import extract_identifiers

    page = (CORPUS / "pydantic-docs" / "v2.13.4" / "api" / "standard_library_types.md").read_text(encoding="utf-8")
    assert [i.text for i in extract_identifiers(page) if i.kind == "channel"] == []
    assert [i.text for i in extract_identifiers("Ask in #admins-slack for access.") if i.kind == "channel"]
