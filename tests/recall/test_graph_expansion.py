"""Recall's memory rerank, bounded graph expansion and history flag, over the real store."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from mnemoflow.config import load_settings
from mnemoflow.memory.generate.direct import draft_memory
from mnemoflow.memory.relate.entities import entity_id
from mnemoflow.models import LinkDraft, MemoryItem
from mnemoflow.recall import RecallConfig, RecallFilters, preset
from mnemoflow.recall.engine import _rerank
from mnemoflow.recall.fusion import Fused
from mnemoflow.recall.graph import expand
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.timeutil import utcnow
from tests.conftest import plant, turn, write_transcript

SCOPE = Scope("acme", "maya")
OTHER_USER = Scope("acme", "omar")
OTHER_TENANT = Scope("globex", "maya")
# BM25 alone: a memory that shares no word with the query is not a candidate unless expansion adds it
# (the vector signal would rank every memory of a small store)
# graph expansion on its own: newer-first (which may reorder and mark what it finds) is tested in test_versions
LEXICAL = RecallConfig(name="lexical-graph", signals={"bm25": 1.0}, newer_first=False)
HISTORY = RecallFilters(include_history=True)


def _write(service: MemoryService, scope: Scope, text: str, *links: LinkDraft, **draft: object) -> MemoryItem:
    memory, created = service.store.write_memory(scope, draft_memory(text, **draft), actor="test", links=links)
    assert created
    return memory


def _extends(target: MemoryItem) -> LinkDraft:
    return LinkDraft("EXTENDS", target.id, 0.9, "adds detail")


def _ids(service: MemoryService, query: str, config: RecallConfig | str | None = None,
         filters: RecallFilters | None = None) -> list[str]:
    return [i.id for i in service.recall(SCOPE, query, token_budget=4000, config=config, filters=filters).items]


@pytest.fixture
def marathon(service: MemoryService) -> dict[str, MemoryItem]:
    """race <- training <- club (each EXTENDS the one before); an unrelated memory beside them."""
    race = _write(service, SCOPE, "Maya is running the Berlin marathon in September")
    training = _write(service, SCOPE, "She trains forty kilometres every week", _extends(race))
    club = _write(service, SCOPE, "Her running club meets in Kreuzberg on Tuesdays", _extends(training))
    other = _write(service, SCOPE, "Maya's favourite tea is genmaicha")
    service.drain()
    return {"race": race, "training": training, "club": club, "other": other}


def test_an_extends_linked_memory_that_does_not_match_joins_with_why(
    service: MemoryService, marathon: dict[str, MemoryItem],
) -> None:
    result = service.recall(SCOPE, "marathon", token_budget=4000, config=LEXICAL)
    items = {i.id: i for i in result.items}
    race, training = items[marathon["race"].id], items.get(marathon["training"].id)
    assert training is not None, [i.text for i in result.items]
    assert training.why == f"linked EXTENDS from {marathon['race'].id} (this EXTENDS it)"
    assert training.scores["graph_factor"] == LEXICAL.graph_hop_factor and training.scores["hops"] == 1
    assert "fused" not in training.scores
    assert training.score < race.score  # an expansion scores below the memory it was reached from
    assert [i.id for i in result.items].index(race.id) < [i.id for i in result.items].index(training.id)
    assert training.citations[0].memory_id == marathon["training"].id
    assert "forty kilometres" in result.context
    # depth 1 (the default): the club, two hops away, stays out; so does the unrelated memory
    assert marathon["club"].id not in items and marathon["other"].id not in items


def test_expansion_is_bounded_by_depth_and_count(service: MemoryService, marathon: dict[str, MemoryItem]) -> None:
    race, training, club = marathon["race"].id, marathon["training"].id, marathon["club"].id
    one = expand(service.store, SCOPE, [race], depth=1, entities=False)
    assert [(e.memory_id, e.via, e.from_id, e.hops) for e in one] == [(training, "EXTENDS", race, 1)]
    two = expand(service.store, SCOPE, [race], depth=2, entities=False)
    assert [(e.memory_id, e.from_id, e.hops) for e in two] == [(training, race, 1), (club, training, 2)]
    assert expand(service.store, SCOPE, [race], depth=2, max_items=1, entities=False) == one
    assert expand(service.store, SCOPE, [race], depth=2, entities=False, exclude={training}) == []
    # both directions for EXTENDS: from the club back to what it extends
    assert [e.memory_id for e in expand(service.store, SCOPE, [club], depth=2, entities=False)] == [training, race]

    deep = LEXICAL.model_copy(update={"graph_depth": 2})
    items = {i.id: i for i in service.recall(SCOPE, "marathon", token_budget=4000, config=deep).items}
    assert items[club].scores["hops"] == 2 and "2 hops" in items[club].why
    assert items[club].score < items[training].score < items[race].score

    hub = _write(service, SCOPE, "Maya keeps a list of her cycling routes")
    spokes = {_write(service, SCOPE, f"Route {n} goes along the canal for {n} kilometres", _extends(hub)).id
              for n in range(5)}
    service.drain()
    capped = expand(service.store, SCOPE, [hub.id], max_items=3, entities=False)
    assert len(capped) == 3 and {e.memory_id for e in capped} < spokes
    wide = LEXICAL.model_copy(update={"graph_max_items": 2})
    found = [i for i in service.recall(SCOPE, "cycling", token_budget=4000, config=wide).items if i.id in spokes]
    assert len(found) == 2


def test_expansion_never_crosses_a_tenant_or_user(service: MemoryService, marathon: dict[str, MemoryItem]) -> None:
    race = marathon["race"].id
    theirs = _write(service, OTHER_USER, "Omar's marathon time was 3:05")
    elsewhere = _write(service, OTHER_TENANT, "Maya at globex ran a marathon too")
    service.drain()
    # links no write path can make (write_memory refuses them): planted to prove the read gate
    now = utcnow()
    for tenant, src, dst in [("acme", race, theirs.id), ("acme", theirs.id, race), ("globex", race, elsewhere.id),
                             ("globex", elsewhere.id, race), ("acme", race, elsewhere.id)]:
        plant(service, "INSERT INTO memory_links (tenant_id, src, dst, type, confidence, decided_by, created_at, "
              "commit_id) VALUES (?, ?, ?, 'EXTENDS', 1.0, 'auto', ?, 'c')", [tenant, src, dst, now])
    assert {(s, d) for s, d, _ in service.store.linked_memories(SCOPE, [race], ("EXTENDS",))} == {
        (marathon["training"].id, race)}
    assert [e.memory_id for e in expand(service.store, SCOPE, [race], depth=3, entities=False)] == [
        marathon["training"].id, marathon["club"].id]
    ids = _ids(service, "marathon", LEXICAL, HISTORY)
    assert theirs.id not in ids and elsewhere.id not in ids
    assert expand(service.store, OTHER_USER, [race], entities=False) == []


@pytest.fixture
def moved(service: MemoryService) -> tuple[MemoryItem, MemoryItem]:
    old = _write(service, SCOPE, "Maya lives in Hamburg")
    new = _write(service, SCOPE, "Maya lives in Munich now", LinkDraft("UPDATES", old.id, 0.95, "moved"))
    service.drain()
    return old, new


def test_a_superseded_memory_only_comes_back_with_history_and_is_marked(
    service: MemoryService, moved: tuple[MemoryItem, MemoryItem],
) -> None:
    old, new = moved
    for config in (None, LEXICAL):
        assert old.id not in _ids(service, "where did Maya live, Hamburg?", config)
    result = service.recall(SCOPE, "where did Maya live, Hamburg?", token_budget=4000, filters=HISTORY)
    items = {i.id: i for i in result.items}
    assert items[old.id].scores["history"] == 1.0
    assert f"superseded by {new.id}" in items[old.id].why
    assert "Hamburg" in items[old.id].text and "superseded" in items[old.id].text
    assert "history" not in items[new.id].scores
    # expansion follows UPDATES only towards the current version (history also walks back)
    lexical = service.recall(SCOPE, "Hamburg", token_budget=4000, config=LEXICAL, filters=HISTORY)
    reached = {i.id: i for i in lexical.items}
    assert reached[new.id].why == f"newer version of {old.id} (UPDATES)"
    assert old.id not in _ids(service, "Munich", LEXICAL)
    assert expand(service.store, SCOPE, [new.id], entities=False) == []
    back = expand(service.store, SCOPE, [new.id], entities=False, include_history=True)
    assert [(e.memory_id, e.outgoing) for e in back] == [(old.id, True)]


def test_a_hit_on_a_past_version_brings_the_current_one_in_its_place(service: MemoryService) -> None:
    first = _write(service, SCOPE, "Pepper's vet is Dr. Alvarez")
    second = _write(service, SCOPE, "Pepper now sees Dr. Chen", LinkDraft("UPDATES", first.id, 0.95, "new vet"))
    third = _write(service, SCOPE, "Pepper switched to the Okafor clinic", LinkDraft("UPDATES", second.id, 0.95, "again"))
    _write(service, OTHER_USER, "Pepper's vet is Dr. Alvarez")
    service.drain()
    # only the first version says "vet": the head of its UPDATES chain answers, in its place
    result = service.recall(SCOPE, "vet", token_budget=4000, config=LEXICAL)
    assert [i.id for i in result.items] == [third.id]
    assert result.items[0].why.startswith(f"current version of {first.id}, which the query matched by bm25 #1")
    assert result.items[0].citations[0].memory_id == third.id
    # matched itself too: it keeps its best place, once
    assert _ids(service, "vet Okafor clinic", LEXICAL).count(third.id) == 1
    # history shows the past itself, marked, and puts nothing in its place
    history = {i.id: i for i in service.recall(SCOPE, "vet", token_budget=4000, config=LEXICAL,
                                                filters=HISTORY).items}
    assert history[first.id].scores["history"] == 1.0 and third.id not in history
    # the chain never leaves the scope
    assert {i: m.id for i, m in service.store.current_versions(SCOPE, [first.id]).items()} == {first.id: third.id}
    assert service.store.current_versions(OTHER_USER, [first.id, second.id]) == {}
    assert service.store.current_versions(SCOPE, [third.id]) == {}


def test_deleted_memories_never_come_back_expired_ones_only_with_history(service: MemoryService) -> None:
    gone = _write(service, SCOPE, "Maya's locker code is 4417")
    service.store.delete_memory(SCOPE, gone.id, actor="test")
    linked_gone = _write(service, SCOPE, "Maya's gym is on Oranienstrasse")
    service.store.write_memory(SCOPE, draft_memory("Maya's gym locker is number 12"), actor="test",
                               links=(_extends(linked_gone),))
    spot = _write(service, SCOPE, "Maya's parking spot this week is B12", expires_at=utcnow() - timedelta(minutes=1))
    service.drain()
    locker = [m for m in service.store.list_memories(SCOPE) if "number 12" in m.content][0]
    service.store.delete_memory(SCOPE, locker.id, actor="test")
    for filters in (None, HISTORY):
        for config in (None, LEXICAL):
            assert gone.id not in _ids(service, "locker code", config, filters)
            assert locker.id not in _ids(service, "gym", config, filters)  # nor reached over its link
    assert spot.id not in _ids(service, "parking spot")
    item = next(i for i in service.recall(SCOPE, "parking spot", filters=HISTORY).items if i.id == spot.id)
    assert item.scores["history"] == 1.0 and "expired" in item.why


def test_rerank_prefers_the_more_salient_then_the_more_recent(service: MemoryService) -> None:
    now = utcnow()
    loud = _write(service, SCOPE, "Remember: Maya's passport expires on 3 May 2026")
    quiet = _write(service, SCOPE, "Maya has a passport")
    fresh = _write(service, SCOPE, "Maya's office is on the third floor", observed_at=now)
    stale = _write(service, SCOPE, "Maya's desk is by the window", observed_at=now - timedelta(days=90))
    assert loud.salience > quiet.salience and fresh.salience == stale.salience
    memories = service.store.fetch_memories(SCOPE, [m.id for m in (loud, quiet, fresh, stale)])
    config = preset("default")
    for better, worse in ((loud, quiet), (fresh, stale)):
        # the worse one first in fused order, scores equal: only the rerank factors can decide
        fused = [Fused(("memories", worse.id), 0.1), Fused(("memories", better.id), 0.1)]
        ranked, _ = _rerank("q", fused, {}, {i: memories[i] for i in (better.id, worse.id)}, {}, config, now)
        assert [r.key[1] for r in ranked] == [better.id, worse.id]
        assert ranked[0].score > ranked[1].score
    plain = config.model_copy(update={"salience_weight": 0.0, "recency_weight": 0.0})
    fused = [Fused(("memories", quiet.id), 0.1), Fused(("memories", loud.id), 0.1)]
    ranked, _ = _rerank("q", fused, {}, memories, {}, plain, now)
    assert [r.score for r in ranked] == [0.1, 0.1]  # weights 0: the fused score itself


def test_graph_off_gives_plain_fused_results(service: MemoryService, marathon: dict[str, MemoryItem]) -> None:
    off = LEXICAL.model_copy(update={"graph": False, "salience_weight": 0.0, "recency_weight": 0.0})
    result = service.recall(SCOPE, "marathon", token_budget=4000, config=off)
    assert [i.id for i in result.items] == [marathon["race"].id]
    assert result.items[0].score == result.items[0].scores["fused"]
    assert all(i.why.startswith("matched by") for i in result.items)
    assert marathon["training"].id not in _ids(service, "marathon", LEXICAL.model_copy(update={"graph": False}))


def test_the_default_preset_never_reorders_chunks(service: MemoryService, tmp_path: Path) -> None:
    """Rerank and expansion touch memories only: chunks keep today's scores and order among themselves,
    and with no memory candidates the result is today's exactly. (Newer-first, which orders turns about
    one thing by time, is the step that moves chunks: off on both sides here, tested in test_versions.)"""
    write_transcript(tmp_path / "chat.jsonl", [
        turn("s1", str(i), "Maya" if i % 2 else "Sam", f"2024-05-01T10:{i:02d}:00Z", text)
        for i, text in enumerate([
            "I signed up for the Berlin marathon.", "How long have you been training?",
            "Since January, four runs a week.", "My knee hurts after long runs.",
            "Try the physio on Kastanienallee.", "The marathon is in September.",
        ])
    ])
    service.ingest(SCOPE, [tmp_path / "chat.jsonl"])
    default_config = preset("default").model_copy(update={"newer_first": False})
    plain = default_config.model_copy(update={"graph": False, "salience_weight": 0.0, "recency_weight": 0.0})
    chunks_only = RecallFilters(kinds=["chunk"])
    for query in ("when is the marathon?", "what did Maya say about her knee", "physio"):
        default = service.recall(SCOPE, query, token_budget=4000, k=50, config=default_config)
        before = service.recall(SCOPE, query, token_budget=4000, k=50, config=plain)
        assert [(i.id, i.score, i.why) for i in default.items if i.kind == "chunk"] == [
            (i.id, i.score, i.why) for i in before.items if i.kind == "chunk"]
        default = service.recall(SCOPE, query, token_budget=4000, filters=chunks_only, config=default_config)
        before = service.recall(SCOPE, query, token_budget=4000, filters=chunks_only, config=plain)
        assert default.items and default.model_dump() == before.model_dump()


def test_memories_extracted_from_top_chunks_can_seed_expansion(service: MemoryService, tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# Trip\n\n## Hotel\n\nThe hotel near the Alexanderplatz has a rooftop pool.\n")
    service.ingest(SCOPE, [tmp_path / "notes.md"])
    [[chunk_id]] = service.store.sql("SELECT chunk_id FROM chunks WHERE deleted_at IS NULL")[1]
    memory, _ = service.add(SCOPE, "Maya booked two nights there for the conference", derived_from=[chunk_id])
    assert memory.id not in _ids(service, "rooftop pool", LEXICAL)  # off by default
    seeded = LEXICAL.model_copy(update={"graph_chunk_seeds": 3})
    items = {i.id: i for i in service.recall(SCOPE, "rooftop pool", token_budget=4000, config=seeded).items}
    assert items[memory.id].why == f"extracted from {chunk_id}, a top chunk"
    assert items[memory.id].score < items[chunk_id].score


def test_history_reaches_the_cli_and_http_request_models() -> None:
    from mnemoflow.api.http import RecallIn

    assert RecallIn(user_id="maya", query="q", include_history=True).include_history
    assert not RecallIn(user_id="maya", query="q").include_history


def test_cli_recall_history_flag(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from mnemoflow.cli import main

    home = tmp_path / "h"
    with MemoryService(load_settings(home=home)) as service:
        old = _write(service, Scope("default", "maya"), "Maya lives in Hamburg")
        _write(service, Scope("default", "maya"), "Maya lives in Munich now",
               LinkDraft("UPDATES", old.id, 0.95, "moved"))
        service.drain()
    outputs = []
    for extra in ([], ["--history"]):
        with pytest.raises(SystemExit) as exit_info:
            main(["recall", "Hamburg", "--home", str(home), "--user", "maya", "--json", *extra])
        assert exit_info.value.code == 0
        outputs.append(capsys.readouterr().out)
    current, history = ([i["id"] for i in json.loads(out)["items"]] for out in outputs)
    assert old.id not in current and old.id in history and "superseded by" in outputs[1]


def test_a_memory_sharing_an_entity_with_a_top_memory_joins(service: MemoryService) -> None:
    """Kept last: it needs the entity storage (Store.memory_entity_ids / memories_with_entities)."""
    from dataclasses import replace

    from mnemoflow.models import EntityRef

    lisbon = EntityRef(entity_id("place", "lisbon"), "Lisbon", "place")
    porto = EntityRef(entity_id("place", "porto"), "Porto", "place")

    def write(scope: Scope, text: str, *entities: EntityRef) -> MemoryItem:
        memory, _ = service.store.write_memory(scope, replace(draft_memory(text), entities=entities), actor="test")
        return memory

    seed = write(SCOPE, "Maya flew out for the conference on Monday", lisbon)
    neighbour = write(SCOPE, "The hotel has a rooftop bar with a view of the river", lisbon)
    unrelated = write(SCOPE, "The train ride took three hours", porto)
    theirs = write(OTHER_USER, "Omar also stayed by the river", lisbon)
    service.drain()
    items = {i.id: i for i in service.recall(SCOPE, "conference", token_budget=4000, config=LEXICAL).items}
    reached = items[neighbour.id]
    assert reached.why == f"shares entity {lisbon.entity_id} with {seed.id}"
    assert reached.scores["graph_factor"] == LEXICAL.graph_entity_factor
    assert reached.score < items[seed.id].score
    assert unrelated.id not in items and theirs.id not in items
    found = expand(service.store, SCOPE, [seed.id])
    assert [(e.memory_id, e.via, e.from_id) for e in found] == [(neighbour.id, lisbon.entity_id, seed.id)]
    no_entities = LEXICAL.model_copy(update={"graph_entities": False})
    assert neighbour.id not in _ids(service, "conference", no_entities)

    # an entity every memory names (the user herself) says little: under a tight bound the memory
    # sharing the rarer entity wins, and `via` names that one
    maya = EntityRef(entity_id("person", "maya"), "Maya", "person")
    talk = write(SCOPE, "Maya gave a talk about tide tables", maya, porto)
    for n in range(4):
        write(SCOPE, f"Maya owns {n + 2} houseplants", maya)
    service.drain()
    tight = expand(service.store, SCOPE, [talk.id], max_items=1)
    assert [(e.memory_id, e.via) for e in tight] == [(unrelated.id, porto.entity_id)]
