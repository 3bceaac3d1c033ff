"""Property: random memories (some shared) and chunks across tenants, users, agents, runs and containers;
no read sees, and no write touches, anything the documented rule (`mnemoflow.eval.isolation`) forbids."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings as hyp_settings, strategies as st

from mnemoflow.chunking import chunk_plain_text, sha256_text
from mnemoflow.errors import NotFoundError
from mnemoflow.eval.isolation import Row, owns, sees
from mnemoflow.models import DocumentRecord, DocumentWrite
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.conftest import fresh_settings

WORDS = ["alpha", "budget", "cello", "deploy", "espresso", "falcon", "granite", "harbor", "invoice", "juniper",
         "kayak", "lantern", "meadow", "nebula", "orchid", "pepper"]
SCOPES = [Scope(t, u) for t in ("t1", "t2") for u in ("u1", "u2")] + [
    Scope("t3", "u1"), Scope("t1", "u1", agent_id="a1"), Scope("t1", "u1", agent_id="a2"), Scope("t1", None, "a1"),
    Scope("t1", "u1", run_id="r1"), Scope("t1", None, "a1", "r1", "c1"), Scope("t1", "u1", container="c1"),
    Scope("t1", "u2", container="c1"), Scope("t2", "u1", "a1", container="c2")]

records = st.lists(
    st.tuples(
        st.sampled_from(range(len(SCOPES))),
        st.sampled_from(["memory", "shared memory", "chunk"]),
        st.lists(st.sampled_from(WORDS), min_size=3, max_size=8).map(" ".join),
    ),
    min_size=1, max_size=16,
)
queries = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join), min_size=1, max_size=2)


@hyp_settings(max_examples=12, deadline=None)
@given(data=records, asked=queries)
def test_no_read_or_write_reaches_outside_its_scope(data: list[tuple[int, str, str]], asked: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp, MemoryService(fresh_settings(Path(tmp) / "home")) as service:
        rows: dict[str, Row] = {}
        for n, (scope_index, kind, text) in enumerate(data):
            scope = SCOPES[scope_index]
            if kind != "chunk":
                memory, _ = service.add(scope, f"{text} #{n}", wait=False)
                if kind == "shared memory":
                    service.share(scope, memory.id)
                rows[memory.id] = Row(memory.id, "memory", scope, "", kind == "shared memory", memory.content)
            else:
                document_id = f"doc_{n}_{scope.key.replace(chr(31), '_')}"
                chunks = chunk_plain_text(document_id, f"{text} #{n}", 256)
                service.store.write_documents(scope, [DocumentWrite(
                    DocumentRecord(document_id, "test", f"mem://{n}", "text/plain", f"doc {n}", sha256_text(text)),
                    chunks)], actor="test")
                rows.update({c.chunk_id: Row(c.chunk_id, "document", scope, "", False, c.text) for c in chunks})
        service.store.refresh_search_indexes()
        service.drain()

        for scope in SCOPES:
            seen = {i for i, row in rows.items() if sees(scope, row)}
            for query in asked:
                assert {item.id for item in service.recall(scope, query, token_budget=100_000).items} <= seen
                assert {m.id for m in service.search(scope, query, limit=50)} <= seen
            assert {m.id for m in service.get_all(scope)} <= seen
            for memory_id, row in rows.items():
                if row.kind != "memory":
                    continue
                if memory_id not in seen:
                    with pytest.raises(NotFoundError):
                        service.get(scope, memory_id)
                if not owns(scope, row.owner):  # seen when shared, and still not the scope's to change
                    with pytest.raises(NotFoundError):
                        service.delete(scope, memory_id)
        # nothing was deleted by the refused attempts: every owner still sees all of its memories
        for memory_id, row in rows.items():
            if row.kind == "memory":
                assert service.get(row.owner, memory_id).deleted_at is None
        # and each scope's recall still reaches everything it may see
        for scope in SCOPES:
            seen = {i for i, row in rows.items() if sees(scope, row)}
            if seen:
                everything = service.recall(scope, " ".join(WORDS), token_budget=100_000)
                assert {item.id for item in everything.items} == seen
