"""Thread follow-ups: a short reply in a thread the bot answered is asked together with the thread's question.

DESIGN.md: a reply in a thread the bot answered is a follow-up and uses the thread's earlier questions as
context. "v2는요?", "what about Enterprise?" or "月払いの場合は？" say too little to be retrieved alone; asked
as "{earlier question} {follow-up}" they find the page the thread is about, and the follow-up's own words
move the answer to the part it asks for. A reply that says enough on its own (`is_elliptical` False) is
asked as written: prefixing an unrelated earlier question would only blur it. A short reply can also change
the subject ("what about the password length?" under a printer question): when the completed query's answer
holds none of the words the reply adds to the thread's question, it is answered alone (a newcomer's sandbox
try answered it with the printer page, confidently), refused if need be, unless it points back at the thread
("how long is it valid?", `leans_on_thread`) and alone nothing answers it.

The earlier questions come from the feedback store (the caller reads them; no Slack API call).
"""

from __future__ import annotations

from collections.abc import Sequence

import regex

from knowledge.answering import refuse_repeat, says_nothing_new
from knowledge.language import detect_language
from knowledge.service import validate_question
from knowledge.tokenize import question_stems, tokenize
from knowledge.types import Answer

#: A follow-up with fewer content words than this is completed with the thread's question. 3: of the 92
#: standalone questions of the sample set and kb-dev (en/ko/ja), none has fewer than 3 content words (4
#: have exactly 3: "how do I expense a new laptop?"), while elliptical follow-ups have 1–2 ("v2는요?" → v2,
#: "what about the monthly price?" → month, price; tests/knowledge/test_followup.py). A threshold of 4
#: would re-write 4 of the 92 standalone questions, 5 would re-write 12, the issue's example of 8, 51.
MIN_STANDALONE_WORDS = 3


def content_words(text: str) -> set[str]:
    """The distinct content words of ``text``: BM25 tokens without CJK bigrams or question words
    (`knowledge.tokenize.QUESTION_WORDS_EN`)."""
    return {t for t in tokenize(text, bigrams=False) if t not in question_stems()}


def is_elliptical(question: str) -> bool:
    """True when ``question`` has fewer than `MIN_STANDALONE_WORDS` content words (it needs its thread)."""
    return len(content_words(question)) < MIN_STANDALONE_WORDS


def thread_context(earlier: Sequence[str]) -> str | None:
    """The earlier question that gives a follow-up its topic: the latest one that stood on its own, else the
    thread's first question (all of them elliptical); None for an empty thread.

    Args:
        earlier: the thread's questions, oldest first.
    """
    if not earlier:
        return None
    standalone = [q for q in earlier if not is_elliptical(q)]
    return standalone[-1] if standalone else earlier[0]


def follow_up_query(question: str, earlier: Sequence[str]) -> str | None:
    """The query to retrieve for a reply in a thread, or None when the reply is asked as written.

    Args:
        question: the reply's (cleaned) text.
        earlier: the thread's earlier questions, oldest first ([] outside a thread the bot answered).

    Returns:
        ``"{context question} {question}"`` for an elliptical reply in an answered thread, else None.

    Example::

        >>> follow_up_query("v2는요?", ["how much does the team plan cost per seat?"])
        'how much does the team plan cost per seat? v2는요?'
    """
    context = thread_context(earlier)
    if context is None or not is_elliptical(question):
        return None
    return f"{context.strip()} {question.strip()}"


def _speaks_to(answer: Answer, question: str, context: str = "") -> bool:
    """True when the answer's direct answer or first quoted passages hold a content word that ``question`` adds to
    its thread's ``context`` question (all of its content words when it adds none): under "how many days of annual
    leave can I carry over?", "what about sick leave?" asks about "sick", and an answer about carrying leave over
    holds "leave" but says nothing of it (a newcomer's thread got the carry-over answer again)."""
    shown = " ".join([answer.direct_answer, *(p.text for p in answer.passages[:2])])
    own = content_words(question)
    return bool(((own - content_words(context)) or own) & set(tokenize(shown, bigrams=False)))


def ask_in_thread(kb, question: str, earlier: Sequence[str], *, where=None) -> Answer:
    """Ask ``question``, completed with its thread's question when it is an elliptical follow-up.

    The answer records the question as asked (``question``, validated) and its language, not the query;
    ``follow_up_of`` is the caller's to set (it knows the earlier answers' ids). When the query would pass
    ``answer.max_question_chars``, the reply is asked alone.

    Args:
        kb: the `knowledge.KnowledgeBase`.
        question: the reply's text.
        earlier: the thread's earlier questions, oldest first.
        where: the search filter, as for `KnowledgeBase.ask`.

    Raises:
        QuestionInvalid, IndexNotBuilt: as `KnowledgeBase.ask`.
    """
    limit = kb.settings.answer.max_question_chars
    query = follow_up_query(question, earlier) if question.strip() else None
    if query is None or len(query) > limit:  # a context too long to add: the reply alone
        return kb.ask(question, where=where)
    asked = validate_question(question, limit)
    answer = kb.ask(query, where=where)
    if not _speaks_to(answer, question, thread_context(earlier) or ""):  # maybe a new subject, not a follow-up
        # asked alone: "What are the core hours?" under two leave questions was answered from the leave policy at
        # low confidence, the page of the thread's subject, not of the question's; but a reply that points back
        # at the thread ("how long is it valid?" under a VPN question, where the page says "expires after 180
        # days") keeps the thread's answer when alone it is refused
        alone = kb.ask(question, where=where)
        if not alone.refused or not leans_on_thread(question):
            return alone
    answer.question, answer.language = asked, detect_language(asked)
    if _says_again(kb, answer, thread_context(earlier), where):
        return refuse_repeat(answer)
    return answer


def _says_again(kb, answer: Answer, context: str | None, where) -> bool:
    """Whether ``answer`` to a follow-up says nothing that the answer to the thread's question ``context`` (asked
    alone) did not say (`says_nothing_new`): the follow-up found nothing of its own ("and if it doesn't work?"
    under "How do I set up the VPN?" was answered with the VPN steps again)."""
    if answer.refused or not context:
        return False
    before = kb.ask(context, where=where)
    return not before.refused and says_nothing_new(answer.direct_answer, before.direct_answer)


#: What makes a reply point back at its thread: a pronoun for the thread's subject, a reply opening with "and" or
#: "but", "what about …"; Korean 그럼/그건/그거 or a topic ending "…는요?"; Japanese じゃあ/それ or "…は？".
_LEANS = regex.compile(
    r"\b(it|its|that|this|these|those|they|them|there)\b|^\W*(and|or|but|so|also|then)\b|\b(what|how) about\b|"
    r"^\W*(그럼|그러면|그건|그거|그리고|또)|[은는]요\W*$|^\W*(じゃあ|では|それ|あと)|[はも][？?]\s*$",
    regex.I)


def leans_on_thread(question: str) -> bool:
    """Whether a reply points back at its thread's subject (`_LEANS`): "and if it doesn't work?", "what about
    for dads?", "v2는요?", "月払いの場合は？"; "What are the core hours?" does not."""
    return bool(_LEANS.search(question))
