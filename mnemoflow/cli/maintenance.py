"""`mnemoflow maintain NAME`: run one maintenance job now (the deployments run them on schedule)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from mnemoflow.cli.app import ArgumentError, Home, Tenant, app, err, out, progress_bar, service_for


@app.command()
def maintain(
    name: Annotated[str, typer.Argument(help="The job: seal, decay, profiles, cluster, check, evaluate or promote.")],
    home: Home = None, tenant: Tenant = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the job's report as JSON.")] = False,
) -> None:
    """Run one maintenance job for every tenant (or one); exit 1 when it found problems."""
    from pydantic import TypeAdapter

    from mnemoflow.maintenance import JobReport, jobs

    if name not in jobs():
        raise ArgumentError(f"no maintenance job {name!r}; one of: {', '.join(jobs()) or 'none registered'}")
    with service_for(home) as service:
        with progress_bar() as progress:
            progress.add_task(f"maintain {name}", total=None)
            report = service.maintain(name, tenant_id=tenant)
    if as_json:
        sys.stdout.write(TypeAdapter(JobReport).dump_json(report).decode() + "\n")
    else:
        counts = ", ".join(f"{n} {what}" for what, n in report.counts.items()) or "nothing to do"
        seconds = (report.finished_at - report.started_at).total_seconds() if report.finished_at else 0.0
        out.print(f"{name}: {counts} ({seconds:.1f}s)", markup=False)
        for detail, value in report.details.items():
            out.print(f"  {detail}: {json.dumps(value, default=str)}", markup=False)
    for problem in report.problems[:50]:
        err.print(f"problem: {problem}", markup=False)
    if len(report.problems) > 50:
        err.print(f"... and {len(report.problems) - 50} more", markup=False)
    if not report.ok:
        raise typer.Exit(1)
