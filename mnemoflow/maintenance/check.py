"""`check`: the quality suites and structural checks (`mnemoflow.quality`), results in `quality_runs`.

A failed expectation is a problem of the job's report naming the rows that broke it, so
`mnemoflow maintain check` exits 1 and the Prefect flow run fails.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mnemoflow.maintenance import JobReport, job

if TYPE_CHECKING:
    from mnemoflow.service import MemoryService


@job("check", schedule="15 */6 * * *", description="Great Expectations suites over the tables and structural "
     "checks (commit chains, dead or stuck outbox jobs, LanceDB against DuckDB); results in quality_runs.")
def run_check(service: MemoryService, tenant_id: str | None, report: JobReport) -> None:
    from mnemoflow.quality import problems_of, run_checks

    results = run_checks(service, tenant_id)
    run_id = service.store.record_quality_run(tenant_id, results, report.started_at)
    report.counts["expectations"] = len(results)
    report.counts["failed"] = sum(not r.success for r in results)
    report.details["run_id"] = run_id
    report.problems += problems_of(results)
