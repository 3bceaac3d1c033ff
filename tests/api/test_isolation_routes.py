"""The isolation probes through every interface of a running `mnemoflow serve`: the Python API, HTTP with
each tenant's key (and none, or a wrong one), MCP over streamable HTTP, and the CLI. A small,
deterministic sample of what `bench/isolation_scale.py` runs 10,000 times."""

from __future__ import annotations

import random
from pathlib import Path

import httpx
import pytest

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
from tests.serving import served

PROBES = {"python": 80, "http": 80, "mcp": 60, "cli": 8}


@pytest.mark.slow
def test_no_interface_leaks_across_tenants_or_scopes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    rng = random.Random(17)
    report = IsolationReport(seed=17)
    with served(home) as info, connect(load_settings(home)) as service:
        world = write_world(service, rng, tenants=2, users=1)
        tenants = sorted({row.owner.tenant_id for row in world.rows})
        keys = {t: service.create_api_key(t)[1] for t in tenants}
        memories = {t: Memory(home=home, tenant_id=t) for t in tenants}
        with httpx.Client(base_url=info.url, timeout=120) as http, McpClients(info.url, keys) as mcp:
            routes = {"python": python_route(memories), "http": http_route(http, keys), "mcp": mcp_route(mcp),
                      "cli": cli_route(home)}
            for name, count in PROBES.items():
                probe(world, name, routes[name], count, rng, report)
        for memory in memories.values():
            memory.close()
        check_intact(world, service, report)
    assert report.total_leaks == 0, report.leaked
    assert report.unreached == 0, report.missed
    assert report.probes == sum(PROBES.values()) and report.intact.probes == 42
    asked = {where.split(".")[0] for where in report.paths}
    assert asked == set(PROBES) and {"http.keyless", "python.get_by_id", "mcp.get", "cli.recall"} <= set(report.paths)
