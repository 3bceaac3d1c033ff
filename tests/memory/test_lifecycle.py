"""The retention score's parts, each on its own, and the decisions decay draws from them."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import pytest

from mnemoflow.memory.lifecycle import (
    RetentionParams,
    age_days,
    decay,
    log_factor,
    retention,
    salience_factor,
)
from mnemoflow.storage.lifecycle import DecayInput

NOW = datetime(2025, 3, 1, 12, 0)
PARAMS = RetentionParams(half_life_days=30.0, access_weight=0.5, hotness_weight=0.5, archive_threshold=0.05,
                         immune_salience=0.9)


def memory(memory_id: str = "m", *, salience: float = 0.3, days_old: float = 0.0, accessed_days_ago: float | None = None,
           accesses: int = 0, reinforcement: int = 0, pinned: bool = False, heat: float = 0.0) -> DecayInput:
    accessed = NOW - timedelta(days=accessed_days_ago) if accessed_days_ago is not None else None
    return DecayInput(memory_id, salience, NOW - timedelta(days=days_old), accessed, accesses, reinforcement, pinned,
                      heat)


def test_a_new_memory_starts_whole_and_halves_every_half_life() -> None:
    assert retention(memory(), NOW, PARAMS).score == pytest.approx(1.0)
    plain = memory(salience=0.5, days_old=30)  # salience 0.5: factor 1, so the half-life is the base
    assert retention(plain, NOW, PARAMS).half_life_days == pytest.approx(30.0)
    assert retention(plain, NOW, PARAMS).score == pytest.approx(0.5)
    assert retention(memory(salience=0.5, days_old=60), NOW, PARAMS).score == pytest.approx(0.25)


def test_salience_sets_how_long_a_memory_lasts() -> None:
    assert salience_factor(0.0) == 0.5 and salience_factor(1.0) == 1.5
    assert salience_factor(-3) == 0.5 and salience_factor(7) == 1.5  # clamped to [0, 1]
    low, high = (retention(memory(salience=s, days_old=60), NOW, PARAMS).score for s in (0.1, 0.8))
    assert low < high


def test_age_counts_from_the_last_access_and_never_from_the_event() -> None:
    assert age_days(memory(days_old=100), NOW) == pytest.approx(100)
    assert age_days(memory(days_old=100, accessed_days_ago=3), NOW) == pytest.approx(3)
    assert age_days(memory(days_old=-1), NOW) == 0  # a clock a little ahead never makes a memory stronger


def test_accesses_and_restatements_lengthen_the_half_life_logarithmically() -> None:
    assert log_factor(0, 0.5) == 1.0
    assert log_factor(math.e - 1, 0.5) == pytest.approx(1.5)
    assert log_factor(10, 0.0) == 1.0  # weight 0: accesses do not count
    unused = retention(memory(days_old=90), NOW, PARAMS).score
    used = retention(memory(days_old=90, accesses=4), NOW, PARAMS).score
    said_again = retention(memory(days_old=90, reinforcement=4), NOW, PARAMS).score
    assert unused < used == pytest.approx(said_again)


def test_a_memory_about_hot_entities_decays_slower() -> None:
    assert log_factor(0.0, 0.5) == 1.0
    assert log_factor(9.0, 0.5) > log_factor(1.0, 0.5) > 1.0
    cold = retention(memory(days_old=90), NOW, PARAMS).score
    hot = retention(memory(days_old=90, heat=6.0), NOW, PARAMS).score
    assert hot > cold


def test_decay_archives_what_fell_under_the_threshold_except_pinned_and_salient_ones() -> None:
    batch = [memory("fresh", days_old=1), memory("stale", days_old=400), memory("pinned", days_old=400, pinned=True),
             memory("salient", salience=0.95, days_old=4000), memory("used", days_old=400, accessed_days_ago=2)]
    scores, archived = decay(batch, NOW, PARAMS)
    assert set(scores) == {m.memory_id for m in batch}
    assert archived == ["stale"]
    assert scores["pinned"] < PARAMS.archive_threshold  # scored like any other, but immune
    assert scores["fresh"] > 0.9


def test_the_threshold_is_reached_after_a_predictable_time() -> None:
    """With the defaults an ordinary memory (salience 0.3: half-life 24 days) goes after log2(20) half-lives."""
    days = 24 * math.log2(1 / 0.05)
    assert decay([memory("m", days_old=days - 1)], NOW, PARAMS)[1] == []
    assert decay([memory("m", days_old=days + 1)], NOW, PARAMS)[1] == ["m"]
