"""Loading the monitoring YAML files: bundled defaults, files beside the main config, unknown keys rejected."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from config import ConfigError, load_settings
from config.monitoring import (
    DEFAULT_MONITORING_CONFIG,
    OTHER_INTENT,
    load_monitoring_config,
    monitoring_config_for,
)

REPO = Path(__file__).resolve().parents[2]


def test_bundled_files_hold_the_design_numbers() -> None:
    cfg = load_monitoring_config()
    assert (cfg.coverage.max_refusal_rate, cfg.coverage.min_avg_retrieved, cfg.coverage.min_thumbs_up_rate) == (0.2, 2.0, 0.4)
    bd = cfg.bad_docs
    assert (bd.max_thumbs_up_rate, bd.min_votes, bd.alert_probability, bd.max_report_rate) == (0.3, 15, 0.5, 0.2)
    ch = cfg.citation_health
    assert (ch.min_avg_citations, ch.max_gini, ch.max_no_citation_rate, ch.min_chunk_ratio) == (1.5, 0.85, 0.10, 0.5)
    assert (cfg.drift.max_p_value, cfg.drift.min_js_distance) == (0.001, 0.1)
    assert cfg.freshness.staleness_days("anything") == 90
    assert cfg.freshness.staleness_days("plans") == 30
    w, p = cfg.reindex.weights, cfg.reindex.priorities
    assert (w.stale, w.low_quality, w.chunking_drift, w.source_modified) == (3, 2, 1, 5)
    assert (p.high, p.normal, p.review) == (5, 3, 1)
    assert [i.name for i in cfg.classification.intents] == ["troubleshooting", "policy", "how-to", "lookup"]
    assert OTHER_INTENT not in [i.name for i in cfg.classification.intents]


def _config_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "conf"
    folder.mkdir()
    shutil.copy(REPO / "config" / "minerva.yaml", folder / "minerva.yaml")
    (folder / "minerva.yaml").write_text(
        (folder / "minerva.yaml").read_text().replace("../knowledge/", str(REPO / "knowledge") + "/"))
    return folder


def test_files_beside_the_main_config_win(tmp_path: Path) -> None:
    folder = _config_dir(tmp_path)
    (folder / "freshness.yaml").write_text("default_staleness_days: 60\nper_collection:\n  minutes: -1\n")
    (folder / "monitoring.yaml").write_text("coverage:\n  min_questions: 10\n")
    cfg = monitoring_config_for(load_settings(folder / "minerva.yaml"))
    assert cfg.freshness.staleness_days("plans") == 60
    assert cfg.freshness.staleness_days("minutes") is None  # -1: never stale
    assert cfg.coverage.min_questions == 10
    assert cfg.coverage.max_refusal_rate == 0.2            # untouched keys keep their defaults
    assert cfg.classification.intents                       # a thresholds-only file keeps the bundled intents
    assert cfg.reindex.weights.source_modified == 5         # no reindex_triggers.yaml here: the bundled one


@pytest.mark.parametrize("name,text,message", [
    ("monitoring.yaml", "coverage:\n  min_questionz: 3\n", "unknown key 'coverage.min_questionz'"),
    ("monitoring.yaml", "freshness:\n  default_staleness_days: 3\n", "freshness.yaml"),
    ("monitoring.yaml", "drift:\n  metrics: [intent, mood]\n", "unknown 'mood'"),
    ("freshness.yaml", "per_collection:\n  plans: 0\n", "whole number of days >= 1, or -1"),
    ("freshness.yaml", "default_staleness_days: ninety\n", "must be int"),
    ("reindex_triggers.yaml", "priorities: {high: 2, normal: 3, review: 1}\n", "high >= normal >= review"),
    ("reindex_triggers.yaml", "auto_execute: always\n", "auto_execute must be one of"),
])
def test_bad_files_are_rejected_with_the_file_and_key(tmp_path: Path, name: str, text: str, message: str) -> None:
    folder = _config_dir(tmp_path)
    (folder / name).write_text(text)
    with pytest.raises(ConfigError) as raised:
        monitoring_config_for(load_settings(folder / "minerva.yaml"))
    assert message in str(raised.value)
    assert name in str(raised.value)


def test_bundled_monitoring_file_is_the_default() -> None:
    assert DEFAULT_MONITORING_CONFIG.name == "monitoring.yaml" and DEFAULT_MONITORING_CONFIG.is_file()
