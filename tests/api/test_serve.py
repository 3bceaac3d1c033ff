"""`mnemoflow serve` owns a home; everyone else is its client (CLI, Python API, HTTP, SQL, flows)."""

from __future__ import annotations

import json
import signal
import stat
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import duckdb_extensions
import httpx
import pytest

from mnemoflow.config import load_settings
from mnemoflow.errors import MnemoflowError
from mnemoflow.remote import RemoteService, connect, read_server_info
from mnemoflow.service import MemoryService
from mnemoflow.storage.scope import Scope
from tests.conftest import turn, write_transcript
from tests.serving import served, start_server, stop_server, wait_until_serving

ACME = Scope("acme", "alex")


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mnemoflow.cli", *args, "--home", str(home)],
                          check=False, capture_output=True, text=True, timeout=300)


def test_a_server_owns_the_home_and_the_cli_sends_it_the_work(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with served(home) as info:
        assert stat.S_IMODE((home / "server.json").stat().st_mode) == 0o600  # the token reaches every tenant
        added = cli(home, "add", "Alex prefers morning meetings", "--tenant", "acme", "--user", "alex")
        assert added.returncode == 0, added.stderr
        recalled = cli(home, "recall", "when does Alex meet?", "--tenant", "acme", "--user", "alex", "--json")
        assert json.loads(recalled.stdout)["items"][0]["text"].startswith("- Alex prefers morning meetings")
        second = start_server(home, "--no-schedules")
        _out, err = second.communicate(timeout=120)
        assert second.returncode == 1 and err.strip().count("\n") == 0
        assert f"a server already runs for {home} at {info.url}" in err
        with connect(load_settings(home)) as service:
            assert isinstance(service, RemoteService)
            assert [m.content for m in service.get_all(ACME)] == ["Alex prefers morning meetings"]


def test_sigterm_checkpoints_and_hands_the_store_back(tmp_path: Path) -> None:
    home = tmp_path / "home"
    process = start_server(home, "--no-schedules")
    wait_until_serving(home, process)
    assert cli(home, "add", "Alex owns a red bike", "--tenant", "acme", "--user", "alex").returncode == 0
    stop_server(process)
    assert process.returncode in (0, -signal.SIGTERM)
    assert not (home / "server.json").exists() and not (home / "mnemoflow.duckdb.wal").exists()
    with connect(load_settings(home)) as service:  # nobody serves: the store opens in this process
        assert isinstance(service, MemoryService)
        assert [m.content for m in service.get_all(ACME)] == ["Alex owns a red bike"]


def test_sigterm_while_clients_write_and_the_worker_embeds_loses_nothing_acknowledged(tmp_path: Path) -> None:
    """SIGTERM in the middle of it all: writers adding memories, a transcript's memories and vectors
    being derived by the outbox worker. Every write a client was told succeeded is in the store after
    the stop, and the derived work left over is finished by the next worker (none of it is stuck)."""
    home = tmp_path / "home"
    transcript = write_transcript(tmp_path / "standup.jsonl", [
        turn("standup", f"t{n}", "Ines" if n % 2 else "Bo", f"2026-03-0{1 + n % 9}T09:{n % 60:02d}:00",
             f"Ticket {n} moves to the {('review', 'done', 'blocked')[n % 3]} column after the {n}th check")
        for n in range(240)])
    process = start_server(home, "--no-schedules")
    wait_until_serving(home, process)
    with connect(load_settings(home)) as service:
        service.ingest(ACME, [transcript], wait=False)  # the worker's work: memories, then vectors
    acknowledged: list[tuple[str, str]] = []
    enough = threading.Event()

    def writer(n: int) -> None:
        with connect(load_settings(home)) as client:
            for i in range(10_000):
                text = f"Crate {n}-{i} sits on shelf {n * 100 + i} of the east aisle"
                try:
                    memory, _ = client.add(ACME, text, kind="fact", wait=i % 2 == 0)
                except MnemoflowError:  # the server stopped: refused, or cancelled unanswered
                    return
                acknowledged.append((memory.id, text))
                if len(acknowledged) >= 6:
                    enough.set()

    writers = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    for thread in writers:
        thread.start()
    assert enough.wait(300), "the writers got no answers"
    with connect(load_settings(home)) as service:  # the worker under way: some derived work done, some not
        for _ in range(3000):
            jobs = service.outbox_counts()
            if jobs.get("done", 0) and jobs.get("pending", 0) or not jobs.get("pending", 0):
                break
            threading.Event().wait(0.1)
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=120)
    for thread in writers:
        thread.join(timeout=300)
    assert process.returncode in (0, -signal.SIGTERM)
    assert not (home / "server.json").exists()
    with connect(load_settings(home)) as service:  # nobody serves: the store opens in this process
        assert isinstance(service, MemoryService)
        for memory_id, text in acknowledged:
            assert service.get(ACME, memory_id).content == text
        service.drain()  # what the stopped worker left, leased by a process that is gone, is claimable now
        assert service.outbox_counts().get("pending", 0) == 0 and not service.outbox_counts().get("dead")
        assert service.counts(ACME)["pending_embeddings"] == 0 and service.counts(ACME)["turns"] == 240
        assert all(report.ok for report in service.verify("acme"))


def test_a_crashed_server_leaves_a_file_that_clients_see_through(tmp_path: Path) -> None:
    home = tmp_path / "home"
    process = start_server(home, "--no-schedules")
    wait_until_serving(home, process)
    assert cli(home, "add", "Alex owns a red bike", "--tenant", "acme", "--user", "alex").returncode == 0
    process.kill()
    process.wait()
    assert read_server_info(home) is not None  # stale: nobody answers at its address
    recalled = cli(home, "recall", "bike", "--tenant", "acme", "--user", "alex", "--json")
    assert recalled.returncode == 0 and "red bike" in recalled.stdout


def _quack(uri: str, token: str) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    for name in ("httpfs", "quack"):
        duckdb_extensions.import_extension(name, con=con)
        con.execute(f"LOAD {name}")
    con.execute(f"CREATE SECRET (TYPE quack, TOKEN '{token}')")
    con.execute(f"ATTACH '{uri}' AS mf (READ_ONLY)")
    return con


def test_a_purge_while_serving_rewrites_the_file_and_analysts_attach_again(tmp_path: Path) -> None:
    """The purge copies the DuckDB file afresh under the running server (no purged bytes left in its
    free blocks); the server keeps answering, and the SQL endpoint is served again at its address."""
    home = tmp_path / "home"
    with served(home):  # its clean stop checkpoints: the rows are in the file itself, not only its log
        assert cli(home, "add", "Alex prefers green tea", "--tenant", "acme", "--user", "alex").returncode == 0
        assert cli(home, "add", "The vault code of Umbral Ltd is QX-771-ZETA", "--tenant", "umbral",
                   "--user", "ops").returncode == 0
    assert b"QX-771-ZETA" in (home / "mnemoflow.duckdb").read_bytes()
    with served(home) as info:
        assert "QX-771-ZETA" in _quack(info.quack_uri, info.quack_token).execute(
            "SELECT string_agg(content) FROM mf.memories").fetchone()[0]
        gone = cli(home, "tenant", "delete", "umbral", "--yes")
        assert gone.returncode == 0, gone.stderr
        assert b"QX-771-ZETA" not in (home / "mnemoflow.duckdb").read_bytes()
        con = _quack(info.quack_uri, info.quack_token)
        assert con.execute("SELECT content FROM mf.memories").fetchall() == [("Alex prefers green tea",)]
        recalled = cli(home, "recall", "what does Alex drink?", "--tenant", "acme", "--user", "alex", "--json")
        assert recalled.returncode == 0 and "green tea" in recalled.stdout
        assert cli(home, "verify").returncode == 0


def test_analysts_read_the_live_store(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with served(home) as info:
        assert info.quack_uri and info.quack_token
        assert cli(home, "add", "Alex prefers green tea", "--tenant", "acme", "--user", "alex").returncode == 0
        con = _quack(info.quack_uri, info.quack_token)
        assert con.execute("SELECT content FROM mf.memories").fetchall() == [("Alex prefers green tea",)]
        with pytest.raises(duckdb.Error, match="read-only"):
            con.execute("INSERT INTO mf.store_state VALUES ('planted', 'by an analyst')")
        with pytest.raises(duckdb.Error, match="Authentication failed"):
            _quack(info.quack_uri, "not-the-token")

        rows = cli(home, "sql", "SELECT tenant_id, content FROM memories", "--json")
        assert [json.loads(line) for line in rows.stdout.splitlines()] == [
            {"tenant_id": "acme", "content": "Alex prefers green tea"}]
        refused = cli(home, "sql", "UPDATE memories SET content = 'x'")
        assert refused.returncode == 2 and "read-only" in refused.stderr  # bad input: one line
        snapshot = cli(home, "snapshot", "--out", str(tmp_path / "snap"))
        assert snapshot.returncode == 0, snapshot.stderr
    copied = duckdb.connect().execute(f"SELECT content FROM '{tmp_path / 'snap' / 'memories.parquet'}'").fetchall()
    assert copied == [("Alex prefers green tea",)]
    assert not (tmp_path / "snap" / "api_keys.parquet").exists()


def _mcp_agent(url: str, key: str, n: int) -> int:
    """An agent over MCP: writes one memory and recalls it; 200 when both worked."""
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> int:
        client = Client(streamable_http_client(f"{url}/mcp", http_client=httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {key}"}, timeout=300)))
        async with client:
            added = await client.call_tool("add_memory", {"text": f"Mia's badge {n} opens door {n}", "user_id": "mia"})
            recalled = await client.call_tool("recall", {"query": f"badge {n}", "user_id": "mia"})
        return 200 if not added.is_error and not recalled.is_error else 500

    return anyio.run(main)


def test_many_clients_at_once_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    """Parallel CLI ingests, HTTP writes and recalls, MCP agents, an analyst's SQL and a Prefect flow,
    on one home."""
    home = tmp_path / "home"
    inbox = tmp_path / "inbox"
    for n in range(6):
        folder = inbox / f"batch{n}"
        folder.mkdir(parents=True)
        for m in range(5):
            (folder / f"note{m}.md").write_text(f"# Note {n}.{m}\n\nThe locker code for room {n}{m} is {n}{m}{n}{m}.\n")
    with served(home) as info:
        with connect(load_settings(home)) as service:
            key = service.create_api_key("acme")[1]
        http = httpx.Client(base_url=info.url, headers={"Authorization": f"Bearer {key}"}, timeout=300)

        def ingest(n: int) -> int:
            done = cli(home, "ingest", str(inbox / f"batch{n}"), "--tenant", "acme", "--user", f"u{n % 2}")
            assert done.returncode == 0, done.stderr
            return done.returncode

        def write(n: int) -> int:
            return http.post("/v1/memories", json={"user_id": "alex", "text": f"Alex's parcel {n} arrives on day {n}"}
                             ).status_code

        def read(n: int) -> int:
            return http.post("/v1/recall", json={"user_id": "alex", "query": f"parcel {n}"}).status_code

        def flow() -> int:
            from mnemoflow.flows.ingest import ingest_flow

            result = ingest_flow(paths=[str(inbox / "batch5")], tenant_id="acme", user_id="flow", home=str(home))
            return 0 if not result["errors"] else 1

        def analyst(n: int) -> int:
            assert info.quack_uri and info.quack_token
            con = _quack(info.quack_uri, info.quack_token)
            try:
                counted = con.execute("SELECT count(*) FROM mf.memories WHERE tenant_id = 'acme'").fetchone()
            finally:
                con.close()
            return 200 if counted is not None else 500

        with ThreadPoolExecutor(max_workers=8) as pool:
            jobs = [pool.submit(ingest, n) for n in range(5)] + [pool.submit(write, n) for n in range(20)]
            jobs += [pool.submit(read, n) for n in range(20)] + [pool.submit(flow)]
            jobs += [pool.submit(_mcp_agent, info.url, key, n) for n in range(6)]
            jobs += [pool.submit(analyst, n) for n in range(6)]
            results = [j.result() for j in jobs]
        assert results[:5] == [0] * 5 and set(results[5:45]) == {200} and results[45] == 0
        assert set(results[46:]) == {200}  # MCP agents and SQL readers
        with connect(load_settings(home)) as service:
            documents = service.sql("SELECT tenant_id, user_id, uri, count(*) FROM source_documents "
                                    "GROUP BY ALL HAVING count(*) > 1").rows
            assert documents == []  # nothing twice
            counts = {u: service.counts(Scope("acme", u)) for u in ("u0", "u1", "flow", "alex")}
            assert counts["u0"]["documents"] == 15 and counts["u1"]["documents"] == 10  # nothing lost
            assert counts["flow"]["documents"] == 5 and counts["alex"]["memories"] == 20
            assert service.counts(Scope("acme", "mia"))["memories"] == 6
            assert all(report.ok for report in service.verify("acme"))
