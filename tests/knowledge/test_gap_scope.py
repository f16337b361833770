"""Gap queries judge only the collections they name: the sample's questions never judge a user's pages."""

from __future__ import annotations

from pathlib import Path

from config import DEFAULT_CONFIG, Settings, SourceConfig, load_settings
from knowledge.gaps import (
    DEFAULT_GAP_QUERIES,
    GapQuery,
    GapQuerySet,
    gap_queries_for,
    gap_query_set_for,
    judged_collections,
    load_gap_queries,
    scope_queries,
)


def test_the_bundled_queries_name_the_sample_collections():
    query_set = load_gap_queries()
    assert query_set.collections == ("plans", "api", "runbooks")
    assert all(q.collections == ("plans", "api", "runbooks") for q in query_set.queries)


def test_a_query_file_level_collections_is_the_default_and_a_query_may_override_it(tmp_path):
    path = tmp_path / "gap_queries.yaml"
    path.write_text("collections: [it]\nqueries:\n  - how do I get a laptop?\n"
                    "  - query: how much leave do I get?\n    collections: [hr]\n", encoding="utf-8")
    first, second = load_gap_queries(path).queries
    assert first.collections == ("it",) and second.collections == ("hr",)


def test_scope_keeps_queries_of_known_collections_and_narrows_their_search():
    query_set = GapQuerySet((GapQuery("a", collections=("plans",)), GapQuery("b", collections=("it", "plans")),
                             GapQuery("c")))
    scoped = scope_queries(query_set, {"it"})
    assert [(q.query, q.collections) for q in scoped.queries] == [("b", ("it",)), ("c", None)]
    assert scoped.drop == query_set.drop


def test_a_user_config_without_a_gap_file_gets_no_queries_not_the_samples(tmp_path):
    config = tmp_path / "minerva.yaml"
    config.write_text(f"sources:\n  - name: it\n    path: {tmp_path}\n", encoding="utf-8")
    settings = load_settings(config)
    assert gap_queries_for(settings) is None and gap_query_set_for(settings).queries == ()
    (tmp_path / "gap_queries.yaml").write_text("queries: []\n", encoding="utf-8")
    assert gap_queries_for(settings) == tmp_path / "gap_queries.yaml"


def test_the_bundled_config_keeps_the_bundled_queries():
    assert gap_queries_for(load_settings(DEFAULT_CONFIG)) == DEFAULT_GAP_QUERIES
    assert gap_queries_for(Settings()) == DEFAULT_GAP_QUERIES


def test_judged_collections_are_configured_and_indexed(sample_kb):
    settings = Settings(sources=[SourceConfig("plans", "x"), SourceConfig("it", "y")])
    assert judged_collections(sample_kb.index(), settings) == {"plans"}
    assert judged_collections(None, settings) == set()
