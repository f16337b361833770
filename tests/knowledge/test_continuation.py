"""A section split over two chunks is read as one passage: the answer in the next piece is found."""

from __future__ import annotations

import pytest

from config import ChunkingConfig
from knowledge.chunking import chunk_document
from knowledge.continuation import continues, joined, joined_unit_scores
from knowledge.parsing import parse_document
from knowledge.sentences import embeddable_units
from tests.conftest import CORPUS, needs_shared, synced_kb

HANDBOOK = CORPUS / "tts-handbook" / "2025-02"
SECURITY = HANDBOOK / "general-information-and-resources" / "tech-policies" / "security-incidents.md"


def _records(path):
    doc = parse_document(path.read_text(encoding="utf-8"), path.name)
    return doc, [{"doc_id": "d", "index": c.index, "heading_path": list(c.heading_path), "text": c.text}
                 for c in chunk_document(doc.title, doc.body, ChunkingConfig())]


@needs_shared
def test_two_pieces_of_a_section_join_into_the_pages_text_without_their_repeat():
    doc, chunks = _records(SECURITY)
    pairs = [(a, b) for a, b in zip(chunks, chunks[1:]) if continues(a, b)]
    assert len(pairs) >= 3
    flat = " ".join(doc.body.split())
    for a, b in pairs:
        text, shift = joined(a["text"], b["text"])
        assert " ".join(text.lstrip("…").split()) in flat  # nothing repeated, nothing lost
        # an offset into the second piece past its repeat lands on the same character of the joined text
        end = len(b["text"]) - 1
        assert text[end + shift] == b["text"][end]


@needs_shared
def test_a_sentence_cut_between_two_pieces_is_one_unit_with_a_cosine():
    doc, chunks = _records(SECURITY)
    cut = []
    for a, b in zip(chunks, chunks[1:]):
        if not continues(a, b):
            continue
        text, shift = joined(a["text"], b["text"])
        first = tuple((u.start, u.end, 0.1) for u in embeddable_units(a["text"]))
        second = tuple((u.start, u.end, 0.5) for u in embeddable_units(b["text"]))
        scores = joined_unit_scores(text, len(a["text"]), first, second, shift)
        whole = {(s, e) for s, e, _ in scores if e <= len(a["text"])}
        assert whole <= {(s, e) for s, e, _ in first}  # the first piece's units keep their place and cosine
        cut += [c for s, e, c in scores if s < len(a["text"]) < e]
    # a sentence across the cut (the page has some) takes the better cosine of its two halves
    assert cut and set(cut) == {0.5}


@pytest.fixture(scope="module")
def split_sections_kb(tmp_path_factory, sample_settings, embedder):
    """Real pages whose answers sit in the second piece of a long section."""
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} is missing")
    tmp = tmp_path_factory.mktemp("split")
    return synced_kb(tmp, {
        "security-incidents.md": SECURITY,
        "sensitive-information.md": HANDBOOK / "general-information-and-resources" / "sensitive-information.md",
        "google-drive.md": HANDBOOK / "tools" / "google-drive.md",
    }, sample_settings, embedder)


@needs_shared
@pytest.mark.parametrize("question, fact", [
    # the steps follow "To report a security incident, follow all of the steps below:" in the next piece
    ("how fast do i have to report a security incident and who do i email?", "gsa-ir@gsa.gov"),
    # "consider it compromised … Do not delete the commit" is the second piece of "Protecting sensitive information"
    ("oops just pushed an aws secret key to a public github repo. should i force push to get rid of the commit?",
     "Do not delete the commit"),
])
def test_the_answer_in_the_next_piece_of_a_section_is_the_direct_answer(split_sections_kb, question, fact):
    answer = split_sections_kb.ask(question)
    assert fact in answer.direct_answer, answer.direct_answer


@needs_shared
def test_a_passage_and_the_next_piece_of_its_section_are_one_passage(split_sections_kb):
    passages = split_sections_kb.search(["how fast do i have to report a security incident and who do i email?"],
                                       top_k=5)[0]
    texts = [p.text for p in passages]
    steps = [t for t in texts if "gsa-ir@gsa.gov, and devops@gsa.gov" in t]
    assert steps and "follow _all_ of the steps below" in steps[0]
    assert len({p.chunk_id for p in passages}) == len(passages)
    assert all(not a.startswith(b[:200]) and b[:200] not in a for a in texts for b in texts if a is not b)
