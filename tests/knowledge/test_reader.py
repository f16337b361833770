"""The fitted answer reader (issue 22): the split it is fitted on, its model file, its fit, and each kind of miss
seen on questions nobody tuned to, on real corpus pages."""

from __future__ import annotations

import json

import numpy as np
import pytest

from knowledge.kbeval import holds_fact, question_key, split_by_page
from knowledge.reader import ANSWER_FEATURES, FEATURES, ReaderModel, current_model, load_model, using
from knowledge.reader_fit import fit_logistic, thresholds
from tests.conftest import CORPUS, EVAL, needs_shared, synced_kb

RUNBOOKS = CORPUS / "prometheus-runbooks" / "runbooks"
HANDBOOK = CORPUS / "tts-handbook" / "2025-02"


def test_questions_that_share_a_page_land_in_one_part_and_the_split_never_moves():
    questions = [{"id": f"q{i}", "question": f"q{i}", "gold": [f"page{i % 7}.md"]} for i in range(40)]
    questions += [{"id": "both", "question": "both", "gold": ["page1.md", "page2.md"]},
                  {"id": "none", "question": "none", "gold": []}]

    fitting, validation = split_by_page(questions)
    again = split_by_page(list(reversed(questions)))

    assert {q["id"] for q in fitting} == {q["id"] for q in again[0]}
    pages = lambda part: {g for q in part for g in q["gold"]}  # noqa: E731
    assert not pages(fitting) & pages(validation)
    assert fitting and validation


@needs_shared
def test_kb_dev_v2_split_keeps_every_validation_page_out_of_the_fitting_part():
    questions = [json.loads(line) for line in (EVAL / "kb-dev-v2" / "questions.jsonl").read_text().splitlines()]

    fitting, validation = split_by_page(questions)

    assert len(fitting) + len(validation) == 111
    assert not {g for q in fitting for g in q["gold"]} & {g for q in validation for g in q["gold"]}
    assert {q["lang"] for q in validation} == {"en", "ko", "ja"}


def test_a_key_holds_when_every_group_has_one_alternative():
    key = [["630"], ["VLTP", "Voluntary Leave Transfer"]]
    assert holds_fact("Fill out OPM Form 630 to enroll in the voluntary leave transfer program.", key)
    assert not holds_fact("Fill out OPM Form 630.", key)
    assert question_key({"answer_hint": "Deliveries time out after `timeout_seconds` (30)."}) == [["30", "timeout_seconds"]]


def test_the_shipped_model_reads_the_features_the_code_computes():
    model = load_model()

    assert model.unit.names == FEATURES and model.answer.names == ANSWER_FEATURES
    assert 0.0 <= model.refuse <= model.low <= model.high <= 1.0
    assert model.fitted_on["questions"] > 0


def test_a_model_fitted_on_other_features_is_refused_with_the_refit_command(tmp_path):
    data = load_model().to_json()
    data["unit"]["names"] = data["unit"]["names"][:-1]
    path = tmp_path / "model.json"
    path.write_text(json.dumps(data))

    with pytest.raises(ValueError, match="fit-reader"):
        load_model.__wrapped__(path)


def test_logistic_fit_finds_the_feature_that_decides():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(400, 2))
    y = (x[:, 0] > 0).astype(float)

    model = fit_logistic(x, y, ("signal", "noise"), 0.001)

    assert model.coef[0] > 3 * abs(model.coef[1])
    assert model.prob(np.array([[2.0, 0.0]]))[0] > 0.9 > 0.1 > model.prob(np.array([[-2.0, 0.0]]))[0]


def test_thresholds_label_high_only_where_enough_replies_are_right_to_be_sure():
    prob = np.linspace(0.05, 0.95, 40)
    right = prob > 0.5
    answerable = np.ones(40, dtype=bool)

    refuse, low, high = thresholds(prob, right, answerable)

    assert high == 1.0  # 20 right of 20: the 95 % Wilson lower bound is 0.84, short of 0.85
    assert low == 0.5
    assert refuse == 0.0  # no no-answer reply to separate: a threshold would only lose answers

    prob = np.linspace(0.05, 0.95, 80)
    refuse, low, high = thresholds(prob, prob > 0.5, np.ones(80, dtype=bool))

    assert 0.5 <= high < 0.52  # 40 right of 41 is enough (lower bound 0.87): high from about the first right reply
    assert thresholds(prob, (prob > 0.5) & (prob < 0.9), np.ones(80, dtype=bool))[2] == 1.0  # 4 wrong at the top


def test_using_a_model_changes_what_answers_are_read_with():
    shipped = current_model()
    other = ReaderModel(shipped.unit, shipped.answer, 0.0, 0.0, 1.0, {}, 0.5, 300)
    with using(other):
        assert current_model() is other
    assert current_model() is shipped


@pytest.fixture(scope="module")
def runbooks_kb(tmp_path_factory, sample_settings, embedder):
    """A few real runbooks: the misses of issue 22 were seen on them."""
    if not CORPUS.is_dir():
        pytest.skip(f"the real corpora are not here ({CORPUS} is missing)")
    pages = {f"{name}.md": RUNBOOKS / "kubernetes" / f"{name}.md"
             for name in ("KubeJobCompletion", "KubeHpaMaxedOut", "CPUThrottlingHigh", "KubePodNotReady")}
    return synced_kb(tmp_path_factory.mktemp("reader-runbooks"), pages, sample_settings, embedder)


@needs_shared
@pytest.mark.slow
def test_a_what_do_i_check_question_gets_the_runbooks_checks(runbooks_kb):
    answer = runbooks_kb.ask("what do I check when KubeHpaMaxedOut fires?")

    assert not answer.refused
    assert "Check why HPA was unable to scale" in answer.direct_answer.splitlines()[0]
    assert "max replicas too low" in answer.direct_answer  # the list comes with its lead-in


@needs_shared
@pytest.mark.slow
def test_the_warning_comes_with_the_instruction_it_qualifies(runbooks_kb):
    answer = runbooks_kb.ask("CPUThrottlingHigh is firing for my app, should I just give the container more CPU?")

    assert "shouldn't increase CPU limits" in answer.direct_answer


@needs_shared
@pytest.mark.slow
def test_more_than_an_hour_is_an_answer_not_a_missing_value(runbooks_kb):
    answer = runbooks_kb.ask("how long can a job run before KubeJobCompletion fires?")

    assert not answer.refused
    assert "more than 1h" in answer.direct_answer


@needs_shared
@pytest.mark.slow
def test_a_japanese_question_is_answered_from_the_right_section(runbooks_kb):
    answer = runbooks_kb.ask("KubeJobCompletion アラートはどのくらい時間がかかると発生しますか？")

    assert not answer.refused
    assert answer.citations[0].doc_id.endswith("KubeJobCompletion.md")
    assert "more than 1h" in answer.direct_answer


@needs_shared
@pytest.mark.slow
def test_an_unanswered_question_is_refused_with_the_closest_pages_as_links_never_a_quote(runbooks_kb):
    answer = runbooks_kb.ask("what is the recipe for lasagna?")

    assert answer.refused and answer.quotes == [] and answer.direct_answer == ""
    assert len(answer.closest) <= 2
    for page in answer.closest:
        assert set(page) == {"title", "url", "collection"}
