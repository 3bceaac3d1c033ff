"""With drop_restated_memories (opt-in), a memory whose source turns the context shows word for word is left
out; graph expansion does not link through the people who said a seed's turns (graph_skip_speakers, default)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from mnemoflow.memory.generate.direct import draft_memory
from mnemoflow.memory.relate.entities import entity_id
from mnemoflow.models import EntityRef, MemoryItem
from mnemoflow.recall import RecallConfig, RecallFilters
from mnemoflow.recall.packing import Candidate, pack
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.conftest import turn, write_transcript

SCOPE = Scope("acme", "maya")
# BM25 alone and no graph: which items match is decided by their words only
LEXICAL = RecallConfig(name="lexical", signals={"bm25": 1.0}, graph=False)
DROP = LEXICAL.model_copy(update={"drop_restated_memories": True})


def _source(turn_id: str, speaker: str = "Maya") -> dict[str, str]:
    return {"session_id": "s1", "turn_id": turn_id, "speaker": speaker, "ts": "2024-05-01T10:00:00+00:00"}


def _memory(service: MemoryService, text: str, *sources: dict[str, str], entities: tuple[EntityRef, ...] = (),
            ) -> MemoryItem:
    draft = replace(draft_memory(text, metadata={"source_turns": list(sources)}), entities=entities)
    memory, created = service.store.write_memory(SCOPE, draft, actor="test")
    assert created
    return memory


@pytest.fixture
def chat(service: MemoryService, tmp_path: Path) -> dict[str, MemoryItem]:
    write_transcript(tmp_path / "chat.jsonl", [
        turn("s1", "0", "Maya", "2024-05-01T10:00:00Z", "I signed up for the Berlin marathon in September."),
        turn("s1", "1", "Sam", "2024-05-01T10:01:00Z", "Which hotel are you staying at?"),
        turn("s1", "2", "Maya", "2024-05-01T10:02:00Z", "A small hotel near Tempelhof."),
    ])
    service.ingest(SCOPE, [tmp_path / "chat.jsonl"])
    restating = _memory(service, "Maya signed up for the Berlin marathon", _source("0"))
    # read from turn 0 and from a turn the transcript does not hold (so no chunk can show it)
    beyond = _memory(service, "Maya trains for the Berlin marathon with her club", _source("0"), _source("9"))
    service.drain()
    return {"restating": restating, "beyond": beyond}


def _turn_chunk(items: list, turn_id: str) -> object | None:
    return next((i for i in items if i.kind == "chunk" and any(c.turn_id == turn_id for c in i.citations)), None)


def test_a_memory_restating_a_shown_turn_is_left_out(service: MemoryService, chat: dict[str, MemoryItem]) -> None:
    kept = service.recall(SCOPE, "Berlin marathon", token_budget=4000, config=LEXICAL).items  # off by default
    assert chat["restating"].id in {i.id for i in kept} and _turn_chunk(kept, "0") is not None

    items = service.recall(SCOPE, "Berlin marathon", token_budget=4000, config=DROP).items
    ids = {i.id for i in items}
    chunk = _turn_chunk(items, "0")
    assert chunk is not None and "Berlin marathon in September" in chunk.text
    assert chat["restating"].id not in ids
    assert f"memory {chat['restating'].id}, read from this turn, is left out" in chunk.why
    # read from a turn the context does not show: it adds something, so it stays
    assert chat["beyond"].id in ids
    # nothing shows its turn when only memories are asked for
    alone = service.recall(SCOPE, "Berlin marathon", token_budget=4000, config=DROP,
                           filters=RecallFilters(kinds=["memory"])).items
    assert chat["restating"].id in {i.id for i in alone}


def test_the_turn_takes_the_place_of_a_memory_ranked_above_it() -> None:
    """Rank order does not decide which copy stays, and the memory's room goes to the next items."""
    def cand(kind: str, name: str, line: str, **turns: frozenset) -> Candidate:
        group, header = ("memories", "[memories]") if kind == "memory" else ("s1", "[1 May 2024]")
        return Candidate(kind, name, line, 1.0, {}, "matched", None, group=group, header=header, **turns)

    t0 = frozenset({("s1", "0")})
    memory = cand("memory", "m", "- Maya signed up for the Berlin marathon (2024-05-01)", restates=t0)
    chunk = cand("chunk", "c0", "Maya: I signed up for the Berlin marathon in September.", shows=t0)
    other = cand("chunk", "c1", "Maya: A small hotel near Tempelhof.", shows=frozenset({("s1", "2")}))
    # room for the memory's line, the chunk's and the session header, not for the third item too
    budget = -(-(len(memory.line) + len(chunk.line) + len("[memories]") + len("[1 May 2024]") + 4) // 4)
    assert [c.id for c in pack([memory, chunk, other], budget).items] == ["m", "c0"]
    packed = pack([memory, chunk, other], budget, drop_restated=True)
    assert [c.id for c in packed.items] == ["c0", "c1"]
    assert "[memories]" not in packed.context and packed.tokens <= budget
    assert [c.id for c in pack([chunk, memory, other], budget, drop_restated=True).items] == ["c0", "c1"]


def test_expansion_does_not_link_through_the_speaker_of_a_seed(service: MemoryService) -> None:
    maya = EntityRef(entity_id("person", "maya"), "Maya", "person")
    lisbon = EntityRef(entity_id("place", "lisbon"), "Lisbon", "place")
    seed = _memory(service, "Maya flew to the conference in Lisbon", _source("0"), entities=(maya, lisbon))
    place = _memory(service, "The hotel in Lisbon has a rooftop bar", _source("5"), entities=(lisbon,))
    person = _memory(service, "Maya owns three houseplants", _source("7"), entities=(maya,))
    service.drain()
    graph = LEXICAL.model_copy(update={"graph": True, "graph_max_items": 8})
    ids = {i.id for i in service.recall(SCOPE, "conference", token_budget=4000, config=graph).items}
    assert seed.id in ids and place.id in ids
    assert person.id not in ids  # "Maya" said the seed's turn: sharing her is no link
    loose = graph.model_copy(update={"graph_skip_speakers": False})
    assert person.id in {i.id for i in service.recall(SCOPE, "conference", token_budget=4000, config=loose).items}
