"""Intent classification vs hand labels (issue 11 item 2: ≥ 80 % agreement), per intent and language.

Dev set: kb-dev's questions whose ``kind`` is an intent (howto → how-to, lookup, policy, troubleshoot →
troubleshooting; 36 English questions, the kinds as labelled by hand with the set), plus its 9 Korean/Japanese
"cross-lingual" questions, labelled by hand here (`HAND_LABELS`). Classifier: `jobs.classify.IntentClassifier`
with the bundled config/monitoring.yaml and the default embedder (all-MiniLM-L6-v2).

    HF_HUB_OFFLINE=1 python benchmarks/intent_agreement.py --out benchmarks/results/intent_agreement.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _output import emit  # noqa: E402

KB_DEV = Path("/work/shared/eval/kb-dev/questions.jsonl")
KIND_TO_INTENT = {"howto": "how-to", "lookup": "lookup", "policy": "policy", "troubleshoot": "troubleshooting"}
#: Our labels of kb-dev's Korean/Japanese questions (kind "cross-lingual").
HAND_LABELS = {"dev-052": "lookup", "dev-053": "how-to", "dev-054": "lookup", "dev-055": "troubleshooting",
               "dev-056": "troubleshooting", "dev-057": "troubleshooting", "dev-058": "troubleshooting",
               "dev-059": "policy", "dev-060": "troubleshooting"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out")
    args = parser.parse_args()
    from config import EmbeddingConfig
    from config.monitoring import load_monitoring_config
    from jobs.classify import IntentClassifier
    from knowledge.embedding import load_embedder

    rows = []
    for line in KB_DEV.open(encoding="utf-8"):
        q = json.loads(line)
        label = KIND_TO_INTENT.get(q["kind"]) or HAND_LABELS.get(q["id"])
        if label:
            rows.append((q["id"], q["lang"], q["question"], label))
    embedder = load_embedder(EmbeddingConfig())
    classifier = IntentClassifier(load_monitoring_config().classification, embedder)
    texts = [r[2] for r in rows]
    predicted = classifier.classify(texts, embedder.embed(texts, kind="query"))
    tally = defaultdict(lambda: [0, 0])
    misses = []
    for (qid, lang, text, label), guess in zip(rows, predicted):
        for key in ("all", f"intent:{label}", f"lang:{lang}"):
            tally[key][0] += guess == label
            tally[key][1] += 1
        if guess != label:
            misses.append({"id": qid, "label": label, "predicted": guess, "question": text})
    result = {"model": embedder.name, "questions": len(rows),
              "agreement": {k: {"agree": a, "n": n, "rate": round(a / n, 3)} for k, (a, n) in sorted(tally.items())},
              "target": 0.8, "misses": misses}
    emit(result, args.out)


if __name__ == "__main__":
    main()
