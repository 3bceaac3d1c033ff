"""Storage: the only package that touches DuckDB or LanceDB. Reach it through `open_store`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mnemoflow.config import Settings
from mnemoflow.errors import ConfigError
from mnemoflow.storage.scope import Scope

if TYPE_CHECKING:
    from mnemoflow.storage.store import Store

__all__ = ["Scope", "Store", "open_store"]


def __getattr__(name: str) -> Any:
    # the engines (DuckDB, LanceDB) load on first use, not when a Scope is imported
    if name == "Store":
        from mnemoflow.storage.store import Store

        return Store
    raise AttributeError(f"module 'mnemoflow.storage' has no attribute {name!r}")


def open_store(settings: Settings) -> Store:
    """Open (creating and migrating if needed) the store under `settings.home`.

    The one entry point: a later layout (a file per tenant shard, LanceDB on object
    storage) changes this function, not its callers.
    """
    import duckdb

    from mnemoflow.embedding import embedding_dimensions
    from mnemoflow.storage.connection import connect
    from mnemoflow.storage.lance_index import LanceIndex
    from mnemoflow.storage.migrations import REKEYED, apply_migrations
    from mnemoflow.storage.store import Store

    try:
        settings.home.mkdir(parents=True, exist_ok=True)
        con = connect(settings.duckdb_path, settings.store_lock_timeout_s)
    except (OSError, duckdb.IOException) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).splitlines()[0]
        raise ConfigError(f"cannot use {settings.home} as the home directory: {reason}") from None
    try:
        applied = apply_migrations(con)
        index = LanceIndex(settings.lancedb_path, settings.resolved_embedding_model, embedding_dimensions(settings))
    except BaseException:
        con.close()
        raise
    store = Store(con, index, max_attempts=settings.outbox_max_attempts, lease_s=settings.outbox_lease_s,
                 bm25_engine=settings.bm25_engine, backoff_s=settings.outbox_backoff_s,
                 backoff_max_s=settings.outbox_backoff_max_s, access_flush_s=settings.recall_access_flush_s,
                 rewrite_after_purge=settings.purge_rewrites_file, lock_timeout_s=settings.store_lock_timeout_s)
    if REKEYED in applied and settings.purge_rewrites_file:
        store.rewrite_file()  # the ids that spelled names were rewritten: their old bytes leave the file too
    return store
