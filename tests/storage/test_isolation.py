"""Property: random memories and chunks across tenants and users; nothing reaches outside its scope."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings as hyp_settings, strategies as st

from mnemoflow.chunking import chunk_plain_text, sha256_text
from mnemoflow.config import load_settings
from mnemoflow.errors import NotFoundError
from mnemoflow.models import DocumentRecord, DocumentWrite
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

WORDS = ["alpha", "budget", "cello", "deploy", "espresso", "falcon", "granite", "harbor", "invoice", "juniper",
         "kayak", "lantern", "meadow", "nebula", "orchid", "pepper"]
SCOPES = [Scope(t, u) for t in ("t1", "t2") for u in ("u1", "u2")] + [Scope("t3", "u1")]

records = st.lists(
    st.tuples(
        st.sampled_from(range(len(SCOPES))),
        st.sampled_from(["memory", "chunk"]),
        st.lists(st.sampled_from(WORDS), min_size=3, max_size=8).map(" ".join),
    ),
    min_size=1, max_size=14,
)
queries = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join), min_size=1, max_size=3)


@hyp_settings(max_examples=12, deadline=None)
@given(data=records, asked=queries)
def test_no_read_or_delete_reaches_outside_its_scope(data: list[tuple[int, str, str]], asked: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp, MemoryService(load_settings(Path(tmp) / "home")) as service:
        owner: dict[str, Scope] = {}
        for n, (scope_index, kind, text) in enumerate(data):
            scope = SCOPES[scope_index]
            if kind == "memory":
                memory, _ = service.add(scope, f"{text} #{n}", wait=False)
                owner[memory.id] = scope
            else:
                document_id = f"doc_{n}_{scope.tenant_id}_{scope.user_id}"
                chunks = chunk_plain_text(document_id, f"{text} #{n}", 256)
                service.store.write_documents(scope, [DocumentWrite(
                    DocumentRecord(document_id, "test", f"mem://{n}", "text/plain", f"doc {n}", sha256_text(text)),
                    chunks)], actor="test")
                owner.update({c.chunk_id: scope for c in chunks})
        service.store.refresh_search_indexes()
        service.drain()

        for scope in SCOPES:
            mine = {i for i, s in owner.items() if s == scope}
            for query in asked:
                result = service.recall(scope, query, token_budget=100_000)
                assert {item.id for item in result.items} <= mine
                assert {m.id for m in service.search(scope, query, limit=50)} <= mine
            assert {m.id for m in service.get_all(scope)} <= mine
            for foreign in set(owner) - mine:
                if foreign.startswith("mem_"):
                    with pytest.raises(NotFoundError):
                        service.get(scope, foreign)
                    with pytest.raises(NotFoundError):
                        service.delete(scope, foreign)
        # nothing was deleted by the foreign attempts: every owner still sees all of its memories
        for memory_id, scope in owner.items():
            if memory_id.startswith("mem_"):
                assert service.get(scope, memory_id).deleted_at is None
        # and each scope's recall can still reach what it owns
        for scope in SCOPES:
            mine = {i for i, s in owner.items() if s == scope}
            if mine:
                everything = service.recall(scope, " ".join(WORDS), token_budget=100_000)
                assert {item.id for item in everything.items} == mine
