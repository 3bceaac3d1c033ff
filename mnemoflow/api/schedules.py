"""The server's schedules: the maintenance jobs and the configured sources' syncs as served Prefect
deployments (a Prefect `Runner` in a thread of the server).

Prefect schedules need a Prefect server; with none configured (`prefect_api_url`), one is started
for the home (`prefect server start`, its database under `<home>/prefect`). Scheduled runs execute
in subprocesses; their flows find this home's server (`server.json`) and send it the work.

Stopping takes a bounded time (`stop(timeout)`). The deployments are paused on the way out only on a
configured Prefect server, which goes on scheduling while nobody serves them; a server started here
stops with them, so pausing them (a call per deployment) would only slow the stop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mnemoflow.config import Settings, prefect_server_environment
from mnemoflow.errors import ConfigError

log = logging.getLogger("mnemoflow.serve")
PREFECT_START_TIMEOUT_S = 180.0


class Schedules:
    """A running Runner (and the Prefect server started for it, if any)."""

    def __init__(self, settings: Settings, on_ready: Callable[[str, list[str]], None] | None = None) -> None:
        self._settings = settings
        self._on_ready = on_ready
        self._prefect: subprocess.Popen[bytes] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: Any = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mnemoflow-schedules", daemon=True)
        self.api_url: str | None = settings.prefect_api_url
        self.deployments: list[str] = []
        self.error: str | None = None

    def start(self) -> None:
        self._thread.start()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """True once the deployments are served (for tests and the one real run)."""
        return self._ready.wait(timeout)

    def _run(self) -> None:
        try:
            if self.api_url is None:
                self.api_url = self._start_prefect_server()
            from prefect.settings import PREFECT_API_URL, temporary_settings

            self._loop = asyncio.new_event_loop()
            # the runner's client, and its flow-run subprocesses (the runner passes its settings on)
            with temporary_settings(updates={PREFECT_API_URL: self.api_url}):
                self._loop.run_until_complete(self._serve())
        except Exception as exc:  # noqa: BLE001  (schedules are one part: the server goes on without them)
            self.error = f"{type(exc).__name__}: {exc}"
            log.warning("schedules stopped: %s", self.error)
            self._ready.set()

    def _start_prefect_server(self) -> str:
        from mnemoflow.api.server import free_port

        home = self._settings.home / "prefect"
        home.mkdir(parents=True, exist_ok=True)
        port = free_port("127.0.0.1")
        env = prefect_server_environment(home)
        with (home / "server.log").open("ab") as logfile:
            self._prefect = subprocess.Popen(
                [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                env=env, stdout=logfile, stderr=subprocess.STDOUT, start_new_session=True)
        url = f"http://127.0.0.1:{port}/api"
        _wait_for(url, self._prefect, PREFECT_START_TIMEOUT_S, home / "server.log")
        return url

    async def _serve(self) -> None:
        from prefect.runner import Runner

        from mnemoflow.flows.maintenance import maintain_flow
        from mnemoflow.flows.sync import sync_flow
        from mnemoflow.maintenance import jobs

        home = str(self._settings.home)
        self._runner = Runner(name=f"mnemoflow-{_slug(self._settings.home)}", query_seconds=5,
                              pause_on_shutdown=self._prefect is None)
        for name, job in jobs().items():
            await self._runner.aadd_flow(maintain_flow, name=f"maintain-{name}", cron=job.schedule,
                                         parameters={"job": name, "home": home}, description=job.description)
            self.deployments.append(f"maintain-{name}")
        for name, source in sorted(self._settings.sources.items()):
            if source.schedule:
                await self._runner.aadd_flow(sync_flow, name=f"sync-{name}", cron=source.schedule,
                                             parameters={"source": name, "home": home})
                self.deployments.append(f"sync-{name}")
        self._ready.set()
        if self._on_ready is not None and self.api_url is not None:
            self._on_ready(self.api_url, self.deployments)
        await self._runner.start(webserver=False)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop serving the deployments and the Prefect server started for them, within `timeout`
        seconds: that server gets SIGTERM as the runner stops and SIGKILL at the deadline (its
        SQLite database is crash-safe). A runner still pausing deployments then goes down with the
        process (it runs in a daemon thread)."""
        deadline = time.monotonic() + timeout

        def left() -> float:
            return max(0.0, deadline - time.monotonic())

        if self._runner is not None and self._loop is not None and self._runner.started:
            stopping = asyncio.run_coroutine_threadsafe(self._runner.astop(), self._loop)
            try:
                stopping.result(timeout=left())
            except Exception as exc:  # noqa: BLE001  (a timeout or a failing stop: the rest still stops)
                log.warning("schedules: the runner did not stop cleanly (%s)", type(exc).__name__)
        if self._prefect is not None:
            self._signal_prefect(signal.SIGTERM)
        self._thread.join(timeout=left())
        if self._prefect is not None:
            try:
                self._prefect.wait(timeout=left())
            except subprocess.TimeoutExpired:
                self._signal_prefect(signal.SIGKILL)
                self._prefect.wait()

    def _signal_prefect(self, sig: int) -> None:
        """The Prefect server and anything it started (it runs in a session of its own)."""
        assert self._prefect is not None
        try:
            os.killpg(self._prefect.pid, sig)
        except ProcessLookupError:  # gone already
            pass


def _slug(home: Path) -> str:
    import hashlib

    return hashlib.sha256(str(home).encode()).hexdigest()[:10]


def _wait_for(url: str, process: subprocess.Popen[bytes], timeout: float, logfile: Path) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ConfigError(f"the Prefect server exited with {process.returncode} (see {logfile})")
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise ConfigError(f"the Prefect server did not answer within {timeout:.0f} s (see {logfile})")


def start_schedules(settings: Settings, on_ready: Callable[[str, list[str]], None] | None = None) -> Schedules:
    """Serve the deployments in a thread; `on_ready(api_url, deployment names)` once they are served."""
    schedules = Schedules(settings, on_ready)
    schedules.start()
    return schedules
