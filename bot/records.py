"""How an answer is kept in the feedback store, the same from Slack and from the command line."""

from __future__ import annotations

from knowledge.types import Answer


def record_answer(store, answer: Answer, *, source: str, channel: str | None = None, thread_ts: str | None = None,
                  user: str | None = None) -> None:
    """Store ``answer`` (`feedback.FeedbackStore.record_answer`): its citations, with the pages its direct answer
    came from marked as the ones its votes judge (issue 26 item 4), and where it was asked.

    Raises:
        feedback.FeedbackError: the store refused it (see `feedback.FeedbackStore.record_answer`)."""
    store.record_answer(
        answer_id=answer.answer_id, question=answer.question, channel=channel, thread_ts=thread_ts, user_id=user,
        retrieved=answer.retrieved, cited_doc_ids=[c.doc_id for c in answer.citations], refused=answer.refused,
        top_score=answer.top_score, latency_ms=answer.latency_ms, language=answer.language,
        low_confidence=answer.low_confidence, source=source, visibility=sorted({c.visibility for c in answer.citations}),
        hallucination_flag=answer.hallucination_flag, generated=answer.generated, follow_up_of=answer.follow_up_of,
        answered_from=answer.answered_from or None,
    )
