"""Recall's weights, depths and signals as one object with named presets (search as data)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Signal = Literal["vector", "bm25"]
Target = Literal["memories", "chunks"]


class RecallConfig(BaseModel):
    """How recall gathers, fuses and packs candidates."""

    name: str
    signals: dict[Signal, float] = Field(description="Signals to run and their weight in the fusion.")
    targets: tuple[Target, ...] = Field(
        ("memories", "chunks"),
        description="What each signal searches; a signal's hits over all targets form one ranked list, "
        "so a lone weak memory cannot outrank the best chunk just by topping a list of its own.",
    )
    depth: int = Field(
        100, ge=1, description="Candidates each signal contributes per target (LoCoMo: 100 recalls as much as "
        "200; at 100k chunks it saves ~10 ms).",
    )
    rrf_k: int = Field(10, ge=1, description="Reciprocal-rank-fusion constant; small k trusts the top ranks.")
    speaker_factor: float = Field(
        0.5, gt=0, le=1,
        description="When the query names a conversation participant, turns spoken only by others are "
        "scaled by this (1 turns it off).",
    )
    group_sessions: bool = Field(
        True, description="Pack conversation turns under one date header per session instead of one per turn."
    )


PRESETS: dict[str, RecallConfig] = {
    # Measured on LoCoMo (bench/README.md): BM25 leads at the top ranks, the dense signal fills in.
    "default": RecallConfig(name="default", signals={"vector": 1.0, "bm25": 1.5}),
    # The two baselines the evaluation compares against, run through the same harness.
    "bm25": RecallConfig(name="bm25", signals={"bm25": 1.0}, rrf_k=60, speaker_factor=1.0, group_sessions=False),
    "rrf": RecallConfig(name="rrf", signals={"vector": 1.0, "bm25": 1.0}, rrf_k=60, speaker_factor=1.0,
                        group_sessions=False),
}


def preset(name: str) -> RecallConfig:
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown recall preset {name!r}; choose one of {', '.join(PRESETS)}") from None
