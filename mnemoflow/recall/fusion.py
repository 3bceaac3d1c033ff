"""Weighted reciprocal rank fusion: ranks, not raw scores, so BM25 and cosine need no calibration."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Fused:
    key: tuple[str, str]  # (target, id)
    score: float = 0.0
    ranks: dict[str, int] = field(default_factory=dict)
    raw: dict[str, float] = field(default_factory=dict)


def rrf(
    ranked: dict[str, list[tuple[tuple[str, str], float]]], weights: dict[str, float], k: int
) -> list[Fused]:
    """Fuse ranked lists of ((target, id), raw score); best first, ties broken by id for determinism."""
    fused: dict[tuple[str, str], Fused] = {}
    for signal, hits in ranked.items():
        weight = weights.get(signal, 0.0)
        for rank, (key, raw) in enumerate(hits, start=1):
            item = fused.setdefault(key, Fused(key))
            item.score += weight / (k + rank)
            item.ranks[signal] = rank
            item.raw[signal] = raw
    return sorted(fused.values(), key=lambda f: (-f.score, f.key))
