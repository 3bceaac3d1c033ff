"""Direct `add` with inference (mem0's verb): messages per second through `Memory.add`, rule engine,
beside the rule engine alone on the same messages (the ratio says what relationships, storage and
vectors cost on top of reading), in wall and in CPU seconds (on a shared machine, other work slows
the first only); the same messages kept verbatim (`infer=False`) for reference. Then an isolation
probe: one memory in every scope of a grid of users, agents, runs and containers, and every scope's
search and get_all checked against the documented rule (storage/scope.py); leaks are counted.

    .venv/bin/python bench/add_throughput.py --messages 400 --per-call 2
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import tempfile
import time
from pathlib import Path

from common import LOCOMO, RESULTS, synthetic_turns

from mnemoflow import Memory
from mnemoflow.memory.candidates import TurnView
from mnemoflow.memory.pipeline import turn_context
from mnemoflow.memory.rules import RuleEngine
from mnemoflow.timeutil import parse_timestamp


def calls(turns: list[dict], per_call: int) -> list[tuple[str, list[dict]]]:
    """(user_id, messages) per add: the turns of a session in groups, the session's first speaker as the user."""
    sessions: dict[str, list[dict]] = {}
    for turn in turns:
        sessions.setdefault(turn["session_id"], []).append(turn)
    found = []
    for session in sessions.values():
        user = session[0]["speaker"].lower()
        for start in range(0, len(session), per_call):
            found.append((user, [{"role": "user", "name": t["speaker"], "content": t["text"], "timestamp": t["ts"]}
                                 for t in session[start:start + per_call]]))
    return found


def engine_alone(turns: list[dict]) -> float:
    """Seconds the rule engine takes to read the same turns in their sessions (no storage)."""
    views = [TurnView(t["turn_id"], t["session_id"], t["speaker"], t["text"], parse_timestamp(t["ts"]), "user")
             for t in turns]
    contexts = [turn_context(views, i) for i in range(len(views))]
    engine = RuleEngine()
    t0 = time.perf_counter()
    for context in contexts:
        engine.generate(context)
    return time.perf_counter() - t0


def timed_adds(home: Path, work: list[tuple[str, list[dict]]], infer: bool) -> dict[str, float]:
    with Memory(home=home, tenant_id="bench") as m:
        m.add("Warm-up: the model and the tables load first.", user_id="warm-up", infer=infer)
        t0, c0 = time.perf_counter(), time.process_time()
        events = {"ADD": 0, "UPDATE": 0, "NONE": 0}
        for user, messages in work:
            for event in m.add(messages, user_id=user, infer=infer).results:
                events[event.event] += 1
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    count = sum(len(messages) for _, messages in work)
    return {"messages": count, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "messages_per_s": round(count / wall, 2), "messages_per_cpu_s": round(count / cpu, 2), **events}


def isolation_probe(home: Path) -> dict[str, int]:
    """A memory in every scope of the grid, then every scope's search and get_all against the rule."""
    grid = [dict(zip(("user_id", "agent_id", "run_id", "container"), combo)) for combo in itertools.product(
        ("u1", "u2", None), ("a1", "a2", None), ("r1", None), ("c1", None)) if any(combo[:3])]
    owner: dict[str, dict] = {}
    probes = leaks = 0
    with Memory(home=home, tenant_id="probe") as m:
        for n, scope in enumerate(grid):
            [event] = m.add(f"probe note {n} about the shared harbor key", infer=False, **scope).results
            owner[event.id] = scope
        for scope in grid:
            allowed = {mid for mid, stamp in owner.items() if stamp["user_id"] == scope["user_id"] and all(
                scope[k] is None or stamp[k] == scope[k] for k in ("agent_id", "run_id", "container"))}
            for found in (m.search("harbor key probe note", limit=100, **scope), m.get_all(limit=1000, **scope)):
                probes += 1
                leaks += len({r.id for r in found} - allowed)
                assert {r.id for r in m.get_all(limit=1000, **scope)} == allowed, scope
    return {"scopes": len(grid), "probes": probes, "leaked_items": leaks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=400)
    parser.add_argument("--per-call", type=int, default=2, help="Messages per add call (an exchange is 2).")
    parser.add_argument("--locomo", type=Path, default=LOCOMO, help="The LoCoMo sample the corpus is built from.")
    args = parser.parse_args()
    turns = synthetic_turns(args.messages, locomo=args.locomo)
    work = calls(turns, args.per_call)
    scratch = Path(tempfile.mkdtemp(prefix="mnemoflow-bench-add-"))
    try:
        inferred = timed_adds(scratch / "infer", work, infer=True)
        verbatim = timed_adds(scratch / "verbatim", work, infer=False)
        engine_s = engine_alone(turns)
        probe = isolation_probe(scratch / "probe")
    finally:
        shutil.rmtree(scratch)
    report = {"per_call": args.per_call, "infer": inferred, "verbatim": verbatim,
              "engine_alone": {"messages_per_s": round(len(turns) / engine_s, 1)},
              "ratio_to_engine_alone": round(inferred["messages_per_s"] * engine_s / len(turns), 3),
              "isolation": probe}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"add_throughput_{args.per_call}.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
