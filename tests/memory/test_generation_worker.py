"""Memory generation as an outbox job: queued with the turns, drained by ingest before embeddings (so
a recall right after sees the memories), left to the worker with --no-wait, off by setting."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mnemoflow.config import load_settings
from mnemoflow.memory.pipeline import asks_for_detail
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.conftest import turn, write_transcript

SCOPE = Scope("acme", "keisha")
TURNS = [
    turn("s1", "t1", "Keisha", "2024-02-05T10:00:00Z", "I opened a Roth IRA with Fidelity today.", role="user"),
    turn("s1", "t2", "Assistant", "2024-02-05T10:01:00Z", "Nice step. How will you invest it?", role="assistant"),
    turn("s1", "t3", "Keisha", "2024-02-05T10:02:00Z", "$500 a month into an S&P 500 index fund.", role="user"),
    turn("s2", "t4", "Keisha", "2024-05-10T09:00:00Z", "I live in Denver.", role="user"),
]


def test_ingest_drains_generation_and_recall_cites_the_turns(service: MemoryService, tmp_path: Path) -> None:
    outcome = service.ingest(SCOPE, [write_transcript(tmp_path / "chat.jsonl", TURNS)])
    assert outcome.drain is not None and outcome.drain.generation is not None
    assert outcome.drain.generation.sessions == 2 and outcome.drain.generation.created >= 3
    memories = {m.content: m for m in service.store.list_memories(SCOPE)}
    assert any("Roth IRA" in c for c in memories) and any("Denver" in c for c in memories)
    assert outcome.pending_embeddings == 0
    result = service.recall(SCOPE, "Where does Keisha live?", k=3)
    top = next(item for item in result.items if item.kind == "memory")
    assert "Denver" in top.text
    cite = top.citations[0]
    assert (cite.session_id, cite.turn_id, cite.speaker, cite.memory_id) == ("s2", "t4", "Keisha", top.id)
    assert cite.ts is not None and cite.ts.year == 2024


def test_the_answer_to_a_question_about_a_memory_extends_it(service: MemoryService, tmp_path: Path) -> None:
    service.ingest(SCOPE, [write_transcript(tmp_path / "chat.jsonl", TURNS)])
    by_id = {m.id: m.content for m in service.store.list_memories(SCOPE)}
    extends = [(by_id[src], by_id[dst]) for src, kind, dst in service.store.memory_links(SCOPE) if kind == "EXTENDS"]
    assert any("$500" in src and "Roth IRA" in dst for src, dst in extends), extends


def test_reingesting_the_same_turns_generates_nothing_new(service: MemoryService, tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "chat.jsonl", TURNS)
    service.ingest(SCOPE, [path])
    before = {m.id for m in service.store.list_memories(SCOPE, include_inactive=True)}
    again = service.ingest(SCOPE, [path])
    assert again.drain is not None and again.drain.generation is not None and again.drain.generation.sessions == 0
    assert {m.id for m in service.store.list_memories(SCOPE, include_inactive=True)} == before


def test_no_wait_leaves_generation_to_the_worker(service: MemoryService, tmp_path: Path) -> None:
    service.ingest(SCOPE, [write_transcript(tmp_path / "chat.jsonl", TURNS)], wait=False)
    assert service.store.list_memories(SCOPE) == []
    assert service.store.outbox_counts().get("pending", 0) > 0
    drained = service.drain()
    assert drained.generation is not None and drained.generation.sessions == 2
    assert any("Denver" in m.content for m in service.store.list_memories(SCOPE))
    assert service.store.outbox_counts().get("pending", 0) == 0


def test_generation_can_be_switched_off(tmp_path: Path) -> None:
    with MemoryService(load_settings(home=tmp_path / "home", generate_memories=False)) as service:
        outcome = service.ingest(SCOPE, [write_transcript(tmp_path / "chat.jsonl", TURNS)])
        assert outcome.report.turns_added == 4
        assert service.store.list_memories(SCOPE) == []


def test_another_user_never_sees_the_generated_memories(service: MemoryService, tmp_path: Path) -> None:
    service.ingest(SCOPE, [write_transcript(tmp_path / "chat.jsonl", TURNS)])
    for other in (Scope("acme", "omar"), Scope("globex", "keisha")):
        assert service.store.list_memories(other) == []
        assert all(item.kind != "memory" for item in service.recall(other, "Where does Keisha live?").items)


@pytest.mark.parametrize(("question", "detail"), [
    ("Congrats! Which day?", True),
    ("How often are the sessions?", True),
    ("Self-taught?", True),
    ("Did you go with the fixed-rate mortgage?", True),
    ("Is that the one near your office?", True),
    ("Sure, how many nights?", True),
    ("Whoa. What's next?", False),
    ("Noted. Any cuisines you'd like more of?", False),
    ("Who is on your committee?", False),
    ("That sounds great.", False),
])
def test_questions_about_what_was_just_said(question: str, detail: bool) -> None:
    assert asks_for_detail(question) is detail


DRAIN_AND_DIE_AFTER_FIRST_PASS = """
import os, signal, sys
from mnemoflow.config import load_settings
from mnemoflow.service import MemoryService
from mnemoflow.storage.memory_writes import MemoryWrites

written = MemoryWrites.flush

def flush_then_die(self, *args, **kwargs):
    written(self, *args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)  # the first session's pass is written; the process dies

MemoryWrites.flush = flush_then_die
MemoryService(load_settings(sys.argv[1])).drain()
"""


def _generated(service: MemoryService) -> list[tuple]:
    memories = service.store.list_memories(SCOPE, limit=1000, include_inactive=True)
    rows = service.store.sql("SELECT memory_id, reinforcement FROM memories")[1]
    reinforced = dict(rows)
    links = service.store.sql("SELECT src, type, count(*) FROM memory_links GROUP BY ALL")[1]
    by_src = {(src, kind): n for src, kind, n in links}
    return sorted((m.content, m.is_latest, reinforced[m.id], sorted((k, n) for (s, k), n in by_src.items() if s == m.id))
                  for m in memories)


def test_a_worker_killed_after_a_session_was_written_never_generates_it_again(tmp_path: Path) -> None:
    """Found by reading what the crash harness kills: the session's memories were written in one
    transaction and its job marked done in the next, so a worker killed between the two read the
    session again on restart and reinforced every memory it had just written. The job is now done
    in the pass's own transaction: the result is the uninterrupted run's."""
    transcript = write_transcript(tmp_path / "chat.jsonl", TURNS)
    with MemoryService(load_settings(tmp_path / "whole")) as service:
        service.ingest(SCOPE, [transcript])
        expected = _generated(service)

    home = tmp_path / "killed"
    with MemoryService(load_settings(home)) as service:
        service.ingest(SCOPE, [transcript], wait=False)
    child = subprocess.run([sys.executable, "-c", DRAIN_AND_DIE_AFTER_FIRST_PASS, str(home)], capture_output=True,
                           text=True, timeout=300, check=False)
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    with MemoryService(load_settings(home)) as service:
        drained = service.drain()
        assert drained.generation is not None and drained.generation.sessions == 1  # the other session only
        assert _generated(service) == expected
        assert service.outbox_counts() == {"done": len(service.store.sql("SELECT * FROM outbox")[1])}
