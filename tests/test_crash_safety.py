"""Crash safety (issue 16, "the proof"), the small version: five SIGKILLs at random moments of
`mnemoflow ingest` and `mnemoflow worker` (landing, extraction, memory generation, embeddings),
each process started again until it ends on its own, then the home must hold exactly what an
uninterrupted run of the same corpus holds, with every outbox job done, `mnemoflow verify`
passing and LanceDB holding exactly the live, embedded DuckDB rows (tests/crash_harness.py).
bench/crash_safety.py makes 100 kills."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.crash_harness import campaign, compare


def test_five_random_kills_lose_and_duplicate_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MNEMOFLOW_STORE_URL", "MNEMOFLOW_VECTORS_URL"):  # with --store=shared, each home names its own
        monkeypatch.delenv(name, raising=False)
    result = campaign(tmp_path, kills=5, per_trial=5, seed=16, documents=2, sessions=3)

    rows = result.reference_rows
    assert min(rows[t] for t in ("documents", "chunks", "turns", "memories", "memory_links", "chunk_vectors",
                                 "memory_vectors")) > 0, rows  # the corpus exercises every kind of row
    assert len(result.kills) == 5, result.trials
    assert result.problems == []
    examples = [e for t in result.trials for e in t.difference.examples]
    assert (result.rows_lost, result.rows_duplicated) == (0, 0), examples


def test_the_comparison_counts_a_row_lost_held_twice_or_changed() -> None:
    reference = {"chunks": Counter([("chk_1", "h1"), ("chk_2", "h2")]), "turns": Counter([("turn_1",)])}
    home = {"chunks": Counter([("chk_1", "h1"), ("chk_1", "h1"), ("chk_2", "changed")])}
    difference = compare(reference, home)
    assert difference.lost == {"chunks": 1, "turns": 1}
    assert difference.duplicated == {"chunks": 2}
