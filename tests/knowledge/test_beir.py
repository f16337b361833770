"""BEIR evaluation: a tiny hand-made folder with figures worked out by hand, malformed folders, and a
small SciFact/JSQuAD regression subset with a floor (BM25 only, seconds)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
from config import Settings
from knowledge import KnowledgeError
from knowledge.beir import convert_with_script, evaluate_beir, load_beir, subset
from knowledge.errors import DatasetInvalid
from tests.conftest import EVAL, needs_shared

# Stemmed BM25 tokens: d1 solar panel convert sunlight (4), d2 wind turbin generat electr power offshor (6),
# d3 solar wind interact magnetospher (4), d4 hydro dam store water (4), d5 water cool data center (4).
CORPUS = {
    "d1": "Solar panels convert sunlight",
    "d2": "Wind turbines generate electric power offshore",
    "d3": "Solar wind interacts with the magnetosphere",
    "d4": "Hydro dams store water",
    "d5": "Water cooling for data centers",
}
QUERIES = {"q1": "solar wind", "q2": "dams and water", "q3": "geothermal energy", "q4": "unjudged query"}
QRELS = [("q1", "d3", 2), ("q1", "d2", 1), ("q2", "d5", 1), ("q3", "d1", 1)]
# BM25 rankings: q1 → d3 (both terms), d1 (solar, shorter doc), d2 (wind, longer doc); q2 → d4 (both), d5;
# q3 → nothing matches. Worked out:
#   q1: DCG = 2/log2(2) + 0/log2(3) + 1/log2(4) = 2.5; ideal = 2 + 1/log2(3); recall 1; RR 1
#   q2: DCG = 1/log2(3); ideal = 1; recall 1; RR 1/2
#   q3: 0, 0, 0                                (q4 has no judgement: ignored)
NDCG = (2.5 / (2 + 1 / math.log2(3)) + 1 / math.log2(3) + 0) / 3  # 0.52705...
EXPECTED = {"ndcg@10": NDCG, "recall@10": 2 / 3, "recall@100": 2 / 3, "mrr@10": 0.5}


def write_beir(folder: Path, corpus=CORPUS, queries=QUERIES, qrels=QRELS, split="test") -> Path:
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as fh:
        for doc_id, text in corpus.items():
            fh.write(json.dumps({"_id": doc_id, "title": "", "text": text}) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as fh:
        for qid, text in queries.items():
            fh.write(json.dumps({"_id": qid, "text": text, "metadata": {}}) + "\n")
    rows = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{s}" for q, d, s in qrels]
    (folder / "qrels" / f"{split}.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def tiny(tmp_path) -> Path:
    return write_beir(tmp_path / "tiny")


def test_eval_command_reproduces_hand_computed_figures(tiny, tmp_path):
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "home"), "eval", str(tiny), "--mode", "bm25", "--json"])

    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert {k: out[k] for k in EXPECTED} == {k: round(v, 4) for k, v in EXPECTED.items()}
    assert out["ndcg@10"] == 0.5271
    assert (out["dataset"], out["split"], out["mode"], out["queries"], out["documents"]) == ("tiny", "test", "bm25", 3, 5)
    assert out["queries_per_second"] > 0


def test_eval_command_prints_a_table(tiny, tmp_path):
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "home"), "eval", str(tiny), "--mode", "bm25"])

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "tiny [test]: 3 queries, 5 documents; mode bm25, model -"
    assert lines[2:6] == ["nDCG@10         0.5271", "recall@10       0.6667", "recall@100      0.6667",
                          "MRR@10          0.5000"]
    assert lines[6].startswith("queries/s")


def test_library_run_holds_the_rankings(tiny, tmp_path):
    report = evaluate_beir(load_beir(tiny), Settings(), tmp_path / "cache", mode="bm25")

    assert report.run == {"q1": ["d3", "d1", "d2"], "q2": ["d4", "d5"], "q3": []}
    assert report.metrics == pytest.approx(EXPECTED)


def test_index_is_cached_between_runs(tiny, tmp_path):
    cache = tmp_path / "cache"
    evaluate_beir(load_beir(tiny), Settings(), cache, mode="bm25")
    first = sorted(p.name for p in cache.iterdir())
    evaluate_beir(load_beir(tiny), Settings(), cache, mode="bm25")

    assert sorted(p.name for p in cache.iterdir()) == first
    (generation,) = [p for p in (cache / first[0] / "index").iterdir() if p.name.startswith("gen-")]
    assert json.loads((generation / "manifest.json").read_text())["beir"]["tokenizer"] >= 2


def test_dense_and_hybrid_modes_run_with_a_model(tiny, tmp_path, embedder):
    for mode in ("dense", "hybrid"):
        report = evaluate_beir(load_beir(tiny), Settings(), tmp_path / "cache", mode=mode, embedder=embedder)

        assert report.model == embedder.name and report.queries == 3
        assert report.run["q1"][0] == "d3"  # "solar wind" → the solar wind document, by meaning too
        assert all(0.0 <= v <= 1.0 for v in report.metrics.values())


def test_other_split_and_subset(tmp_path):
    folder = write_beir(tmp_path / "tiny", split="train", qrels=[("q1", "d3", 1), ("q2", "d4", 1)])

    data = load_beir(folder, split="train")
    part = subset(data, 1, distractors=1)

    assert data.split == "train" and sorted(data.qrels) == ["q1", "q2"]
    assert len(part.qrels) == 1 and len(part.corpus) == 2  # the judged document + one distractor
    assert subset(data, 1, distractors=1) == part  # deterministic
    with pytest.raises(DatasetInvalid, match=r"qrels/test\.tsv not found; splits in .*qrels: train"):
        load_beir(folder)


# --- malformed folders -------------------------------------------------------------------------------


def _invoke_eval(folder: Path, tmp_path: Path):
    return CliRunner().invoke(cli, ["--home", str(tmp_path / "home"), "eval", str(folder), "--mode", "bm25"])


def test_missing_corpus_is_a_clear_error(tiny, tmp_path):
    (tiny / "corpus.jsonl").unlink()

    result = _invoke_eval(tiny, tmp_path)

    assert result.exit_code == 1
    assert result.output.strip() == (f"Error: {tiny / 'corpus.jsonl'} not found: a BEIR folder holds corpus.jsonl, "
                                     "queries.jsonl and qrels/SPLIT.tsv")


def test_missing_qrels_folder(tiny, tmp_path):
    (tiny / "qrels" / "test.tsv").unlink()
    (tiny / "qrels").rmdir()

    result = _invoke_eval(tiny, tmp_path)

    assert result.exit_code == 1
    assert f"Error: {tiny / 'qrels' / 'test.tsv'} not found; splits in {tiny / 'qrels'}: none" in result.output


def test_folder_of_neither_kind(tmp_path):
    (tmp_path / "empty").mkdir()

    result = _invoke_eval(tmp_path / "empty", tmp_path)

    assert result.exit_code == 1
    assert "is neither a BEIR folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv) nor a KB question set" in result.output


@pytest.mark.parametrize("line, message", [
    ("{not json", r"corpus\.jsonl:3: not valid JSON"),
    ('["a list"]', r"corpus\.jsonl:3: expected a JSON object, got list"),
    ('{"title": "no id", "text": "x"}', r"corpus\.jsonl:3: missing field '_id' \(needs _id, text\)"),
    ('{"_id": "d1", "text": "again"}', r"corpus\.jsonl:3: duplicate document _id 'd1'"),
])
def test_malformed_corpus_line_names_file_and_line(tiny, line, message):
    lines = (tiny / "corpus.jsonl").read_text().splitlines()
    lines.insert(2, line)
    (tiny / "corpus.jsonl").write_text("\n".join(lines) + "\n")

    with pytest.raises(DatasetInvalid, match=message):
        load_beir(tiny)


@pytest.mark.parametrize("row, message", [
    ("q1\td1", r"test\.tsv:6: expected 3 tab-separated columns \(query-id, corpus-id, score\), got 2"),
    ("q1\td1\thigh", r"test\.tsv:6: score 'high' is not an integer"),
    ("q7\td1\t1", r"test\.tsv:6: query id 'q7' is not in queries\.jsonl"),
    ("q1\td9\t1", r"test\.tsv:6: corpus id 'd9' is not in corpus\.jsonl"),
])
def test_malformed_qrels_row_names_file_and_line(tiny, row, message):
    with open(tiny / "qrels" / "test.tsv", "a") as fh:
        fh.write(row + "\n")

    with pytest.raises(DatasetInvalid, match=message):
        load_beir(tiny)


def test_qrels_without_relevant_judgements(tmp_path):
    folder = write_beir(tmp_path / "tiny", qrels=[("q1", "d1", 0)])

    with pytest.raises(DatasetInvalid, match=r"no relevant \(score > 0\) judgement"):
        load_beir(folder)


def test_dataset_errors_are_knowledge_errors():
    assert issubclass(DatasetInvalid, KnowledgeError)


def test_converter_folder_needs_convert_flag(tmp_path):
    folder = tmp_path / "korquad-like"
    folder.mkdir()
    (folder / "to_beir.py").write_text("raise SystemExit('should not run')\n")

    result = _invoke_eval(folder, tmp_path)

    assert result.exit_code == 1
    assert "holds a converter, not BEIR files: add --convert" in result.output


def test_converter_runs_into_a_temporary_folder(tmp_path):
    folder = tmp_path / "converted-set"
    folder.mkdir()
    (folder / "to_beir.py").write_text(
        "import sys, shutil\n"
        f"shutil.copytree({str(write_beir(tmp_path / 'src'))!r}, sys.argv[1])\n"
    )

    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "home"), "eval", str(folder), "--mode", "bm25",
                                      "--convert", "--json"])

    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["dataset"] == "converted-set" and out["ndcg@10"] == 0.5271
    assert sorted(p.name for p in folder.iterdir()) == ["to_beir.py"]  # nothing written beside the converter


# --- regression subsets of the shared datasets (BM25 only; the full runs are benchmarks) -------------------


#: (dataset, judged queries, distractors, nDCG@10 floor ~5 points under the value measured in
#: benchmarks/results/retrieval_regression.json). KorQuAD is smaller: Korean analysis is the slow part.
REGRESSION = [("scifact", 50, 300, 0.81), ("jsquad", 50, 300, 0.92), ("korquad-v1-dev", 30, 120, 0.92)]


@needs_shared
@pytest.mark.parametrize("name, n_queries, distractors, floor", REGRESSION)
def test_bm25_regression_subset(name, n_queries, distractors, floor, tmp_path):
    """Judged queries over their relevant documents + distractors, BM25 only (seconds)."""
    folder = EVAL / name
    if (folder / "to_beir.py").is_file():  # KorQuAD's licence allows only the original: convert at run time
        folder = convert_with_script(folder, tmp_path / "beir")
    data = subset(load_beir(folder, name=name), n_queries, distractors=distractors)

    report = evaluate_beir(data, Settings(), tmp_path / "cache", mode="bm25")

    assert report.queries == n_queries
    assert report.metrics["ndcg@10"] >= floor, report.to_json()
