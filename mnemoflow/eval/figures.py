"""Each suite's report as the figures `eval_runs` / `eval_results` keep: the headline metrics of a
run (metric -> value) and one row per item and metric, so a trend is a SQL query (`eval_trends`)."""

from __future__ import annotations

from typing import Any

from mnemoflow.eval.isolation import IsolationReport
from mnemoflow.eval.scenario_report import ScenarioReport
from mnemoflow.storage.evals import EvalRow

Figures = tuple[dict[str, float | None], list[EvalRow]]


def scenario_figures(report: ScenarioReport) -> Figures:
    e, r = report.extraction, report.recall
    summary: dict[str, float | None] = {
        "scenarios": report.scenarios_count, "extraction_precision": e.precision, "extraction_recall": e.recall,
        "kind_accuracy": e.kind_accuracy, "recall_check_pass_rate": r.pass_rate, "must_return_hit_rate": r.hit_rate,
        "stale_returned": r.stale_returned, "out_of_scope_returned": r.out_of_scope_returned,
        "cross_scope_links": report.cross_scope_links, "aims_met": float(report.meets_aims),
    }
    summary.update({f"relationship_accuracy.{cls}": c.accuracy for cls, c in report.relationships.items()})
    rows = []
    for s in report.scenarios:
        category = s.tags[0] if s.tags else None
        checks = s.recall_checks
        rows += [EvalRow(s.id, "extraction_precision", s.extraction.precision, category=category),
                 EvalRow(s.id, "extraction_recall", s.extraction.recall, category=category),
                 EvalRow(s.id, "recall_checks_passed", checks.passed / checks.checks if checks.checks else None,
                         category=category),
                 EvalRow(s.id, "stale_returned", checks.stale_returned, category=category)]
    return summary, rows


def isolation_figures(reports: list[IsolationReport]) -> Figures:
    """Per BM25 engine: the totals; per path (`service.recall`, ...) and per scope level (`user+agent`,
    `run+container`, ...) the probes and their leaks; `intact` the memories found changed afterwards."""
    summary: dict[str, float | None] = {}
    rows = []
    for r in reports:
        engine = r.bm25_engine
        summary.update({f"{engine}.leaks": r.total_leaks, f"{engine}.unreached": r.unreached,
                        f"{engine}.probes": r.probes, f"{engine}.rows": r.rows,
                        f"{engine}.levels": len(r.levels), f"{engine}.intact_leaks": r.intact.leaks})
        for kind, counts in (("path", r.paths), ("level", r.levels)):
            for name, c in sorted(counts.items()):
                rows += [EvalRow(f"{engine}.{kind}.{name}", metric, value, category=engine)
                         for metric, value in (("probes", c.probes), ("leaks", c.leaks), ("unreached", c.unreached))]
    return summary, rows


def locomo_figures(report: dict[str, Any]) -> Figures:
    summary: dict[str, float | None] = {}
    for budget, figures in report["budgets"].items():
        summary[f"evidence_recall@{budget}"] = figures["evidence_recall"]
        summary[f"latency_p95_ms@{budget}"] = figures["latency_ms"]["p95"]
    rows = []
    for q in report["questions"]:
        rows += [EvalRow(q["question_id"], "evidence_recall", q["evidence_recall"], q["budget"], q["category"]),
                 EvalRow(q["question_id"], "latency_ms", q["latency_ms"], q["budget"], q["category"])]
    return summary, rows
