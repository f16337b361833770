"""Minerva's knowledge side: sources → parse → chunk → embed → hybrid index → retrieve → answer.

Public names are re-exported here; `bot/` and `jobs/` import from this module only.
"""

from knowledge.errors import (
    DocumentInvalid,
    ForeignIndex,
    GateRejected,
    IndexIncompatible,
    IndexNotBuilt,
    KnowledgeError,
    QuestionInvalid,
    SourceMissing,
    SourceUnreadable,
)
from knowledge.followup import ask_in_thread, follow_up_query
from knowledge.generator import improve_answer
from knowledge.retrieval import MODES, SearchFilter
from knowledge.service import KnowledgeBase, validate_question
from knowledge.types import Answer, Citation, Passage, SyncReport

__all__ = [
    "MODES",
    "Answer",
    "Citation",
    "DocumentInvalid",
    "ForeignIndex",
    "GateRejected",
    "IndexIncompatible",
    "IndexNotBuilt",
    "KnowledgeBase",
    "KnowledgeError",
    "Passage",
    "QuestionInvalid",
    "SearchFilter",
    "SourceMissing",
    "SourceUnreadable",
    "SyncReport",
    "ask_in_thread",
    "follow_up_query",
    "improve_answer",
    "validate_question",
]
