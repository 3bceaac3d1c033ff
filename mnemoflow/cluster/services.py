"""The outside services of a shared store, started on loopback for a laptop, a test or CI: PostgreSQL
(from the machine's own packages) and an S3 server (moto, from the project's dependencies). In
production each is a managed service (docs/distributed.md); only the URLs change."""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from mnemoflow.cluster.processes import alive, free_port, http_ok, port_open, spawn, stop, wait_for
from mnemoflow.errors import ConfigError

POSTGRES_USER = "postgres"  # initdb and postgres refuse to run as root: as root, they run as this user
S3_REGION = "us-east-1"
S3_KEY = "mnemoflow"  # the local S3 server takes any key; these name the cluster's in its logs
S3_SECRET = "mnemoflow-local"


@dataclass(frozen=True)
class PostgresServer:
    data_dir: Path
    port: int
    pid: int

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{POSTGRES_USER}@127.0.0.1:{self.port}/{database}"


def _as_postgres() -> list[str]:
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam(POSTGRES_USER)
    except KeyError:
        raise ConfigError(f"PostgreSQL refuses to run as root and this machine has no {POSTGRES_USER!r} user; "
                          "run as another user or create it") from None
    return ["runuser", "-u", POSTGRES_USER, "--"]


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        for candidate in sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), reverse=True):
            return str(candidate)
        raise ConfigError(f"{name} not found: install PostgreSQL (Debian: apt-get install postgresql) or point "
                          "store_url at a running one")
    return found


def postgres_data_dir(wanted: Path) -> Path:
    """Where the cluster's PostgreSQL keeps its data: `wanted`, unless (as root) the postgres user cannot
    reach it through its parents; then a folder of that user's under /var/tmp named after `wanted`."""
    if os.geteuid() != 0:
        return wanted
    wanted.mkdir(parents=True, exist_ok=True)
    reachable = subprocess.run([*_as_postgres(), "test", "-x", str(wanted.parent)], capture_output=True).returncode == 0
    if reachable:
        return wanted
    digest = hashlib.sha256(str(wanted.resolve()).encode()).hexdigest()[:12]
    return Path("/var/tmp") / f"mnemoflow-postgres-{digest}"


def start_postgres(data_dir: Path, log: Path, port: int | None = None, *, durable: bool = True,
                   timeout_s: float = 60.0) -> PostgresServer:
    """initdb on first use, then start the server on 127.0.0.1; `durable=False` (tests) skips fsync."""
    data_dir.mkdir(parents=True, exist_ok=True)
    prefix = _as_postgres()
    if prefix:
        shutil.chown(data_dir, POSTGRES_USER, POSTGRES_USER)
        data_dir.chmod(0o700)
        log.parent.mkdir(parents=True, exist_ok=True)
        log.touch()
        shutil.chown(log, POSTGRES_USER, POSTGRES_USER)
    if not (data_dir / "PG_VERSION").exists():
        done = subprocess.run([*prefix, _binary("initdb"), "-D", str(data_dir), "-U", POSTGRES_USER, "--auth=trust",
                               "-E", "UTF8", "--locale=C"], capture_output=True, text=True)
        if done.returncode != 0:
            raise ConfigError(f"initdb {data_dir} failed: {(done.stderr or done.stdout).strip()[-400:]}")
    port = port or free_port()
    options = ["-p", str(port), "-k", str(data_dir), "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=400"]
    if not durable:
        options += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
    spawn([*prefix, _binary("postgres"), "-D", str(data_dir), *options], log)
    wait_for("PostgreSQL", lambda: _postmaster_pid(data_dir) is not None and port_open("127.0.0.1", port),
             None, log, timeout_s)
    pid = _postmaster_pid(data_dir)
    assert pid is not None
    server = PostgresServer(data_dir, port, pid)
    wait_for("PostgreSQL", lambda: _accepts(server.url()), pid, log, timeout_s)  # past "starting up"
    return server


def _accepts(url: str) -> bool:
    import psycopg

    try:
        psycopg.connect(url, connect_timeout=2).close()
        return True
    except psycopg.Error:
        return False


def _postmaster_pid(data_dir: Path) -> int | None:
    try:
        pid = int((data_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if alive(pid) else None


def stop_postgres(pid: int) -> None:
    """Fast shutdown: open sessions are ended, what was committed is on disk."""
    stop(pid, signal.SIGINT, timeout_s=30)


def create_database(server_url: str, name: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(server_url, autocommit=True) as pg:
        if not pg.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            pg.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def drop_database(server_url: str, name: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(server_url, autocommit=True) as pg:
        pg.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@dataclass(frozen=True)
class S3Server:
    port: int
    pid: int

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def start_s3(log: Path, port: int | None = None, timeout_s: float = 60.0) -> S3Server:
    """An S3-compatible server (moto) on 127.0.0.1. It keeps objects in memory: the vectors it held are
    rebuilt from the system of record by `mnemoflow reembed` after it restarts."""
    port = port or free_port()
    pid = spawn([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], log)
    wait_for("the S3 server", lambda: http_ok(f"http://127.0.0.1:{port}/moto-api/"), pid, log, timeout_s)
    return S3Server(port, pid)


def create_bucket(endpoint: str, bucket: str) -> None:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, region_name=S3_REGION, aws_access_key_id=S3_KEY,
                          aws_secret_access_key=S3_SECRET)
    existing = {b["Name"] for b in client.list_buckets().get("Buckets", [])}
    if bucket not in existing:
        client.create_bucket(Bucket=bucket)


def s3_environment(endpoint: str) -> dict[str, str]:
    """The settings that reach the local S3 server."""
    return {"MNEMOFLOW_S3_ENDPOINT": endpoint, "MNEMOFLOW_S3_REGION": S3_REGION,
            "MNEMOFLOW_S3_ACCESS_KEY_ID": S3_KEY, "MNEMOFLOW_S3_SECRET_ACCESS_KEY": S3_SECRET}
