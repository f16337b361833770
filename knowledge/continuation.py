"""A section split over two chunks, read as one passage (issue 9: the fact in the next chunk).

The chunker cuts a long section into pieces, each after the first opening with "…" and the end of the piece
before (`knowledge.chunking`). Retrieval scores each piece alone, so the sentence that answers was often in
the piece after the one that matched: "To report a security incident, follow all of the steps below:" ends one
piece and the steps open the next; "If you don't have your GSA travel card yet … call AdTrav" is the second
piece of "Brief overview of booking travel", whose first piece matched the question better. A passage
therefore reads on into the next piece of its section: its text and its units' cosines are those of both.
"""

from __future__ import annotations

from knowledge.chunking import CONTINUED as CONTINUES
from knowledge.sentences import split_units


def continues(previous: dict, chunk: dict) -> bool:
    """Whether chunk record ``chunk`` is the next piece of ``previous``'s section: same page and heading path,
    and it opens with the "…" of a split section."""
    return (chunk["doc_id"] == previous["doc_id"] and chunk["index"] == previous["index"] + 1
            and tuple(chunk["heading_path"]) == tuple(previous["heading_path"]) and chunk["text"].startswith(CONTINUES))


def joined(first: str, second: str) -> tuple[str, int]:
    """``first`` followed by what ``second`` (the next piece, `continues`) adds after its repeat of
    ``first``'s end.

    Returns:
        ``(text, shift)``: the joined text, and what to add to an offset into ``second`` to get its offset
        into the joined text (offsets below ``-shift + len(first)`` fall in the repeated part).
    """
    body = second[len(CONTINUES):]
    repeat = next((k for k in range(min(len(first), len(body)), 0, -1) if first.endswith(body[:k])), 0)
    return first + body[repeat:], len(first) - repeat - len(CONTINUES)


def joined_unit_scores(text: str, first_len: int, first_scores: tuple, second_scores: tuple,
                       shift: int) -> tuple:
    """The unit cosines of a joined passage (`joined`): ``((start, end, cosine), ...)`` over ``text``.

    Units of either piece keep their cosine (those of the second piece shifted by ``shift``; its units in the
    repeated part are dropped). A sentence cut between the pieces is whole in ``text`` and has no vector of its
    own: it takes the larger cosine of its two halves.
    """
    pieces = [(a, b, c) for a, b, c in first_scores] + [(a + shift, b + shift, c) for a, b, c in second_scores]
    exact = {(a, b): c for a, b, c in pieces[len(first_scores):] if a >= first_len}
    exact.update({(a, b): c for a, b, c in first_scores})
    out = []
    for unit in split_units(text):
        if not unit.answerable:
            continue
        halves = [c for a, b, c in pieces if a < unit.end and b > unit.start]
        cosine = exact.get((unit.start, unit.end), max(halves, default=None))
        if cosine is not None:
            out.append((unit.start, unit.end, cosine))
    return tuple(out)
