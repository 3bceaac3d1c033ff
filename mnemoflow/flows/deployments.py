"""Prefect deployments from the settings: the ad-hoc `ingest` flow, and a scheduled `sync` per source.

Sources are configuration (the TOML file in the home directory), so `prefect.yaml` is generated
from it rather than written by hand: `mnemoflow deployments --write prefect.yaml` keeps the two in
step, and a bad cron expression is refused here, before Prefect's server ever sees it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from prefect.client.schemas.schedules import CronSchedule
from pydantic import ValidationError

import mnemoflow
from mnemoflow.config import Settings
from mnemoflow.errors import ConfigError
from mnemoflow.maintenance import jobs

WORK_POOL = "mnemoflow"
PROJECT_ROOT = Path(mnemoflow.__file__).resolve().parent.parent  # where the entrypoints' paths start
HEADER = """\
# Prefect deployments of mnemoflow, generated from the settings by `mnemoflow deployments --write`.
# Serve them with a local server and a process worker:
#   prefect server start --host 127.0.0.1                                # one terminal
#   export PREFECT_API_URL=http://127.0.0.1:4200/api                     # every other terminal
#   prefect work-pool create mnemoflow --type process
#   prefect deploy --all --prefect-file prefect.yaml && prefect worker start --pool mnemoflow
"""


def _schedule(what: str, cron: str, timezone: str) -> dict[str, Any]:
    try:
        CronSchedule(cron=cron, timezone=timezone)
    except ValidationError as exc:
        reason = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{what}: cannot schedule {cron!r} in {timezone}: {reason}") from None
    return {"cron": cron, "timezone": timezone}


def deployment_specs(settings: Settings, timezone: str = "UTC") -> list[dict[str, Any]]:
    """The `ingest` deployment (run on demand), `sync-<source>` for every configured source (a source
    with a `schedule` runs on it, one without runs when triggered), and `maintain-<job>` for every
    maintenance job on its default schedule."""
    home = str(settings.home)
    specs: list[dict[str, Any]] = [{
        "name": "ingest",
        "entrypoint": "mnemoflow/flows/ingest.py:ingest_flow",
        "description": "Ingest files and directories for one user (documents of every supported kind, transcripts).",
        "parameters": {"paths": [], "tenant_id": settings.tenant_id, "user_id": settings.user_id, "home": home},
        "work_pool": {"name": WORK_POOL},
    }]
    for name, source in sorted(settings.sources.items()):
        spec: dict[str, Any] = {
            "name": f"sync-{name}",
            "entrypoint": "mnemoflow/flows/sync.py:sync_flow",
            "description": f"Sync the {source.kind} source {name!r} for tenant {source.tenant_id!r}, "
                           f"user {source.user_id!r}: only what is new or changed, what is gone retired.",
            "parameters": {"source": name, "home": home},
            "tags": ["sync", source.kind],
            "work_pool": {"name": WORK_POOL},
        }
        if source.schedule:
            spec["schedules"] = [_schedule(f"source {name!r}", source.schedule, timezone)]
        specs.append(spec)
    for name, job in jobs().items():
        specs.append({
            "name": f"maintain-{name}",
            "entrypoint": "mnemoflow/flows/maintenance.py:maintain_flow",
            "description": job.description,
            "parameters": {"job": name, "home": home},
            "tags": ["maintenance"],
            "schedules": [_schedule(f"maintenance job {name!r}", job.schedule, timezone)],
            "work_pool": {"name": WORK_POOL},
        })
    return specs


def prefect_yaml(settings: Settings, timezone: str = "UTC") -> str:
    """A complete `prefect.yaml` for this installation and these settings."""
    document = {
        "name": "mnemoflow",
        "prefect-version": "3.8.8",
        "pull": [{"prefect.deployments.steps.set_working_directory": {"directory": str(PROJECT_ROOT)}}],
        "deployments": deployment_specs(settings, timezone),
    }
    return HEADER + yaml.safe_dump(document, sort_keys=False, width=120)
