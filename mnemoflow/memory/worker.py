"""The outbox worker for memory generation: claim sessions with unread turns, generate, mark done.

Runs before the embedding worker (the memories it writes wait for their vectors in the same
outbox). Sessions of one user are read oldest first by one generator, so a later session's
"actually, it moved to Friday" meets the memory an earlier one wrote even before the search
indexes have folded it in.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from mnemoflow.embedding.base import Embedder
from mnemoflow.errors import EmbeddingUnavailableError
from mnemoflow.memory.generate.candidates import GenerationEngine, TurnView
from mnemoflow.memory.pipeline import MemoryGenerator
from mnemoflow.reports import GenerationDrainReport
from mnemoflow.storage import Scope, Store
from mnemoflow.storage.outbox import Job


def _session_order(job: Job) -> tuple[str, str]:
    return job.payload.get("first_ts") or "", job.payload["session_id"]


def drain_generation(
    store: Store, embedder: Embedder, engine: GenerationEngine, *, batch_size: int = 256,
    on_progress: Callable[[int], None] | None = None,
) -> GenerationDrainReport:
    """Generate memories for every queued session until the outbox has none left.

    A session that fails counts against its job (retried up to the outbox's attempts); an
    unavailable embedder releases the claimed jobs untouched and stops the pass."""
    report = GenerationDrainReport()
    while jobs := store.claim_generation_jobs(batch_size):
        by_scope: dict[Scope, list[Job]] = defaultdict(list)
        for job in jobs:
            by_scope[job.scope].append(job)
        done: set[str] = set()
        for scope, group in by_scope.items():
            if any(job.attempts > 1 for job in group):  # a try that died mid-pass left its index rows behind
                store.drop_unflushed_memories(scope)
            generator = MemoryGenerator(store, embedder, engine, scope, actor="generate")
            try:
                generator.resume()  # what an earlier pass wrote and the vector index cannot find yet
            except EmbeddingUnavailableError as exc:
                return _unavailable(store, [j for j in jobs if j.job_key not in done], exc, report, generator)
            for job in sorted(group, key=_session_order):
                try:
                    _generate_session(store, generator, scope, job)
                except EmbeddingUnavailableError as exc:
                    return _unavailable(store, [j for j in jobs if j.job_key not in done], exc, report, generator)
                except Exception as exc:  # a session-specific failure: count it against its job
                    store.fail_jobs([job.job_key], f"{type(exc).__name__}: {exc}")
                    report.failed += 1
                else:
                    report.sessions += 1
                done.add(job.job_key)
                if on_progress:
                    on_progress(1)
            _tally(report, generator)
    return report


def _generate_session(store: Store, generator: MemoryGenerator, scope: Scope, job: Job) -> None:
    turns = [TurnView(turn_id=t.turn_id, session_id=t.session_id, speaker=t.speaker, text=t.text, ts=t.ts,
                      role=t.role) for t in store.session_turns(scope, job.payload["document_id"])]
    sources = {turn: tuple(chunks) for turn, chunks in store.turn_chunk_ids(scope, job.payload["session_id"]).items()}
    # the job is marked done in the transaction that writes the session's memories: a worker that
    # dies after it never generates the session twice (reinforcing its own memories)
    generator.run(turns, sources, only=set(job.payload["turn_ids"]), completes=(job.job_key,))


def _unavailable(store: Store, undone: list[Job], exc: EmbeddingUnavailableError, report: GenerationDrainReport,
                 generator: MemoryGenerator) -> GenerationDrainReport:
    """The embedder is down: the jobs not done go back untouched and the pass stops."""
    store.release_jobs([j.job_key for j in undone], str(exc))
    report.unavailable = str(exc)
    return _tally(report, generator)


def _tally(report: GenerationDrainReport, generator: MemoryGenerator) -> GenerationDrainReport:
    report.add(generator.report)
    return report
