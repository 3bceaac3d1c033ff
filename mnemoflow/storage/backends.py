"""Which engines hold the store: a URL's scheme picks them, here and nowhere else.

| setting | unset (one machine) | set (many machines) |
|---|---|---|
| `store_url` | the DuckDB file in the home | `postgresql://...`: PostgreSQL through DuckDB's postgres extension |
| `vectors_url` | `<home>/lancedb` | `s3://bucket/prefix`: LanceDB on an S3-compatible bucket |

Every other module sees one `Database` and one `LanceIndex`.
"""

from __future__ import annotations

from contextlib import nullcontext
from urllib.parse import urlsplit

import duckdb

from mnemoflow.config import Settings
from mnemoflow.errors import ConfigError
from mnemoflow.storage.connection import Database, connect
from mnemoflow.storage.lance_index import LanceIndex

_DUCKDB_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


def open_database(settings: Settings) -> Database:
    """The system of record, migrated to the current schema."""
    from mnemoflow.storage import postgres
    from mnemoflow.storage.migrations import apply_migrations

    url = settings.store_url
    if url and not postgres.is_postgres_url(url):
        raise ConfigError(f"store_url {url!r}: only postgresql:// URLs are supported (unset: the home's DuckDB file)")
    if url:
        if settings.bm25_engine == "duckdb":
            raise ConfigError("bm25_engine 'duckdb' needs the home's DuckDB file; a PostgreSQL store searches with "
                              "LanceDB's full-text index")
        side = postgres.Postgres(url, settings.store_connect_timeout_s)
        con = duckdb.connect(config=_DUCKDB_CONFIG)
        try:
            postgres.attach(con, url, settings.store_connect_timeout_s)
            side.sync_schema(con)
        except BaseException:
            con.close()
            postgres.detach(con)
            side.close()
            raise
        return Database(con, side)
    try:
        settings.home.mkdir(parents=True, exist_ok=True)
        con = connect(settings.duckdb_path, settings.store_lock_timeout_s)
    except (OSError, duckdb.IOException) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).splitlines()[0]
        raise ConfigError(f"cannot use {settings.home} as the home directory: {reason}") from None
    try:
        applied = apply_migrations(con)
    except BaseException:
        con.close()
        raise
    return Database(con, applied=applied)


def vectors_location(settings: Settings) -> tuple[str, dict[str, str]]:
    """(LanceDB URI, storage options) of the vector and full-text tables."""
    url = settings.vectors_url
    if not url:
        return str(settings.lancedb_path), {}
    scheme = urlsplit(url).scheme
    if scheme != "s3":
        raise ConfigError(f"vectors_url {url!r}: only s3:// URLs are supported (unset: <home>/lancedb)")
    options = bucket_options(settings)
    if settings.s3_endpoint:
        options["allow_http"] = str(settings.s3_endpoint.startswith("http://")).lower()
    return url.rstrip("/"), options


def bucket_options(settings: Settings) -> dict[str, str]:
    """How to reach the settings' S3-compatible bucket: region, endpoint, keys (those that are set)."""
    options = {"region": settings.s3_region}
    if settings.s3_endpoint:
        options["endpoint"] = settings.s3_endpoint
    if settings.s3_access_key_id is not None:
        options["access_key_id"] = settings.s3_access_key_id.get_secret_value()
    if settings.s3_secret_access_key is not None:
        options["secret_access_key"] = settings.s3_secret_access_key.get_secret_value()
    return options


def open_vectors(settings: Settings, db: Database) -> LanceIndex:
    """The LanceDB tables of `settings`; on a shared store, processes create a table in turns (`db`'s lock)."""
    from mnemoflow.embedding import embedding_dimensions

    uri, options = vectors_location(settings)
    return LanceIndex(uri, settings.resolved_embedding_model, embedding_dimensions(settings), storage_options=options,
                      read_consistency_s=settings.vectors_read_consistency_s if settings.vectors_url else None,
                      connect_timeout_s=settings.store_connect_timeout_s,
                      creation_lock=db.postgres.creation_lock if db.postgres is not None else nullcontext)
