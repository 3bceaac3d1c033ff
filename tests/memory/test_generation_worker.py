"""Memory generation as an outbox job: queued with the turns, drained by ingest before embeddings (so
a recall right after sees the memories), left to the worker with --no-wait, off by setting."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mnemoflow.config import load_settings
from mnemoflow.memory.turns import asks_for_detail
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests import crash_harness
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


KILLED_WORKER = """
import os, signal, sys
from mnemoflow.config import load_settings
from mnemoflow.service import MemoryService
from mnemoflow.storage.memory_writes import MemoryWrites

home, where, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
calls = []

def die_at(method):
    def call(self, *args, **kwargs):
        calls.append(1)
        if where == "search" and len(calls) == count:  # in the middle of a session's pass
            os.kill(os.getpid(), signal.SIGKILL)
        result = method(self, *args, **kwargs)
        if where == "flush" and len(calls) == count:  # right after a session's pass was written
            os.kill(os.getpid(), signal.SIGKILL)
        return result
    return call

name = "bm25_search" if where == "search" else "flush"
setattr(MemoryWrites, name, die_at(getattr(MemoryWrites, name)))
MemoryService(load_settings(home)).drain()
"""


def _generated(service: MemoryService) -> list[tuple]:
    """Every memory with its state, reinforcement and links (by type), named by content."""
    reinforced = dict(service.store.sql("SELECT memory_id, reinforcement FROM memories")[1])
    links = service.store.sql("SELECT src, type, count(*) FROM memory_links GROUP BY ALL")[1]
    return sorted((m.content, m.is_latest, reinforced[m.id], sorted((kind, n) for src, kind, n in links if src == m.id))
                  for m in service.store.list_memories(SCOPE, limit=1000, include_inactive=True))


def test_a_worker_killed_in_generation_resumes_as_if_never_killed(tmp_path: Path) -> None:
    """Found by the crash harness (tests/crash_harness.py), two defects, each killed into here:
    - a worker killed in the middle of a session judged the later sessions, once restarted, without
      the memories the dead one had written (not embedded yet, so no vector search finds them): an
      UPDATES was missed and the old memory stayed current. The generator now resumes with them.
    - a session's memories were written in one transaction and its job marked done in the next, so
      a worker killed between the two read the session again and reinforced every memory it had
      just written. The job is now done in the pass's own transaction.
    Either way the result must be the uninterrupted run's."""
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text("".join(json.dumps(t) + "\n" for t in crash_harness.transcript(10, random.Random(16))))
    with MemoryService(load_settings(tmp_path / "whole")) as service:
        service.ingest(SCOPE, [transcript])
        expected = _generated(service)

    home = tmp_path / "killed"
    with MemoryService(load_settings(home)) as service:
        service.ingest(SCOPE, [transcript], wait=False)
    for where, count in (("search", 25), ("flush", 1)):
        child = subprocess.run([sys.executable, "-c", KILLED_WORKER, str(home), where, str(count)],
                               capture_output=True, text=True, timeout=300, check=False)
        assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    with MemoryService(load_settings(home)) as service:
        service.drain()
        assert _generated(service) == expected
        assert service.outbox_counts() == {"done": len(service.store.sql("SELECT * FROM outbox")[1])}
