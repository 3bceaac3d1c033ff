"""Evidence recall as DESIGN.md defines it, computable from report.json alone.

An item credits only the turns it was built from (its `cites`), and at most
max(1, tokens // 20) of them, in its own order: a short summary cannot claim a
whole session. A question's recall is the share of its evidence ids credited; its session
recall (LongMemEval's answer sessions) the share of its sessions with a credited turn.
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


def credited_sessions(credited: set[str]) -> set[str]:
    """The sessions of credited turns: the part of a dia_id before the colon ("S3:7" -> "S3")."""
    return {turn.split(":")[0] for turn in credited}


def evidence_recall(evidence: Iterable[str], credited: set[str]) -> float:
    wanted = set(evidence)
    return len(wanted & credited) / len(wanted) if wanted else 0.0


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


RECALLS = ("evidence_recall", "session_recall")


def _means(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The mean of each recall the rows carry (session recall only where the suite has sessions)."""
    return {name: round(sum(r[name] for r in rows) / len(rows), 4) for name in RECALLS if name in rows[0]}


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per budget: mean evidence recall (and session recall where there is one), per category,
    latency p50/p95, mean context tokens."""
    by_budget: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        by_budget[r["budget"]].append(r)
    summary: dict[str, Any] = {}
    for budget, rows in sorted(by_budget.items()):
        categories: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in rows:
            categories[r["category"]].append(r)
        latencies = [r["latency_ms"] for r in rows]
        summary[str(budget)] = {
            **_means(rows),
            "questions": len(rows),
            "by_category": {c: {**_means(v), "questions": len(v)} for c, v in sorted(categories.items())},
            "latency_ms": {"p50": round(percentile(latencies, 50), 2), "p95": round(percentile(latencies, 95), 2)},
            "context_tokens_mean": round(sum(r["context_tokens"] for r in rows) / len(rows), 1),
        }
    return summary
