"""Retry only what is worth retrying: errors marked transient (a busy file, an endpoint down)."""

from __future__ import annotations

from typing import Any


def transient_only(task: Any, task_run: Any, state: Any) -> bool:
    error = state.result(raise_on_failure=False)
    return bool(getattr(error, "transient", False))
