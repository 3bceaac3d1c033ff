"""`decay`: retention, archiving, expiry and hard deletion, per tenant.

Each tenant's active memories are scored (`memory.lifecycle`); those whose retention fell under the
threshold are archived and the expired ones swept into the archive (one commit). What was deleted
or archived longer ago than `retention_days` is then purged for good (one commit), and so are
deleted tenants whose purge did not finish when they were deleted. The BM25 indexes are rebuilt
and LanceDB's old versions dropped once, after every tenant, when anything was purged.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from mnemoflow.maintenance import JobReport, job
from mnemoflow.memory.lifecycle import RetentionParams, decay
from mnemoflow.timeutil import utcnow

if TYPE_CHECKING:
    from mnemoflow.service import MemoryService

ACTOR = "maintain:decay"


def _add(report: JobReport, counts: dict[str, int], prefix: str = "") -> None:
    for name, n in counts.items():
        if n:
            report.counts[prefix + name] = report.counts.get(prefix + name, 0) + n


@job("decay", schedule="30 3 * * *", description="Retention scores, archiving and expiry of memories; hard "
     "deletion of what was deleted or archived longer ago than the retention period, and of deleted tenants.")
def run_decay(service: MemoryService, tenant_id: str | None, report: JobReport) -> None:
    store, settings = service.store, service.settings
    params = RetentionParams.from_settings(settings)
    awaiting = store.tenants_awaiting_purge()
    tenants = [tenant_id] if tenant_id else store.tenants()
    purged_any = False
    for tenant in tenants:
        if tenant in awaiting:
            continue
        now = utcnow()
        scores, archive = decay(store.decay_inputs(tenant), now, params)
        outcome = store.apply_decay(tenant, scores, archive, actor=ACTOR)
        _add(report, {"scored": len(scores), "archived": outcome.archived, "expired": outcome.expired})
        purge = store.purge_retired(tenant, now - timedelta(days=settings.retention_days), actor=ACTOR)
        _add(report, purge.counts, "purged ")
        purged_any |= not purge.empty
    for tenant in awaiting:
        if tenant_id in (None, tenant):
            purge = store.purge_tenant(tenant, actor=ACTOR)
            _add(report, {"tenants purged": 1})
            _add(report, purge.counts, "purged ")
            purged_any = True
    if purged_any:
        store.settle_purges()
    report.details["retention_days"] = settings.retention_days
