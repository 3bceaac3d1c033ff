"""Direct `add` with inference (mem0's verb): messages per second through `Memory.add`, rule engine,
one call at a time, each searchable when it returns, beside the rule engine alone on the same messages
(the ratio says what relationships, storage and vectors cost on top of reading); the same messages
kept verbatim (`infer=False`) beside the embedder alone embedding them call by call. In wall and in CPU
seconds (on a shared machine, other work slows the first only: the load average is reported), the
median of `--repeats` runs. Then an isolation probe: one memory in every scope of a grid of users,
agents, runs and containers, and every scope's search and get_all checked against the documented
rule (storage/scope.py); leaks are counted.

    .venv/bin/python bench/add_throughput.py --messages 400 --per-call 2 --repeats 3
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from common import LOCOMO, RESULTS, synthetic_turns

from mnemoflow import Memory
from mnemoflow.config import load_settings
from mnemoflow.embedding import create_embedder
from mnemoflow.memory.generate.candidates import TurnView
from mnemoflow.memory.turns import turn_context
from mnemoflow.memory.generate.rules import RuleEngine
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


def embedder_alone(home: Path, work: list[tuple[str, list[dict]]]) -> float:
    """Seconds the configured embedder takes to embed each call's messages, call by call (what `add`
    with `infer=False` must embed)."""
    embedder = create_embedder(load_settings(home))
    embedder.embed(["Warm-up: the model loads first."])
    t0 = time.perf_counter()
    for _, messages in work:
        embedder.embed([m["content"] for m in messages])
    return time.perf_counter() - t0


def timed_adds(home: Path, work: list[tuple[str, list[dict]]], infer: bool) -> dict[str, float]:
    """One `add` per call, in order, into a fresh store; with the rate over the first and the last fifth
    of the calls (whether it holds as the store fills)."""
    took: list[float] = []
    with Memory(home=home, tenant_id="bench") as m:
        m.add("Warm-up: the model and the tables load first.", user_id="warm-up", infer=infer)
        t0, c0 = time.perf_counter(), time.process_time()
        events = {"ADD": 0, "UPDATE": 0, "NONE": 0}
        for user, messages in work:
            started = time.perf_counter()
            for event in m.add(messages, user_id=user, infer=infer).results:
                events[event.event] += 1
            took.append(time.perf_counter() - started)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    count = sum(len(messages) for _, messages in work)
    fifth = max(1, len(work) // 5)

    def rate(calls: slice) -> float:
        return round(sum(len(messages) for _, messages in work[calls]) / sum(took[calls]), 2)

    return {"messages": count, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "messages_per_s": round(count / wall, 2), "messages_per_cpu_s": round(count / cpu, 2),
            "first_fifth_messages_per_s": rate(slice(0, fifth)), "last_fifth_messages_per_s": rate(slice(-fifth, None)),
            **events}


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


def median_run(runs: list[dict[str, float]]) -> dict[str, float | list[float]]:
    """The median of each figure over the runs (events from the first: every run adds the same), and
    every run's messages per second."""
    figures = ("wall_s", "cpu_s", "messages_per_s", "messages_per_cpu_s", "first_fifth_messages_per_s",
               "last_fifth_messages_per_s")
    return {**runs[0], **{k: round(statistics.median(r[k] for r in runs), 2) for k in figures},
            "runs_messages_per_s": [r["messages_per_s"] for r in runs]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=400)
    parser.add_argument("--per-call", type=int, default=2, help="Messages per add call (an exchange is 2).")
    parser.add_argument("--repeats", type=int, default=3, help="Runs of each path; the report gives the median.")
    parser.add_argument("--locomo", type=Path, default=LOCOMO, help="The LoCoMo sample the corpus is built from.")
    args = parser.parse_args()
    turns = synthetic_turns(args.messages, locomo=args.locomo)
    work = calls(turns, args.per_call)
    scratch = Path(tempfile.mkdtemp(prefix="mnemoflow-bench-add-"))
    load_before = os.getloadavg()[0]
    try:
        runs: dict[str, list[dict[str, float]]] = {"infer": [], "verbatim": []}
        engine, embedder = [], []
        for n in range(args.repeats):
            runs["infer"].append(timed_adds(scratch / f"infer-{n}", work, infer=True))
            runs["verbatim"].append(timed_adds(scratch / f"verbatim-{n}", work, infer=False))
            engine.append(len(turns) / engine_alone(turns))
            embedder.append(len(turns) / embedder_alone(scratch / f"embedder-{n}", work))
        probe = isolation_probe(scratch / "probe")
    finally:
        shutil.rmtree(scratch)
    inferred, verbatim = (median_run(runs[path]) for path in ("infer", "verbatim"))
    engine_rate, embedder_rate = statistics.median(engine), statistics.median(embedder)
    report = {"per_call": args.per_call, "repeats": args.repeats,
              "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
              "infer": inferred, "verbatim": verbatim,
              "engine_alone": {"messages_per_s": round(engine_rate, 1)},
              "embedder_alone": {"messages_per_s": round(embedder_rate, 1)},
              "ratio_to_engine_alone": round(inferred["messages_per_s"] / engine_rate, 3),
              "verbatim_ratio_to_embedder_alone": round(verbatim["messages_per_s"] / embedder_rate, 3),
              "isolation": probe}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"add_throughput_{args.per_call}.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
