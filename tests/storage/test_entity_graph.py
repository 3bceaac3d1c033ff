"""The entity graph in the store: entities, memory_entities, relations and categories are written with
their memory, in its commit, upserted tenant-wide, and read back only through what a scope may see."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from mnemoflow.errors import BadInputError
from mnemoflow.memory.generate.candidates import TurnView
from mnemoflow.memory.generate.direct import draft_memory
from mnemoflow.memory.relate.entities import entity_id, typed_entities
from mnemoflow.memory.relate.triples import categories_of, relation_triples
from mnemoflow.memory.english.names import find_entities
from mnemoflow.memory.pipeline import MemoryGenerator
from mnemoflow.memory.generate.rules import RuleEngine
from mnemoflow.models import THIS_MEMORY, EntityRef, LinkDraft, MemoryDraft, RelationDraft
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.timeutil import parse_timestamp

LENA = Scope("acme", "lena")
OMAR = Scope("acme", "omar")
OTHER_TENANT = Scope("globex", "lena")
MAYA = entity_id("person", "maya")


def graph_draft(text: str, speakers: tuple[str, ...] = ()) -> MemoryDraft:
    """A memory drafted as the pipeline drafts one: typed entities, relation triples, categories."""
    base = draft_memory(text)
    entities = tuple(typed_entities(base.content, find_entities(base.content), speakers=speakers))
    return MemoryDraft(
        content=base.content, kind=base.kind, salience=base.salience, entities=entities,
        relations=tuple(RelationDraft(*t) for t in relation_triples(base.content, entities)),
        categories=tuple(categories_of(base.content, base.kind)))


def rows(service: MemoryService, sql: str, params: list | None = None) -> list[tuple]:
    return service.store.sql(sql, params)[1]


def listed_by_commit(service: MemoryService, table: str) -> dict[str, str]:
    """row id -> the commit whose diff lists it (the latest one)."""
    found: dict[str, str] = {}
    for commit_id, diff in rows(service, "SELECT commit_id, diff_json FROM commits ORDER BY seq"):
        for listed_table, _op, row_id, _digest in json.loads(diff)["rows"]:
            if listed_table == table:
                found[row_id] = commit_id
    return found


def test_two_memories_about_maya_make_one_entity_with_its_rows_in_their_commits(service: MemoryService) -> None:
    first, _ = service.store.write_memory(LENA, graph_draft("Maya lives in Lisbon and loves sushi"), actor="test")
    second, _ = service.store.write_memory(LENA, graph_draft("Maya's brother works at Stripe"), actor="test")

    [(name, etype, aliases, count, first_seen, last_seen, hotness)] = rows(
        service, "SELECT name, type, aliases, mention_count, first_seen, last_seen, hotness FROM entities "
                 "WHERE entity_id = ?", [MAYA])
    assert (name, etype, count) == ("Maya", "person", 2)
    assert aliases == ["Maya's"]  # merged in from the second memory
    assert first_seen < last_seen and 1.99 < hotness <= 2.0
    assert sorted(rows(service, "SELECT memory_id, entity_id FROM memory_entities")) == sorted([
        (first.id, MAYA), (first.id, entity_id("place", "lisbon")), (second.id, MAYA),
        (second.id, entity_id("organization", "stripe"))])
    assert set(rows(service, "SELECT subject, predicate, object, memory_id FROM relations "
                             "WHERE predicate <> 'mentions'")) == {
        (MAYA, "located_at", entity_id("place", "lisbon"), first.id), (MAYA, "prefers", "sushi", first.id)}
    assert set(rows(service, "SELECT subject, object FROM relations WHERE predicate = 'mentions'")) == {
        (first.id, MAYA), (first.id, entity_id("place", "lisbon")), (second.id, MAYA),
        (second.id, entity_id("organization", "stripe"))}
    assert set(rows(service, "SELECT category_key, name, parent_key FROM categories")) == {
        ("food", "food", None), ("preference", "preference", None), ("preference/food", "food", "preference"),
        ("family", "family", None), ("work", "work", None)}
    assert set(rows(service, "SELECT memory_id, category_key FROM memory_categories")) == {
        (first.id, "food"), (first.id, "preference"), (first.id, "preference/food"),
        (second.id, "family"), (second.id, "work")}

    # every row names a commit, and that commit lists it
    commits = {r[0] for r in rows(service, "SELECT commit_id FROM commits")}
    for table, key in (("entities", "entity_id"), ("memory_entities", "memory_id || '|' || entity_id"),
                       ("relations", "relation_id"), ("categories", "category_key"),
                       ("memory_categories", "memory_id || '|' || category_key")):
        listed = listed_by_commit(service, table)
        written = rows(service, f"SELECT {key}, commit_id FROM {table}")
        assert written and all(commit in commits and listed[row_id] == commit for row_id, commit in written), table
    memory_commits = dict(rows(service, "SELECT memory_id, commit_id FROM memories"))
    assert rows(service, "SELECT commit_id FROM entities WHERE entity_id = ?", [MAYA]) == [(memory_commits[second.id],)]
    assert rows(service, "SELECT DISTINCT commit_id FROM memory_entities WHERE memory_id = ?", [first.id]) == [
        (memory_commits[first.id],)]
    assert all(report.ok for report in service.verify("acme"))


def test_hotness_decays_with_a_30_day_half_life(service: MemoryService, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [datetime(2024, 1, 1, 12)]
    for module in ("memory_writes", "graph"):
        monkeypatch.setattr(f"mnemoflow.storage.{module}.utcnow", lambda: clock[0])
    service.store.write_memory(LENA, graph_draft("Maya lives in Lisbon"), actor="test")
    clock[0] += timedelta(days=30)
    service.store.write_memory(LENA, graph_draft("Maya loves sushi"), actor="test")
    [maya] = [e for e in service.store.entities(LENA) if e.entity_id == MAYA]
    assert maya.hotness == pytest.approx(1.5)  # 1 halved over 30 days, plus this mention
    clock[0] += timedelta(days=60)
    [maya] = [e for e in service.store.entities(LENA) if e.entity_id == MAYA]
    assert maya.hotness == pytest.approx(0.375)  # read 60 days later: a quarter
    assert (maya.mention_count, maya.first_seen, maya.last_seen) == (
        2, datetime(2024, 1, 1, 12), datetime(2024, 1, 31, 12))


def test_entities_are_ordered_and_read_through_visible_memories(service: MemoryService) -> None:
    for text in ("Maya lives in Lisbon", "Maya loves sushi", "Maya works at Stripe"):
        service.store.write_memory(LENA, graph_draft(text), actor="test")
    service.store.write_memory(OMAR, graph_draft("Omar uses Kubernetes at work"), actor="test")
    hottest = service.store.entities(LENA)
    assert hottest[0].entity_id == MAYA and hottest[0].mention_count == 3
    assert {e.entity_id for e in hottest} == {MAYA, entity_id("place", "lisbon"), entity_id("organization", "stripe")}
    assert [e.name for e in service.store.entities(LENA, order="name")] == ["Lisbon", "Maya", "Stripe"]
    assert len(service.store.entities(LENA, limit=1)) == 1
    # Omar's memory is his: Lena does not see what only it names
    assert entity_id("tool", "kubernetes") in {e.entity_id for e in service.store.entities(OMAR)}
    with pytest.raises(BadInputError, match="order"):
        service.store.entities(LENA, order="random")


def test_another_tenant_never_sees_the_graph(service: MemoryService) -> None:
    memory, _ = service.store.write_memory(LENA, graph_draft("Maya lives in Lisbon"), actor="test")
    assert service.store.entities(OTHER_TENANT) == []
    assert service.store.memory_entity_ids(OTHER_TENANT, [memory.id]) == {}
    assert service.store.memories_with_entities(OTHER_TENANT, [MAYA], limit=10) == []
    assert service.store.relations_of(OTHER_TENANT, MAYA) == []
    # the same name in the other tenant is another row, counted there
    service.store.write_memory(OTHER_TENANT, graph_draft("Maya works at Globex Inc"), actor="test")
    assert sorted(rows(service, "SELECT tenant_id, mention_count FROM entities WHERE entity_id = ?", [MAYA])) == [
        ("acme", 1), ("globex", 1)]
    assert [e.entity_id for e in service.store.entities(OTHER_TENANT) if e.entity_id == MAYA] == [MAYA]
    assert service.store.memory_entity_ids(OTHER_TENANT, [memory.id]) == {}
    assert all(report.ok for report in service.verify("acme"))
    assert all(report.ok for report in service.verify("globex"))


def test_memories_with_entities_are_the_users_active_latest_ones(service: MemoryService) -> None:
    old, _ = service.store.write_memory(LENA, graph_draft("Maya lives in Hamburg"), actor="test")
    new, _ = service.store.write_memory(
        LENA, graph_draft("Maya lives in Munich now"), actor="test",
        links=(LinkDraft("UPDATES", old.id, 0.93, "same slot 'lives in', new value"),))
    food, _ = service.store.write_memory(LENA, graph_draft("Maya loves sushi"), actor="test")
    gone, _ = service.store.write_memory(LENA, graph_draft("Maya works at Stripe"), actor="test")
    theirs, _ = service.store.write_memory(OMAR, graph_draft("Maya prefers tea"), actor="test")
    assert service.store.delete_memory(LENA, gone.id, actor="test")

    found = service.store.memories_with_entities(LENA, [MAYA], limit=10)
    assert set(found) == {new.id, food.id}  # not the past version, the deleted one, or Omar's
    assert service.store.memories_with_entities(OMAR, [MAYA], limit=10) == [theirs.id]
    assert len(service.store.memories_with_entities(LENA, [MAYA], limit=1)) == 1
    # sharing the rarer entity ranks first: Munich is named once, Maya five times
    assert service.store.memories_with_entities(LENA, [MAYA, entity_id("place", "munich")], limit=10)[0] == new.id
    assert service.store.memory_entity_ids(LENA, [new.id, theirs.id]) == {
        new.id: [entity_id("place", "munich"), MAYA]}  # rarest first; Omar's memory is not Lena's to read

    current = {(r.subject, r.predicate, r.object) for r in service.store.relations_of(LENA, MAYA)}
    assert (MAYA, "located_at", entity_id("place", "munich")) in current
    assert (MAYA, "located_at", entity_id("place", "hamburg")) not in current  # superseded with its memory
    assert (MAYA, "belongs_to", entity_id("organization", "stripe")) not in current  # deleted with its memory
    assert (MAYA, "prefers", "tea") not in current  # Omar's
    history = {(r.object, r.superseded_at is not None)
               for r in service.store.relations_of(LENA, MAYA, include_superseded=True) if r.predicate == "located_at"}
    assert history == {(entity_id("place", "munich"), False), (entity_id("place", "hamburg"), True)}
    assert rows(service, "SELECT count(*) FROM relations WHERE memory_id = ? AND superseded_at IS NULL",
                [gone.id]) == [(0,)]
    assert rows(service, "SELECT superseded_at IS NULL FROM relations WHERE predicate = 'supersedes'") == [(True,)]
    assert all(report.ok for report in service.verify("acme"))


def test_a_repeat_writes_no_second_mention(service: MemoryService) -> None:
    service.store.write_memory(LENA, graph_draft("Maya lives in Lisbon"), actor="test")
    _, created = service.store.write_memory(LENA, graph_draft("Maya lives in Lisbon"), actor="test")
    assert not created
    assert rows(service, "SELECT mention_count FROM entities WHERE entity_id = ?", [MAYA]) == [(1,)]


def test_a_memory_without_a_graph_writes_none(service: MemoryService) -> None:
    service.store.write_memory(LENA, draft_memory("Maya lives in Lisbon"), actor="test")
    for table in ("entities", "memory_entities", "relations", "categories", "memory_categories"):
        assert rows(service, f"SELECT count(*) FROM {table}") == [(0,)], table


@pytest.mark.parametrize("bad", [
    {"entities": (EntityRef(entity_id("place", "maya"), "Maya", "person"),)},  # the id names another type
    {"entities": (EntityRef("entity:person" + ":maya", "Maya", "person"),)},  # an id that spells the name
    {"entities": (EntityRef("entity:person:Maya Lopez", "Maya Lopez", "person"),)},  # not a slug
    {"relations": (RelationDraft(THIS_MEMORY, "mentions", MAYA),)},  # an entity the memory does not name
    {"relations": (RelationDraft(THIS_MEMORY, "likes", "tea"),)},  # not a predicate
    {"categories": ("Food & Drink",)},
])
def test_a_malformed_graph_is_refused_and_nothing_is_written(service: MemoryService, bad: dict) -> None:
    draft = MemoryDraft(content="Maya likes tea", kind="preference", salience=0.5, **bad)
    with pytest.raises(BadInputError):
        service.store.write_memory(LENA, draft, actor="test")
    assert service.store.list_memories(LENA) == []
    assert rows(service, "SELECT count(*) FROM commits") == [(0,)]


def test_the_pipeline_writes_typed_entities_relations_and_categories(service: MemoryService) -> None:
    said = [("t1", "2024-03-01T09:00:00Z", "My sister Maya lives in Lisbon and she loves sushi."),
            ("t2", "2024-03-02T09:00:00Z", "I work at Stripe on the payments team.")]
    service.post_events(LENA, [{"session_id": "s", "turn_id": t, "speaker": "Lena", "role": "user", "ts": ts,
                                "text": text} for t, ts, text in said], wait=False)
    turns = [TurnView(t, "s", "Lena", text, parse_timestamp(ts), "user") for t, ts, text in said]
    sources = {t: tuple(c) for t, c in service.store.turn_chunk_ids(LENA, "s").items()}
    MemoryGenerator(service.store, service.embedder, RuleEngine(), LENA).run(turns, sources)

    typed = {(e.entity_id, e.type) for e in service.store.entities(LENA)}
    assert {(entity_id("person", "lena"), "person"), (MAYA, "person"), (entity_id("place", "lisbon"), "place"),
            (entity_id("organization", "stripe"), "organization")} <= typed
    [lena] = [e for e in service.store.entities(LENA) if e.entity_id == entity_id("person", "lena")]
    assert lena.mention_count >= 2
    stated = {(r.subject, r.predicate, r.object) for r in service.store.relations_of(LENA, MAYA)}
    assert (MAYA, "located_at", entity_id("place", "lisbon")) in stated
    assert (entity_id("person", "lena"), "belongs_to", entity_id("organization", "stripe")) in {
        (r.subject, r.predicate, r.object) for r in service.store.relations_of(LENA, entity_id("organization", "stripe"))}
    keys = {r[0] for r in rows(service, "SELECT category_key FROM memory_categories")}
    assert {"family", "work"} <= keys
    assert all(report.ok for report in service.verify("acme"))
