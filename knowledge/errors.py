"""Errors raised by the knowledge package, all under `KnowledgeError` (a `config.errors.MinervaError`).

    KnowledgeError
    ├── SourceUnreadable      a file cannot be read as text (binary, not UTF-8, too large, I/O error)
    ├── DocumentInvalid       a file was read but cannot be parsed (broken front matter, no text)
    │   └── DocumentStub      a stub, not content: no sentence states anything (placeholders, TODO, links only)
    ├── SourceMissing         a configured source folder does not exist
    ├── IndexNotBuilt         no complete index generation exists yet
    ├── IndexIncompatible     the live index was built by another embedding model or format
    ├── GateRejected          the A/B gate kept the live generation (gap-query scores fell too far)
    ├── QuestionInvalid       an empty or oversized question
    └── DatasetInvalid        an evaluation folder is not in BEIR layout or has a malformed file
"""

from config.errors import MinervaError


class KnowledgeError(MinervaError):
    """Base class of every error the knowledge package raises on purpose."""


class SourceUnreadable(KnowledgeError):
    """A source file cannot be read as UTF-8 text; the sync skips it and reports the reason."""


class DocumentInvalid(KnowledgeError):
    """A source file was read but cannot be turned into a document; skipped with the reason."""


class DocumentStub(DocumentInvalid):
    """A page with no sentence that states anything (`knowledge.parsing.stub_reason`): generator directives
    (``::: pydantic.x``), macro placeholders, TODO/TBD, only links or pointers, only headings or its title. A
    short page is no stub: one sentence of fact is content. Not indexed, listed in the sync report's skipped
    as "stub: …"."""


class SourceMissing(KnowledgeError):
    """A configured or given source folder does not exist or is not a folder."""


class ForeignIndex(KnowledgeError):
    """A full sync would remove every page of the live index: none of its collections is a source of the
    config in use, which usually means the wrong config for this MINERVA_HOME (the bundled sample's, in a
    shell where MINERVA_CONFIG was not set). ``sync(replace=True)`` (`minerva ingest --replace`) does it anyway."""


class IndexNotBuilt(KnowledgeError):
    """No complete index generation exists under MINERVA_HOME. Run `minerva ingest` first."""


class IndexIncompatible(KnowledgeError):
    """The live index was built with a different embedding model or index format than configured."""


class QuestionInvalid(KnowledgeError):
    """The question is empty or longer than `answer.max_question_chars`; the message says which."""


class DatasetInvalid(KnowledgeError):
    """An evaluation dataset folder is missing a file or has a malformed line; the message names both."""


class GateRejected(KnowledgeError):
    """The A/B gate kept the live index generation: the candidate's gap-query scores fell too far.

    Raised from sync's ``before_switch`` hook (`knowledge.gaps.make_gate`), so the candidate is discarded
    and the old generation stays live. The message says which scores fell; ``result`` holds them all.

    Attributes:
        result: the `knowledge.gaps.GateResult` (old and new scores), or None.
    """

    def __init__(self, message: str, result=None):
        super().__init__(message)
        self.result = result
