"""An owner is a Slack user or user group id, never a channel (issue 27 item 3)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from config import SourceConfig, slack_owner_id
from jobs.owners import owner_of
from knowledge import KnowledgeBase


@pytest.mark.parametrize("value, owner", [
    ("U024BE7LH", "U024BE7LH"), ("W0123ABCD", "W0123ABCD"), ("S0614TZR7", "S0614TZR7"),
    ("<@U024BE7LH>", "U024BE7LH"), ("<!subteam^S0614TZR7|@docs>", "S0614TZR7"),
    ("general", None), ("#general", None), ("<!channel>", None), ("<!here>", None), ("C024BE91L", None),
    ("jane@example.com", None), ("", None), (None, None),
])
def test_only_user_and_user_group_ids_are_owners(value, owner):
    assert slack_owner_id(value) == owner


def test_a_front_matter_owner_that_is_no_slack_id_is_ignored_with_a_warning(tmp_path, sample_settings, embedder):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, owner in [("a.md", "general"), ("b.md", '"<!channel>"'), ("c.md", '"<@U024BE7LH>"'), ("d.md", "S0614TZR7")]:
        (folder / name).write_text(f"---\nowner: {owner}\n---\n# Page {name}\n\nThe lynx enclosure opens at 10:00 "
                                   f"every day and closes at 18:00 in summer.\n", encoding="utf-8")
    settings = replace(sample_settings, sources=[SourceConfig(name="docs", path=str(folder), owner="U0000TEAM")])
    kb = KnowledgeBase(settings, tmp_path / "home", embedder=embedder)

    report = kb.sync()

    owners = {doc_id: doc["owner"] for doc_id, doc in kb.index().documents.items()}
    assert owners == {"docs:a.md": "", "docs:b.md": "", "docs:c.md": "U024BE7LH", "docs:d.md": "S0614TZR7"}
    ignored = [w for w in report.warnings if "is not a Slack user or user group id" in w]
    assert [w.split(":", 2)[1] for w in ignored] == ["a.md", "b.md"]
    assert all(w.endswith("the collection's owner is told instead") for w in ignored)
    assert owner_of(kb.index().documents["docs:a.md"], {"docs": "U0000TEAM"}) == "U0000TEAM"
    assert owner_of({"owner": "<!channel>", "collection": "docs"}, {}) == ""  # an index built before the check


def test_an_email_owner_in_a_source_without_owner_says_no_one_is_told(tmp_path, sample_settings, embedder):
    """A newcomer's `owner: priya@example.com` was "ignored, the collection's owner is told instead", and the
    source had no owner: nobody was told."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("---\nowner: priya@example.com\n---\n# Expenses\n\nReceipts are needed for every "
                                 "expense over 25 euros, scanned into the expense tool.\n", encoding="utf-8")
    kb = KnowledgeBase(replace(sample_settings, sources=[SourceConfig(name="docs", path=str(folder))]), tmp_path / "home",
                       embedder=embedder)

    (warning,) = [w for w in kb.sync().warnings if "priya" in w]

    assert warning.endswith("ignored, no one is told about this page (its source has no `owner` either)")
