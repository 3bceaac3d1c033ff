"""The entity graph as one owner sees it, through the service on a real store: the list, the card, an
entity's memories, the bounded subgraph, the evolution chain and the conflicts, each read only
through the memories the owner may see. Entities are found by name: ids are opaque."""

from __future__ import annotations

import pytest

from mnemoflow.config import load_settings
from mnemoflow.errors import BadInputError, NotFoundError
from mnemoflow.memory.english.names import find_entities
from mnemoflow.memory.generate.direct import draft_memory
from mnemoflow.memory.relate.entities import typed_entities
from mnemoflow.memory.relate.triples import relation_triples
from mnemoflow.models import LinkDraft, MemoryDraft, RelationDraft
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

GWEN = Scope("orchard", "gwen")
HUGO = Scope("orchard", "hugo")
ELSEWHERE = Scope("quarry", "gwen")


def drafted(text: str) -> MemoryDraft:
    """A memory drafted as the pipeline drafts one: its typed entities and relation triples."""
    base = draft_memory(text)
    entities = tuple(typed_entities(base.content, find_entities(base.content)))
    return MemoryDraft(content=base.content, kind=base.kind, salience=base.salience, entities=entities,
                       relations=tuple(RelationDraft(*t) for t in relation_triples(base.content, entities)))


def write(service: MemoryService, scope: Scope, *texts: str) -> list[str]:
    return [service.store.write_memory(scope, drafted(t), actor="test")[0].id for t in texts]


def entity_named(service: MemoryService, scope: Scope, name: str) -> str:
    [found] = [e for e in service.entities(scope).entities if e.name == name]
    return found.entity_id


def test_each_owner_sees_an_entity_through_their_own_memories_only(service: MemoryService) -> None:
    write(service, GWEN, "Tobias lives in Ghent", "Tobias works at Quillworth Press", "Tobias plays the cello")
    write(service, HUGO, "Tobias borrowed Hugo's ladder")
    mine = {e.name: e for e in service.entities(GWEN).entities}
    assert {"Tobias", "Ghent", "Quillworth Press"} <= set(mine)
    # one tenant-wide row, but each owner counts only the memories they see
    assert mine["Tobias"].mention_count == 3 and mine["Tobias"].current_mentions == 3
    assert 2.9 < mine["Tobias"].hotness <= 3.0 and mine["Tobias"].first_seen <= mine["Tobias"].last_seen
    hugos = {e.name: e for e in service.entities(HUGO).entities}
    assert hugos["Tobias"].mention_count == 1 and "Ghent" not in hugos
    ghent = mine["Ghent"].entity_id
    with pytest.raises(NotFoundError):
        service.entity(HUGO, ghent)  # the same tenant, but none of Hugo's memories name it
    with pytest.raises(NotFoundError):
        service.entity(ELSEWHERE, ghent)  # same user id, another tenant
    assert service.entities(ELSEWHERE).entities == []
    for call in (service.entity_memories, service.entity_evolution, service.entity_graph):
        with pytest.raises(NotFoundError):
            call(ELSEWHERE, ghent)
    with pytest.raises(NotFoundError):
        service.entity(GWEN, "no-such-entity")

    assert [e.name for e in service.entities(GWEN, types=["place"]).entities] == ["Ghent"]
    assert [e.name for e in service.entities(GWEN, q="quill").entities] == ["Quillworth Press"]
    assert [e.name for e in service.entities(GWEN, order="name").entities][:2] == ["Ghent", "Quillworth Press"]
    with pytest.raises(BadInputError, match="entity types are"):
        service.entities(GWEN, types=["planet"])


def test_the_card_names_neighbours_relations_and_cited_mentions(service: MemoryService) -> None:
    service.add_messages(GWEN, "Rosalind works at Fenwick Dairy.")
    service.add_messages(GWEN, "Rosalind lives in Tarrow.")
    rosalind = entity_named(service, GWEN, "Rosalind")
    card = service.entity(GWEN, rosalind)
    assert card.entity.name == "Rosalind" and card.entity.mention_count == 2
    assert {n.entity.name for n in card.neighbours_by_memory} == {"Fenwick Dairy", "Tarrow"}
    assert {(n.entity.name, n.shared_memories) for n in card.neighbours} == {("Fenwick Dairy", 1), ("Tarrow", 1)}
    related = {n.entity.name: n for n in card.neighbours_by_relation}
    assert set(related) == {"Fenwick Dairy", "Tarrow"} and all(n.current for n in related.values())
    assert {(r.subject_name, r.object_name) for r in card.key_relations} == {
        ("Rosalind", "Fenwick Dairy"), ("Rosalind", "Tarrow")}
    assert {m.memory.content for m in card.recent_mentions} == {"Rosalind works at Fenwick Dairy",
                                                                "Rosalind lives in Tarrow"}
    cited = card.recent_mentions[0].citations
    assert cited and cited[0].turn_id is not None  # read from a conversation turn: it cites that turn


def test_evolution_lists_the_old_place_then_the_new_one(service: MemoryService) -> None:
    service.add_messages(GWEN, "Tobias lives in Ghent.")
    service.add_messages(GWEN, "Tobias plays the cello in a quartet.")
    service.add_messages(GWEN, "Tobias moved to Antwerp in the spring.")
    tobias = entity_named(service, GWEN, "Tobias")
    evolution = service.entity_evolution(GWEN, tobias)
    changed = [c for c in evolution.chains if len(c.steps) > 1]
    assert len(changed) == 1 and evolution.chains[0] == changed[0]  # what changed comes first
    old, new = changed[0].steps
    assert evolution.facts[:2] == [old, new]
    assert "Ghent" in old.content and "Antwerp" in new.content
    assert not old.is_latest and new.is_latest and old.valid_to is not None
    assert [r.memory_id for r in old.replaced_by] == [new.memory_id] and old.replaced_by[0].reason
    assert any("cello" in c.steps[0].content for c in evolution.chains if len(c.steps) == 1)

    current = service.entity_memories(GWEN, tobias)
    assert not any("Ghent" in m.memory.content for m in current.memories)
    everything = service.entity_memories(GWEN, tobias, include_history=True)
    assert any("Ghent" in m.memory.content and not m.memory.is_latest for m in everything.memories)
    # the old place is still an entity of Gwen's (a past version names it), with no current mention
    ghent = next(e for e in service.entities(GWEN).entities if e.name == "Ghent")
    assert (ghent.mention_count, ghent.current_mentions) == (1, 0)
    with pytest.raises(NotFoundError):
        service.entity_evolution(HUGO, tobias)  # none of Hugo's memories name Tobias


def test_the_subgraph_is_cytoscape_elements_within_its_caps(tmp_path) -> None:
    names = [f"{a}{b}" for a in ("Bar", "Kel", "Mor", "Tav", "Sil", "Dun") for b in ("ric", "ona", "eth", "wyn", "ade")]
    settings = load_settings(tmp_path / "home", graph_max_nodes=12, graph_max_edges=15, graph_max_depth=2)
    with MemoryService(settings) as service:
        with service.store.memory_writes(GWEN, actor="test") as writes:
            for i, name in enumerate(names):  # a hub everyone meets, and a ring of neighbours
                writes.add(drafted(f"Yusra met {name} and {names[(i + 1) % len(names)]} for lunch"))
        yusra = entity_named(service, GWEN, "Yusra")
        graph = service.entity_graph(GWEN, yusra, depth=2)
        nodes, edges = graph.elements.nodes, graph.elements.edges
        assert len(nodes) == 12 and len(edges) <= 15 and graph.truncated
        assert "12 nodes (the cap" in graph.note
        assert {n.data.id for n in nodes if n.data.hops == 0} == {yusra}
        ids = {n.data.id for n in nodes}
        assert all(e.data.source in ids and e.data.target in ids and e.data.label for e in edges)
        assert next(n for n in nodes if n.data.id == yusra).data.label == "Yusra"
        small = service.entity_graph(GWEN, yusra, depth=1, max_nodes=4, max_edges=3)
        assert (len(small.elements.nodes), len(small.elements.edges)) == (4, 3) and small.truncated
        overview = service.entity_graph(GWEN)  # no entity: the most mentioned, within the same caps
        assert len(overview.elements.nodes) == 12 and overview.elements.nodes[0].data.label == "Yusra"
        with pytest.raises(BadInputError, match=r"cap.*graph_max_depth.*got 3"):
            service.entity_graph(GWEN, yusra, depth=3)
        with pytest.raises(BadInputError, match="above the cap of 12"):
            service.entity_graph(GWEN, yusra, max_nodes=13)
        # another owner of the tenant gets nothing of it
        assert service.entity_graph(HUGO).elements.nodes == []


def conflict_pair(service: MemoryService, scope: Scope, older: str, newer: str) -> tuple[str, str]:
    """Two memories linked CONFLICTS_WITH the way generation links them (a decided link with its write)."""
    first = write(service, scope, older)[0]
    second, _ = service.store.write_memory(scope, drafted(newer), actor="test", links=(
        LinkDraft("CONFLICTS_WITH", first, 0.9, "two sources disagree on the venue"),))
    return first, second.id


def test_a_conflict_waits_until_a_person_keeps_one_or_both(service: MemoryService) -> None:
    first, second = conflict_pair(service, GWEN, "The reunion is at the Larch Hall", "The reunion is at the Wren Inn")
    [waiting] = service.conflicts(GWEN).conflicts
    assert (waiting.src.id, waiting.dst.id, waiting.type) == (second, first, "CONFLICTS_WITH") and waiting.decidable
    assert service.conflicts(HUGO).conflicts == [] and service.conflicts(ELSEWHERE).conflicts == []
    with pytest.raises(NotFoundError):
        service.resolve_conflict(HUGO, waiting.link_id, second)  # not his to see
    with pytest.raises(BadInputError, match="keep names one memory"):
        service.resolve_conflict(GWEN, waiting.link_id, "mem_someone_else")
    done = service.resolve_conflict(GWEN, waiting.link_id, second)
    assert (done.applied, done.kept, done.superseded) == ("UPDATES", [second], [first])
    assert service.conflicts(GWEN).conflicts == []
    assert service.get(GWEN, first).id == second and service.get(GWEN, second).is_latest  # the old id follows
    with pytest.raises(NotFoundError):
        service.resolve_conflict(GWEN, waiting.link_id, None)  # decided already

    third, fourth = conflict_pair(service, GWEN, "Gwen's locker is number 14", "Gwen's locker is number 41")
    [other] = service.conflicts(GWEN).conflicts
    kept = service.resolve_conflict(GWEN, other.link_id, None)
    assert (kept.applied, sorted(kept.kept), kept.superseded) == ("RELATES_TO", sorted([third, fourth]), [])
    assert service.conflicts(GWEN).conflicts == []
    assert service.get(GWEN, third).is_latest and service.get(GWEN, fourth).is_latest
    assert all(report.ok for report in service.verify("orchard"))


def test_a_shared_conflict_is_seen_by_the_tenant_but_decided_by_its_owner(service: MemoryService) -> None:
    first, second = conflict_pair(service, HUGO, "The allotment gate code is 5521", "The allotment gate code is 5512")
    assert service.conflicts(GWEN).conflicts == []  # Hugo's own memories: not Gwen's to see
    for memory_id in (first, second):
        service.share(HUGO, memory_id)
    [seen] = service.conflicts(GWEN).conflicts
    assert {seen.src.id, seen.dst.id} == {first, second} and not seen.decidable
    with pytest.raises(BadInputError, match="its owner decides"):
        service.resolve_conflict(GWEN, seen.link_id, second)
    assert service.get(HUGO, first).is_latest and service.conflicts(HUGO).conflicts[0].decidable
