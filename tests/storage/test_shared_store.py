"""The shared store (PostgreSQL + LanceDB on S3): several processes write one store at once, each
outbox job is done once, a dead holder's leases are taken over, the commit chain stays one line, and a
store that cannot be reached is one clear line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mnemoflow.config import load_settings
from mnemoflow.errors import ConfigError
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope, open_store
from tests.conftest import raw_connection, raw_vectors

pytestmark = pytest.mark.shared_only

SCOPE = Scope("acme", "alex")


def _python(code: str, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          timeout=timeout, env=os.environ.copy(), check=False)


def _parallel(code: str, args: list[list[str]], timeout: float = 300) -> list[subprocess.CompletedProcess[str]]:
    children = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *a], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=os.environ.copy()) for a in args]
    done = []
    for child in children:
        out, err = child.communicate(timeout=timeout)
        done.append(subprocess.CompletedProcess(child.args, child.returncode, out, err))
    return done


def _failures(runs: list[subprocess.CompletedProcess[str]]) -> str:
    """The failed children's stderr, whole: pytest shortens a list's repr in the middle, where a Rust
    panic's message and the Python exception's type are."""
    return "\n\n".join(f"child {n} exit {r.returncode}:\n{r.stderr[-4000:]}" for n, r in enumerate(runs) if r.returncode)


WRITER = """
import sys
from mnemoflow.config import load_settings
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
who, count = sys.argv[1], int(sys.argv[2])
with MemoryService(load_settings(sys.argv[3])) as service:
    for n in range(count):
        service.add(Scope("acme", "alex"), f"{who} note {n}: the tide table for pier {n} says high water", wait=False)
"""


def test_processes_writing_one_tenant_at_once_keep_one_verifiable_chain(tmp_path: Path) -> None:
    runs = _parallel(WRITER, [[f"writer{w}", "6", str(tmp_path / f"home{w}")] for w in range(3)])
    assert all(r.returncode == 0 for r in runs), _failures(runs)
    with MemoryService(load_settings(tmp_path / "reader")) as service:
        assert len(service.get_all(SCOPE)) == 18
        [report] = service.verify("acme")
        assert report.ok, report.problems
        assert report.commits_checked == 18
    with raw_connection(load_settings(tmp_path / "reader")) as con:
        seqs = [r[0] for r in con.execute("SELECT seq FROM commits WHERE tenant_id = 'acme' ORDER BY seq").fetchall()]
    assert seqs == list(range(1, 19))


DRAINER = """
import sys
from mnemoflow.config import load_settings
from mnemoflow.service import MemoryService
with MemoryService(load_settings(sys.argv[1], outbox_batch_size=4)) as service:
    report = service.drain()
    print(report.embedded + report.reused)
"""


def test_workers_draining_at_once_do_each_job_once(tmp_path: Path) -> None:
    with MemoryService(load_settings(tmp_path / "writer")) as service:
        for n in range(24):
            service.add(SCOPE, f"Alex logged dive {n} at the reef wall, {10 + n} metres", wait=False)
        assert service.outbox_counts()["pending"] == 24
    runs = _parallel(DRAINER, [[str(tmp_path / f"worker{w}")] for w in range(3)])
    assert all(r.returncode == 0 for r in runs), _failures(runs)
    assert sum(int(r.stdout.split()[-1]) for r in runs) == 24  # no job embedded twice
    with raw_connection(load_settings(tmp_path / "writer")) as con:
        assert con.execute("SELECT status, count(*), max(attempts) FROM outbox GROUP BY status").fetchall() \
            == [("done", 24, 1)]


CLAIM_AND_DIE = """
import os, signal, sys
from mnemoflow.config import load_settings
from mnemoflow.service import MemoryService
service = MemoryService(load_settings(sys.argv[1], worker_heartbeat_s=3))
assert len(service.store.claim_embedding_jobs(10)) == 1
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_dead_workers_lease_is_taken_over_once_it_falls_silent(tmp_path: Path) -> None:
    import time

    from mnemoflow.timeutil import utcnow

    settings = load_settings(tmp_path / "home", worker_heartbeat_s=3)
    with MemoryService(settings) as service:
        service.add(SCOPE, "Alex keeps the spare kayak paddles in the boathouse loft", wait=False)
    died = _python(CLAIM_AND_DIE, str(tmp_path / "dead"))
    assert died.returncode == -signal.SIGKILL, died.stderr[-2000:]
    with raw_connection(settings) as con:
        [(last_beat,)] = con.execute("SELECT beat_at FROM workers").fetchall()
    with MemoryService(settings) as service:
        if (utcnow() - last_beat).total_seconds() < 6:  # well inside its three beats: it may be alive
            assert service.store.claim_embedding_jobs(10) == []
        time.sleep(max(0.0, 9.5 - (utcnow() - last_beat).total_seconds()))  # three silent beats: dead
        assert service.drain().embedded == 1
        with raw_connection(settings) as con:
            assert con.execute("SELECT status, attempts FROM outbox").fetchall() == [("done", 2)]


def test_a_clean_stop_frees_its_leases_at_once(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "home")
    with MemoryService(settings) as service:
        service.add(SCOPE, "Alex's climbing gym closes at ten on Fridays", wait=False)
    with MemoryService(load_settings(tmp_path / "leaver")) as leaver:
        assert len(leaver.store.claim_embedding_jobs(10)) == 1
    with MemoryService(settings) as service:  # no wait: the leaver said goodbye
        assert service.drain().embedded == 1


LANCE_WRITER = """
import sys
import numpy as np
from mnemoflow.config import load_settings
from mnemoflow.storage import open_store
with open_store(load_settings(sys.argv[1])) as store:
    n = int(sys.argv[2])
    keys = [f"w{n}-{i}" for i in range(12)]
    for i, key in enumerate(keys):  # one LanceDB commit each, against the other writers' commits
        store.cache_vectors([key], np.full((1, 384), (n + 1) / 100, dtype=np.float32))
        store.save_cached_vectors()
"""


def test_processes_appending_to_one_lancedb_table_on_s3_lose_no_commit(tmp_path: Path) -> None:
    """LanceDB commits a version by writing its manifest with a conditional PUT (If-None-Match): the loser
    of a race retries on top of the winner. S3 (and the moto server the tests use) honour it."""
    runs = _parallel(LANCE_WRITER, [[str(tmp_path / f"home{w}"), str(w)] for w in range(4)])
    assert all(r.returncode == 0 for r in runs), _failures(runs)
    table = raw_vectors(load_settings(tmp_path / "home0")).open_table("embedding_cache")
    assert table.count_rows() == 48


LANCE_CREATOR = """
import sys, time
from pathlib import Path
import pyarrow as pa
from mnemoflow.config import load_settings
from mnemoflow.storage.backends import open_database, open_vectors
from mnemoflow.storage.lance_index import IndexSpec
settings, me, ready, count = load_settings(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
db = open_database(settings)
index = open_vectors(settings, db)
(ready / me).touch()
while len(list(ready.iterdir())) < count:  # every process touches each new table at once
    time.sleep(0.01)
for table in range(4):
    spec = IndexSpec(f"race_{table}", "key", (("key", pa.string()),), filter_columns=(), text_column=None,
                     vector_search=False)
    index.append(spec, {"key": [me]})
db.close()
"""


def test_processes_creating_one_lancedb_table_at_once_keep_every_row(tmp_path: Path) -> None:
    """Two processes creating one table at once both commit, the second as an Overwrite that fails the
    first's next append (CI's three writers) or, committed after it, wipes it: creating takes turns."""
    (ready := tmp_path / "ready").mkdir()
    runs = _parallel(LANCE_CREATOR, [[str(tmp_path / f"home{w}"), f"w{w}", str(ready), "8"] for w in range(8)])
    assert all(r.returncode == 0 for r in runs), _failures(runs)
    vectors = raw_vectors(load_settings(tmp_path / "home0"))
    for name in [f"race_{table}" for table in range(4)]:
        table = vectors.open_table(name)
        assert table.count_rows() == 8, name
        rows = [int(v["metadata"]["total_rows"]) for v in table.list_versions()]
        assert rows[0] == 0 and 0 not in rows[1:], (name, rows)  # one creation: no second empty version


def test_an_unreachable_store_is_one_clear_line_and_writes_nothing(tmp_path: Path) -> None:
    from mnemoflow.cluster.processes import free_port

    home = tmp_path / "home"
    dead = f"postgresql://postgres@127.0.0.1:{free_port()}/nowhere"
    with pytest.raises(ConfigError, match=r"cannot reach the store at postgresql://postgres@127\.0\.0\.1:\d+/nowhere"):
        open_store(load_settings(home, store_url=dead, store_connect_timeout_s=2))
    bucket = "s3://no-such-bucket-here/vectors"
    with pytest.raises(ConfigError, match="cannot reach the vectors at s3://no-such-bucket-here/vectors"):
        open_store(load_settings(home, vectors_url=bucket, store_connect_timeout_s=2))
    env = {**os.environ, "MNEMOFLOW_STORE_URL": dead, "MNEMOFLOW_STORE_CONNECT_TIMEOUT_S": "2"}
    cli = subprocess.run([sys.executable, "-m", "mnemoflow.cli", "add", "Alex sails on Sundays", "--home", str(home)],
                         capture_output=True, text=True, env=env, timeout=120, check=False)
    assert cli.returncode == 2, cli.stderr
    assert cli.stderr.strip().count("\n") == 0 and "cannot reach the store" in cli.stderr
    assert not home.exists() or not any(home.iterdir())


def test_a_wrong_url_scheme_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="only postgresql:// URLs"):
        open_store(load_settings(tmp_path / "h", store_url="mysql://x/y"))
    with pytest.raises(ConfigError, match="only s3:// URLs"):
        open_store(load_settings(tmp_path / "h", vectors_url="gs://bucket/x"))


def test_json_payloads_and_timestamps_round_trip(tmp_path: Path) -> None:
    """What PostgreSQL hands back is what the embedded store hands back: JSON metadata, timestamps."""
    with MemoryService(load_settings(tmp_path / "home")) as service:
        memory, _ = service.add(SCOPE, "Alex's sister Ines lives in Porto", metadata={"source": "chat", "n": 2})
        again = service.get(SCOPE, memory.id)
        assert again.metadata["source"] == "chat" and again.created_at == memory.created_at
        hits = service.recall(SCOPE, "where does Ines live?").items
        assert hits and "Porto" in hits[0].text


def test_analysts_query_and_snapshot_the_shared_store(tmp_path: Path) -> None:
    """`sql` and `snapshot` on PostgreSQL: a read-only attach with the analyst views; the snapshot to the
    bucket, read back with DuckDB's httpfs."""
    import duckdb
    import duckdb_extensions

    from mnemoflow.errors import BadInputError

    with MemoryService(load_settings(tmp_path / "home")) as service:
        service.add(SCOPE, "Alex's ferry to Bute leaves at 07:15")
        result = service.sql("SELECT tenant_id, count(*) FROM current_memories GROUP BY ALL")
        assert result.rows == [["acme", 1]]
        with pytest.raises(BadInputError, match="read-only"):
            service.sql("DELETE FROM memories")
        written = service.snapshot("s3://mnemoflow-tests/snapshots/one")
        assert written["memories"] == 1 and "api_keys" not in written and "current_memories" in written
        settings = service.settings
    con = duckdb.connect()
    duckdb_extensions.import_extension("httpfs", con=con)
    con.execute("LOAD httpfs")
    endpoint = settings.s3_endpoint.split("://", 1)[1]
    con.execute(f"CREATE SECRET (TYPE s3, KEY_ID 'k', SECRET 's', ENDPOINT '{endpoint}', URL_STYLE 'path', "
                "USE_SSL false, REGION 'us-east-1')")
    assert con.execute("SELECT content FROM 's3://mnemoflow-tests/snapshots/one/memories.parquet'").fetchall() \
        == [("Alex's ferry to Bute leaves at 07:15",)]


def test_servers_of_a_shared_store_spend_one_rate_budget_per_key(tmp_path: Path) -> None:
    import time

    limits = {"rate_limit_per_s": 0.5, "rate_limit_burst": 5}
    with MemoryService(load_settings(tmp_path / "a", **limits)) as a, \
            MemoryService(load_settings(tmp_path / "b", **limits)) as b:
        limiters = (a.rate_limiter, b.rate_limiter)  # both stores open before the clock starts
        started = time.monotonic()
        answers = [limiter.take("key_one", "acme", "read") for _ in range(6) for limiter in limiters]
        refilled = (time.monotonic() - started) * 0.5
        allowed = sum(wait is None for wait in answers)
        assert 5 <= allowed <= 5 + refilled  # one budget, whichever server asked (12 asked)
        assert all(wait > 0 for wait in answers if wait is not None)
        assert b.rate_limiter.take("key_two", "acme", "read") is None  # another key is untouched
        assert a.rate_limiter.take("key_one", "acme", "write") is None  # and so is the key's write budget


def test_two_writers_replacing_one_memory_at_once_leave_one_current_version(tmp_path: Path) -> None:
    """Both updates are acknowledged; the tenant's write lock orders them and the later one replaces the
    version the earlier wrote (last writer wins): one current version, one line of versions, a chain
    that verifies."""
    import threading

    with MemoryService(load_settings(tmp_path / "a")) as service:
        memory, _ = service.add(SCOPE, "Alex's locker code is 1942")
    services = [MemoryService(load_settings(tmp_path / name)) for name in ("b", "c")]
    for other in services:
        other.store  # noqa: B018  (both open before they race)
    texts = ("Alex's locker code is 2207", "Alex's locker code is 3318")
    threads = [threading.Thread(target=lambda s=s, t=t: s.update(SCOPE, memory.id, t)) for s, t in zip(services, texts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    for other in services:
        other.close()
    with MemoryService(load_settings(tmp_path / "a")) as service:
        current = service.get_all(SCOPE).results
        assert len(current) == 1 and current[0].content in texts, current
        history = service.history(SCOPE, current[0].id)  # one line: the first, the earlier update, the later
        assert [e.event for e in history if e.event] == ["ADD", "UPDATE", "UPDATE"], history
        [report] = service.verify(SCOPE.tenant_id)
        assert report.ok, report.problems
