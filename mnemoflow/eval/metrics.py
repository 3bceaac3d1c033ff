"""Evidence recall as DESIGN.md defines it, computable from report.json alone.

An item credits only the turns it was built from (its `cites`), and at most
max(1, tokens // 20) of them, in its own order: a short summary cannot claim a
whole session. A question's recall is the share of its evidence ids credited.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from typing import Any


def credited_turns(items: Iterable[dict[str, Any]]) -> set[str]:
    credited: set[str] = set()
    for item in items:
        credited.update(item["cites"][: max(1, item["tokens"] // 20)])
    return credited


def evidence_recall(evidence: Iterable[str], credited: set[str]) -> float:
    wanted = set(evidence)
    return len(wanted & credited) / len(wanted) if wanted else 0.0


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per budget: mean evidence recall, per category, latency p50/p95, mean context tokens."""
    by_budget: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        by_budget[r["budget"]].append(r)
    summary: dict[str, Any] = {}
    for budget, rows in sorted(by_budget.items()):
        categories: dict[str, list[float]] = defaultdict(list)
        for r in rows:
            categories[r["category"]].append(r["evidence_recall"])
        latencies = [r["latency_ms"] for r in rows]
        summary[str(budget)] = {
            "evidence_recall": round(sum(r["evidence_recall"] for r in rows) / len(rows), 4),
            "questions": len(rows),
            "by_category": {c: {"evidence_recall": round(sum(v) / len(v), 4), "questions": len(v)}
                            for c, v in sorted(categories.items())},
            "latency_ms": {"p50": round(percentile(latencies, 50), 2), "p95": round(percentile(latencies, 95), 2)},
            "context_tokens_mean": round(sum(r["context_tokens"] for r in rows) / len(rows), 1),
        }
    return summary
