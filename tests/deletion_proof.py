"""The proof that deletion means gone (issue 16), as helpers every deletion test shares.

`returned_by_every_read_path` asks each way anything can come back (recall with each preset, so
vector, BM25, graph expansion and current-version replacement; search; get_all; the searches'
own index prefilters; graph expansion and version chains at the store) and `assert_not_returned`
checks none of them hands back a deleted id. `assert_no_trace` checks a hard deletion left
nothing: no LanceDB row of the ids in any table (and no file holding the word), no BM25 hit for
the word on either engine, and no DuckDB text column anywhere holding the word or the ids,
commits aside.

Extend READ_PATHS when a new read path appears (summaries, profiles): every deletion test then
covers it. New tables need nothing: `assert_no_trace` scans every table of every schema.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import lancedb
import pytest

from mnemoflow.errors import NotFoundError
from mnemoflow.recall import RecallFilters
from mnemoflow.recall.graph import expand
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

ReadPath = Callable[[MemoryService, Scope, str], set[str]]


def _recall(preset: str) -> ReadPath:
    def read(service: MemoryService, scope: Scope, query: str) -> set[str]:
        result = service.recall(scope, query, token_budget=100_000, config=preset)
        return {item.id for item in result.items}
    return read


def _index_searches(service: MemoryService, scope: Scope, query: str) -> set[str]:
    """The searches themselves, before DuckDB's final gate: their prefilters must already exclude."""
    vector = service.embedder.embed_query(query)
    found = set()
    for target in ("memories", "chunks"):
        found |= {h.id for h in service.store.vector_search(scope, target, vector, 50)}
        found |= {h.id for h in service.store.bm25_search(scope, target, query, 50)}
    return found


def _graph_and_versions(service: MemoryService, scope: Scope, query: str) -> set[str]:
    """Graph expansion from every memory the scope still has, and the head of every version chain."""
    every = [m.id for m in service.store.list_memories(scope, limit=10_000, include_inactive=True)]
    reached = {e.memory_id for e in expand(service.store, scope, every, depth=3, max_items=1000)}
    return reached | {m.id for m in service.store.current_versions(scope, every).values()}


READ_PATHS: dict[str, ReadPath] = {
    "recall": _recall("default"),
    "recall bm25": _recall("bm25"),
    "recall rrf": _recall("rrf"),
    "search": lambda service, scope, query: {m.id for m in service.search(scope, query, limit=100)},
    "get_all": lambda service, scope, query: {m.id for m in service.get_all(scope, limit=10_000)},
    "index searches": _index_searches,
    "graph and versions": _graph_and_versions,
}


def returned_by_every_read_path(service: MemoryService, scope: Scope, query: str) -> dict[str, set[str]]:
    return {name: read(service, scope, query) for name, read in READ_PATHS.items()}


def assert_not_returned(service: MemoryService, scope: Scope, ids: set[str], queries: list[str],
                        *, deleted: bool = True) -> None:
    """No read path returns any of `ids`. When they were deleted (not merely expired, which history
    still shows), neither does a recall that asks for history, and `get` finds no such memory."""
    for query in queries:
        for path, returned in returned_by_every_read_path(service, scope, query).items():
            assert not returned & ids, f"{path} returned {returned & ids} for {query!r}"
        if deleted:
            result = service.recall(scope, query, token_budget=100_000, filters=RecallFilters(include_history=True))
            assert not {i.id for i in result.items} & ids, f"recall --history returned a deleted item for {query!r}"
    for memory_id in (i for i in ids if i.startswith("mem_") and deleted):
        with pytest.raises(NotFoundError):
            service.get(scope, memory_id)


def lancedb_rows(home: Path, ids: set[str]) -> dict[str, int]:
    """Rows naming any of `ids` in every LanceDB table of the home (a raw connection, not the store)."""
    db = lancedb.connect(str(home / "lancedb"))
    found = {}
    for name in db.list_tables().tables:
        table = db.open_table(name)
        id_column = next(f.name for f in table.schema if f.name.endswith("_id") or f.name == "cache_key")
        quoted = ", ".join("'" + i + "'" for i in ids)
        found[name] = table.count_rows(f"{id_column} IN ({quoted})") if ids else 0
    return found


def duckdb_hits(service: MemoryService, needles: set[str]) -> dict[str, int]:
    """For every text column of every table of every schema (raw landing tables and FTS indexes
    included, commits aside): rows holding any of `needles`."""
    _, columns = service.store.sql(
        "SELECT c.table_schema, c.table_name, c.column_name FROM information_schema.columns c "
        "JOIN information_schema.tables t USING (table_schema, table_name) WHERE t.table_type = 'BASE TABLE' "
        "AND (c.data_type LIKE 'VARCHAR%' OR c.data_type = 'JSON') AND NOT (c.table_schema = 'main' "
        "AND c.table_name = 'commits')")
    hits = {}
    for schema, table, column in columns:
        for needle in needles:
            n = service.store.sql(f'SELECT count(*) FROM "{schema}"."{table}" '
                                  f'WHERE contains(lower(CAST("{column}" AS VARCHAR)), ?)', [needle.lower()])[1][0][0]
            if n:
                hits[f"{schema}.{table}.{column} ~ {needle}"] = n
    return hits


def assert_no_trace(service: MemoryService, word: str, ids: set[str], content_hashes: set[str]) -> None:
    """After a hard deletion: nothing of `ids` (or the unique `word` they held) is left anywhere."""
    home = service.settings.home
    assert not any(lancedb_rows(home, ids).values()), lancedb_rows(home, ids)
    cache_keys = {f"{service.store.embedding_model}:{h}" for h in content_hashes}
    assert lancedb_rows(home, cache_keys).get("embedding_cache", 0) == 0
    files = [p for p in (home / "lancedb").rglob("*") if p.is_file() and word.encode() in p.read_bytes()]
    assert files == [], f"LanceDB files still hold {word!r}: {files}"
    db = lancedb.connect(str(home / "lancedb"))
    for name in ("memory_vectors", "chunk_vectors"):
        if name in db.list_tables().tables and db.open_table(name).count_rows():
            assert db.open_table(name).search(word, query_type="fts").limit(10).to_list() == []
    service.store.refresh_search_indexes()
    for table, id_column in (("memories", "memory_id"), ("chunks", "chunk_id")):
        _, hits = service.store.sql(f"SELECT {id_column} FROM (SELECT {id_column}, fts_main_{table}.match_bm25("
                                    f"{id_column}, ?) AS score FROM {table}) WHERE score IS NOT NULL", [word])
        assert hits == [], f"DuckDB FTS over {table} still finds {word!r}"
    assert duckdb_hits(service, {word, *ids}) == {}
    assert all(report.ok for report in service.verify())
