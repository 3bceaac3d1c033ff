"""Liveness on a shared store: a process that leases outbox jobs says every few seconds that it is alive,
so that when it dies (SIGKILL, a lost machine) the jobs it held are taken over after three silent beats
instead of when their leases run out; a clean stop frees them at once."""

from __future__ import annotations

import logging
import os
import socket
import threading

from mnemoflow.errors import MnemoflowError
from mnemoflow.storage.outbox import worker_id
from mnemoflow.storage.postgres import Postgres
from mnemoflow.timeutil import utcnow

log = logging.getLogger("mnemoflow.storage")

SILENT_BEATS = 3  # a holder silent this many beats is taken for dead


class Heartbeat:
    def __init__(self, postgres: Postgres, every_s: float, role: str = "client") -> None:
        self._postgres = postgres
        self.every_s = every_s
        self.role = role
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()

    @property
    def silent_after_s(self) -> float:
        return SILENT_BEATS * self.every_s

    def ensure_started(self) -> None:
        """Beat now and from now on (the first claim of a process starts it)."""
        with self._guard:
            if self._thread is not None:
                return
            self._beat()
            self._thread = threading.Thread(target=self._run, name="mnemoflow-heartbeat", daemon=True)
            self._thread.start()

    def _beat(self) -> None:
        self._postgres.beat(worker_id(), self.role, socket.gethostname(), os.getpid(), utcnow())

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            try:
                self._beat()
            except MnemoflowError as exc:  # PostgreSQL restarting: the next beat tries again
                log.warning("heartbeat: %s", exc)

    def stop(self) -> None:
        """Stop beating and free this process's leases (it is leaving cleanly)."""
        with self._guard:
            if self._thread is None:
                return
            self._stop.set()
            self._thread.join(timeout=self.every_s + 1)
            self._thread = None
        try:
            self._postgres.leave(worker_id())
        except MnemoflowError as exc:
            log.warning("heartbeat: could not free this process's leases: %s", exc)
