
from mnemoflow.config import Settings
from mnemoflow.storage import open_store
from mnemoflow.storage.migrations import MIGRATIONS
from tests.conftest import raw_connection

DATA_MODEL = {
    "source_documents", "chunks", "turns", "memories", "memory_links", "entities", "memory_entities", "relations",
    "categories", "memory_categories", "profiles", "summaries", "review_queue", "commits", "outbox",
    "ingest_errors", "eval_runs", "eval_results",
}


def test_every_table_of_the_data_model_is_created_and_recorded(settings: Settings) -> None:
    open_store(settings).close()
    with raw_connection(settings) as con:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                            "WHERE table_schema IN ('main', 'public')").fetchall()}
        assert DATA_MODEL <= tables
        recorded = con.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    assert [name for _, name in recorded] == [name for name, _ in MIGRATIONS]


def test_reopening_applies_nothing_and_keeps_data(settings: Settings) -> None:
    from mnemoflow.memory.generate.direct import draft_memory
    from mnemoflow.storage import Scope

    with open_store(settings) as store:
        store.add_memory(Scope("t", "u"), draft_memory("Sam keeps bees"), actor="test")
    with open_store(settings) as store:
        assert [m.content for m in store.list_memories(Scope("t", "u"))] == ["Sam keeps bees"]
