"""Structural checks, beyond one row at a time: each tenant's commit chain re-derived (`verify`),
outbox jobs that are dead or that nobody works on, and LanceDB's vector count against DuckDB's
embedded rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow.compute as pc

from mnemoflow.storage.quality import QualityFrames, QualityResult

if TYPE_CHECKING:
    from mnemoflow.service import MemoryService

SUITE = "structure"
SAMPLE = 20


def _vectors_match(frames: QualityFrames, table: str, index: str) -> QualityResult:
    """DuckDB rows marked done, against LanceDB rows that carry a vector and a DuckDB row."""
    rows, vectors = frames[table], frames[index]
    done = pc.sum(pc.equal(rows.column("embedding_status"), "done")).as_py() or 0
    held = pc.sum(pc.and_(vectors.column("has_vector"), vectors.column("row_found"))).as_py() or 0
    return QualityResult(SUITE, f"{index} vectors match {table} marked done", done == held,
                         {"duckdb_done": done, "lancedb_vectors": held}, abs(done - held), [])


def structural_checks(service: MemoryService, frames: QualityFrames, tenant_id: str | None) -> list[QualityResult]:
    store, settings = service.store, service.settings
    results: list[QualityResult] = []
    for report in service.verify(tenant_id):
        results.append(QualityResult(
            SUITE, f"commit chain of {report.tenant_id} verifies", report.ok,
            {"commits": report.commits_checked, "rows": report.rows_checked, "problems": len(report.problems)},
            len(report.problems), report.problems[:SAMPLE]))
    dead = store.dead_job_keys(tenant_id)
    results.append(QualityResult(SUITE, "no dead outbox jobs", not dead, {"dead": len(dead)}, len(dead),
                                 dead[:SAMPLE]))
    stuck = store.stuck_jobs(settings.outbox_stuck_after_s, tenant_id, limit=SAMPLE)
    results.append(QualityResult(SUITE, f"no outbox job pending untouched for {settings.outbox_stuck_after_s:g}s",
                                 not stuck, {"stuck": len(stuck)}, len(stuck), [j.job_key for j in stuck]))
    results.append(_vectors_match(frames, "memories", "memory_vectors"))
    results.append(_vectors_match(frames, "chunks", "chunk_vectors"))
    return results
