"""Retention: how much a memory is still worth keeping in default recall, and which ones decay archives.

A new memory starts at retention 1 and loses half of it every `half_life` days it goes unused:

    retention  = 0.5 ** (age_days / half_life_days)
    age_days   = days since the store learnt it or, later, since recall last returned it
    half_life  = decay_half_life_days
                 x (0.5 + salience)                          salience in [0, 1]: 0.5x to 1.5x
                 x (1 + decay_access_weight  * ln(1 + uses))  uses: recall accesses + restatements
                 x (1 + decay_hotness_weight * ln(1 + heat))  heat: the hottest entity it names, now

So salience sets how long a memory lasts, age wears it down, every use restarts the clock and
slows the wear, and a memory about what people talk about now lasts longer. Age counts from when
the store learnt it, not from when the event happened (a 2019 story told today is new to it).
Under `decay_archive_threshold` (0.05: about 4.3 half-lives unused) it is archived; pinned memories
and those at least `decay_immune_salience` salient never are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from mnemoflow.config import Settings
from mnemoflow.storage.lifecycle import DecayInput


@dataclass(frozen=True)
class RetentionParams:
    half_life_days: float
    access_weight: float
    hotness_weight: float
    archive_threshold: float
    immune_salience: float

    @classmethod
    def from_settings(cls, settings: Settings) -> RetentionParams:
        return cls(settings.decay_half_life_days, settings.decay_access_weight, settings.decay_hotness_weight,
                   settings.decay_archive_threshold, settings.decay_immune_salience)


@dataclass(frozen=True)
class Retention:
    """A memory's retention and the parts it was computed from (for reports and tests)."""

    memory_id: str
    age_days: float
    salience_factor: float
    access_factor: float
    hotness_factor: float
    half_life_days: float
    score: float
    immune: bool

    def archive(self, threshold: float) -> bool:
        return not self.immune and self.score < threshold


def salience_factor(salience: float) -> float:
    return 0.5 + min(1.0, max(0.0, salience))


def log_factor(amount: float, weight: float) -> float:
    """1 + weight x ln(1 + amount): how much uses (accesses, restatements) or heat lengthen a half-life."""
    return 1.0 + weight * math.log1p(max(amount, 0.0))


def age_days(memory: DecayInput, now: datetime) -> float:
    """Days since the store learnt the memory, or since recall last returned it when that is later."""
    last_used = max(memory.created_at, memory.last_accessed_at or memory.created_at)
    return max((now - last_used).total_seconds(), 0.0) / 86400


def retention(memory: DecayInput, now: datetime, params: RetentionParams) -> Retention:
    parts = (salience_factor(memory.salience), log_factor(memory.access_count + memory.reinforcement,
                                                           params.access_weight),
             log_factor(memory.heat, params.hotness_weight))
    half_life = params.half_life_days * math.prod(parts)
    age = age_days(memory, now)
    return Retention(memory.memory_id, age, *parts, half_life, 0.5 ** (age / half_life),
                     memory.pinned or memory.salience >= params.immune_salience)


def decay(memories: list[DecayInput], now: datetime, params: RetentionParams) -> tuple[dict[str, float], list[str]]:
    """Every memory's retention (rounded, as stored), and the ids decay archives."""
    scored = [retention(m, now, params) for m in memories]
    return ({r.memory_id: round(r.score, 6) for r in scored},
            [r.memory_id for r in scored if r.archive(params.archive_threshold)])
