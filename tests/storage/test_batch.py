"""Id lists handed to DuckDB (`batch.id_set`): written into the statement when few and plain, registered
as an Arrow column otherwise; either way a statement reads exactly those ids, whatever they hold."""

from __future__ import annotations

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st

from mnemoflow.storage import batch

STORED = ["mem_1", "mem_2", "entity:person:ana", "o'brien", "x y", "ü", "a\\b", ""]
ids = st.lists(st.one_of(st.sampled_from(STORED), st.text(max_size=12)), max_size=80)


@settings(max_examples=60, deadline=None)
@given(wanted=ids)
def test_a_statement_reads_exactly_the_ids_given(wanted: list[str]) -> None:
    with duckdb.connect() as con:
        con.execute("CREATE TABLE t (id VARCHAR)")
        con.executemany("INSERT INTO t VALUES (?)", [[i] for i in STORED])
        with batch.id_set(con, wanted) as chosen:
            found = sorted(r[0] for r in con.execute(f"SELECT id FROM t WHERE id IN {chosen}").fetchall())
            listed = sorted(r[0] for r in con.execute(f"SELECT id FROM {chosen}").fetchall())
    assert found == sorted(set(STORED) & set(wanted))
    assert listed == sorted(wanted)
