"""Isolation at scale (issue 16; agent, run and container scopes of issue 17): a running `mnemoflow serve`
holding tenants whose owners fill a grid of users, agents, runs and containers (a memory each, some
shared with the tenant or their container, a document for some), then random cross-scope probes
through the Python API (`Memory`), HTTP (each tenant's own key, and no key or a wrong one), MCP
(the SDK's client, each tenant's own key) and the CLI (a subprocess per probe, so a smaller sample).
Every answer is checked against the documented rule (`mnemoflow.eval.isolation`); at the end every
memory must be as written. Figures: probes, leaks and unreached rows per route and path and per scope
level, and how long each route took.

    .venv/bin/python bench/isolation_scale.py --probes 10000 --cli-probes 400
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import httpx
from common import RESULTS, serving

from mnemoflow import Memory
from mnemoflow.config import load_settings
from mnemoflow.eval.isolation import IsolationReport, check_intact, probe, write_world
from mnemoflow.eval.isolation_routes import (
    McpClients,
    cli_route,
    http_route,
    mcp_route,
    python_route,
)
from mnemoflow.remote import connect


def route_figures(report: IsolationReport, route: str) -> dict[str, float]:
    """One route's totals over its paths, and its probes per second."""
    paths = [c for where, c in report.paths.items() if where.startswith(route + ".")]
    totals = {name: sum(getattr(c, name) for c in paths) for name in ("probes", "leaks", "unreached", "foreign")}
    return {**totals, "seconds": round(report.seconds[route], 1),
            "probes_per_s": round(totals["probes"] / report.seconds[route], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--probes", type=int, default=10_000, help="All probes, the CLI's included.")
    parser.add_argument("--cli-probes", type=int, default=400, help="Of them through the CLI (~0.5 s each).")
    parser.add_argument("--tenants", type=int, default=3)
    parser.add_argument("--users", type=int, default=2, help="Users per tenant; the grid has 3 x 2 x 2 x 3 cells "
                                                            "per tenant with 2 users.")
    parser.add_argument("--seed", type=int, default=16)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    report = IsolationReport(args.seed)
    scratch = Path(tempfile.mkdtemp(prefix="mnemoflow-bench-isolation-"))
    home = scratch / "home"
    try:
        with serving(home, scratch / "serve.log") as info, connect(load_settings(home)) as service:
            t0 = time.perf_counter()
            world = write_world(service, rng, tenants=args.tenants, users=args.users)
            setup_s = time.perf_counter() - t0
            report.rows = len(world.rows)
            tenant_ids = sorted({row.owner.tenant_id for row in world.rows})
            keys = {t: service.create_api_key(t, "isolation probes")[1] for t in tenant_ids}
            others = (args.probes - args.cli_probes) // 3
            memories = {t: Memory(home=home, tenant_id=t) for t in tenant_ids}
            with httpx.Client(base_url=info.url, timeout=120) as http, McpClients(info.url, keys) as mcp:
                for name, route, count in (("python", python_route(memories), others),
                                           ("http", http_route(http, keys), others),
                                           ("mcp", mcp_route(mcp), args.probes - args.cli_probes - 2 * others),
                                           ("cli", cli_route(home), args.cli_probes)):
                    probe(world, name, route, count, rng, report)
                    print(f"{name}: {count} probes in {report.seconds[name]:.0f} s", flush=True)
            for memory in memories.values():
                memory.close()
            check_intact(world, service, report)
    finally:
        shutil.rmtree(scratch)
    figures = {
        "rows": report.rows, "seed": args.seed, "world_setup_s": round(setup_s, 1),
        "probes": report.probes, "leaks": report.total_leaks, "unreached": report.unreached,
        "foreign": sum(c.foreign for c in report.paths.values()), "intact": asdict(report.intact),
        "routes": {route: route_figures(report, route) for route in report.seconds},
        "paths": {w: asdict(c) for w, c in sorted(report.paths.items())},
        "levels": {lv: asdict(c) for lv, c in sorted(report.levels.items())},
        "leaked": report.leaked,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "isolation_scale.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
