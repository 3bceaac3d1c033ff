"""The outbox as operators see it: `mnemoflow outbox` and `mnemoflow replay`."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from mnemoflow.cli.app import ArgumentError, Home, Tenant, app, out, service_for
from mnemoflow.errors import NotFoundError


def _age(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    return f"{days}d {hours}h" if days else f"{hours}h {minutes}m" if hours else f"{minutes}m {secs}s"


@app.command()
def outbox(
    home: Home = None, tenant: Tenant = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
) -> None:
    """Outbox jobs by kind and status, the oldest pending job's age, and the dead letters with their errors."""
    with service_for(home) as service:
        status = service.outbox_status(tenant)
    if as_json:
        sys.stdout.write(status.model_dump_json() + "\n")
        return
    if not status.counts:
        out.print("the outbox is empty")
        return
    for kind, states in status.counts.items():
        out.print(f"{kind}: " + ", ".join(f"{n} {state}" for state, n in states.items()), markup=False)
    if status.oldest_pending_age_s is not None:
        out.print(f"oldest pending job: waiting {_age(status.oldest_pending_age_s)}; "
                  f"{status.backing_off} backing off after a failure", markup=False)
    for job in status.dead:
        out.print(f"dead {job.job_key} ({job.tenant_id}/{job.user_id}, {job.attempts} attempts): {job.last_error}",
                  markup=False)
    if status.dead:
        out.print("re-queue with `mnemoflow replay JOB_KEY` or `mnemoflow replay --dead`", markup=False)


@app.command()
def replay(
    job_keys: Annotated[list[str] | None, typer.Argument(metavar="[JOB_KEY]...", help="Jobs to queue again.")] = None,
    dead: Annotated[bool, typer.Option("--dead", help="Queue every dead letter again.")] = False,
    home: Home = None,
) -> None:
    """Queue outbox jobs again with their attempts reset (then `mnemoflow worker` runs them)."""
    if not job_keys and not dead:
        raise ArgumentError("name a JOB_KEY to replay, or --dead for every dead letter")
    with service_for(home) as service:
        try:
            replayed = service.replay(job_keys or [], dead=dead)
        except NotFoundError as exc:
            raise ArgumentError(str(exc)) from None
    out.print(f"replayed {len(replayed)} jobs" if replayed else "no jobs to replay", markup=False)
