"""Crash safety at volume: SIGKILLs at random moments of `mnemoflow ingest` and `mnemoflow worker`
over a mixed corpus, each home compared with an uninterrupted run (tests/crash_harness.py).

A mixed corpus (markdown notes, a text file, an HTML page, a PDF and a transcript of several
conversations) is ingested once uninterrupted, by the commands a user runs. Then fresh homes take
--per-trial kills each until --kills kills have landed: every kill is a moment drawn uniformly over
the work of both commands (from the moment the process opens the store until it ends, as the
uninterrupted run timed it); the process is SIGKILLed then and started again until a run ends on its
own. Each home must then hold the uninterrupted run's documents, chunks, turns, memories (by
content), links, reviews, graph rows, outbox jobs and LanceDB ids, no row lost or duplicated; every
outbox job done; `mnemoflow verify` passing; each LanceDB table holding exactly the live, embedded
DuckDB rows, each once, with a vector; no dlt load package left waiting. Linux only (/proc).

    .venv/bin/python bench/crash_safety.py                      # 100 kills, 5 a home
    .venv/bin/python bench/crash_safety.py --kills 20 --seed 3
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    sys.path.insert(0, str(REPO))  # the harness is shared with tests/test_crash_safety.py
    from common import RESULTS

    from tests.crash_harness import Trial, campaign

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=100, help="SIGKILLs to land in all")
    parser.add_argument("--per-trial", type=int, default=5, help="kills per home")
    parser.add_argument("--seed", type=int, default=16, help="draws the corpus and the kill moments")
    parser.add_argument("--documents", type=int, default=6, help="markdown notes in the corpus")
    parser.add_argument("--sessions", type=int, default=20, help="conversations in the corpus's transcript (memory "
                        "generation's share of the worker's time)")
    parser.add_argument("--keep", action="store_true", help="keep every home (default: only those that fail)")
    args = parser.parse_args()

    started = time.monotonic()

    def report(trial: Trial) -> None:
        where = ", ".join(f"{k.stage} {k.after_s:.1f}s" for k in trial.kills)
        verdict = "ok" if not trial.problems and not trial.difference.examples else "FAILED"
        print(f"{trial.home.name}: {len(trial.kills)} kills ({where}); lost {trial.difference.rows_lost}, "
              f"duplicated {trial.difference.rows_duplicated}, {len(trial.problems)} problems; {verdict} "
              f"in {trial.seconds:.0f}s", flush=True)
        for line in (trial.difference.examples + trial.problems)[:10]:
            print(f"    {line}")

    workdir = Path(tempfile.mkdtemp(prefix="mnemoflow-crash-"))
    print(f"homes under {workdir}", flush=True)
    result = campaign(workdir, kills=args.kills, per_trial=args.per_trial, seed=args.seed,
                      documents=args.documents, sessions=args.sessions, keep_homes=args.keep, on_trial=report)
    rows = result.reference_rows
    stages = Counter(k.stage for k in result.kills)
    failed = [t for t in result.trials if t.problems or t.difference.examples]
    print(f"\nuninterrupted run: {', '.join(f'{n} {t}' for t, n in rows.items())}")
    print("work after opening the store: " + ", ".join(f"{s} {w:.1f}s" for s, w in result.timing.work_s.items()))
    print(f"{len(result.kills)} kills over {len(result.trials)} homes "
          f"({', '.join(f'{n} in {s}' for s, n in stages.most_common())}): rows lost {result.rows_lost}, "
          f"duplicated {result.rows_duplicated}; homes failing a check {len(failed)}; "
          f"{time.monotonic() - started:.0f}s (aim: 100 kills, 0 lost, 0 duplicated)")
    for problem in result.problems[:20]:
        print(f"  {problem}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "crash_safety.json").write_text(json.dumps({
        "args": vars(args), "reference_rows": rows, "work_s": result.timing.work_s,
        "kills": len(result.kills), "stages": dict(stages), "rows_lost": result.rows_lost,
        "rows_duplicated": result.rows_duplicated, "problems": result.problems,
        "trials": [{"home": str(t.home), "kills": [vars(k) for k in t.kills], "lost": t.difference.lost,
                    "duplicated": t.difference.duplicated, "problems": t.problems, "seconds": round(t.seconds, 1)}
                   for t in result.trials],
    }, indent=2))
    if not failed and not args.keep:
        import shutil

        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
