"""Minerva configuration: YAML files in this folder, loaded into typed settings by `load_settings`."""

from config.settings import (
    DEFAULT_CONFIG,
    REAL_CORPORA_CONFIG,
    AnswerConfig,
    CalibrationConfig,
    ChunkingConfig,
    ConfigError,
    DashboardConfig,
    EmbeddingConfig,
    GeneratorConfig,
    HygieneConfig,
    RetrievalConfig,
    Settings,
    SlackConfig,
    SourceConfig,
    load_settings,
    read_yaml_mapping,
)

__all__ = [
    "DEFAULT_CONFIG",
    "REAL_CORPORA_CONFIG",
    "AnswerConfig",
    "CalibrationConfig",
    "ChunkingConfig",
    "ConfigError",
    "DashboardConfig",
    "EmbeddingConfig",
    "GeneratorConfig",
    "HygieneConfig",
    "RetrievalConfig",
    "Settings",
    "SlackConfig",
    "SourceConfig",
    "load_settings",
    "read_yaml_mapping",
]
