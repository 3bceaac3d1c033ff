"""`cluster` on a store built through the production path: topics with labels, the analyst view,
stable ids across runs, and scope."""

from __future__ import annotations

from mnemoflow.service import MemoryService
from tests.maintenance.conftest import ANA, OTHER_TENANT, OTHER_USER


def test_topics_group_the_users_memories_under_readable_labels(tree_service: MemoryService) -> None:
    report = tree_service.maintain("cluster")
    assert report.ok and report.counts["users"] == 3
    topics = tree_service.topics(ANA)
    assert topics and all(t.size >= 3 and t.size == len(t.memory_ids) for t in topics)
    current = {m.id: m.content for m in tree_service.get_all(ANA, limit=1000)}
    assert all(set(t.memory_ids) <= current.keys() for t in topics)
    assert all(t.label == ", ".join(t.terms[:3]) for t in topics)
    assert not {"Ana", "Ben", "someone"} & {term for t in topics for term in t.terms}  # names are masked
    trip = next(t for t in topics if any("Dolomites" in current[m] or "Lagazuoi" in current[m] for m in t.memory_ids))
    assert sum("Dolomites" in current[m] or "Lagazuoi" in current[m] or "trip" in current[m]
               for m in trip.memory_ids) >= len(trip.memory_ids) // 2
    assert all(v.ok for v in tree_service.verify())


def test_the_analyst_view_lists_current_memories_by_topic(tree_service: MemoryService) -> None:
    tree_service.maintain("cluster")
    columns, rows = tree_service.store.sql(
        "SELECT topic_id, label, memory_id, content FROM topic_memories WHERE tenant_id = 'acme' AND user_id = 'ana'")
    assert columns == ["topic_id", "label", "memory_id", "content"] and rows
    topic_id, _, gone, _ = rows[0]
    tree_service.delete(ANA, gone)
    _, after = tree_service.store.sql("SELECT memory_id FROM topic_memories WHERE memory_id = ?", [gone])
    assert after == []  # the view shows current memories only, before any re-clustering
    tree_service.maintain("cluster")
    assert all(gone not in t.memory_ids for t in tree_service.topics(ANA))


def test_clustering_again_keeps_the_topics_and_writes_nothing(tree_service: MemoryService) -> None:
    tree_service.maintain("cluster")
    before = {t.id: (t.label, t.memory_ids) for t in tree_service.topics(ANA)}
    commits = tree_service.store.sql("SELECT count(*) FROM commits")[1][0][0]
    again = tree_service.maintain("cluster")
    assert {k: v for k, v in again.counts.items() if k != "users"} == {
        "topics_new": 0, "topics_changed": 0, "topics_retired": 0, "memberships_changed": 0}
    assert {t.id: (t.label, t.memory_ids) for t in tree_service.topics(ANA)} == before
    assert tree_service.store.sql("SELECT count(*) FROM commits")[1][0][0] == commits


def test_topics_stay_inside_their_scope(tree_service: MemoryService) -> None:
    tree_service.maintain("cluster")
    mine = {m for t in tree_service.topics(ANA) for m in t.memory_ids}
    for scope in (OTHER_USER, OTHER_TENANT):
        theirs = {m for t in tree_service.topics(scope) for m in t.memory_ids}
        own = {m.id for m in tree_service.get_all(scope, limit=1000)}
        assert theirs <= own and not theirs & mine
    assert tree_service.store.memory_topics(OTHER_USER, sorted(mine)) == {}
