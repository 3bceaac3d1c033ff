"""A pass of memory writes: each decision sees the writes before it at once (LanceDB's BM25 included),
the pass lands in one transaction and one commit, and a pass that fails leaves nothing anywhere."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from mnemoflow.config import Settings, load_settings
from mnemoflow.errors import BadInputError
from mnemoflow.memory import pipeline
from mnemoflow.memory.generate.candidates import TurnView
from mnemoflow.memory.generate.direct import draft_memory
from mnemoflow.memory.generate.rules import RuleEngine
from mnemoflow.memory.pipeline import MemoryGenerator
from mnemoflow.models import LinkDraft
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.timeutil import parse_timestamp
from tests.conftest import turn, write_transcript

SCOPE = Scope("acme", "lena")


def _commits(service: MemoryService, actor: str) -> list[str]:
    return [r[0] for r in service.store.sql("SELECT commit_id FROM commits WHERE actor = ? ORDER BY seq", [actor])[1]]


def _bm25(service: MemoryService, query: str) -> list[str]:
    return [hit.id for hit in service.store.bm25_search(SCOPE, "memories", query, 10)]


def _index_rows(service: MemoryService) -> int:
    return len(service.store.index_ids("memories", SCOPE))


def test_a_pass_sees_its_own_writes_and_lands_in_one_commit(service: MemoryService) -> None:
    stored, _ = service.store.write_memory(SCOPE, draft_memory("Lena works at Globex"), actor="test")
    with service.store.memory_writes(SCOPE, actor="pass") as writes:
        hamburg, created = writes.add(draft_memory("Lena lives in Hamburg"))
        assert created and hamburg.id in [hit.id for hit in writes.bm25_search("Hamburg", 10)]
        munich, _ = writes.add(draft_memory("Lena lives in Munich now"),
                               links=(LinkDraft("UPDATES", hamburg.id, 0.93, "same slot, new value"),))
        stripe, _ = writes.add(draft_memory("Lena works at Stripe now"),
                               links=(LinkDraft("UPDATES", stored.id, 0.93, "same slot, new value"),))
        again, created = writes.add(draft_memory("Lena lives in Munich now"))
        assert (again.id, created) == (munich.id, False)
        assert writes.reinforce(munich.id, ())
        assert set(writes.fetch_memories([stored.id, hamburg.id, munich.id, stripe.id])) == {munich.id, stripe.id}
        assert [m.id for m in service.store.list_memories(SCOPE)] == [stored.id]  # DuckDB: nothing yet
    [commit] = _commits(service, "pass")
    rows = service.store.sql("SELECT memory_id, commit_id, is_latest, reinforcement FROM memories")[1]
    assert {r[0]: (r[1], r[2], r[3]) for r in rows} == {
        stored.id: (commit, False, 0), hamburg.id: (commit, False, 0), munich.id: (commit, True, 1),
        stripe.id: (commit, True, 0)}
    assert {(s, o) for s, p, o in service.store.sql(
        "SELECT subject, predicate, object FROM relations WHERE predicate = 'supersedes'")[1]} == {
        (munich.id, hamburg.id), (stripe.id, stored.id)}
    assert [(e.op, e.memory_id) for e in service.history(SCOPE, hamburg.id)] == [  # the memory as it is now
        ("insert", hamburg.id), ("insert", munich.id)]
    assert all(report.ok for report in service.verify("acme"))
    assert set(_bm25(service, "Lena")) == {munich.id, stripe.id}


def test_a_pass_that_fails_leaves_nothing_in_duckdb_or_lancedb(service: MemoryService) -> None:
    stored, _ = service.store.write_memory(SCOPE, draft_memory("Lena lives in Hamburg"), actor="test")
    service.drain()
    with pytest.raises(RuntimeError, match="engine died"):
        with service.store.memory_writes(SCOPE, actor="pass") as writes:
            writes.add(draft_memory("Lena plays the cello"))
            writes.add(draft_memory("Lena lives in Munich now"),
                       links=(LinkDraft("UPDATES", stored.id, 0.93, "same slot, new value"),))
            raise RuntimeError("engine died")
    assert [m.id for m in service.store.list_memories(SCOPE, include_inactive=True)] == [stored.id]
    assert service.store.get_memory(SCOPE, stored.id).is_latest
    assert _commits(service, "pass") == []
    assert _index_rows(service) == 1
    assert _bm25(service, "Lena") == [stored.id]  # the index is as it was: the old version current again
    vector = service.embedder.embed(["Where does Lena live?"])[0]
    assert [hit.id for hit in service.store.vector_search(SCOPE, "memories", vector, 5)] == [stored.id]


def test_a_write_citing_what_the_user_does_not_hold_is_refused_everywhere(service: MemoryService) -> None:
    with pytest.raises(BadInputError, match="does not hold: chunk_nowhere"):
        service.store.write_memory(SCOPE, replace(draft_memory("Lena lives in Hamburg"), derived_from=("chunk_nowhere",)),
                                   actor="test")
    assert service.store.list_memories(SCOPE) == [] and _index_rows(service) == 0
    assert _commits(service, "test") == []


def test_index_rows_of_a_pass_that_died_are_dropped_before_a_retry(settings: Settings) -> None:
    # a process that dies inside a pass (no flush, no discard) leaves its LanceDB rows behind
    died = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import os
        from mnemoflow.config import Settings, load_settings
        from mnemoflow.memory.generate.direct import draft_memory
        from mnemoflow.service import MemoryService
        from mnemoflow.storage import Scope
        scope = Scope({SCOPE.tenant_id!r}, {SCOPE.user_id!r})
        service = MemoryService(load_settings({str(settings.home)!r}))
        service.store.write_memory(scope, draft_memory("Lena lives in Hamburg"), actor="test")
        with service.store.memory_writes(scope, actor="pass") as writes:
            writes.add(draft_memory("Lena plays the cello"))
            os._exit(3)
        """)], capture_output=True, text=True, timeout=120)
    assert died.returncode == 3, died.stderr
    with MemoryService(settings) as service:
        [kept] = service.store.list_memories(SCOPE)
        assert len(_bm25(service, "Lena")) == 2
        assert service.store.drop_unflushed_memories(SCOPE) == 1
        assert _bm25(service, "Lena") == [kept.id]


def test_vector_hits_searched_ahead_drop_what_the_pass_superseded(service: MemoryService) -> None:
    for text in ("Lena lives in Hamburg", "Lena lives near the harbour", "Lena lives in a flat"):
        service.store.write_memory(SCOPE, draft_memory(text), actor="test")
    service.drain()
    vector = service.embedder.embed(["Lena lives in Hamburg"])[0]
    ranked = [h.id for h in service.store.vector_search(SCOPE, "memories", vector, 3)]
    with service.store.memory_writes(SCOPE, actor="pass") as writes:
        writes.search_ahead([vector], 1)  # two hits each: enough until both are superseded
        assert [h.id for h in writes.vector_search(vector, 1)] == ranked[:1]
        writes.add(draft_memory("Lena moved to Munich"), links=(LinkDraft("UPDATES", ranked[0], 0.93, "moved"),))
        assert [h.id for h in writes.vector_search(vector, 1)] == ranked[1:2]
        writes.add(draft_memory("Lena moved to Berlin"), links=(LinkDraft("UPDATES", ranked[1], 0.93, "moved"),))
        assert [h.id for h in writes.vector_search(vector, 1)] == ranked[2:]  # a search of its own
        assert [h.id for h in service.store.vector_search(SCOPE, "memories", vector, 1)] == ranked[2:]


def test_a_repeat_may_cite_a_source_its_memory_already_cites(tmp_path: Path) -> None:
    with MemoryService(load_settings(home=tmp_path / "home", generate_memories=False)) as service:
        service.ingest(SCOPE, [write_transcript(tmp_path / "chat.jsonl", [
            turn("s1", "t1", "Lena", "2024-03-01T09:00:00Z", "I live in Hamburg.")])])
        [[chunk]] = service.store.sql("SELECT chunk_id FROM chunks")[1]
        memory, _ = service.store.write_memory(
            SCOPE, replace(draft_memory("Lena lives in Hamburg"), derived_from=(chunk,)), actor="test")
        assert service.store.reinforce_memory(SCOPE, memory.id, (chunk,), actor="test")
        assert service.store.sql("SELECT count(*) FROM memory_links")[1] == [(1,)]
        assert all(report.ok for report in service.verify("acme"))


def test_generation_writes_one_commit_per_session(service: MemoryService, tmp_path: Path) -> None:
    said = [turn("s1", "t1", "Lena", "2024-03-01T09:00:00Z", "I live in Hamburg. I play the cello.", role="user"),
            turn("s1", "t2", "Lena", "2024-03-01T09:05:00Z", "My sister Maya works at Stripe.", role="user"),
            turn("s2", "t3", "Lena", "2024-06-01T09:00:00Z", "I moved to Munich, I live in Munich now.", role="user")]
    outcome = service.ingest(SCOPE, [write_transcript(tmp_path / "chat.jsonl", said)])
    assert outcome.drain is not None and outcome.drain.generation is not None
    assert outcome.drain.generation.sessions == 2 and outcome.drain.generation.created >= 4
    commits = _commits(service, "generate")
    assert len(commits) == 2
    named = {r[0] for r in service.store.sql("SELECT DISTINCT commit_id FROM memories")[1]}
    assert named <= set(commits)
    assert all(report.ok for report in service.verify("acme"))


def test_a_failed_run_leaves_the_generator_as_it_was(service: MemoryService, monkeypatch: pytest.MonkeyPatch) -> None:
    said = [("t1", "2024-03-01T09:00:00Z", "I live in Hamburg."), ("t2", "2024-03-02T09:00:00Z", "I play the cello.")]
    service.post_events(SCOPE, [{"session_id": "s", "turn_id": t, "speaker": "Lena", "role": "user", "ts": ts,
                                 "text": text} for t, ts, text in said], wait=False)
    turns = [TurnView(t, "s", "Lena", text, parse_timestamp(ts), "user") for t, ts, text in said]
    sources = {t: tuple(c) for t, c in service.store.turn_chunk_ids(SCOPE, "s").items()}
    generator = MemoryGenerator(service.store, service.embedder, RuleEngine(), SCOPE)
    classify, calls = pipeline.classify, []

    def second_call_fails(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("classifier died")
        return classify(*args, **kwargs)

    monkeypatch.setattr(pipeline, "classify", second_call_fails)
    with pytest.raises(RuntimeError, match="classifier died"):
        generator.run(turns, sources)
    assert (generator.written, generator.report.turns, generator.report.created) == ({}, 0, 0)
    assert service.store.list_memories(SCOPE) == [] and _index_rows(service) == 0
    monkeypatch.setattr(pipeline, "classify", classify)
    report = generator.run(turns, sources)
    assert report.created >= 2 and set(generator.written) == {m.id for m in service.store.list_memories(SCOPE)}
