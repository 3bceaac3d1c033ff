"""Operator commands: integrity, Prefect deployments, API keys."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from mnemoflow.cli.app import ArgumentError, Home, Tenant, app, keys_app, out, service_for, writable
from mnemoflow.config import load_settings


@app.command()
def verify(home: Home = None, tenant: Tenant = None) -> None:
    """Re-derive the commit chain and every row digest; exit 1 on any mismatch."""
    with service_for(home) as service:
        reports = service.verify(tenant)
    bad = False
    for report in reports:
        status = "ok" if report.ok else f"{len(report.problems)} problems"
        out.print(f"{report.tenant_id}: {report.commits_checked} commits, {report.rows_checked} rows: {status}")
        for problem in report.problems[:20]:
            out.print(f"  {problem}")
        bad |= not report.ok
    if bad:
        raise typer.Exit(1)


@app.command()
def deployments(
    home: Home = None,
    write: Annotated[Path | None, typer.Option("--write", help="Write prefect.yaml here instead of printing it.")] = None,
    timezone: Annotated[str, typer.Option(help="Time zone of the sources' cron schedules.")] = "UTC",
) -> None:
    """Prefect deployments from the settings: `ingest`, and `sync-<source>` on each source's schedule."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from mnemoflow.flows.deployments import prefect_yaml

    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ArgumentError(f"unknown time zone {timezone!r} (an IANA name such as Europe/Berlin)") from None
    if write is not None:
        writable(write, "--write")
    text = prefect_yaml(load_settings(home), timezone)
    if write is None:
        sys.stdout.write(text)
        return
    write.write_text(text)
    out.print(f"wrote {write}; deploy with `prefect deploy --all --prefect-file {write}`")



@keys_app.command("create")
def keys_create(
    tenant: Annotated[str, typer.Option("--tenant", help="The tenant the key reaches.")],
    name: Annotated[str | None, typer.Option(help="A label for the key.")] = None,
    admin: Annotated[bool, typer.Option("--admin", help="May also see the tenant's debug output (raw vectors, "
                                                        "internal scores).")] = False,
    home: Home = None,
) -> None:
    """Create an API key; its secret is printed once and only its hash is kept."""
    with service_for(home) as service:
        key_id, secret = service.create_api_key(tenant, name, admin=admin)
    out.print(f"{key_id} for tenant {tenant}" + (" (admin)" if admin else ""))
    sys.stdout.write(secret + "\n")


@keys_app.command("list")
def keys_list(tenant: Tenant = None, home: Home = None) -> None:
    """List API keys (never their secrets)."""
    with service_for(home) as service:
        for key in service.list_api_keys(tenant):
            state = f"revoked {key['revoked_at']:%Y-%m-%d}" if key["revoked_at"] else "active"
            admin = "  admin" if key.get("admin") else ""
            out.print(f"{key['key_id']}  {key['tenant_id']}  {key['name'] or '-'}  {state}{admin}")


@keys_app.command("revoke")
def keys_revoke(key_id: Annotated[str, typer.Argument(help="The key to revoke.")], home: Home = None) -> None:
    """Revoke an API key at once."""
    with service_for(home) as service:
        if not service.revoke_api_key(key_id):
            raise ArgumentError(f"no active key {key_id}")
    out.print(f"revoked {key_id}")
