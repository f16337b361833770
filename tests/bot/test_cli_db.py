"""Choosing the feedback store's database (config ``database.url``, ``MINERVA_DATABASE_URL``) and ``minerva db``:
``status`` and ``migrate`` (a SQLite store copied into a real, empty PostgreSQL database, `tests.postgres`)."""

from __future__ import annotations

import pytest

from config import ConfigError, load_settings
from feedback.db import DATABASE_URL_ENV, database_target


@pytest.mark.parametrize("body, message", [
    ("database: {url: 'mysql://u:secret@h/db'}", "must be a postgresql://… or sqlite:///… URL, not a 'mysql' one"),
    ("database: {url: 'db.internal:5432'}", "database.url must be a URL"),
    ("database: {uri: 'postgresql://h/db'}", "unknown key 'database.uri'"),
])
def test_the_database_section_is_validated_without_echoing_a_password(tmp_path, body: str, message: str) -> None:
    path = tmp_path / "minerva.yaml"
    path.write_text(body + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as raised:
        load_settings(path)
    assert "secret" not in str(raised.value)


def test_the_environment_overrides_the_config_which_overrides_the_home_file(tmp_path, monkeypatch) -> None:
    path = tmp_path / "minerva.yaml"
    path.write_text("database: {url: 'postgresql://minerva@db.internal:5432/minerva'}\n", encoding="utf-8")
    configured = load_settings(path).database.url
    assert configured == "postgresql://minerva@db.internal:5432/minerva"
    assert load_settings().database.url == ""
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    assert database_target(tmp_path, "") == tmp_path / "minerva.sqlite"
    assert database_target(tmp_path, configured) == configured
    monkeypatch.setenv(DATABASE_URL_ENV, "postgresql://other@db2/minerva")
    assert database_target(tmp_path, configured) == "postgresql://other@db2/minerva"
