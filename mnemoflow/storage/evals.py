"""Evaluation results: one `eval_runs` row per run of a suite (its configuration and headline
figures) and `eval_results` rows per item and metric, the headline figures among them with item_id
'' so that `eval_trends` (a view) shows every figure's course over the runs with plain SQL."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mnemoflow.storage import batch
from mnemoflow.storage.room import Room
from mnemoflow.timeutil import utcnow

RUN_LEVEL = ""  # the item_id of a run's headline figures


@dataclass(frozen=True)
class EvalRow:
    """One figure: a metric of one item (a question, a scenario, a probe) at a budget (0: none)."""

    item_id: str
    metric: str
    value: float | None
    budget: int = 0
    category: str | None = None


class EvalRuns(Room):
    def record_eval_run(
        self, suite: str, config: dict[str, Any], summary: dict[str, float | None], rows: list[EvalRow],
        *, at: datetime | None = None,
    ) -> str:
        """Store one run: `summary` (metric -> value) is its headline figures, `rows` the items'.
        Returns the run id."""
        run_id = f"ev_{uuid.uuid4().hex}"
        headline = [EvalRow(RUN_LEVEL, metric, value) for metric, value in summary.items()]
        with self._db.tx() as con:
            con.execute("INSERT INTO eval_runs VALUES (?, ?, ?, ?, ?)",
                        [run_id, suite, json.dumps(config, default=str), json.dumps(summary), at or utcnow()])
            batch.insert(con, "eval_results", ["run_id", "item_id", "budget", "metric", "value", "category"],
                         [[run_id, r.item_id, r.budget, r.metric, r.value, r.category] for r in headline + rows])
        return run_id
