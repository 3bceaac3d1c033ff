"""The baselines a benchmark run is compared with, run through the same harness beside it.

As the foundation issue states them: BM25 over single turns, and a plain RRF (k=60) of BM25 and
MiniLM over single turns, each turn packed as `[session time] speaker: text`. Single turns means a
store of one chunk per turn: no neighbour context, no captions, no memories.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mnemoflow.recall import RecallConfig, preset

SINGLE_TURNS: dict[str, Any] = {"chat_context": "none", "chat_captions": False, "generate_memories": False}


@dataclass(frozen=True)
class Baseline:
    """How the baseline's store is built (settings overrides) and how it is asked (a recall preset)."""

    settings: dict[str, Any]
    recall: RecallConfig


BASELINES: dict[str, Baseline] = {
    "bm25": Baseline(SINGLE_TURNS, preset("bm25")),
    "rrf": Baseline(SINGLE_TURNS, preset("rrf")),
}


def parse_baselines(text: str) -> list[str]:
    """`--baselines rrf,bm25`; "none" (or nothing) runs none."""
    names = [part.strip() for part in text.split(",") if part.strip() and part.strip() != "none"]
    if unknown := [n for n in names if n not in BASELINES]:
        raise ValueError(f"--baselines: no baseline {unknown[0]!r}; one of: {', '.join(BASELINES)}, or none")
    return list(dict.fromkeys(names))
