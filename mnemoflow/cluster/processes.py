"""Starting and stopping the local cluster's processes: each in a session of its own (a signal to the
cluster command never reaches it), its output in a log file beside its state, and stopped by its pid."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from mnemoflow.errors import ConfigError


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def spawn(command: list[str], log: Path, env: dict[str, str] | None = None, cwd: Path | None = None) -> int:
    """Start `command` detached (its own session), stdout and stderr appended to `log`; returns its pid."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 env=env, cwd=cwd, start_new_session=True)
    return child.pid


def alive(pid: int | None) -> bool:
    """Whether `pid` runs (a zombie left by a child of this process counts as gone)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def reap() -> None:
    """Collect the exit status of any child that ended (so it is not left a zombie)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def stop(pid: int, sig: signal.Signals = signal.SIGTERM, timeout_s: float = 20.0) -> bool:
    """Send `sig`, wait for the process to end, then SIGKILL it; True when it had to be killed."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        reap()
        if not alive(pid):
            return False
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return False
    reap()
    return True


def wait_for(what: str, ready: Callable[[], bool], pid: int | None, log: Path | None, timeout_s: float) -> None:
    """Poll `ready()` until it holds; ConfigError naming `what` (and the end of its log) when the process
    ends first or the time runs out."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        reap()
        if pid is not None and not alive(pid):
            raise ConfigError(f"{what} ended while starting{_tail(log)}")
        if time.monotonic() > deadline:
            raise ConfigError(f"{what} did not answer within {timeout_s:.0f} s{_tail(log)}")
        time.sleep(0.2)


def port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def http_ok(url: str) -> bool:
    import httpx

    try:
        return httpx.get(url, timeout=2.0).status_code < 500
    except httpx.HTTPError:
        return False


def _tail(log: Path | None) -> str:
    if log is None or not log.exists():
        return ""
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()][-3:]
    return f" (see {log}: {' | '.join(lines)[-400:]})" if lines else f" (see {log})"
