"""Content that is not content, renames and outdated pages (issue 11 item 7), on real corpus pages.

- a generated API stub (``::: pydantic.types``) is never indexed and the sync report says "stub: …";
- a stub is a page with no sentence that states anything (TODO, placeholders, only links or headings), not a
  short page: a one-sentence fact is indexed and answered (issue 27, "nothing is dropped");
- ``redirect_from`` makes the old path an alias: feedback on the archived old page counts for the new one;
- ``outdated: true`` is shown in every citation and raises a freshness finding when the page is cited.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from config import Settings, SourceConfig
from knowledge import KnowledgeBase
from knowledge.errors import DocumentStub
from knowledge.parsing import parse_document, redirect_paths, stub_reason
from tests.conftest import CORPUS, copy_pages, needs_shared

PYDANTIC = CORPUS / "pydantic-docs" / "v2.13.4"
HANDBOOK = CORPUS / "tts-handbook"
POLICIES = "travel-and-leave/travel-and-leave-policies"
OLD = f"handbook:2021-12/{POLICIES}/travel-guide-3-reimbursement.md"
NEW = f"handbook:2025-02/{POLICIES}/travel-guide-4-reimbursement.md"
HISTORY = "handbook:2025-02/18f/history-and-values.md"


@needs_shared
@pytest.mark.parametrize("page, reason", [
    ("api/types.md", "stub: generator directives only (::: pydantic.types)"),
    ("api/validate_call.md", "stub: generator directives only (::: pydantic.validate_call_decorator)"),
    ("api/config.md", "stub: generator directives only (::: pydantic.config; ::: pydantic.alias_generators)"),
])
def test_generated_api_pages_are_stubs(page: str, reason: str) -> None:
    with pytest.raises(DocumentStub) as raised:
        parse_document((PYDANTIC / page).read_text(encoding="utf-8"), page)
    assert str(raised.value) == reason


@needs_shared
def test_a_page_with_a_sentence_around_its_directives_is_content() -> None:
    page = PYDANTIC / "api" / "base_model.md"
    assert parse_document(page.read_text(encoding="utf-8"), "api/base_model.md").body.startswith("Pydantic models")


def test_placeholders_a_bare_title_and_a_pointer_are_stubs() -> None:
    assert stub_reason("{{< ref \"./Other.md\" >}}\n\n<!-- generated -->", "Other") == "macro placeholders only"
    assert stub_reason("# Node RAID Disk Failure\n", "Node RAID Disk Failure") == "title only"
    assert stub_reason("See the other page.", "Moved") == "a pointer only (See the other page.)"
    assert stub_reason("Use the #tock channel for help.", "Tock") == ""
    assert stub_reason("사내 VPN 접속 방법", "VPN") == ""             # CJK characters count as words


@pytest.mark.parametrize("body, title", [
    ("The lynx enclosure opens at 10:00.", "Lynx enclosure"),          # 4 words once the title's are out
    ("# Lynx\n\nThe lynx enclosure opens at 10:00.", "Lynx"),
    ("Free parking.", "Parking"),
    ("Closed on Sundays.", "Opening hours"),
    ("Contact [Jane Doe](mailto:jane@zoo.example).", "Owner"),         # a sentence around a link
    ("- [VPN guide](vpn.md): how to connect from home", "Guides"),    # a link with what it is for
    ("| Plan | Price |\n|---|---|\n| Team | $10 |", "Plans"),          # a table row
    ("```bash\nkubectl drain node-1\n```", "Drain a node"),           # a command
    ("API 키는 90일마다 바뀝니다.", "API 키"),
    ("The VPN needs MFA. TODO: add screenshots.", "VPN"),             # a to-do beside a statement
])
def test_a_page_with_one_sentence_that_states_something_is_content(body: str, title: str) -> None:
    assert stub_reason(body, title) == ""


@pytest.mark.parametrize("body, title, reason", [
    ("TODO", "VPN", "to-do or placeholder text only (TODO)"),
    ("# VPN\n\nTBD\n\n## Setup\n\n**TODO:** write the setup steps, with screenshots.", "VPN",
     "to-do or placeholder text only (TBD)"),
    ("Coming soon.", "Parking", "to-do or placeholder text only (Coming soon.)"),
    ("Price: TBD", "Pricing", "to-do or placeholder text only (Price: TBD)"),
    ("Lorem ipsum dolor sit amet, consectetur adipiscing elit.", "Draft",
     "to-do or placeholder text only (Lorem ipsum dolor sit amet, consectetur adipiscing elit.)"),
    ("準備中です。", "VPN", "to-do or placeholder text only (準備中です。)"),
    ("- [Lynx](lynx.md)\n- [Zoo map](https://zoo.example/map)\n- https://zoo.example/tickets", "Links",
     "links only (3 links)"),
    ("This page has moved to [the new handbook](https://handbook.example/).", "Old", "links only (1 link)"),
    ("For details see [Rate limits](rate-limits.md).", "Limits", "links only (1 link)"),
    ("[VPN 가이드](vpn.md) 참고", "VPN", "links only (1 link)"),
    ("# NodeRAIDDiskFailure\n\nSee [Node RAID Degraded]()", "Node RAID Disk Failure", "links only (1 link)"),
    ("Deprecated.", "Old API", "no sentence that states anything (too few words: Deprecated.)"),
    ("TODO: fill in.\n\nSee [the old page](old.md).", "VPN",
     "no sentence that states anything (to-do or placeholder text, links: TODO: fill in.)"),
])
def test_a_page_with_no_sentence_that_states_anything_is_a_stub(body: str, title: str, reason: str) -> None:
    assert stub_reason(body, title) == reason


@needs_shared
def test_the_raid_disk_failure_runbook_is_still_a_stub() -> None:
    """It is a heading and "See [Node RAID Degraded](…)": a pointer to another runbook, nothing of its own
    (it was skipped before as "2 words"; now for what it is)."""
    page = CORPUS / "prometheus-runbooks" / "runbooks" / "node" / "NodeRAIDDiskFailure.md"
    with pytest.raises(DocumentStub, match=r"^stub: links only \(1 link\)$"):
        parse_document(page.read_text(encoding="utf-8"), "runbooks/node/NodeRAIDDiskFailure.md")


def test_a_one_sentence_fact_is_indexed_and_answered_while_todo_and_link_pages_are_skipped(tmp_path, embedder) -> None:
    folder = tmp_path / "zoo"
    pages = {
        "lynx.md": "---\ntitle: Lynx enclosure\nowner: U0KEEPER1\n---\n\nThe lynx enclosure opens at 10:00.\n",
        "penguins.md": "# Penguin pool\n\nThe penguin pool is fed at 14:30 every day, and visitors may watch from the "
                       "north gallery. Feeding is cancelled when the water temperature is above 12 degrees.\n",
        "parking.md": "---\ntitle: Parking\n---\n\n# Parking\n\nTODO: write this page (ask facilities).\n",
        "links.md": "# Useful links\n\n- [Lynx enclosure](lynx.md)\n- [Penguin pool](penguins.md)\n"
                    "- [Zoo map](https://zoo.example/map)\n",
    }
    for name, text in pages.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    kb = KnowledgeBase(Settings(sources=[SourceConfig(name="zoo", path=str(folder))]), tmp_path / "home",
                       embedder=embedder)

    report = kb.sync()

    assert sorted(report.added) == ["zoo:lynx.md", "zoo:penguins.md"]
    assert dict(report.skipped) == {
        "zoo:parking.md": "stub: to-do or placeholder text only (TODO: write this page (ask facilities).)",
        "zoo:links.md": "stub: links only (3 links)",
    }
    answer = kb.ask("When does the lynx enclosure open?")
    assert not answer.refused and answer.citations[0].doc_id == "zoo:lynx.md"
    assert "10:00" in answer.text


def test_redirect_paths_are_normalised() -> None:
    assert redirect_paths(["/tools/teams/", "tools/teams.html", "https://h.example/a/b/index.html", 3, ""]) == \
        ["tools/teams", "a/b"]
    assert redirect_paths("/travel-guide-3-reimbursement/") == ["travel-guide-3-reimbursement"]
    assert redirect_paths(None) == []


@pytest.fixture(scope="module")
def corpus_kb(tmp_path_factory, embedder):
    """Real pages in a temporary folder, synced once for the module (read-only use): two Pydantic API stubs
    and a concepts page, the renamed travel guide in both handbook snapshots, and the 18F history page that
    says it is outdated."""
    if not CORPUS.is_dir():
        pytest.skip(f"the real corpora are not here ({CORPUS} is missing)")
    tmp_path = tmp_path_factory.mktemp("corpus-kb")
    pydantic = copy_pages(tmp_path / "pydantic", {"api/types.md": PYDANTIC / "api" / "types.md",
                                                  "api/validate_call.md": PYDANTIC / "api" / "validate_call.md",
                                                  "concepts/alias.md": PYDANTIC / "concepts" / "alias.md"})
    handbook = copy_pages(tmp_path / "handbook", {
        f"2021-12/{POLICIES}/travel-guide-3-reimbursement.md": HANDBOOK / "2021-12" / POLICIES / "travel-guide-3-reimbursement.md",
        f"2025-02/{POLICIES}/travel-guide-4-reimbursement.md": HANDBOOK / "2025-02" / POLICIES / "travel-guide-4-reimbursement.md",
        "2025-02/18f/history-and-values.md": HANDBOOK / "2025-02" / "18f" / "history-and-values.md",
    })
    settings = Settings(sources=[
        SourceConfig(name="pydantic", path=str(pydantic), url_base="https://docs.pydantic.dev/latest/"),
        SourceConfig(name="handbook", path=str(handbook), versions="folders", url_base="https://handbook.tts.gsa.gov/"),
    ])
    kb = KnowledgeBase(settings, tmp_path / "home", embedder=embedder)
    report = kb.sync()
    return kb, report, pydantic


@needs_shared
def test_stubs_are_skipped_with_the_reason_and_never_quoted(corpus_kb) -> None:
    kb, report, _ = corpus_kb
    skipped = dict(report.skipped)
    assert skipped["pydantic:api/types.md"] == "stub: generator directives only (::: pydantic.types)"
    assert skipped["pydantic:api/validate_call.md"].startswith("stub: generator directives only")
    documents = kb.index().documents
    assert "pydantic:api/types.md" not in documents and "pydantic:concepts/alias.md" in documents
    (hits,) = kb.search(["pydantic.types validate_call_decorator"], top_k=10, mode="bm25")
    assert hits and all(hit.doc_id.startswith(("pydantic:concepts/", "handbook:")) for hit in hits)
    saved = sorted((kb.home / "sync-reports").glob("*.json"))[-1]
    assert {"path": "pydantic:api/types.md", "reason": "stub: generator directives only (::: pydantic.types)"} in \
        json.loads(saved.read_text(encoding="utf-8"))["skipped"]


@needs_shared
def test_a_page_that_becomes_a_stub_leaves_the_index(tmp_path, embedder) -> None:
    folder = copy_pages(tmp_path / "handbook", {"tools/teams.md": HANDBOOK / "2025-02" / "tools" / "teams.md"})
    kb = KnowledgeBase(Settings(sources=[SourceConfig(name="handbook", path=str(folder))]), tmp_path / "home",
                       embedder=embedder)
    assert kb.sync().added == ["handbook:tools/teams.md"]
    (folder / "tools" / "teams.md").write_text("---\ntitle: Microsoft Teams\n---\n# Microsoft Teams\n\n{% include x.html %}\n",
                                               encoding="utf-8")
    again = kb.sync()
    assert dict(again.skipped)["handbook:tools/teams.md"] == "stub: title only"
    assert again.deleted == ["handbook:tools/teams.md"] and kb.index().documents == {}


@needs_shared
def test_a_renamed_page_inherits_the_feedback_of_its_old_path(corpus_kb, tmp_path) -> None:
    from feedback import FeedbackStore
    from jobs._common import alias_targets, current_doc_id
    from jobs.signals import bad_docs
    from tests.jobs.monitoring_helpers import add_answer, make_ctx

    kb, _, _ = corpus_kb
    documents = kb.index().documents
    assert documents[NEW]["aliases"] == ["travel-guide-3-reimbursement", f"{POLICIES}/travel-guide-3-reimbursement"]
    assert documents[OLD]["stage"] == "archived"  # its own redirect_from names a root path, not the new page
    targets = alias_targets(documents)
    assert targets[OLD] == NEW and targets["handbook:travel-guide-3-reimbursement.md"] == NEW
    assert current_doc_id("handbook:2019-01/travel-guide-3-reimbursement.md", documents, targets) == NEW
    assert current_doc_id(HISTORY, documents, targets) == HISTORY

    with FeedbackStore.open(tmp_path / "minerva.sqlite") as store:
        for i in range(20):  # rated on the old page while it was current: 3 of 20 👍
            add_answer(store, question=f"how do I get reimbursed for travel? ({i})", cited=(OLD,),
                       votes=("up",) if i % 7 == 0 else ("down",))
        ctx = make_ctx(store, tmp_path, kb.settings, kb)
        (finding,) = bad_docs.run(ctx)
    assert finding.labels == {"doc_id": NEW} and finding.n == 20       # the current page, not the archived one


@needs_shared
def test_an_outdated_page_is_marked_in_every_citation_and_raises_a_freshness_finding(corpus_kb, tmp_path) -> None:
    from bot.slack.blocks import _citation_line
    from bot.cli.render_text import render_answer_text as render_answer
    from feedback import FeedbackStore
    from jobs.signals import freshness
    from tests.jobs.monitoring_helpers import add_answer, make_ctx

    kb, _, _ = corpus_kb
    assert kb.index().documents[HISTORY]["outdated"] is True and kb.index().documents[NEW]["outdated"] is False
    answer = kb.ask("Which teams paved the way for 18F's existence?")
    (citation,) = [c for c in answer.citations if c.doc_id == HISTORY]
    assert citation.outdated
    assert citation.outdated and ":warning: outdated" in _citation_line(citation)
    assert "OUTDATED" in render_answer(answer)
    assert [c["outdated"] for c in answer.to_json()["citations"] if c["doc_id"] == HISTORY] == [True]
    others = [c for c in answer.citations if c.doc_id != HISTORY]
    assert all(not c.outdated and "outdated" not in _citation_line(c) for c in others)

    with FeedbackStore.open(tmp_path / "minerva.sqlite") as store:
        now = datetime.now(timezone.utc)
        ctx = make_ctx(store, kb.home, kb.settings, kb, now=now)
        assert [f for f in freshness.run(ctx) if f.alert == "outdated_cited"] == []   # not cited: quiet
        for i in range(3):
            add_answer(store, question="who paved the way for 18F?", cited=(HISTORY,),
                       created_at=now - timedelta(days=i + 1))
        (finding,) = [f for f in freshness.run(ctx) if f.alert == "outdated_cited"]
    assert finding.labels == {"doc_id": HISTORY} and finding.n == 3 and "outdated" in finding.summary
