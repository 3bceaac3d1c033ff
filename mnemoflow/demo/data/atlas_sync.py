"""Nightly syncs of the Atlas third-party APIs into the event tables."""

import random

MAX_DELAY_S = 300.0


def backoff_delay(attempt: int, base_s: float = 2.0) -> float:
    """Exponential backoff with jitter: 2, 4, 8, ... seconds, capped at five minutes.

    Third-party APIs rate-limit the nightly syncs; waiting longer after each failure
    keeps us under their limits without giving up on a transient error.
    """
    delay = min(MAX_DELAY_S, base_s * 2 ** (attempt - 1))
    return delay * random.uniform(0.8, 1.2)


class SyncWindow:
    """The nightly window the syncs run in: 01:00 to 04:00 Lisbon time."""

    start_hour = 1
    end_hour = 4

    def contains(self, hour: int) -> bool:
        return self.start_hour <= hour < self.end_hour
