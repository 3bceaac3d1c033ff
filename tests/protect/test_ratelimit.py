"""Token buckets per key and kind, on a clock the test moves."""

from __future__ import annotations

import pytest

from mnemoflow.config import load_settings
from mnemoflow.errors import RateLimitedError
from mnemoflow.protect.ratelimit import InProcessLimiter, create_rate_limiter, enforce


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_the_rate_and_each_bucket_on_its_own(tmp_path) -> None:
    settings = load_settings(tmp_path / "home", rate_limit_per_s=4, rate_limit_burst=3,
                             tenants={"vip": {"rate_limit_per_s": 0}, "tight": {"rate_limit_burst": 1}})
    clock = Clock()
    limiter = InProcessLimiter(settings.rate_limit, clock)
    assert [limiter.take("k1", "acme", "read") for _ in range(3)] == [None, None, None]
    assert limiter.take("k1", "acme", "read") == pytest.approx(0.25)  # empty: one token in 1/4 s
    assert limiter.take("k1", "acme", "write") is None  # writes have a bucket of their own
    assert limiter.take("k2", "acme", "read") is None  # and so does every other key
    clock.now += 0.5  # two tokens back
    assert [limiter.take("k1", "acme", "read") for _ in range(3)][:2] == [None, None]
    assert all(limiter.take("k3", "vip", "read") is None for _ in range(50))  # the tenant's own: no limit
    assert limiter.take("k4", "tight", "read") is None and limiter.take("k4", "tight", "read") is not None
    with pytest.raises(RateLimitedError, match="retry in") as refused:
        enforce(limiter, "k4", "tight", "read")
    assert refused.value.kind == "read" and 0 < refused.value.retry_after_s <= 0.25


def test_no_limit_by_default(tmp_path) -> None:
    limiter = create_rate_limiter(load_settings(tmp_path / "home"))
    assert all(limiter.take("k", "t", "write") is None for _ in range(1000))
