"""`evaluate`: the scenario suite, the isolation probes (both BM25 engines, scopes of every level:
users, agents, runs, containers and their combinations) and, when its data is configured, LoCoMo,
each in a scratch store of its own; their figures land in `eval_runs` / `eval_results` (see the
`eval_trends` view). A leak, a probe row its own scope cannot reach, a
stale or out-of-scope memory returned, or a scenario aim missed is a problem of the report.

Evaluation reads no tenant's data, so a tenant given to the job changes nothing.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import mnemoflow
from mnemoflow.maintenance import JobReport, job

if TYPE_CHECKING:
    from mnemoflow.service import MemoryService

LOCOMO_BUDGETS = [512, 2048]
REPOSITORY_SCENARIOS = Path(mnemoflow.__file__).resolve().parent.parent / "eval" / "scenarios"


@job("evaluate", schedule="0 5 * * *", description="Scenario suite, cross-scope isolation probes and (when "
     "configured) LoCoMo, each in a scratch store; figures in eval_runs / eval_results (view eval_trends).")
def run_evaluate(service: MemoryService, tenant_id: str | None, report: JobReport) -> None:
    scenarios = service.settings.eval_scenarios_dir or REPOSITORY_SCENARIOS
    if scenarios.is_dir():
        _scenarios(service, scenarios, report)
    else:
        report.details["scenarios"] = f"skipped: no scenario directory at {scenarios}"
    _isolation(service, report)
    if service.settings.eval_locomo_dir is not None:
        _locomo(service, service.settings.eval_locomo_dir, report)


def _scenarios(service: MemoryService, directory: Path, report: JobReport) -> None:
    from mnemoflow.eval.figures import scenario_figures
    from mnemoflow.eval.html_report import scenarios_html
    from mnemoflow.eval.scenario_run import run_scenarios
    from mnemoflow.eval.scenarios import load_scenarios
    from mnemoflow.service import MemoryService

    scenarios = load_scenarios(directory)
    with tempfile.TemporaryDirectory(prefix="mnemoflow-eval-") as scratch:
        settings = service.settings.scratch(Path(scratch) / "home", recall_track_access=False)
        with MemoryService(settings) as scratch_service:
            result = run_scenarios(scratch_service, scenarios, scratch_service.engine)
    summary, rows = scenario_figures(result)
    run_id = service.store.record_eval_run("scenarios", {"directory": str(directory), "engine": result.engine},
                                           summary, rows, report_html=scenarios_html(result))
    report.counts["scenarios"] = result.scenarios_count
    report.details["scenarios"] = {"run_id": run_id, **{k: summary[k] for k in (
        "extraction_precision", "extraction_recall", "recall_check_pass_rate", "stale_returned")}}
    report.problems += [f"scenarios: {shortfall}" for shortfall in result.shortfalls]


def _isolation(service: MemoryService, report: JobReport) -> None:
    from mnemoflow.eval.figures import isolation_figures
    from mnemoflow.eval.isolation import run_isolation_probes

    seed = random.SystemRandom().randrange(2**31)  # recorded: a failing run can be replayed
    reports = [run_isolation_probes(service.settings.model_copy(update={"bm25_engine": engine}), seed=seed)
               for engine in ("lancedb", "duckdb")]
    summary, rows = isolation_figures(reports)
    run_id = service.store.record_eval_run("isolation", {"seed": seed}, summary, rows)
    report.counts["isolation probes"] = sum(r.probes for r in reports)
    report.counts["isolation scope levels"] = len({level for r in reports for level in r.levels})
    report.counts["leaks"] = sum(r.total_leaks for r in reports)
    report.details["isolation"] = {"run_id": run_id, "seed": seed}
    for r in reports:
        report.problems += [f"isolation ({r.bm25_engine} BM25, seed {seed}): {leak}" for leak in r.leaked]
        if r.unreached:
            report.problems.append(f"isolation ({r.bm25_engine} BM25, seed {seed}): {r.unreached} probes did not "
                                   "reach a row their own scope may see")


def _locomo(service: MemoryService, directory: Path, report: JobReport) -> None:
    from mnemoflow.eval.figures import locomo_figures
    from mnemoflow.eval.locomo import run_locomo

    missing = [name for name in ("conversations.jsonl", "questions.jsonl") if not (directory / name).is_file()]
    if missing:
        report.problems.append(f"locomo: eval_locomo_dir {directory} has no {' or '.join(missing)}")
        return
    result = run_locomo(directory, budgets=LOCOMO_BUDGETS)
    from mnemoflow.eval.html_report import benchmark_html

    summary, rows = locomo_figures(result)
    run_id = service.store.record_eval_run("locomo", result["config"], summary, rows,
                                           report_html=benchmark_html(result))
    report.counts["locomo questions"] = result["config"]["questions"]
    report.details["locomo"] = {"run_id": run_id, **summary}
