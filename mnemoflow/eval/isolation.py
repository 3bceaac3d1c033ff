"""Isolation probes: random tenants, users and rows (memories, some shared with the tenant, and
documents) in a scratch store, then every read path asked from every scope for every row's code
word. A leak is anything a scope receives that is neither its own nor shared inside its tenant.

Each row carries a random code word no other row has, so a BM25 query for it finds exactly that
row wherever it may be seen; `unreached` counts rows a scope should see that recall did not
return for their code word (a probe that reaches nothing would prove nothing).
"""

from __future__ import annotations

import random
import string
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from mnemoflow.config import Settings
from mnemoflow.errors import NotFoundError
from mnemoflow.models import RecallItem
from mnemoflow.storage import Scope

if TYPE_CHECKING:
    from mnemoflow.service import MemoryService

WORDS = ("harbor", "lantern", "meadow", "orchid", "granite", "kayak", "juniper", "falcon", "espresso", "nebula",
         "invoice", "cello", "budget", "deploy", "pepper", "alpine")
PATHS = ("recall", "search", "get", "get_all")


@dataclass
class IsolationReport:
    bm25_engine: str
    seed: int
    rows: int = 0
    probes: int = 0
    leaks: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PATHS, 0))
    leaked: list[str] = field(default_factory=list)  # a sample: "recall from t1/u2 returned mem_... of t0/u1"
    unreached: int = 0

    @property
    def total_leaks(self) -> int:
        return sum(self.leaks.values())


@dataclass(frozen=True)
class _Row:
    """A probe row: a memory (by id) or a document (by file name, what its chunks cite)."""

    id: str
    owner: Scope
    code: str
    shared: bool


def _code(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(10))


def _visible(row: _Row, scope: Scope) -> bool:
    return row.owner.tenant_id == scope.tenant_id and (row.owner.user_id == scope.user_id or row.shared)


def run_isolation_probes(
    settings: Settings, *, seed: int, tenants: int = 3, users: int = 2, rows_per_user: int = 3,
) -> IsolationReport:
    """Write the probe set into a fresh store built with `settings` (its own temporary home), then
    probe recall, search, get and get_all from every scope."""
    from mnemoflow.service import MemoryService

    rng = random.Random(seed)
    report = IsolationReport(settings.bm25_engine, seed)
    tenant_ids = [f"probe{t}.{_code(rng)[:4]}" for t in range(tenants)]
    scopes = [Scope(tenant_id, f"user{u}") for tenant_id in tenant_ids for u in range(users)]
    with tempfile.TemporaryDirectory(prefix="mnemoflow-probes-") as scratch:
        probe_settings = settings.model_copy(update={"home": Path(scratch) / "home", "sources": {},
                                                      "recall_track_access": False})
        with MemoryService(probe_settings) as service:
            rows = _write(service, scopes, rng, rows_per_user, Path(scratch) / "files")
            report.rows = len(rows)
            for scope in scopes:
                _probe(service, scope, rows, report)
    return report


def _write(service: MemoryService, scopes: list[Scope], rng: random.Random, rows_per_user: int,
           files: Path) -> list[_Row]:
    files.mkdir()
    rows: list[_Row] = []
    for scope in scopes:
        for _ in range(rows_per_user):
            code = _code(rng)
            memory, _ = service.add(scope, f"The {rng.choice(WORDS)} {rng.choice(WORDS)} note is filed under {code}",
                                    wait=False)
            shared = rng.random() < 0.4
            if shared:
                service.share(scope, memory.id)
            rows.append(_Row(memory.id, scope, code, shared))
        code = _code(rng)  # one document per user: its chunk cites the file
        path = files / f"{scope.tenant_id}-{scope.user_id}.md"
        path.write_text(f"# {rng.choice(WORDS).title()}\n\nThe {rng.choice(WORDS)} ledger is filed under {code}.\n")
        service.ingest(scope, [path], wait=False)
        rows.append(_Row(path.name, scope, code, False))
    service.drain()
    return rows


def _item_key(item: RecallItem) -> str:
    """A memory by its id, a chunk by the file it cites."""
    if item.kind == "memory":
        return item.id
    uri = next((c.uri for c in item.citations if c.uri), "")
    return Path(unquote(urlparse(uri).path)).name


def _probe(service: MemoryService, scope: Scope, rows: list[_Row], report: IsolationReport) -> None:
    by_key = {row.id: row for row in rows}

    def check(path: str, keys: list[str]) -> None:
        for key in keys:
            row = by_key.get(key)
            if row is None or not _visible(row, scope):
                report.leaks[path] += 1
                if len(report.leaked) < 20:
                    owner = f"{row.owner.tenant_id}/{row.owner.user_id}" if row else "no probe row"
                    report.leaked.append(f"{path} from {scope.tenant_id}/{scope.user_id} returned {key} of {owner}")

    for row in rows:
        report.probes += 1
        recalled = [_item_key(item) for item in
                    service.recall(scope, f"filed under {row.code}", token_budget=4096).items]
        check("recall", recalled)
        if _visible(row, scope) and row.id not in recalled:
            report.unreached += 1
        check("search", [m.id for m in service.search(scope, row.code, limit=20)])
        if row.id.startswith("mem_"):
            try:
                check("get", [service.get(scope, row.id).id])
            except NotFoundError:
                pass
    check("get_all", [m.id for m in service.get_all(scope, limit=10_000)])
