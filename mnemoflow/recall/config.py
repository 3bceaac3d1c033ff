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
    depth: int = Field(100, ge=1, description="Candidates each signal contributes per target.")
    rrf_k: int = Field(60, ge=1, description="Reciprocal-rank-fusion constant.")
    speaker_boost: float = Field(
        0.0, ge=0, description="Added to the fused score of a turn whose speaker the query names."
    )
    group_sessions: bool = Field(
        True, description="Pack conversation turns under one date header per session instead of one per turn."
    )


PRESETS: dict[str, RecallConfig] = {
    "default": RecallConfig(name="default", signals={"vector": 1.0, "bm25": 1.0}),
    # The two baselines the evaluation compares against, run through the same harness.
    "bm25": RecallConfig(name="bm25", signals={"bm25": 1.0}, group_sessions=False),
    "rrf": RecallConfig(name="rrf", signals={"vector": 1.0, "bm25": 1.0}, group_sessions=False),
}


def preset(name: str) -> RecallConfig:
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown recall preset {name!r}; choose one of {', '.join(PRESETS)}") from None
