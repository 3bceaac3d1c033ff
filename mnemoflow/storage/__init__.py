"""Storage: the only package that touches DuckDB or LanceDB. Reach it through `open_store`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mnemoflow.storage.scope import Scope

if TYPE_CHECKING:  # a Scope is light to import: neither the settings nor the engines come with it
    from mnemoflow.config import Settings
    from mnemoflow.storage.store import Store

__all__ = ["Scope", "Store", "open_store"]


def __getattr__(name: str) -> Any:
    # the engines (DuckDB, LanceDB) load on first use, not when a Scope is imported
    if name == "Store":
        from mnemoflow.storage.store import Store

        return Store
    raise AttributeError(f"module 'mnemoflow.storage' has no attribute {name!r}")


def open_store(settings: Settings) -> Store:
    """Open (creating and migrating if needed) the store `settings` name: by default the DuckDB file and
    the LanceDB folder under `settings.home`; on a shared store, the PostgreSQL database of
    `store_url` and the LanceDB tables of `vectors_url` (storage/backends.py maps a URL to its engine).

    The one entry point: a layout changes this function, not its callers.
    """
    from mnemoflow.storage.backends import open_database, open_vectors
    from mnemoflow.storage.rekey_entities import REKEYED
    from mnemoflow.storage.store import Store

    db = open_database(settings)
    try:
        index = open_vectors(settings, db)
    except BaseException:
        db.close()
        raise
    store = Store(db, index, max_attempts=settings.outbox_max_attempts, lease_s=settings.outbox_lease_s,
                  bm25_engine=settings.bm25_engine, backoff_s=settings.outbox_backoff_s,
                  backoff_max_s=settings.outbox_backoff_max_s, access_flush_s=settings.recall_access_flush_s,
                  heartbeat_s=settings.worker_heartbeat_s, rewrite_after_purge=settings.purge_rewrites_file,
                  lock_timeout_s=settings.store_lock_timeout_s)
    if REKEYED in db.applied and settings.purge_rewrites_file:
        store.rewrite_file()  # the ids that spelled names were rewritten: their old bytes leave the file too
    return store
