"""Stages as Prefect tasks: the `step` the flows hand to the ingestion sequence, so each stage runs
as a task with retries on transient errors (a busy store, an endpoint down)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from mnemoflow.flows.retry import transient_only

TASK_OPTIONS: dict[str, Any] = {"retries": 3, "retry_delay_seconds": [2, 10, 30], "retry_condition_fn": transient_only,
                                "cache_policy": NO_CACHE}
_TASKS: dict[Callable[..., Any], Any] = {}


def as_task(stage: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Run `stage` as the task of its name (`process_landed_turns` -> `process-landed-turns`)."""
    if stage not in _TASKS:
        _TASKS[stage] = task(stage, name=stage.__name__.replace("_", "-"), **TASK_OPTIONS)
    return _TASKS[stage](*args, **kwargs)
