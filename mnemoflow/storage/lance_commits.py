"""How a LanceDB write meets other writers and an object store out of reach: a conflict with another
process's commit is retried on the latest version; an unreachable bucket is `VectorsUnavailableError`,
said in the words a person can act on."""

from __future__ import annotations

import functools
import random
import re
import time
from collections.abc import Callable
from typing import Any

from mnemoflow.errors import VectorsUnavailableError


def object_store_reason(exc: BaseException) -> str:
    """The part of an object store's error a person can act on (its S3 error code, a refused connection)."""
    text = str(exc)
    if code := re.search(r"<Code>(\w+)</Code>", text):
        return code.group(1)
    for known in ("Connection refused", "error sending request", "dns error", "timed out", "InvalidAccessKeyId",
                  "SignatureDoesNotMatch", "AccessDenied"):
        if known.lower() in text.lower():
            return known
    return text.splitlines()[0][:200] if text else type(exc).__name__


COMMIT_RETRIES = 8  # another process committing first (a shared bucket) is retried on top of its version


_UNREACHABLE = ("error sending request", "connection refused", "dns error", "timed out", "retryerror",
                "connection reset", "broken pipe", "operation timed out", "service unavailable")


def reachable(method: Callable[..., Any]) -> Callable[..., Any]:
    """On a bucket, a failure to reach it is `VectorsUnavailableError` (callers wait or fall back); any
    other failure, or any failure of a local folder, is raised as it came."""

    @functools.wraps(method)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except VectorsUnavailableError:
            raise
        except Exception as exc:  # noqa: BLE001  (object_store errors reach Python as OSError, ValueError, ...)
            if self.remote and any(s in str(exc).lower() for s in _UNREACHABLE):
                raise VectorsUnavailableError(
                    f"the vectors at {self.location} are unavailable: {object_store_reason(exc)}") from None
            raise

    return guarded


def commit_conflict(exc: BaseException) -> bool:
    """Another writer's commit came first (Lance's "Retryable commit conflict" and its incompatible kin), or
    Lance panicked while rebasing onto it: lance 13's conflict resolver can panic when several processes
    commit to one table at once (tests/storage/test_shared_store.py, in CI), and nothing of the attempt
    was committed. A panic reaches Python as pyo3's `PanicException` (a BaseException) when raised in a
    call, or as pyo3-async-runtimes' `RustPanic` when raised in the future a call waits on."""
    return panicked(exc) or "commit conflict" in str(exc).lower()


def panicked(exc: BaseException) -> bool:
    """Whether `exc` is a Rust panic, in either of the two types it reaches Python as."""
    return type(exc).__name__ in ("PanicException", "RustPanic")


def retried_writes(method: Callable[..., Any]) -> Callable[..., Any]:
    """Run a write on a table under that table's lock: in a server the outbox worker and the request
    threads write the same tables, and a compaction preempted by a concurrent update fails outright
    ("Retryable commit conflict") instead of waiting. Reads take no lock. Other processes writing the
    same bucket cannot take this lock: a conflict with one of them is retried on the table's latest
    version, a few times, with a random pause."""

    @functools.wraps(method)
    def locked(self: Any, spec: Any, *args: Any, **kwargs: Any) -> Any:
        with self._writer(spec):
            for attempt in range(COMMIT_RETRIES):
                try:
                    return method(self, spec, *args, **kwargs)
                except BaseException as exc:  # noqa: BLE001  (plain errors, and Rust panics; only conflicts retry)
                    if not commit_conflict(exc) or attempt == COMMIT_RETRIES - 1:
                        raise
                    self.latest(spec, reopen=panicked(exc))
                    time.sleep(random.uniform(0.05, 0.2) * (attempt + 1))
            raise AssertionError("unreachable")

    return locked
