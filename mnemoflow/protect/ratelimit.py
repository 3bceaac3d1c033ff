"""Rate limits of the HTTP API and MCP: each API key has a token bucket for reads and one for writes,
sized by `rate_limit_burst` and refilled at `rate_limit_per_s` (a tenant's own values win,
`Settings.rate_limit`). Buckets are per key, so one tenant's burst never slows another's.

`RateLimiter` is the seam: `take(key_id, tenant_id, kind)` spends one request and answers None, or
how many seconds to wait. `InProcessLimiter` keeps the buckets in this process, which is right for
one server per store; `SharedLimiter` keeps them in a shared store, so the servers of a cluster
share each key's budget; `create_rate_limiter` is the one place that picks.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Literal, Protocol

from mnemoflow.config import Settings
from mnemoflow.errors import RateLimitedError

Kind = Literal["read", "write"]


class RateLimiter(Protocol):
    def take(self, key_id: str, tenant_id: str, kind: Kind) -> float | None:
        """Spend one request of the key's `kind` bucket: None when it may go on, else the seconds until
        the bucket holds a request again."""
        ...


class InProcessLimiter:
    """Token buckets in this process's memory, one per (key, kind)."""

    def __init__(self, limits: Callable[[str], tuple[float, int]], clock: Callable[[], float] = time.monotonic) -> None:
        self._limits = limits  # tenant -> (per second, burst)
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}  # (key, kind) -> (tokens, when)

    def take(self, key_id: str, tenant_id: str, kind: Kind) -> float | None:
        rate, burst = self._limits(tenant_id)
        if rate <= 0:
            return None
        with self._lock:
            now = self._clock()
            tokens, then = self._buckets.get((key_id, kind), (float(burst), now))
            tokens = min(float(burst), tokens + (now - then) * rate)
            if tokens >= 1.0:
                self._buckets[(key_id, kind)] = (tokens - 1.0, now)
                return None
            self._buckets[(key_id, kind)] = (tokens, now)
            return (1.0 - tokens) / rate


class SharedLimiter:
    """Token buckets in the shared store, so every server of a cluster spends from one budget per key
    (one atomic statement per request in PostgreSQL: refill by the time passed, take one if there is one)."""

    def __init__(self, limits: Callable[[str], tuple[float, int]], store: BucketStore) -> None:
        self._limits, self._store = limits, store

    def take(self, key_id: str, tenant_id: str, kind: Kind) -> float | None:
        rate, burst = self._limits(tenant_id)
        if rate <= 0:
            return None
        return self._store.take_rate_token(f"{key_id}:{kind}", rate, burst)


class BucketStore(Protocol):
    def take_rate_token(self, bucket: str, rate: float, burst: int) -> float | None: ...


def create_rate_limiter(settings: Settings, store: BucketStore | None = None) -> RateLimiter:
    """The limiter for these settings: in this process, or with a shared store in the store (the budget of
    a key is the same whichever server a request reaches)."""
    if store is not None and settings.store_url:
        return SharedLimiter(settings.rate_limit, store)
    return InProcessLimiter(settings.rate_limit)


def enforce(limiter: RateLimiter, key_id: str, tenant_id: str, kind: Kind) -> None:
    """RateLimitedError (saying when to retry) when the key's `kind` bucket is empty."""
    wait = limiter.take(key_id, tenant_id, kind)
    if wait is not None:
        raise RateLimitedError(f"rate limit: too many {kind}s for this API key; retry in {wait:.2f} s "
                               f"(Retry-After: {retry_after(wait)})", retry_after_s=math.ceil(wait * 1000) / 1000, kind=kind)


def retry_after(wait_s: float) -> int:
    """Retry-After in whole seconds (HTTP has no fractions), never 0 while the wait is not over."""
    return max(1, math.ceil(wait_s))
