"""Scopes with agents, runs and containers: what each combination reads and writes, enforced by the
DuckDB predicates and the LanceDB prefilters of `storage/scope.py`, and by every path of the service."""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

import duckdb
import lancedb
import pyarrow as pa
import pytest
from hypothesis import given, settings as hyp_settings, strategies as st

from mnemoflow.config import load_settings
from mnemoflow.errors import NotFoundError, ScopeError
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.storage.scope import lance_owned, lance_visible, owned, visible
from tests.conftest import fresh_settings

TENANTS = ("t1", "t2")
USERS = ("u1", "u2", None)
AGENTS = ("a1", "a2", None)
RUNS = ("r1", None)
CONTAINERS = ("c1", "c2", None)


def _scopes() -> list[Scope]:
    found = []
    for tenant, user, agent, run, container in itertools.product(TENANTS, USERS, AGENTS, RUNS, CONTAINERS):
        if user is None and agent is None and run is None:
            continue
        found.append(Scope(tenant, user, agent, run, container))
    return found


ALL_SCOPES = _scopes()
scopes = st.sampled_from(ALL_SCOPES)
rows = st.lists(st.tuples(scopes, st.booleans()), min_size=1, max_size=40)  # (stamp, shared)


def owns(scope: Scope, stamp: Scope) -> bool:
    """The documented rule, written plainly: same tenant, same user (or both none), and every
    boundary the scope names matches."""
    return (stamp.tenant_id == scope.tenant_id and stamp.user_id == scope.user_id
            and all(getattr(scope, b) is None or getattr(stamp, b) == getattr(scope, b)
                    for b in ("agent_id", "run_id", "container")))


def sees(scope: Scope, stamp: Scope, shared: bool) -> bool:
    shared_here = shared and stamp.tenant_id == scope.tenant_id and (
        stamp.container is None or stamp.container == scope.container)
    return owns(scope, stamp) or shared_here


def test_a_scope_names_an_owner() -> None:
    with pytest.raises(ScopeError, match="names a user_id, an agent_id or a run_id"):
        Scope("acme")
    with pytest.raises(ScopeError, match="names a user_id"):
        Scope("acme", container="proj")
    with pytest.raises(ScopeError, match="agent_id must be"):
        Scope("acme", agent_id="bad agent")
    assert Scope("acme", agent_id="bot").user_level is False and Scope("acme", "alex").user_level
    assert Scope("acme", "alex").key == "acme\x1falex"  # the form ids had before scopes grew
    assert str(Scope("acme", None, "bot", "r1", "p")) == "acme/- agent=bot run=r1 container=p"


@pytest.mark.embedded_only("in-memory DuckDB and a temporary LanceDB folder whatever the store: once is enough")
@hyp_settings(max_examples=60, deadline=None)
@given(data=rows)
def test_duckdb_and_lancedb_predicates_follow_the_rule(data: list[tuple[Scope, bool]]) -> None:
    """Every scope against random rows of random stamps, shared or not, in real DuckDB and LanceDB."""
    table = pa.table({
        "row_id": [f"r{i}" for i in range(len(data))],
        "tenant_id": [s.tenant_id for s, _ in data], "user_id": [s.user_id for s, _ in data],
        "agent_id": [s.agent_id for s, _ in data], "run_id": [s.run_id for s, _ in data],
        "container": [s.container for s, _ in data], "shared": [shared for _, shared in data],
    }, schema=pa.schema([("row_id", pa.string()), ("tenant_id", pa.string()), ("user_id", pa.string()),
                         ("agent_id", pa.string()), ("run_id", pa.string()), ("container", pa.string()),
                         ("shared", pa.bool_())]))
    con = duckdb.connect()
    con.register("t", table)
    with tempfile.TemporaryDirectory() as tmp:
        lance = lancedb.connect(tmp).create_table("t", data=table)
        for scope in ALL_SCOPES:
            expected_seen = {f"r{i}" for i, (stamp, shared) in enumerate(data) if sees(scope, stamp, shared)}
            expected_owned = {f"r{i}" for i, (stamp, _) in enumerate(data) if owns(scope, stamp)}
            where, params = visible(scope)
            assert {r[0] for r in con.execute(f"SELECT row_id FROM t WHERE {where}", params).fetchall()} \
                == expected_seen, scope
            where, params = owned(scope)
            assert {r[0] for r in con.execute(f"SELECT row_id FROM t WHERE {where}", params).fetchall()} \
                == expected_owned, scope
            assert set(lance.search().where(lance_visible(scope)).limit(100).to_arrow()
                       .column("row_id").to_pylist()) == expected_seen, scope
            assert set(lance.search().where(lance_owned(scope)).limit(100).to_arrow()
                       .column("row_id").to_pylist()) == expected_owned, scope


SERVICE_SCOPES = [Scope("t1", "u1"), Scope("t1", "u1", "a1"), Scope("t1", "u1", "a1", "r1"), Scope("t1", "u1", None,
                  None, "c1"), Scope("t1", "u2"), Scope("t1", None, "a1"), Scope("t1", None, "a1", "r1"),
                  Scope("t1", None, None, "r1"), Scope("t1", "u2", "a1", None, "c1"), Scope("t2", "u1", "a1")]
WORDS = ["alpha", "budget", "cello", "deploy", "espresso", "falcon", "granite", "harbor", "invoice", "juniper"]


@hyp_settings(max_examples=8, deadline=None)
@given(data=st.lists(st.tuples(st.sampled_from(range(len(SERVICE_SCOPES))),
                               st.lists(st.sampled_from(WORDS), min_size=3, max_size=6).map(" ".join)),
                     min_size=1, max_size=12),
       query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join))
def test_no_service_path_reaches_outside_what_its_scope_sees(data: list[tuple[int, str]], query: str) -> None:
    with tempfile.TemporaryDirectory() as tmp, MemoryService(fresh_settings(Path(tmp) / "home")) as service:
        stamp: dict[str, Scope] = {}
        for n, (index, text) in enumerate(data):
            memory, _ = service.add(SERVICE_SCOPES[index], f"{text} #{n}", wait=False)
            stamp[memory.id] = SERVICE_SCOPES[index]
        service.drain()
        for scope in SERVICE_SCOPES:
            allowed = {mid for mid, s in stamp.items() if sees(scope, s, False)}
            mine = {mid for mid, s in stamp.items() if owns(scope, s)}
            assert {i.id for i in service.recall(scope, query, token_budget=100_000).items} <= allowed
            assert {m.id for m in service.search(scope, query, limit=50)} <= allowed
            assert {m.id for m in service.get_all(scope)} == allowed
            for foreign in set(stamp) - allowed:
                with pytest.raises(NotFoundError):
                    service.get(scope, foreign)
            for foreign in set(stamp) - mine:
                with pytest.raises(NotFoundError):
                    service.delete(scope, foreign)
        for memory_id, scope in stamp.items():  # the foreign attempts deleted nothing
            assert service.get(scope, memory_id).deleted_at is None


def test_what_each_kind_of_scope_sees(service: MemoryService) -> None:
    alex, planner = Scope("acme", "alex"), Scope("acme", "alex", agent_id="planner")
    bot, project = Scope("acme", agent_id="planner"), Scope("acme", "alex", container="apollo")
    own, _ = service.add(alex, "Alex keeps bees")
    planned, _ = service.add(planner, "Alex wants the trip booked by Friday")
    agents, _ = service.add(bot, "The planner books trains before flights")
    contained, _ = service.add(project, "Apollo ships on the 3rd")
    assert {m.id for m in service.get_all(alex)} == {own.id, planned.id, contained.id}  # all of Alex's rows
    assert {m.id for m in service.get_all(planner)} == {planned.id}  # only what the planner wrote for Alex
    assert {m.id for m in service.get_all(bot)} == {agents.id}  # an agent's own memories, never a user's
    assert {m.id for m in service.get_all(project)} == {contained.id}
    assert (agents.user_id, agents.agent_id) == (None, "planner") and contained.container == "apollo"
    assert {i.id for i in service.recall(bot, "Alex bees trip planner", token_budget=4000).items} <= {agents.id}
    assert {m.id for m in service.get_all(Scope("globex", agent_id="planner"))} == set()


def test_a_store_from_before_scopes_opens_with_its_rows_as_user_rows(tmp_path: Path) -> None:
    """The LanceDB tables of an older store gain the boundary columns in place (NULL: user rows)."""
    from mnemoflow.embedding import embedding_dimensions
    from mnemoflow.storage.lance_index import MEMORY_INDEX, LanceIndex

    settings = load_settings(tmp_path / "home")
    old = [(n, t) for n, t in MEMORY_INDEX.columns if n not in ("agent_id", "run_id", "container")]
    dim, model = embedding_dimensions(settings), settings.resolved_embedding_model
    schema = pa.schema([*(pa.field(n, t) for n, t in old), pa.field("vector", pa.list_(pa.float32(), dim))],
                       metadata={"model": model, "dim": str(dim)})
    values = {"memory_id": ["m1"], "tenant_id": ["acme"], "user_id": ["alex"], "shared": [False], "deleted": [False],
              "is_latest": [True], "active_until": [None], "content_hash": ["h"], "text": ["Alex keeps bees"],
              "vector": [None]}
    lancedb.connect(settings.lancedb_path).create_table("memory_vectors", data=pa.table(values, schema=schema),
                                                        on_bad_vectors="null")
    index = LanceIndex(settings.lancedb_path, model, dim)
    assert {"agent_id", "run_id", "container"} <= set(index.table(MEMORY_INDEX).schema.names)
    assert index.text_search(MEMORY_INDEX, "bees", lance_visible(Scope("acme", "alex")), 5)[0][0] == "m1"
    assert index.text_search(MEMORY_INDEX, "bees", lance_visible(Scope("acme", "alex", "bot")), 5) == []
