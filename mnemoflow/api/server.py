"""`mnemoflow serve`: one process owns a home's store and serves everyone else.

It holds the DuckDB connection and runs, on one port, the tenant HTTP API (`/v1/...`, tenant
keys), the MCP server (`/mcp`, tenant keys) and the operator endpoint local clients use
(`/v1/rpc`, the local client token); beside them the outbox worker (memories and vectors for what
clients wrote), the maintenance and sync schedules (served Prefect deployments), and the Quack
endpoint analysts attach read-only. It writes its address and the local client token into
`<home>/server.json` (owner-only) and removes it on a clean stop.

SIGTERM or Ctrl-C stops it within two seconds (bench/startup.py measures it): it stops listening at
once (a client then opens the store itself, once it is free), the requests in flight get GRACE_S to
finish (one still running then is cancelled unanswered: nothing acknowledged is lost, and its
transaction either committed or did not), the schedules and the outbox worker stop alongside within
PARTS_S of the signal (an outbox batch still running is left to the next worker: its leases name
this process, so they are claimable at once), then the store is checkpointed and closed.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from starlette.routing import Route

from mnemoflow.config import Settings
from mnemoflow.errors import ConfigError, MnemoflowError
from mnemoflow.remote import ServerInfo, running_server, server_file, write_server_info
from mnemoflow.service import MemoryService

log = logging.getLogger("mnemoflow.serve")
GRACE_S = 0.8  # what requests in flight get after SIGTERM
PARTS_S = 1.2  # what the schedules and the outbox worker get to stop, counted from SIGTERM


@dataclass(frozen=True)
class Parts:
    """Which parts a server runs (`serve` runs them all; `serve http` the HTTP API alone)."""

    mcp: bool = True
    worker: bool = True
    quack: bool = True
    schedules: bool = True


class AlreadyServing(ConfigError):
    """Another server owns this home."""


def free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


class OutboxWorker:
    """Drains the outbox while the server runs, so a client's write with `wait=False` (or a sync)
    gets its memories and vectors without anyone running `mnemoflow worker`."""

    def __init__(self, service: MemoryService, poll_s: float) -> None:
        self._service, self._poll_s = service, poll_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mnemoflow-outbox", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if self._service.outbox_counts().get("pending", 0):
                    self._service.drain()
            except MnemoflowError as exc:  # an embedder that is down: try again at the next poll
                log.warning("outbox worker: %s", exc)
            except Exception:  # noqa: BLE001  (the worker must outlive a bad batch; the job records it)
                log.exception("outbox worker: unexpected failure")
            self._stop.wait(self._poll_s)

    def request_stop(self) -> None:
        """No batch after the one in hand."""
        self._stop.set()

    def join(self, timeout: float) -> bool:
        """Whether the worker stopped within `timeout` seconds (else it is still on its batch)."""
        self._thread.join(timeout)
        return not self._thread.is_alive()


def run_worker(settings: Settings, poll_s: float) -> None:
    """`mnemoflow worker --forever`: drain the outbox as work arrives until SIGTERM or SIGINT, then let
    the batch in hand finish and free this process's leases."""
    import signal

    stopping = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.set())
    with MemoryService(settings) as service:
        service.store.set_role("worker")
        worker = OutboxWorker(service, poll_s)
        worker.start()
        stopping.wait()
        worker.stop()


@dataclass
class Running:
    """What a server started, to stop in reverse order."""

    info: ServerInfo | None = None
    worker: OutboxWorker | None = None
    schedules: Any = None
    quack_uri: str | None = None
    quack_token: str | None = None
    notes: list[str] = field(default_factory=list)  # what it says on start ("quack: unavailable, ...")
    stopped: bool = False
    stopped_starting: bool = False  # no part starts once the server is stopping
    lock: threading.Lock = field(default_factory=threading.Lock)  # starting parts and stopping take turns
    winding: threading.Thread | None = None  # stops the schedules and the worker, from the signal on
    winding_lock: threading.RLock = field(default_factory=threading.RLock)  # also taken in the signal handler

    def wind_down(self) -> threading.Thread:
        """Start stopping the schedules and the outbox worker (once), in a thread of its own: the
        signal handler must not wait, and they stop while the requests in flight finish."""
        with self.winding_lock:
            if self.winding is None:
                self.winding = threading.Thread(target=self._wind_down, args=(time.monotonic() + PARTS_S,),
                                                name="mnemoflow-stop", daemon=True)
                self.winding.start()
            return self.winding

    def _wind_down(self, deadline: float) -> None:
        with self.lock:  # parts being started are started first
            self.stopped_starting = True
            worker, schedules = self.worker, self.schedules
        if worker is not None:
            worker.request_stop()
        if schedules is not None:
            schedules.stop(timeout=max(0.0, deadline - time.monotonic()))
        if worker is not None and not worker.join(max(0.0, deadline - time.monotonic())):
            log.warning("stopping: the outbox batch in hand is left to the next worker (its jobs are claimable)")


def build_app(service: MemoryService, token: str, url: str, parts: Parts, on_stop: Any = None) -> Any:
    """The ASGI app: tenant routes, the operator endpoint, and (with `parts.mcp`) the MCP server.
    `on_stop()` runs at shutdown, after the requests in flight have finished."""
    from mnemoflow.api.http import create_app, status_of
    from mnemoflow.api.rpc import rpc_router

    mcp = mcp_app = None
    if parts.mcp:
        from mnemoflow.api.mcp import build_mcp

        mcp = build_mcp(service, url=f"{url}/mcp")
        mcp_app = mcp.streamable_http_app(host=url.split("://", 1)[1].rsplit(":", 1)[0])

    @asynccontextmanager
    async def lifespan(_: Any) -> Any:
        try:
            if mcp is None:
                yield
            else:
                async with mcp.session_manager.run():
                    yield
        finally:
            if on_stop is not None:
                on_stop()

    app = create_app(service, lifespan=lifespan)
    app.include_router(rpc_router(service, token, status_of))
    if mcp_app is not None:  # /mcp and its auth metadata, path by path: a catch-all mount would answer
        # a method a route does not take with its own 404 instead of the router's 405
        for route in mcp_app.routes:
            app.router.routes.append(Route(route.path, mcp_app, methods=getattr(route, "methods", None)))
    return app


def serve(settings: Settings, *, host: str | None = None, port: int | None = None, parts: Parts = Parts(),
          on_ready: Any = None) -> None:
    """Run the server in this thread until SIGTERM or SIGINT; raises AlreadyServing when the home has
    one. `on_ready(info, notes)` is told the address once it listens."""
    import uvicorn

    host = host or settings.server_host
    port = settings.server_port if port is None else port
    if (other := running_server(settings)) is not None:
        raise AlreadyServing(f"a server already runs for {settings.home} at {other.url} (pid {other.pid})")
    service = MemoryService(settings)
    service.store.set_role("server")  # own the store before listening: a busy home fails here, clearly
    port = port or free_port(host)
    url = f"http://{host}:{port}"
    # a cluster's servers all accept the token its clients were given; alone, a server makes its own
    token = settings.server_token.get_secret_value() if settings.server_token else secrets.token_urlsafe(32)
    running = Running()
    app = build_app(service, token, url, parts, on_stop=lambda: _stop(service, settings, running))

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:  # the signal handler: stop listening, and
            super().handle_exit(sig, frame)                  # the parts alongside the requests in flight
            running.wind_down()

    server = Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on",
                                   timeout_graceful_shutdown=GRACE_S))

    def announce() -> None:
        """Once it listens: start the other parts, then tell clients where it is."""
        while not server.started and not server.should_exit:
            threading.Event().wait(0.05)
        with running.lock:
            if server.should_exit or running.stopped or running.stopped_starting:
                return
            _start_parts()
        if on_ready is not None:
            on_ready(running.info, running.notes)

    def _start_parts() -> None:
        # the model loads once, now, rather than in the first client's request
        threading.Thread(target=service.embedder.embed_query, args=("warm up",), daemon=True).start()
        shared = service.store.shared
        if parts.quack and settings.quack_enabled and not shared:
            _start_quack(service, settings, host, running)
        elif parts.quack and settings.quack_enabled:
            running.notes.append("SQL endpoint: not served on a shared store (attach its PostgreSQL database "
                                 "read-only, or run `mnemoflow sql`)")
        if parts.worker:
            running.worker = OutboxWorker(service, settings.server_outbox_poll_s)
            running.worker.start()
        running.info = ServerInfo(url=url, token=token, pid=os.getpid(), quack_uri=running.quack_uri,
                                  quack_token=running.quack_token)
        write_server_info(settings.home, running.info)
        if parts.schedules and settings.schedules_enabled and shared:
            running.notes.append("schedules: not run by a server of a shared store (each job would run once per "
                                 "server): deploy them to the cluster's Prefect server (`mnemoflow cluster up` does)")
        elif parts.schedules and settings.schedules_enabled:
            from mnemoflow.api.schedules import start_schedules

            def served(api_url: str, deployments: list[str]) -> None:  # clients can now run them by name
                running.info = replace(running.info, prefect_api_url=api_url, deployments=deployments)
                write_server_info(settings.home, running.info)

            try:
                running.schedules = start_schedules(settings, on_ready=served)
            except MnemoflowError as exc:
                running.notes.append(f"schedules: not running ({exc})")

    announcer = threading.Thread(target=announce, name="mnemoflow-announce", daemon=True)
    announcer.start()
    # SIGTERM and SIGINT: stop accepting, let the requests in flight finish (GRACE_S), then the app's
    # lifespan shutdown runs `_stop` (uvicorn re-raises the signal afterwards, so nothing may follow here)
    server.run()


def _start_quack(service: MemoryService, settings: Settings, host: str, running: Running) -> None:
    uri = f"quack:{host}:{settings.quack_port or free_port(host)}"
    token = secrets.token_urlsafe(24)
    try:
        service.store.serve_sql(uri, token)
    except ConfigError as exc:
        running.notes.append(f"SQL endpoint: not running ({exc})")
        return
    running.quack_uri, running.quack_token = uri, token


def _stop(service: MemoryService, settings: Settings, running: Running) -> None:
    """Reverse order: no new work, the schedules and the worker stopped (within PARTS_S of the signal),
    the store checkpointed and closed, the server file gone (clients fall back to opening the store
    themselves)."""
    running.wind_down().join(PARTS_S)  # already under way since the signal; bounded there
    with running.lock:
        if running.stopped:
            return
        running.stopped = True
        if running.quack_uri is not None:
            service.store.stop_sql(running.quack_uri)
        try:
            service.store.checkpoint()
        finally:
            service.close()
            if running.info is not None:
                server_file(settings.home).unlink(missing_ok=True)
