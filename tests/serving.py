"""A real `mnemoflow serve` for tests: a subprocess on a free port, stopped with SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mnemoflow.config import load_settings
from mnemoflow.remote import ServerInfo, running_server

START_TIMEOUT_S = 180.0


def start_server(home: Path, *args: str, env: dict[str, str] | None = None,
                 log: Path | None = None) -> subprocess.Popen[str]:
    """The server's output goes to `log` when given (a long run fills a pipe nobody reads), else to pipes."""
    sink = log.open("a") if log else subprocess.PIPE
    return subprocess.Popen(
        [sys.executable, "-m", "mnemoflow.cli", "serve", "--home", str(home), "--port", "0", *args],
        stdout=sink, stderr=subprocess.STDOUT if log else subprocess.PIPE, text=True,
        env={**os.environ, **(env or {})})


def wait_until_serving(home: Path, process: subprocess.Popen[str], timeout: float = START_TIMEOUT_S) -> ServerInfo:
    settings = load_settings(home)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            said = process.stderr.read() if process.stderr else "(see its log)"
            raise AssertionError(f"serve exited with {process.returncode}: {said}")
        if (info := running_server(settings)) is not None:
            return info
        time.sleep(0.1)
    raise AssertionError(f"serve did not start within {timeout:.0f} s")


def stop_server(process: subprocess.Popen[str], timeout: float = 60.0) -> tuple[str, str]:
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=timeout)
    return out, err


@contextmanager
def served(home: Path, *args: str) -> Iterator[ServerInfo]:
    """`mnemoflow serve` for `home` (no schedules unless asked) while the block runs; its output is
    in `serve.log` beside the home."""
    process = start_server(home, *(args or ("--no-schedules",)), log=home.parent / "serve.log")
    try:
        yield wait_until_serving(home, process)
    finally:
        if process.poll() is None:
            stop_server(process)
