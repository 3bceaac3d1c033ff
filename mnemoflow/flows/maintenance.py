"""The `maintain` flow: one maintenance job, deployed once per job on its default schedule."""

from __future__ import annotations

from typing import Any

from prefect import flow

from mnemoflow.config import load_settings
from mnemoflow.errors import MnemoflowError
from mnemoflow.flows.tasks import as_task
from mnemoflow.maintenance import JobReport
from mnemoflow.remote import connect
from mnemoflow.service import MemoryService


class MaintenanceFailed(MnemoflowError):
    """A job found problems (a failed check): the flow run fails and names them."""


def maintain(service: MemoryService, job: str, tenant_id: str | None) -> JobReport:
    """The job, run by this home's server when one runs, else in this process."""
    return service.maintain(job, tenant_id=tenant_id)


@flow(name="maintain", log_prints=True)
def maintain_flow(job: str, home: str | None = None, tenant_id: str | None = None) -> dict[str, Any]:
    """Run one maintenance job; the run fails when the job reports problems."""
    with connect(load_settings(home)) as service:
        report = as_task(maintain, service, job, tenant_id)
    if not report.ok:
        raise MaintenanceFailed(f"{job}: {len(report.problems)} problems: " + "; ".join(report.problems[:20]))
    return {"job": report.name, "counts": report.counts, "details": report.details}
