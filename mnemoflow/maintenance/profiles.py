"""`profiles`: each user's static and dynamic profile, rebuilt from their current memories only
(the lifecycle gate recall applies: never a deleted, superseded, expired or archived one). A
rebuild that changes a line writes a new version in one commit; one that changes nothing writes
nothing, so the hourly schedule costs a read when nothing happened."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mnemoflow.embedding.worker import vectors_by_hash
from mnemoflow.maintenance import JobReport, job, user_scopes
from mnemoflow.memory.profile import ProfileMemory, build_profile
from mnemoflow.storage import Scope
from mnemoflow.tree_models import ProfileLine

if TYPE_CHECKING:
    from mnemoflow.service import MemoryService


def profile_lines(service: MemoryService, scope: Scope) -> list[ProfileLine]:
    """The lines the user's current memories make now."""
    inputs = service.store.profile_inputs(scope)
    if not inputs:
        return []
    vectors, _ = vectors_by_hash(service.store, service.embedder, {i.content_hash: i.memory.content for i in inputs})
    settings = service.settings
    return build_profile([ProfileMemory(i.memory, i.reinforcement, vectors[i.content_hash]) for i in inputs],
                         static_lines=settings.profile_static_lines, dynamic_lines=settings.profile_dynamic_lines,
                         dynamic_days=settings.profile_dynamic_days)


@job("profiles", schedule="15 * * * *",
     description="Rebuild each user's static and dynamic profile from their current memories, each line citing "
                 "its memories; a changed profile is a new version.")
def profiles(service: MemoryService, tenant_id: str | None, report: JobReport) -> None:
    """Hourly: a profile should follow what was said today, and an unchanged one costs one read."""
    store = service.store
    for scope in user_scopes(service, tenant_id):
        version = store.write_profile(scope, profile_lines(service, scope), actor="profiles")
        key = "unchanged" if version is None else "rebuilt"
        report.counts[key] = report.counts.get(key, 0) + 1
