"""Evaluation results: one `eval_runs` row per run of a suite (its configuration and headline
figures) and `eval_results` rows per item and metric, the headline figures among them with item_id
'' so that `eval_trends` (a view) shows every figure's course over the runs with plain SQL."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mnemoflow.reports import EvalRunInfo, QualityFailure, QualityRunInfo
from mnemoflow.storage import batch
from mnemoflow.storage.lance_index import sql_in
from mnemoflow.storage.room import Room
from mnemoflow.storage.scope import tenant
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
        *, at: datetime | None = None, report_html: str | None = None,
    ) -> str:
        """Store one run: `summary` (metric -> value) is its headline figures, `rows` the items',
        `report_html` its self-contained report page. Returns the run id."""
        run_id = f"ev_{uuid.uuid4().hex}"
        headline = [EvalRow(RUN_LEVEL, metric, value) for metric, value in summary.items()]
        with self._db.tx() as con:
            con.execute("INSERT INTO eval_runs (run_id, suite, config, summary, created_at, report_html) "
                        "VALUES (?, ?, ?, ?, ?, ?)", [run_id, suite, json.dumps(config, default=str),
                                                     json.dumps(summary), at or utcnow(), report_html])
            batch.insert(con, "eval_results", ["run_id", "item_id", "budget", "metric", "value", "category"],
                         [[run_id, r.item_id, r.budget, r.metric, r.value, r.category] for r in headline + rows])
        return run_id

    def eval_runs(self, *, limit: int = 20) -> list[EvalRunInfo]:
        """The latest evaluation runs, newest first."""
        with self._db.read() as con:
            rows = con.execute("SELECT run_id, suite, created_at, summary, report_html IS NOT NULL FROM eval_runs "
                               "ORDER BY created_at DESC, run_id LIMIT ?", [limit]).fetchall()
        return [EvalRunInfo(run_id=r[0], suite=r[1], created_at=r[2], summary=json.loads(r[3]), has_report=r[4])
                for r in rows]

    def eval_report(self, run_id: str) -> str | None:
        """An evaluation run's HTML report page, if it has one."""
        with self._db.read() as con:
            row = con.execute(f"SELECT report_html FROM eval_runs WHERE {sql_in('run_id', [run_id])}").fetchone()
        return row[0] if row else None

    def quality_runs(self, tenant_id: str, *, limit: int = 10) -> list[QualityRunInfo]:
        """The latest quality-check runs of one tenant (not those of the whole store: their failing rows
        name other tenants'), newest first, with the expectations that failed."""
        within, params = tenant(tenant_id)
        with self._db.read() as con:
            runs = con.execute(f"SELECT run_id, max(run_at) AS latest, count(*), count(*) FILTER (WHERE NOT success) "
                               f"FROM quality_runs WHERE {within} GROUP BY run_id ORDER BY latest DESC, run_id LIMIT ?",
                               [*params, limit]).fetchall()
            failed = con.execute(f"SELECT run_id, suite, expectation, unexpected_count, failing_ids FROM quality_runs "
                                 f"WHERE {within} AND NOT success AND {sql_in('run_id', [r[0] for r in runs])} "
                                 "ORDER BY suite, expectation", params).fetchall() if runs else []
        failures: dict[str, list[QualityFailure]] = {}
        for run_id, suite, expectation, count, ids in failed:
            failures.setdefault(run_id, []).append(QualityFailure(suite=suite, expectation=expectation,
                                                                  unexpected_count=count, failing_ids=list(ids or [])))
        return [QualityRunInfo(run_id=r[0], run_at=r[1], expectations=r[2], failed=r[3],
                               failures=failures.get(r[0], [])) for r in runs]
