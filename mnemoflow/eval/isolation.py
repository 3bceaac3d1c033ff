"""Isolation probes: tenants, each with an owner in every cell of a grid of users, agents, runs and
containers, each owner holding a memory (some shared with the tenant or their container) and some a
document; then random probes, each asking one route (the service, the Python API, the CLI, HTTP,
MCP) one question from one scope about one row: find its code word, fetch it by id, list the
scope's memories, or change or delete a row the scope does not own. A leak is anything a scope
receives, or changes, that the documented rule (`sees`, `owns`; storage/scope.py states it) says
it may not.

Each row carries a random code word no other row has, so a query for it finds exactly that row
wherever it may be seen, and an answer's rows are known by the code words in its text (an answer
with none is counted as a leak too). `unreached` counts rows a scope may see that the probe did
not get: a probe that reaches nothing would prove nothing.
"""

from __future__ import annotations

import random
import re
import string
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError, NotFoundError, ScopeError
from mnemoflow.storage import Scope
from mnemoflow.storage.scope import BOUNDARIES

if TYPE_CHECKING:
    from mnemoflow.service import MemoryService

WORDS = ("harbor", "lantern", "meadow", "orchid", "granite", "kayak", "juniper", "falcon", "espresso", "nebula",
         "invoice", "cello", "budget", "deploy", "pepper", "alpine")
CODE = re.compile(r"\bzq[a-z]{8}\b")  # the code words: no English word starts "zq"
REFUSED = (NotFoundError, ScopeError, BadInputError)  # how the service says no


# ---------------------------------------------------------------------- the rule, as documented
def owns(scope: Scope, owner: Scope) -> bool:
    """A write in `scope` may touch the rows `owner` wrote: the same tenant and user, and every
    boundary the scope names equal."""
    return (scope.tenant_id == owner.tenant_id and scope.user_id == owner.user_id
            and all(getattr(scope, b) is None or getattr(scope, b) == getattr(owner, b) for b in BOUNDARIES))


def sees(scope: Scope, row: Row) -> bool:
    """A read in `scope` sees its owner's rows, and shared rows of its tenant that belong to no
    container or to the container it names."""
    shared = (row.shared and scope.tenant_id == row.owner.tenant_id
              and row.owner.container in (None, scope.container))
    return owns(scope, row.owner) or shared


def level(scope: Scope) -> str:
    """Which fields a scope names, e.g. `user+agent+container`."""
    return "+".join(name.removesuffix("_id") for name in ("user_id", *BOUNDARIES) if getattr(scope, name))


# ---------------------------------------------------------------------- the world the probes ask about
@dataclass(frozen=True)
class Row:
    """A probe row: a memory (`key` is its id) or a document (`key` is `doc:<code>`)."""

    key: str
    kind: Literal["memory", "document"]
    owner: Scope
    code: str
    shared: bool
    content: str


@dataclass(frozen=True)
class World:
    rows: list[Row]
    scopes: list[Scope]  # who asks: every owner, and strangers who own nothing but share names with owners

    def by_code(self) -> dict[str, Row]:
        return {row.code: row for row in self.rows}


def owner_grid(tenant_id: str, users: int = 2) -> list[Scope]:
    """Every combination of a user (or none), an agent, a run and a container that names an owner."""
    cells = product([f"u{n}" for n in range(users)] + [None], ("a0", None), ("r0", None), ("c0", "c1", None))
    return [Scope(tenant_id, *cell) for cell in cells if any(cell[:3])]


def strangers(tenant_id: str) -> list[Scope]:
    """Scopes that own nothing in the tenant: an unknown user, a known user narrowed by an unknown
    agent or container, an unknown run."""
    return [Scope(tenant_id, "ghost"), Scope(tenant_id, "u0", agent_id="a9"), Scope(tenant_id, None, run_id="r9"),
            Scope(tenant_id, "u0", container="c9")]


def code_word(rng: random.Random) -> str:
    return "zq" + "".join(rng.choice(string.ascii_lowercase) for _ in range(8))


def write_world(service: MemoryService, rng: random.Random, *, tenants: int = 2, users: int = 2,
                shared_rate: float = 0.3, document_rate: float = 0.3) -> World:
    """One memory per owner of each tenant's grid (some shared), a document for some; `service` may
    be a running server's client."""
    tenant_ids = [f"probe{t}.{code_word(rng)[2:6]}" for t in range(tenants)]
    rows: list[Row] = []
    for owner in (o for tenant_id in tenant_ids for o in owner_grid(tenant_id, users)):
        code = code_word(rng)
        text = f"The {rng.choice(WORDS)} {rng.choice(WORDS)} note is filed under {code}"
        memory, _ = service.add(owner, text, wait=False)
        shared = rng.random() < shared_rate
        if shared:
            service.share(owner, memory.id)
        rows.append(Row(memory.id, "memory", owner, code, shared, memory.content))
        if rng.random() < document_rate:
            code = code_word(rng)
            note = f"# Ledger {code}\n\nThe {rng.choice(WORDS)} ledger is filed under {code}.\n"
            service.ingest_text(owner, note, title=f"ledger {code}", wait=False)
            rows.append(Row(f"doc:{code}", "document", owner, code, False, note))
    service.drain()
    scopes = sorted({row.owner for row in rows}, key=str) + [s for t in tenant_ids for s in strangers(t)]
    return World(rows, scopes)


# ---------------------------------------------------------------------- routes: what each interface is asked
Kind = Literal["find", "fetch", "list", "write", "wipe"]


@dataclass(frozen=True)
class Question:
    """One way an interface can be asked about a row.

    find(scope, query) -> texts; fetch(scope, row) -> text or None (refused); list(scope) -> texts;
    write(scope, row) -> whether it was done; wipe(scope) -> ids deleted. `allowed(scope, row)` is
    what the rule permits: what a fetch must get (default `sees`), what a write may touch (default
    `owns`; writes are only ever tried where it is false). Fetches and writes ask for memories (a
    document has no id to ask by); a find's answers hold documents' passages only with `documents`."""

    kind: Kind
    call: Callable[..., Any]
    allowed: Callable[[Scope, Row], bool] | None = None
    documents: bool = False


Route = dict[str, Question]


def refused(call: Callable[[], Any]) -> Any:
    """The call's answer, or None where the service refuses it (not found, a scope or input it cannot serve)."""
    try:
        return call()
    except REFUSED:
        return None


def service_route(service: MemoryService) -> Route:
    """The service itself (the layer every interface calls)."""
    def done(call: Callable[[], Any]) -> bool:
        return refused(call) is not None

    return {
        "recall": Question("find", lambda s, q: [i.text for i in service.recall(s, q, token_budget=4096).items],
                       documents=True),
        "search": Question("find", lambda s, q: [m.content for m in service.search(s, q, limit=20)]),
        "get": Question("fetch", lambda s, row: refused(lambda: service.get(s, row.key).content)),
        "history": Question("fetch", lambda s, row: refused(
            lambda: " ".join(e.new_memory or "" for e in service.history(s, row.key)))),
        "get_all": Question("list", lambda s: [m.content for m in service.get_all(s, limit=10_000)]),
        "delete": Question("write", lambda s, row: done(lambda: service.delete(s, row.key))),
        "update": Question("write", lambda s, row: done(lambda: service.update(s, row.key, "overwritten by a probe"))),
        "pin": Question("write", lambda s, row: done(lambda: service.pin(s, row.key))),
        "delete_all": Question("wipe", lambda s: service.delete_all(s).deleted),
    }


# ---------------------------------------------------------------------- the probes and their report
@dataclass
class Counts:
    probes: int = 0
    leaks: int = 0
    unreached: int = 0
    foreign: int = 0  # probes about a row of another tenant: over HTTP and MCP, one tenant's key asking


@dataclass
class IsolationReport:
    seed: int
    bm25_engine: str = ""
    rows: int = 0
    paths: dict[str, Counts] = field(default_factory=dict)  # "route.path"
    levels: dict[str, Counts] = field(default_factory=dict)  # by what the asking scope names
    leaked: list[str] = field(default_factory=list)  # a sample, e.g. "http.get from t/u0 agent=a0 got zq... of t/u1"
    missed: list[str] = field(default_factory=list)  # a sample of what went unreached, and what came instead
    seconds: dict[str, float] = field(default_factory=dict)  # per route
    intact: Counts = field(default_factory=Counts)  # memories checked after the probes; a leak is one changed

    @property
    def probes(self) -> int:
        return sum(c.probes for c in self.paths.values())

    @property
    def total_leaks(self) -> int:
        return sum(c.leaks for c in self.paths.values()) + self.intact.leaks

    @property
    def unreached(self) -> int:
        return sum(c.unreached for c in self.paths.values())

    def count(self, where: str, scope: Scope, about: Row | None = None, *, leaks: int = 0, unreached: int = 0) -> None:
        for counts in (self.paths.setdefault(where, Counts()), self.levels.setdefault(level(scope), Counts())):
            counts.probes += 1
            counts.leaks += leaks
            counts.unreached += unreached
            counts.foreign += about is not None and about.owner.tenant_id != scope.tenant_id

    def leak(self, where: str, scope: Scope, what: str) -> None:
        if len(self.leaked) < 50:
            self.leaked.append(f"{where} from {scope} {what}")

    def miss(self, where: str, scope: Scope, what: str) -> None:
        if len(self.missed) < 50:
            self.missed.append(f"{where} from {scope}: {what}")


def probe(world: World, name: str, route: Route, count: int, rng: random.Random, report: IsolationReport) -> None:
    """`count` random probes of `route` (named `name` in the report)."""
    t0 = time.perf_counter()
    for _ in range(count):
        path_name = rng.choice(sorted(route))
        _probe_once(world, f"{name}.{path_name}", route[path_name], rng, report)
    report.seconds[name] = report.seconds.get(name, 0.0) + time.perf_counter() - t0


def _probe_once(world: World, where: str, path: Question, rng: random.Random, report: IsolationReport) -> None:
    if path.kind == "wipe":  # only scopes that own nothing: deleting what one owns is no leak
        scope = rng.choice([s for s in world.scopes if not any(owns(s, r.owner) for r in world.rows)])
        deleted = path.call(scope)
        report.count(where, scope, leaks=len(deleted))
        if deleted:
            report.leak(where, scope, f"deleted {', '.join(deleted)}")
        return
    scope = rng.choice(world.scopes)
    if path.kind == "list":
        _check_answer(world, where, scope, path.call(scope), report, listing=True)
        return
    rows = world.rows if path.kind == "find" else [r for r in world.rows if r.kind == "memory"]
    if path.kind == "write":
        allowed = path.allowed or owns_row
        target = rng.choice([r for r in rows if not allowed(scope, r)])
        done = path.call(scope, target)
        report.count(where, scope, target, leaks=int(bool(done)))
        if done:
            report.leak(where, scope, f"changed {target.key} of {target.owner}")
        return
    mine = [r for r in rows if sees(scope, r)]
    target = rng.choice(mine) if mine and rng.random() < 0.35 else rng.choice(rows)
    if path.kind == "find":
        reach = sees(scope, target) and (target.kind == "memory" or path.documents)
        _check_answer(world, where, scope, path.call(scope, f"filed under {target.code}"), report, target, reach)
        return
    expected = (path.allowed or sees)(scope, target)
    got = path.call(scope, target)
    leaked = got is not None and (not expected or target.code not in got)
    report.count(where, scope, target, leaks=int(leaked), unreached=int(expected and got is None))
    if leaked:
        report.leak(where, scope, f"got {target.key} of {target.owner}")


def owns_row(scope: Scope, row: Row) -> bool:
    return owns(scope, row.owner)


def _check_answer(world: World, where: str, scope: Scope, texts: list[str], report: IsolationReport,
                  target: Row | None = None, reach: bool = False, *, listing: bool = False) -> None:
    """Every row an answer shows must be one the scope sees; the target, where the scope may `reach`
    it (or, for a listing, every memory the scope sees), must be among them."""
    known = world.by_code()
    shown: set[str] = set()
    leaks = 0
    for text in texts:
        codes = [c for c in CODE.findall(text) if c in known]
        if not codes:
            leaks += 1
            report.leak(where, scope, f"got an item of no probe row: {text[:60]!r}")
        for code in codes:
            shown.add(code)
            if not sees(scope, known[code]):
                leaks += 1
                report.leak(where, scope, f"got {known[code].key} of {known[code].owner}")
    if listing:
        missing = sum(1 for r in world.rows if r.kind == "memory" and sees(scope, r) and r.code not in shown)
    else:
        missing = int(reach and target is not None and target.code not in shown)
    report.count(where, scope, target, leaks=leaks, unreached=missing)
    if missing:
        report.miss(where, scope, f"{missing} unreached; shown {sorted(shown)}"
                    + (f", not {target.code} ({target.kind})" if target is not None else ""))


def check_intact(world: World, service: MemoryService, report: IsolationReport) -> None:
    """After the probes every memory is as written: no refused write happened after all."""
    for row in (r for r in world.rows if r.kind == "memory"):
        memory = refused(lambda row=row: service.get(row.owner, row.key))
        damaged = memory is None or memory.content != row.content or not memory.is_latest or memory.pinned
        report.intact.probes += 1
        report.intact.leaks += damaged
        if damaged:
            report.leak("intact", row.owner, f"finds {row.key} changed or gone")


def run_isolation_probes(settings: Settings, *, seed: int, probes: int = 600, tenants: int = 2,
                         users: int = 2) -> IsolationReport:
    """Write a world into a fresh store built with `settings` (its own temporary home), then `probes`
    random probes of the service, and check every memory is intact."""
    from mnemoflow.service import MemoryService

    rng = random.Random(seed)
    report = IsolationReport(seed, settings.bm25_engine)
    with tempfile.TemporaryDirectory(prefix="mnemoflow-probes-") as scratch:
        probe_settings = settings.scratch(Path(scratch) / "home", recall_track_access=False)
        with MemoryService(probe_settings) as service:
            world = write_world(service, rng, tenants=tenants, users=users)
            report.rows = len(world.rows)
            probe(world, "service", service_route(service), probes, rng, report)
            check_intact(world, service, report)
    return report
