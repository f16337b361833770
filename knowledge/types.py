"""Plain data objects that leave the knowledge package.

Nothing here knows about Slack or SQLite: `bot/` renders these, `feedback/` stores their fields.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone

from knowledge.messages import age_text, message

#: Confidence bands (DESIGN.md "Retrieval and answers"): score >= high → cite it; low <= score < high →
#: shown only when nothing better exists, marked low confidence; score < low → excluded.
CONFIDENCE_HIGH = "high"
CONFIDENCE_LOW = "low"

_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(?<![\w`])([*_]{1,3})(?=\S)(.+?)(?<=\S)\1(?![\w`])")


def _plain_heading(heading: str) -> str:
    """A heading without Markdown links (their label kept) or emphasis marks."""
    return _EMPHASIS.sub(r"\2", _MD_LINK.sub(r"\1", heading))


@dataclass(frozen=True)
class Passage:
    """One retrieved chunk, with everything a citation needs.

    Attributes:
        chunk_id: stable id, ``"{doc_id}#{index}"``.
        doc_id: stable document id, ``"{collection}:{relative path}"``.
        collection: collection name from config.
        title: document title (front matter ``title``, first heading, or file name).
        url: link to the page, or its path when no link is configured.
        heading_path: headings from the document root down to the chunk, e.g. ``("Leave", "Annual leave")``.
        text: the chunk's original text (Markdown, Liquid tags stripped); never escaped for Slack. When its
            section goes on in the next chunk, that chunk's text follows (`knowledge.continuation`).
        score: calibrated relevance in [0, 1], comparable across queries (see `knowledge.scoring`).
        dense_score: raw cosine similarity in [-1, 1] of question and chunk embeddings.
        bm25_score: raw BM25 score (>= 0, not comparable across queries); 0.0 when BM25 did not return it.
        confidence: ``"high"`` or ``"low"`` (band of ``score``); ``""`` for raw search results.
        last_modified: source modification time, timezone-aware UTC.
        visibility: ``"public"`` or ``"restricted"``.
        evidence: what ``score`` was combined from (`knowledge.scoring.EVIDENCE_FEATURES` → value):
            cosine, best unit cosine, IDF-weighted coverage, BM25 share, rank agreement.
        unit_scores: ``((start, end, cosine), ...)`` of the chunk's embedded answer units against the
            question (`knowledge.sentences`); empty when the index has no unit vectors.
        outdated: the page marks itself out of date (front matter ``outdated: true``; issue 11 item 7).
        date_source: where ``last_modified`` comes from: ``"front matter"``, ``"git"`` (last commit) or
            ``"mtime"`` (the file's modification time: when it was copied, not when it was written); "" unknown.
        unit_xl: ``((start, end, cosine), ...)`` of its answerable units under the cross-lingual model, for
            the answer reader (`knowledge.crosslingual.with_reader_cosines`); empty when not read so.
    """

    chunk_id: str
    doc_id: str
    collection: str
    title: str
    url: str
    heading_path: tuple[str, ...]
    text: str
    score: float
    dense_score: float
    bm25_score: float
    last_modified: datetime
    confidence: str = ""
    visibility: str = "public"
    evidence: dict = field(default_factory=dict, compare=False)
    unit_scores: tuple = field(default=(), compare=False)
    outdated: bool = False
    unit_xl: tuple = field(default=(), compare=False)
    date_source: str = ""

    @property
    def heading(self) -> str:
        """The heading path below the title joined with " › ", or "" at the document root; a heading's
        Markdown is shown as a reader sees it: "## Reporting [Phishing](https://…)" reads "Reporting Phishing",
        "You _do not_ need PRA clearance if:" reads "You do not need PRA clearance if:"."""
        return " › ".join(_plain_heading(h) for h in self.heading_path if h != self.title)

    def age_days(self, now: datetime | None = None) -> int:
        """Whole days since the source was last modified (>= 0)."""
        now = now or datetime.now(timezone.utc)
        return max(0, (now - self.last_modified).days)


@dataclass(frozen=True)
class Citation:
    """A numbered source of an answer. ``number`` starts at 1 and matches ``[n]`` markers in the answer.
    ``outdated``: the page marks itself out of date (front matter ``outdated: true``); every rendering of
    the citation says so. ``date_source``: where ``last_modified`` comes from (`Passage.date_source`)."""

    number: int
    doc_id: str
    title: str
    url: str
    heading: str
    score: float
    last_modified: datetime
    visibility: str = "public"
    outdated: bool = False
    date_source: str = ""

    def age_days(self, now: datetime | None = None) -> int:
        """Whole days since the source was last modified (>= 0)."""
        now = now or datetime.now(timezone.utc)
        return max(0, (now - self.last_modified).days)

    def age_text(self, now: datetime | None = None, language: str = "en") -> str:
        """How long ago the source changed, as every reply says it: "today", "1 day ago", "12 days ago" (in
        ``language``, `knowledge.messages`)."""
        return age_text(self.age_days(now), language)

    def updated_text(self, now: datetime | None = None, language: str = "en") -> str:
        """"updated 12 days ago", or "file changed today" when the page has no date of its own (front matter or
        Git) and its file's modification time stands in: a page copied today is not one maintained today."""
        key = "citation.file_changed" if self.date_source == "mtime" else "citation.updated"
        return message(key, language, age=self.age_text(now, language))


@dataclass
class Answer:
    """The result of asking one question.

    Attributes:
        answer_id: uuid4 hex, 32 characters; the key votes refer to.
        question: the question as asked (whitespace-trimmed).
        refused: True when no passage reached the low-confidence cut-off; then ``passages`` and
            ``citations`` are empty and ``text`` is the refusal sentence.
        text: plain answer text: quoted passages, each followed by its ``[n]`` marker.
        passages: quoted passages in display order; ``passages[i]`` is cited by ``citation_numbers[i]``.
        citation_numbers: citation number of each passage (several passages may share a document).
        quotes: the quoted (possibly cut) text of each passage, as shown in ``text``.
        citations: one per cited document, numbered from 1.
        retrieved: every candidate considered, best first: dicts with ``chunk_id``, ``doc_id``, ``score``.
        top_score: best calibrated score among candidates, in [0, 1] (0.0 when nothing was retrieved).
        low_confidence: True when the answer rests only on low-confidence passages.
        latency_ms: wall time of retrieval and composition, in milliseconds.
        language: detected language of the question: ``"en"``, ``"ko"`` or ``"ja"``.
        direct_answer: the one to three sentences (list items, table rows) that answer the question, each
            followed by its ``[n]`` marker; shown first. ``""`` for a refusal.
        warnings: notes the reader must see before trusting the answer, e.g. two quoted sources that state
            different values for the same thing (seed 004 §13.6).
        hallucination_flag: True when a generated answer had a sentence its cited passage does not support
            (removed or marked by the grounding check; DESIGN.md's hallucination flag).
        answered_from: the cited doc ids the direct answer's units came from, in citation order (the pages
            its votes judge, issue 26); empty for a refusal.
        generated: True when ``direct_answer`` was written by the configured generator, not extracted.
        follow_up_of: answer id of the earlier answer in the same Slack thread this question follows up on.
        confidence: the fitted reader's probability that the direct answer holds the fact asked, in [0, 1]
            (`knowledge.reader`); 0.0 for a refusal made before reading.
        reader: what that probability was read from (`knowledge.reader.ANSWER_FEATURES` → value).
        low_confidence_reason: why a low-confidence reply is one, in a few words ("another section may
            answer it"); "" otherwise.
        high_confidence: the reader's confidence reached its fitted "high" level (`knowledge.reader`).
        closest: for a refusal, the closest pages searched (dicts with ``title``, ``url``, ``collection``),
            at most two, offered as links, never quoted.
    """

    answer_id: str
    question: str
    refused: bool
    text: str
    passages: list[Passage] = field(default_factory=list)
    citation_numbers: list[int] = field(default_factory=list)
    quotes: list[str] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    retrieved: list[dict] = field(default_factory=list)
    top_score: float = 0.0
    low_confidence: bool = False
    latency_ms: float = 0.0
    language: str = "en"
    direct_answer: str = ""
    warnings: list[str] = field(default_factory=list)
    hallucination_flag: bool = False
    generated: bool = False
    follow_up_of: str | None = None
    confidence: float = 0.0
    reader: dict = field(default_factory=dict)
    low_confidence_reason: str = ""
    high_confidence: bool = False
    closest: list[dict] = field(default_factory=list)
    answered_from: list[str] = field(default_factory=list)  # doc ids the direct answer's units came from

    @property
    def confidence_label(self) -> str:
        """What the asker is told: ``"refused"``, ``"low"`` (with ``low_confidence_reason``), ``"high"`` (the
        reader's confidence reached the level where ≥ 90 % of replies hold the fact) or ``""`` (no label)."""
        if self.refused:
            return "refused"
        if self.low_confidence:
            return "low"
        return "high" if self.high_confidence else ""

    def to_json(self) -> dict:
        """The CLI/JSON contract of DESIGN.md: answer_id, answer, refused, citations[doc_id,title,url,score];
        plus the question (a batch's lines pair with their questions without counting) and more."""
        return {
            "answer_id": self.answer_id,
            "question": self.question,
            "answer": self.text,
            "direct_answer": self.direct_answer,
            "warnings": list(self.warnings),
            "refused": self.refused,
            "low_confidence": self.low_confidence,
            "confidence": round(self.confidence, 3),
            "low_confidence_reason": self.low_confidence_reason,
            "confidence_label": self.confidence_label,
            "closest": list(self.closest),
            "top_score": round(self.top_score, 4),
            "hallucination_flag": self.hallucination_flag,
            "generated": self.generated,
            "follow_up_of": self.follow_up_of,
            "citations": [
                {"doc_id": c.doc_id, "title": c.title, "url": c.url, "heading": c.heading, "score": round(c.score, 4),
                 "outdated": c.outdated}
                for c in self.citations
            ],
        }


@dataclass
class SyncReport:
    """What one `sync` did. Counts are documents unless named ``chunks_*``.

    ``skipped`` holds ``(path, reason)`` pairs for files that could not be read or parsed; nothing else
    is lost when a file is skipped. ``duplicates`` and ``partials`` list chunks stopped or queued by the
    near-duplicate gate (``chunk_id``, ``of``, ``similarity``); ``archived`` the documents superseded by a
    newer version; ``warnings`` decisions worth a look (e.g. two documents claiming the same version).
    ``near_duplicates`` lists, for review, each document the gate stopped chunks of: ``doc_id``, ``of`` (the
    document it mostly copies), ``of_documents``, ``chunks_stopped``, ``chunks_total``, ``first_chunk_kept``.
    ``problems`` lists every active document with zero searchable chunks: ``doc_id``, ``problem``, ``reason``.
    ``missing`` holds ``(source name, reason)`` for configured sources whose folder is gone: their
    documents are kept, the other sources are synced, and the CLI exits non-zero so cron notices.
    ``dates`` counts where the documents (re)built in this sync took ``last_modified`` from:
    ``{"front matter": n, "git": n, "mtime": n}``. ``version_chains``: each family of two or more versions found
    outside snapshot sources (`knowledge.versions.version_chains`: its doc ids oldest first and the active one).
    ``chunks_embedded`` / ``units_embedded``: chunk texts and answer-unit texts the main model embedded in this
    sync (the rest came from the previous generation or the embedding cache).
    """

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    duplicates: list[dict] = field(default_factory=list)
    partials: list[dict] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    near_duplicates: list[dict] = field(default_factory=list)
    problems: list[dict] = field(default_factory=list)
    missing: list[tuple[str, str]] = field(default_factory=list)
    dates: dict[str, int] = field(default_factory=dict)
    version_chains: list[dict] = field(default_factory=list)
    chunks_total: int = 0
    chunks_embedded: int = 0
    units_embedded: int = 0
    generation: str = ""
    seconds: float = 0.0

    def to_json(self) -> dict:
        """A JSON-ready dict of this report."""
        data = asdict(self)
        data["skipped"] = [{"path": p, "reason": r} for p, r in self.skipped]
        data["missing"] = [{"source": n, "reason": r} for n, r in self.missing]
        return data
