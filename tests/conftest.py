"""Real backends in temp dirs: every test gets its own home (DuckDB file, LanceDB, dlt state)."""

from __future__ import annotations

import os

# Prefect logs "Stopping temporary server" at interpreter exit, after pytest closed
# its streams; only warnings matter in tests.
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from mnemoflow.config import Settings, configure_runtime, load_settings
from mnemoflow.service import MemoryService

configure_runtime()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store", choices=("embedded", "shared"), default="embedded",
        help="Where the tests' stores live: the home's DuckDB file and LanceDB folder (embedded, the default), "
        "or PostgreSQL and an S3 bucket, both started on loopback for the session (shared).")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "embedded_only(reason): the test is about the one-machine store's files "
                            "(skipped with --store=shared)")
    config.addinivalue_line("markers", "shared_only: the test is about the shared store (PostgreSQL and S3): run "
                            "with --store=shared")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    shared = config.getoption("--store") == "shared"
    for item in items:
        if shared and (marker := item.get_closest_marker("embedded_only")):
            item.add_marker(pytest.mark.skip(reason=f"embedded store only: {marker.args[0] if marker.args else ''}"))
        if not shared and item.get_closest_marker("shared_only"):
            item.add_marker(pytest.mark.skip(reason="needs the shared store: run with --store=shared"))


@pytest.fixture(scope="session")
def shared_services(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """With --store=shared: one PostgreSQL server and one S3 server for the whole session."""
    if request.config.getoption("--store") != "shared":
        yield {}
        return
    import tempfile

    from mnemoflow.cluster import services

    logs = tmp_path_factory.mktemp("services")
    pg = services.start_postgres(Path(tempfile.mkdtemp(prefix="mnemoflow-test-pg-")), logs / "postgres.log",
                                 durable=False)
    s3 = services.start_s3(logs / "s3.log")
    services.create_bucket(s3.endpoint, "mnemoflow-tests")
    _SHARED.update({"postgres": pg, "s3": s3})
    try:
        yield dict(_SHARED)
    finally:
        services.stop_postgres(pg.pid)
        from mnemoflow.cluster.processes import stop

        stop(s3.pid)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_services: dict) -> Iterator[None]:
    """Nothing a test does may touch ~/.mnemoflow or a config file outside its tmp dir. With
    --store=shared, each test also gets a database of its own and a prefix of the bucket of its own."""
    monkeypatch.setenv("MNEMOFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MNEMOFLOW_CONFIG", raising=False)
    if not shared_services:
        yield
        return
    import uuid

    from mnemoflow.cluster import services

    store = _new_shared_store()
    for key, value in store.items():
        monkeypatch.setenv(key, value)
    yield
    services.drop_database(shared_services["postgres"].url(), store["MNEMOFLOW_STORE_URL"].rsplit("/", 1)[1])


_SHARED: dict[str, Any] = {}  # the session's PostgreSQL and S3 servers, with --store=shared


def _new_shared_store() -> dict[str, str]:
    """The settings (as environment variables) of a new empty shared store: a database and a bucket prefix."""
    import uuid

    from mnemoflow.cluster import services

    name = f"t_{uuid.uuid4().hex[:16]}"
    server = _SHARED["postgres"]
    services.create_database(server.url(), name)
    return {"MNEMOFLOW_STORE_URL": server.url(name), "MNEMOFLOW_VECTORS_URL": f"s3://mnemoflow-tests/{name}",
            **services.s3_environment(_SHARED["s3"].endpoint)}


def clone_store(settings: Settings, home: Path, **overrides: Any) -> Settings:
    """Settings of a copy of the (closed) store `settings` names, for a test that changes a store built
    once: the home copied, and with --store=shared a database made from the built one as a template and
    the bucket prefix copied object by object."""
    import shutil

    shutil.copytree(settings.home, home)
    if not settings.store_url:
        return load_settings(home=home, **overrides)
    import uuid

    import boto3

    from mnemoflow.cluster import services

    name = f"t_{uuid.uuid4().hex[:16]}"
    server, source = _SHARED["postgres"], settings.store_url.rsplit("/", 1)[1]
    import psycopg
    from psycopg import sql

    with psycopg.connect(server.url(), autocommit=True) as pg:
        pg.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(name), sql.Identifier(source)))
    bucket, prefix = settings.vectors_url.removeprefix("s3://").split("/", 1)
    s3 = boto3.client("s3", endpoint_url=settings.s3_endpoint, region_name=settings.s3_region,
                      aws_access_key_id=services.S3_KEY, aws_secret_access_key=services.S3_SECRET)
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{prefix}/"):
        for item in page.get("Contents", []):
            target = f"{name}/{item['Key'].removeprefix(prefix + '/')}"
            s3.copy_object(Bucket=bucket, Key=target, CopySource={"Bucket": bucket, "Key": item["Key"]})
    reach = {k.removeprefix("MNEMOFLOW_").lower(): v for k, v in services.s3_environment(settings.s3_endpoint).items()}
    return load_settings(home=home, **{**reach, "store_url": server.url(name), "vectors_url": f"s3://{bucket}/{name}",
                                       **overrides})


def fresh_settings(home: Path, **overrides: Any) -> Settings:
    """Settings of a new, empty store (for a test that makes several): a new home, and with
    --store=shared a new database and bucket prefix as well."""
    if _SHARED:
        env = {k.removeprefix("MNEMOFLOW_").lower(): v for k, v in _new_shared_store().items()}
        overrides = {**env, **overrides}
    return load_settings(home=home, **overrides)


@pytest.fixture(scope="module")
def double() -> Iterator[Any]:
    """A loopback chat endpoint (tests/llm_double.py), one for each test module that asks for it."""
    from tests.llm_double import ChatDouble
    from tests.loopback import free_port

    server = ChatDouble(free_port())
    server.start()
    yield server
    server.stop()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(home=tmp_path / "home")


@pytest.fixture
def service(settings: Settings) -> Iterator[MemoryService]:
    with MemoryService(settings) as svc:
        yield svc


@contextmanager
def raw_connection(settings: Settings) -> Iterator[Any]:
    """A DuckDB connection to the store's tables behind its back, as someone with the file (or the
    database) and a SQL shell has: the home's file, or on a shared store its PostgreSQL database attached
    as the default catalog."""
    import duckdb

    if not settings.store_url:
        with duckdb.connect(str(settings.duckdb_path)) as con:
            yield con
        return
    import duckdb_extensions

    with duckdb.connect() as con:
        duckdb_extensions.import_extension("postgres", con=con)
        con.execute("LOAD postgres")
        con.execute(f"ATTACH '{settings.store_url}' AS planted (TYPE postgres)")
        con.execute("USE planted")
        yield con


def raw_vectors(settings: Settings) -> Any:
    """A LanceDB connection to the store's vector tables, as another process would open them."""
    import lancedb

    from mnemoflow.storage.backends import vectors_location

    uri, options = vectors_location(settings)
    return lancedb.connect(uri, storage_options=options or None)


def plant(service: MemoryService, sql: str, params: list | None = None) -> None:
    """Write behind the store's back: the service lets go of the store, a raw connection
    (`raw_connection`) runs `sql`, the service reopens on its next call."""
    service.close()
    with raw_connection(service.settings) as con:
        con.execute(sql, params or [])


def write_transcript(path: Path, turns: list[dict]) -> Path:
    import json

    path.write_text("".join(json.dumps(t) + "\n" for t in turns))
    return path


def turn(session: str, turn_id: str, speaker: str, ts: str, text: str, **extra: object) -> dict:
    return {"session_id": session, "turn_id": turn_id, "speaker": speaker, "ts": ts, "text": text, **extra}
