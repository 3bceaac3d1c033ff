"""Hostile inputs at full size: peak memory, wall time and outcome of one `mnemoflow ingest` each.

Every case of `tests/hostile_inputs.py` (zip, PDF and audio bombs, 2 GiB sparse files, binary and
invalid UTF-8 under text names, 100,000 nested <div>s, a 5,000-page PDF, a mail with a 30 MB
attachment, a transcript of one enormous line, a CSV of a million columns, a named pipe ...) is
written into a directory of its own and ingested by a fresh `python -m mnemoflow.cli ingest`
process into a fresh home, as a user would run it. Reported per case:

- peak RSS of that process: `ru_maxrss` from wait4(2), i.e. the rusage of that child alone
  (RUSAGE_CHILDREN of a long-lived parent would carry the largest earlier case forward);
- wall time of the process, start-up included (importing the stack costs about 2 s);
- the outcome read back from the home's DuckDB file: the `ingest_errors` reason, or the chunks
  stored, and whether that is what the case expects.

A watchdog kills a case that goes past --guard-mb of RSS or --timeout seconds (reported as such),
so a regression cannot take the machine down. Embedding is left to the worker (`--no-wait`) unless
--embed is given: it is the same bounded batch work for any input, and would dominate the time.

    .venv/bin/python bench/hostile_input.py                 # every case, ~6 min
    .venv/bin/python bench/hostile_input.py --cases pdf-5000-pages.pdf,csv-1M-columns.csv
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

AIM_MB = 1536
TENANT, USER = "bench", "hostile"
REPO = Path(__file__).resolve().parent.parent


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def measure(command: list[str], guard_mb: float, timeout: float) -> dict:
    """Run `command`; its peak RSS (wait4), wall time, exit status and why it was killed.

    Called in a small process of its own (`--measure`): a child's ru_maxrss starts from its
    parent's RSS at fork, so the parent must be small for the figure to be the child's."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
                               env={**os.environ, "PYTHONPATH": str(REPO)})
    killed: list[str] = []

    def watch() -> None:
        while process.returncode is None and not killed:
            if _rss_mb(process.pid) > guard_mb:
                killed.append(f"killed: RSS over the {guard_mb:.0f} MB guard")
            elif time.perf_counter() - started > timeout:
                killed.append(f"killed: over {timeout:.0f} s")
            if killed:
                process.send_signal(signal.SIGKILL)
            time.sleep(0.05)

    out = [b"", b""]
    threads = [threading.Thread(target=watch, daemon=True)]
    threads += [threading.Thread(target=lambda i=i, s=s: out.__setitem__(i, s.read()), daemon=True)
                for i, s in enumerate((process.stdout, process.stderr))]
    for thread in threads:
        thread.start()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    for thread in threads[1:]:
        thread.join()
    return {"peak_rss_mb": usage.ru_maxrss / 1024, "seconds": seconds, "exit": process.returncode,
            "killed": killed[0] if killed else None, "stderr": out[1].decode(errors="replace")[-2000:],
            "stdout": out[0].decode(errors="replace")[-2000:]}


def run_ingest(path: Path, home: Path, *, embed: bool, guard_mb: float, timeout: float) -> dict:
    """`mnemoflow ingest PATH` in a fresh process, measured by a fresh small process."""
    ingest = [sys.executable, "-c", "from mnemoflow.cli import main; main()", "ingest", str(path),
              "--home", str(home), "--tenant", TENANT, "--user", USER, *([] if embed else ["--no-wait"])]
    measured = subprocess.run([sys.executable, __file__, "--measure", str(guard_mb), str(timeout), "--", *ingest],
                              capture_output=True, text=True, check=True)
    return json.loads(measured.stdout)


def outcome(home: Path) -> dict:
    """What the home holds after the run: error rows (kind, reason) and chunks stored."""
    import duckdb

    database = home / "mnemoflow.duckdb"
    if not database.exists():
        return {"errors": [], "documents": 0, "chunks": 0}
    with duckdb.connect(str(database), read_only=True) as con:
        errors = con.execute("SELECT uri, kind, reason FROM ingest_errors WHERE tenant_id = ?", [TENANT]).fetchall()
        documents, chunks = con.execute(
            "SELECT count(DISTINCT d.document_id), count(c.chunk_id) FROM source_documents d "
            "LEFT JOIN chunks c ON c.document_id = d.document_id WHERE d.tenant_id = ?", [TENANT]).fetchone()
    return {"errors": [{"uri": u, "kind": k, "reason": r} for u, k, r in errors], "documents": documents,
            "chunks": chunks}


def verdict(case: Any, run: dict, found: dict) -> str:
    if run["killed"]:
        return run["killed"]
    if "Traceback" in run["stderr"]:
        return "crashed"
    own = [e for e in found["errors"] if "#attachment=" not in e["uri"]]
    if case.expect == "refused":
        if len(own) == 1 and re.search(case.reason, own[0]["reason"]) and not found["chunks"]:
            return "ok"
        return "unexpected"
    return "ok" if found["chunks"] and not own else "unexpected"


def main() -> None:
    if sys.argv[1:2] == ["--measure"]:
        guard_mb, timeout, _, *command = sys.argv[2:]
        print(json.dumps(measure(command, float(guard_mb), float(timeout))))
        return
    sys.path.insert(0, str(REPO))  # the catalogue of cases is shared with the tests
    from common import RESULTS
    from tests.hostile_inputs import CASES

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    parser.add_argument("--embed", action="store_true", help="embed as part of the ingest (default: --no-wait)")
    parser.add_argument("--guard-mb", type=float, default=6000, help="kill a case whose RSS passes this")
    parser.add_argument("--timeout", type=float, default=600, help="kill a case that runs longer (seconds)")
    args = parser.parse_args()
    chosen = [c for c in CASES if not args.cases or c.name in args.cases.split(",")]
    if args.cases and len(chosen) != len(args.cases.split(",")):
        raise SystemExit(f"unknown case in {args.cases}; known: {', '.join(c.name for c in CASES)}")

    rows = []
    print(f"{'case':30} {'peak RSS':>9} {'time':>7}  outcome")
    for case in chosen:
        scratch = Path(tempfile.mkdtemp(prefix="mnemoflow-hostile-"))
        try:
            (scratch / "in").mkdir()
            path = scratch / "in" / case.name
            made = time.perf_counter()
            case.make(path, False)
            made = time.perf_counter() - made
            run = run_ingest(path, scratch / "home", embed=args.embed, guard_mb=args.guard_mb, timeout=args.timeout)
            found = outcome(scratch / "home")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        result = verdict(case, run, found)
        own = [e["reason"] for e in found["errors"] if "#attachment=" not in e["uri"]]
        attached = [e["reason"] for e in found["errors"] if "#attachment=" in e["uri"]]
        shown = (f"refused: {own[0]}" if own else f"ingested: {found['documents']} document(s), "
                 f"{found['chunks']} chunks" + (f"; attachment refused: {attached[0]}" if attached else ""))
        flag = "" if result == "ok" else f"  [{result.upper()}]"
        over = " (over aim)" if run["peak_rss_mb"] > AIM_MB else ""
        print(f"{case.name:30} {run['peak_rss_mb']:6.0f} MB {run['seconds']:6.1f}s  {shown[:150]}{flag}{over}",
              flush=True)
        if result not in ("ok",) and run["stderr"].strip():
            print("    stderr: " + run["stderr"].strip().splitlines()[-1][:300])
        rows.append({"case": case.name, "what": case.what, "expect": case.expect, "verdict": result,
                     "made_seconds": round(made, 1), **{k: v for k, v in run.items() if k not in ("stderr", "stdout")},
                     "reason": own[0] if own else None, "attachment_reasons": attached,
                     "documents": found["documents"], "chunks": found["chunks"]})
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "hostile_input.json").write_text(json.dumps({"embed": args.embed, "cases": rows}, indent=2))
    worst = max(rows, key=lambda r: r["peak_rss_mb"])
    print(f"\nworst peak RSS: {worst['peak_rss_mb']:.0f} MB ({worst['case']}); aim < {AIM_MB} MB on every input; "
          f"{sum(r['verdict'] == 'ok' for r in rows)}/{len(rows)} as expected")


if __name__ == "__main__":
    main()
