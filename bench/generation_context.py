"""What a turn is drafted with: the scope's memories most relevant to it, or the newest five.

On real conversations (LoCoMo's, one scope each), session after session through the generator, once
with each choice in a fresh home. Reported per choice:

- cost: generation seconds per turn, and the ratio of the relevant choice to the newest (the baseline);
- gain: of the links the pass wrote from a turn's memory to an earlier memory (UPDATES, EXTENDS,
  CONFLICTS_WITH, DERIVES), how often that earlier memory was among the memories the turn was drafted
  with: what a drafting model (the LLM engine, whose choice is "relevant") would have had in front of
  it when it wrote the memory that relates to it. The rule engine drafts (its choice is "newest": it
  reads the memories for names only), so both choices write about the same links.

    .venv/bin/python bench/generation_context.py --conversations 3
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from common import LOCOMO, RESULTS, locomo_rows

from mnemoflow.config import load_settings
from mnemoflow.eval.locomo import to_transcript
from mnemoflow.memory.generate.candidates import Candidate, GenerationContext, MemoryContext, TurnView
from mnemoflow.memory.pipeline import MemoryGenerator
from mnemoflow.memory.generate.rules import RuleEngine
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.timeutil import parse_timestamp

CHOICES: tuple[MemoryContext, ...] = ("newest", "relevant")


class Recording:
    """The rule engine, noting what each turn was drafted with and which turn drafted each content."""

    def __init__(self) -> None:
        self.engine = RuleEngine()
        self.name, self.memory_context = self.engine.name, self.engine.memory_context
        self.context: dict[str, set[str]] = {}
        self.drafted_at: dict[str, str] = {}

    def generate(self, context: GenerationContext) -> list[Candidate]:
        self.context[context.turn.turn_id] = set(context.memories)
        candidates = self.engine.generate(context)
        for candidate in candidates:
            self.drafted_at.setdefault(candidate.content, context.turn.turn_id)
        return candidates

    def close(self) -> None:
        self.engine.close()


def sessions(rows: list[dict]) -> list[list[TurnView]]:
    by_session: dict[str, list[TurnView]] = defaultdict(list)
    for t in rows:
        by_session[t["session_id"]].append(TurnView(t["turn_id"], t["session_id"], t["speaker"], t["text"],
                                                    parse_timestamp(t["ts"]), t.get("role")))
    return list(by_session.values())


def run(home: Path, chats: dict[str, list[dict]], choice: MemoryContext) -> dict[str, float]:
    seconds, turns, links, seen = 0.0, 0, 0, 0
    with MemoryService(load_settings(home)) as service:
        service.recall(Scope("bench", "warmup"), "warm up")  # model and indexes loaded before timing
        for cid, rows in chats.items():
            scope, engine = Scope("bench", cid), Recording()
            generator = MemoryGenerator(service.store, service.embedder, engine, scope, context=choice)
            for session in sessions(rows):
                t0 = time.perf_counter()
                generator.run(session)
                seconds += time.perf_counter() - t0
                turns += len(session)
            content = {m.id: m.content for m in service.store.list_memories(scope, limit=100_000, include_inactive=True)}
            for src, kind, dst in service.store.memory_links(scope):
                turn = engine.drafted_at.get(content.get(src, ""))
                if kind in ("UPDATES", "EXTENDS", "CONFLICTS_WITH", "DERIVES") and turn and dst in content:
                    links += 1
                    seen += content[dst] in engine.context.get(turn, set())
    return {"turns": turns, "ms_per_turn": round(1000 * seconds / turns, 1), "links": links,
            "target_in_context": round(seen / links, 3) if links else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=3)
    args = parser.parse_args()
    by_id: dict[str, list[dict]] = defaultdict(list)
    for row in locomo_rows(LOCOMO):
        by_id[row["conversation_id"]].append(row)
    chats = {cid: to_transcript(by_id[cid]) for cid in list(by_id)[:args.conversations]}
    with tempfile.TemporaryDirectory(prefix="mnemoflow-bench-context-") as scratch:
        report = {choice: run(Path(scratch) / choice, chats, choice) for choice in CHOICES}
    report["cost ratio (relevant / newest)"] = round(report["relevant"]["ms_per_turn"] /
                                                     report["newest"]["ms_per_turn"], 2)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "generation_context.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
