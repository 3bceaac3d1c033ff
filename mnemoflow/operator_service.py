"""The operators' service methods (part of `MemoryService`, so every interface reaches them the one way):
API keys, read-only SQL and snapshots, the outbox's state, the commit chain's verification, evaluation
runs and maintenance jobs: what a person running the platform asks, rather than an agent."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError, NotFoundError
from mnemoflow.maintenance import JobReport
from mnemoflow.models import ApiKey
from mnemoflow.reports import OutboxStatus, RunsOverview, SqlResult
from mnemoflow.storage.commits import VerifyReport
from mnemoflow.storage.scope import Scope, check_id

if TYPE_CHECKING:
    from mnemoflow.storage import Store


class OperatorMethods:
    settings: Settings
    store: Store

    def owners(self, tenant_id: str) -> dict[str, int]:
        """The tenant's users with memories and how many current ones each holds, most first."""
        return dict(self.store.memory_owners(check_id("tenant_id", tenant_id)))

    def runs(self, tenant_id: str, *, limit: int = 10) -> RunsOverview:
        """The latest evaluation runs (scratch stores, no tenant's data) and the tenant's quality-check runs."""
        if not 1 <= limit <= 100:
            raise BadInputError(f"limit must be between 1 and 100; got {limit}")
        return RunsOverview(evaluations=self.store.eval_runs(limit=limit),
                            quality=self.store.quality_runs(check_id("tenant_id", tenant_id), limit=limit))

    def run_report(self, run_id: str) -> str:
        """An evaluation run's self-contained HTML report page."""
        page = self.store.eval_report(run_id)
        if page is None:
            raise NotFoundError(f"no report for evaluation run {run_id}")
        return page

    def maintain(self, name: str, *, tenant_id: str | None = None) -> JobReport:
        """Run one maintenance job (seal, decay, profiles, cluster, check, evaluate, ...) now."""
        from mnemoflow.maintenance import run_job

        return run_job(self, name, tenant_id=tenant_id)

    def counts(self, scope: Scope) -> dict[str, int]:
        """Live rows per table inside the scope."""
        return self.store.counts(scope)

    def outbox_counts(self) -> dict[str, int]:
        """Outbox jobs by status."""
        return self.store.outbox_counts()

    def create_api_key(self, tenant_id: str, name: str | None = None, *, admin: bool = False) -> tuple[str, str]:
        """A new key for the tenant: (key_id, secret); the secret is shown once, only its hash kept. An
        admin key may also see the tenant's debug output (raw vectors, internal scores)."""
        return self.store.create_api_key(tenant_id, name, admin=admin)

    def api_key(self, secret: str) -> ApiKey | None:
        """The unrevoked key a secret is (its id, tenant and whether it is an admin's), or None."""
        return self.store.api_key(secret)

    def list_api_keys(self, tenant_id: str | None = None) -> list[dict[str, Any]]:
        return self.store.list_api_keys(tenant_id)

    def revoke_api_key(self, key_id: str) -> bool:
        return self.store.revoke_api_key(key_id)

    def sql(self, statement: str, params: list[Any] | None = None) -> SqlResult:
        """One read-only statement over every tenant's tables (an operator's view), its values as JSON
        has them (dates as ISO strings), so a result reads the same through a server."""
        from pydantic_core import to_jsonable_python

        columns, rows = self.store.sql(statement, params)
        return SqlResult(columns=columns, rows=to_jsonable_python([list(r) for r in rows]))

    def snapshot(self, out_dir: str) -> dict[str, int]:
        """A consistent Parquet copy of every table and view in `out_dir` (a folder, or an `s3://` URL
        reached with the s3_* settings); rows per table."""
        if out_dir.startswith("s3://"):
            from mnemoflow.storage.backends import bucket_options

            return self.store.snapshot(out_dir, bucket_options(self.settings))
        return self.store.snapshot(Path(out_dir))

    def outbox_status(self, tenant_id: str | None = None) -> OutboxStatus:
        """Outbox jobs by kind and status, the oldest pending job's age, and the dead letters with their errors."""
        return self.store.outbox_status(tenant_id)

    def verify(self, tenant_id: str | None = None) -> list[VerifyReport]:
        tenants = [tenant_id] if tenant_id else self.store.tenants()
        return [self.store.verify(t) for t in tenants]
