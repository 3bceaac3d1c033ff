"""The default recall contract: scores per signal, why, citations, budget, lifecycle, no embeddings."""

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings as hyp_settings, strategies as st

from mnemoflow.recall import RecallFilters
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.timeutil import utcnow
from tests.conftest import turn, write_transcript

SCOPE = Scope("acme", "alex")


@pytest.fixture
def loaded(service: MemoryService, tmp_path: Path) -> MemoryService:
    write_transcript(tmp_path / "chat.jsonl", [
        turn("s1", f"{i}", "Sam" if i % 2 else "Alex", f"2024-05-01T10:{i:02d}:00Z", text)
        for i, text in enumerate([
            "I adopted a dog last weekend, a beagle called Pepper.",
            "Congrats! How is Pepper settling in?",
            "She sleeps all day and chews every shoe she finds.",
            "Our team switched the CI pipeline to GitHub Actions.",
            "Did the build times improve after the switch?",
            "Yes, from twelve minutes to four.",
            "My sister Clara is getting married in Porto in September.",
            "Are you giving a speech at the wedding?",
        ])
    ])
    (tmp_path / "notes.md").write_text("# Notes\n\n## Dogs\n\nBeagles need long walks every day.\n")
    service.ingest(SCOPE, [tmp_path / "chat.jsonl", tmp_path / "notes.md"])
    service.add(SCOPE, "Alex prefers window seats on trains")
    return service


def test_items_carry_text_scores_why_and_citations(loaded: MemoryService) -> None:
    result = loaded.recall(SCOPE, "What is the name of Alex's dog?", k=5)
    top = result.items[0]
    assert "Pepper" in top.text
    assert top.kind == "chunk"
    assert set(top.scores) == {"fused", "vector", "bm25"}
    assert top.why.startswith("matched by")
    assert top.citations[0].session_id == "s1" and top.citations[0].turn_id == "0"
    assert top.citations[0].ts is not None
    assert result.tokens == -(-len(result.context) // 4)


def test_memories_and_document_chunks_are_recalled(loaded: MemoryService) -> None:
    kinds = {i.kind for i in loaded.recall(SCOPE, "which seat does Alex like on trains?", k=3).items}
    assert "memory" in kinds
    doc = loaded.recall(SCOPE, "how much walking do beagles need", k=1, filters=RecallFilters(kinds=["chunk"]))
    assert doc.items[0].citations[0].title == "Notes"
    assert doc.items[0].citations[0].locator["heading_path"] == ["Notes", "Dogs"]


def test_deleted_and_expired_memories_are_never_returned(loaded: MemoryService) -> None:
    gone, _ = loaded.add(SCOPE, "Alex's locker code is 4417")
    loaded.delete(SCOPE, gone.id)
    loaded.add(SCOPE, "Alex's parking spot this week is B12", expires_at=utcnow() - timedelta(minutes=1))
    for query in ("locker code", "parking spot"):
        texts = [i.text for i in loaded.recall(SCOPE, query, token_budget=4000).items]
        assert not any("4417" in t or "B12" in t for t in texts), texts
    assert all(m.id != gone.id for m in loaded.get_all(SCOPE))


@hyp_settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.integers(min_value=16, max_value=600), k=st.one_of(st.none(), st.integers(1, 8)))
def test_context_never_exceeds_the_budget(loaded: MemoryService, budget: int, k: int | None) -> None:
    result = loaded.recall(SCOPE, "dog wedding pipeline", token_budget=budget, k=k)
    assert -(-len(result.context) // 4) <= budget
    assert result.tokens <= budget
    if k is not None:
        assert len(result.items) <= k
    for item in result.items:
        assert item.text in result.context


def test_no_embedding_in_any_output(loaded: MemoryService) -> None:
    result = loaded.recall(SCOPE, "dog", token_budget=2000)
    dumped = json.dumps(result.public()) + result.model_dump_json()
    dumped += "".join(m.model_dump_json() for m in loaded.get_all(SCOPE))
    # a 384-d vector would show up as a long run of floats
    assert not re.search(r"(-?\d\.\d+,\s*){20}", dumped)
    assert not re.search(r'"(vector|embedding)":\s*\[', dumped)
