"""Maintenance: the scheduled half of the pipeline. Each job is a plain function registered here by
name with its default schedule; `MemoryService.maintain`, `mnemoflow maintain NAME`, the Prefect
`maintain` flow and its deployments (`mnemoflow deployments`) all run it through `run_job`.

A job module registers itself with `@job(...)` and is listed in `JOB_MODULES`, imported on first
use so that parsing a command line does not load them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mnemoflow.errors import BadInputError
from mnemoflow.timeutil import utcnow

if TYPE_CHECKING:
    from mnemoflow.service import MemoryService
    from mnemoflow.storage.scope import Scope

JOB_MODULES: tuple[str, ...] = (  # each calls `job` at import; listed in the order they run at night
    "mnemoflow.maintenance.decay",
    "mnemoflow.maintenance.cluster",
    "mnemoflow.maintenance.seal",
    "mnemoflow.maintenance.profiles",
    "mnemoflow.maintenance.check",
    "mnemoflow.maintenance.evaluate",
    "mnemoflow.maintenance.promote",
)


@dataclass
class JobReport:
    """What one run of a job did: counts by what it touched, and problems (a failed check)."""

    name: str
    started_at: datetime
    finished_at: datetime | None = None
    counts: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


JobFunction = Callable[["MemoryService", "str | None", JobReport], None]


@dataclass(frozen=True)
class Job:
    name: str
    run: JobFunction
    schedule: str  # its deployment's default cron
    description: str


_JOBS: dict[str, Job] = {}


def user_scopes(service: MemoryService, tenant_id: str | None) -> Iterator[Scope]:
    """Each user with memories, of one tenant or of every tenant: what the per-user jobs walk."""
    from mnemoflow.storage.scope import Scope

    for tenant in [tenant_id] if tenant_id else service.store.tenants():
        for user in service.store.memory_users(tenant):
            yield Scope(tenant, user)


def job(name: str, *, schedule: str, description: str) -> Callable[[JobFunction], JobFunction]:
    """Register `fn(service, tenant_id, report)` as the job `name`; a second job of that name is refused."""
    def register(fn: JobFunction) -> JobFunction:
        if name in _JOBS:
            raise ValueError(f"maintenance job {name!r} is registered twice")
        _JOBS[name] = Job(name, fn, schedule, description)
        return fn

    return register


def jobs() -> dict[str, Job]:
    """Every registered job by name, in the order of JOB_MODULES."""
    for module in JOB_MODULES:
        importlib.import_module(module)
    return dict(_JOBS)


def run_job(service: MemoryService, name: str, *, tenant_id: str | None = None) -> JobReport:
    """Run one job for every tenant, or for `tenant_id` only."""
    registered = jobs()
    if name not in registered:
        raise BadInputError(f"no maintenance job {name!r}; one of: {', '.join(registered) or 'none registered'}")
    report = JobReport(name, started_at=utcnow())
    registered[name].run(service, tenant_id, report)
    report.finished_at = utcnow()
    return report
