"""The LanceDB refresh after small writes (a direct `add` each): rows are searchable before any
refresh, a lazy refresh leaves the tables alone until fragments pile up, then merges them, and folds
rows into the indexes once enough wait outside them; the vector cache is compacted and indexed by key."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from mnemoflow.storage import lance_index
from mnemoflow.storage.lance_index import (
    EMBEDDING_CACHE,
    LAZY_FRAGMENTS,
    LAZY_UNINDEXED_ROWS,
    MEMORY_INDEX,
    LanceIndex,
)
from mnemoflow.storage.scope import Scope
from mnemoflow.storage.search import lance_where

SCOPE = Scope("acme", "lena")
DIM = 8


def _rows(texts: list[str]) -> dict[str, list]:
    ids = [f"mem_{uuid.uuid4().hex}" for _ in texts]
    n = len(texts)
    return {"memory_id": ids, "tenant_id": ["acme"] * n, "user_id": ["lena"] * n, "shared": [False] * n,
            "deleted": [False] * n, "is_latest": [True] * n, "active_until": [None] * n, "content_hash": ids,
            "text": texts, "agent_id": [None] * n, "run_id": [None] * n, "container": [None] * n}


def _vectors(n: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(n, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _fragments(index: LanceIndex) -> int:
    return index.table(MEMORY_INDEX).stats()["fragment_stats"]["num_fragments"]


def _unindexed(index: LanceIndex) -> int:
    return max(ix.num_unindexed_rows or 0 for ix in index.table(MEMORY_INDEX).list_indices())


def _found(index: LanceIndex, query: str, vector: np.ndarray) -> tuple[list[str], list[str]]:
    where = lance_where(SCOPE, "memories")
    return ([h[0] for h in index.text_search(MEMORY_INDEX, query, where, 5)],
            [h[0] for h in index.vector_search(MEMORY_INDEX, vector, where, 1)])


def test_small_writes_are_searchable_and_refreshed_only_once_they_pile_up(tmp_path: Path) -> None:
    index = LanceIndex(tmp_path / "lance", "test-model", DIM)
    index.append(MEMORY_INDEX, _rows([f"note {i} about the garden" for i in range(50)]), _vectors(50, 0))
    index.refresh(MEMORY_INDEX)
    assert (_fragments(index), _unindexed(index)) == (1, 0)

    written = []
    for n in range(LAZY_FRAGMENTS - 1):
        rows, vector = _rows([f"Lena keeps {n} beehives on the roof"]), _vectors(1, 100 + n)
        index.append(MEMORY_INDEX, rows, vector)
        index.refresh(MEMORY_INDEX, lazy=True)
        written.append((rows["memory_id"][0], vector[0]))
        # found at once by both signals, outside the indexes
        text_hits, [nearest] = _found(index, f"Lena keeps {n} beehives", vector[0])
        assert text_hits[0] == nearest == rows["memory_id"][0]
    assert (_fragments(index), _unindexed(index)) == (LAZY_FRAGMENTS, LAZY_FRAGMENTS - 1)  # nothing done yet

    index.append(MEMORY_INDEX, _rows(["Lena sold the honey at the market"]), _vectors(1, 999))
    index.refresh(MEMORY_INDEX, lazy=True)
    assert _fragments(index) < 3  # the small fragments merged...
    assert _unindexed(index) == LAZY_FRAGMENTS  # ...and too few rows wait to be worth an optimize
    for memory_id, vector in written:
        assert _found(index, "beehives roof", vector)[1] == [memory_id]
    assert len(_found(index, "beehives roof", written[0][1])[0]) == 5

    index.append(MEMORY_INDEX, _rows([f"Lena's log line {i}" for i in range(LAZY_UNINDEXED_ROWS)]),
                 _vectors(LAZY_UNINDEXED_ROWS, 7))
    for n in range(LAZY_FRAGMENTS - 1):  # with the one above, LAZY_FRAGMENTS appends and no refresh called
        index.append(MEMORY_INDEX, _rows([f"Lena's late note {n}"]), _vectors(1, 2000 + n))
    # a run of appends refreshes the table itself (a generation pass calls no refresh), and enough
    # rows waited: folded into the indexes
    assert _fragments(index) < 3 and _unindexed(index) == 0
    assert _found(index, "beehives roof", written[3][1])[1] == [written[3][0]]


def test_a_process_refreshes_lazily_only_tables_it_has_seen_settled(tmp_path: Path) -> None:
    """A table this process has not refreshed yet gets a full look: another process's small writes
    may have piled up there."""
    first = LanceIndex(tmp_path / "lance", "test-model", DIM)
    for n in range(5):
        first.append(MEMORY_INDEX, _rows([f"note {n}"]), _vectors(1, n))
    later = LanceIndex(tmp_path / "lance", "test-model", DIM)
    later.refresh(MEMORY_INDEX, lazy=True)
    assert _fragments(later) == 1 and _unindexed(later) == 0


def test_the_vector_cache_is_compacted_and_indexed_by_key_only(tmp_path: Path) -> None:
    index = LanceIndex(tmp_path / "lance", "test-model", DIM, vector_index_min_rows=10)
    for n in range(LAZY_FRAGMENTS + 1):
        index.append(EMBEDDING_CACHE, {"cache_key": [f"test-model:{n}"]}, _vectors(1, n))
        index.refresh(EMBEDDING_CACHE, lazy=True)
    table = index.table(EMBEDDING_CACHE)
    assert table.stats()["fragment_stats"]["num_fragments"] < LAZY_FRAGMENTS
    assert [(ix.index_type, ix.columns) for ix in table.list_indices()] == [("BTree", ["cache_key"])]
    found = index.lookup(EMBEDDING_CACHE, "cache_key IN ('test-model:3', 'test-model:20')", ["cache_key"], None)
    assert sorted(found.column("cache_key").to_pylist()) == ["test-model:20", "test-model:3"]


def test_what_compactions_replaced_is_deleted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each small write is a version of the table, and a compaction rewrites the small fragments: their
    files go once they are COMPACTED_KEPT old (a minute; no wait here)."""
    monkeypatch.setattr(lance_index, "COMPACTED_KEPT", timedelta(0))
    index = LanceIndex(tmp_path / "lance", "test-model", DIM)
    index.append(MEMORY_INDEX, _rows(["first note"]), _vectors(1, 0))
    index.refresh(MEMORY_INDEX)
    for n in range(3 * LAZY_FRAGMENTS):
        index.append(MEMORY_INDEX, _rows([f"Lena's note {n}"]), _vectors(1, n))
        index.refresh(MEMORY_INDEX, lazy=True)
    table = index.table(MEMORY_INDEX)
    data = Path(table.to_lance().uri) / "data"
    assert len(table.list_versions()) < LAZY_FRAGMENTS + 5
    assert len(list(data.iterdir())) < LAZY_FRAGMENTS + 5  # not one file per write
    assert table.count_rows() == 3 * LAZY_FRAGMENTS + 1


class PanicException(BaseException):
    """What a Rust panic inside a Lance call reaches Python as (pyo3's PanicException is a BaseException)."""


class RustPanic(Exception):
    """What a Rust panic inside the future a LanceDB call waits on reaches Python as."""


@pytest.mark.parametrize("panic", [PanicException, RustPanic])
def test_a_write_whose_commit_panicked_is_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  panic: type[BaseException]) -> None:
    """Lance's conflict resolver can panic while several processes commit to one table; nothing of the
    attempt is committed, so the write is retried like a conflict, on a handle opened afresh (the panicked
    one's state is not trusted), and other errors still are not retried."""
    index = LanceIndex(tmp_path / "lance", "test-model", DIM)
    table = index.table(MEMORY_INDEX)

    def panics(*args: object, **kwargs: object) -> object:
        raise panic("rust future panicked: unknown error")

    monkeypatch.setattr(table, "add", panics)
    index.append(MEMORY_INDEX, _rows(["Lena keeps bees"]), _vectors(1, 1))
    assert index.table(MEMORY_INDEX) is not table and index.count(MEMORY_INDEX) == 1

    def fails(*args: object, **kwargs: object) -> object:
        raise ValueError("not a conflict")

    monkeypatch.setattr(index.table(MEMORY_INDEX), "add", fails)
    with pytest.raises(ValueError, match="not a conflict"):
        index.append(MEMORY_INDEX, _rows(["Lena keeps goats"]), _vectors(1, 2))


def test_a_table_listed_with_no_version_is_created_here_not_refused(tmp_path: Path) -> None:
    """A table's folder is listed before its creator commits its first version: opening it then fails ("was
    not found"), and a worker's first refresh died on it. Once this process has its turn to create (the
    creator finished, or died before its first version), it creates the table."""
    (tmp_path / "lance" / f"{MEMORY_INDEX.name}.lance" / "data").mkdir(parents=True)  # a create cut short
    index = LanceIndex(tmp_path / "lance", "test-model", DIM)
    index.refresh(MEMORY_INDEX)
    index.append(MEMORY_INDEX, _rows(["the kiln is booked for Friday"]), _vectors(1, 3))
    assert LanceIndex(tmp_path / "lance", "test-model", DIM).table(MEMORY_INDEX).count_rows() == 1
