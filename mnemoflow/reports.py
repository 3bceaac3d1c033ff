"""What operations report back: plain dataclasses, light to import, the same whether the work ran
in this process or in a server (the remote client decodes a server's answer into these types)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from mnemoflow.models import DocumentWriteResult, IngestErrorRecord
from mnemoflow.timeutil import UtcDatetime


@dataclass
class DrainReport:
    """One embedding pass of the outbox."""

    embedded: int = 0
    reused: int = 0
    skipped: int = 0
    failed: int = 0
    unavailable: str | None = None


@dataclass
class GenerationReport:
    turns: int = 0
    candidates: int = 0
    created: int = 0
    reinforced: int = 0
    linked: dict[str, int] = field(default_factory=dict)
    reviews: int = 0
    unread: int = 0  # clauses that stated something no memory of their turn kept (`generate.turn`)

    def count_link(self, relation: str, times: int = 1) -> None:
        self.linked[relation] = self.linked.get(relation, 0) + times

    def add(self, other: GenerationReport) -> None:
        """Sum another run's counts into this one."""
        self.turns += other.turns
        self.candidates += other.candidates
        self.created += other.created
        self.reinforced += other.reinforced
        self.reviews += other.reviews
        self.unread += other.unread
        for relation, count in other.linked.items():
            self.count_link(relation, count)


@dataclass
class GenerationDrainReport(GenerationReport):
    """What the generators of one pass did, summed, and how many sessions were read or failed."""

    sessions: int = 0
    failed: int = 0
    unavailable: str | None = None


@dataclass
class Drained(DrainReport):
    """One outbox pass: the embeddings, and the memory generation that ran before them."""

    generation: GenerationDrainReport | None = None
    rules_drafted: int = 0  # rule memories read into DRAFT rules (`rules.drafts`)

    def plus(self, later: Drained) -> Drained:
        """This pass and a later one, summed (the later one's `unavailable` is what holds now)."""
        generation = self.generation
        if later.generation is not None:
            generation = generation or GenerationDrainReport()
            generation.add(later.generation)
            generation.sessions += later.generation.sessions
            generation.failed += later.generation.failed
            generation.unavailable = later.generation.unavailable
        return Drained(self.embedded + later.embedded, self.reused + later.reused, self.skipped + later.skipped,
                       self.failed + later.failed, later.unavailable, generation,
                       self.rules_drafted + later.rules_drafted)


@dataclass
class IngestReport:
    documents_changed: int = 0  # conversation sessions included
    sessions_changed: int = 0
    turns_added: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    documents_retired: int = 0  # read from files of an ingested folder that are gone now
    memories_retired: int = 0
    errors: list[IngestErrorRecord] = field(default_factory=list)

    def add(self, write: DocumentWriteResult, *, session: bool = False) -> None:
        self.documents_changed += int(write.changed)
        self.sessions_changed += int(write.changed and session)
        self.turns_added += write.turns_added
        self.chunks_added += write.chunks_added
        self.chunks_removed += write.chunks_removed


@dataclass
class IngestOutcome:
    report: IngestReport
    drain: Drained | None
    pending_embeddings: int


@dataclass
class SyncReport:
    source: str
    kind: str
    ingested: IngestReport = field(default_factory=IngestReport)
    files_read: int = 0
    files_unchanged: int = 0
    records: int = 0
    documents_deleted: int = 0
    memories_deleted: int = 0
    drained: Drained | None = None  # the derived work the sync waited for

    @property
    def errors(self) -> list[IngestErrorRecord]:
        return self.ingested.errors


@dataclass
class SqlResult:
    """A read-only query's columns and rows, each value as JSON has it."""

    columns: list[str]
    rows: list[list[Any]]


class OutboxJob(BaseModel):
    """One outbox job as an operator sees it (its payload names rows by id, never their content)."""

    job_key: str
    tenant_id: str
    user_id: str
    kind: str
    status: str
    attempts: int
    last_error: str | None = None
    created_at: UtcDatetime
    updated_at: UtcDatetime
    next_attempt_at: UtcDatetime | None = None


class OutboxStatus(BaseModel):
    """The outbox at a glance: jobs by kind and status, how long the oldest pending one has waited,
    how many are backing off after a failure, and the dead letters with their last errors."""

    counts: dict[str, dict[str, int]] = Field(default_factory=dict, description="kind -> status -> jobs")
    oldest_pending_age_s: float | None = None
    backing_off: int = 0
    dead: list[OutboxJob] = Field(default_factory=list)


class EvalRunInfo(BaseModel):
    """One evaluation run (`maintain evaluate`): its suite, when, its headline figures, and whether its
    HTML report page is stored. Evaluations run in scratch stores: no tenant's data is in them."""

    run_id: str
    suite: str
    created_at: UtcDatetime
    summary: dict[str, float | None]
    has_report: bool


class QualityFailure(BaseModel):
    suite: str
    expectation: str
    unexpected_count: int | None = None
    failing_ids: list[str] = Field(default_factory=list)


class QualityRunInfo(BaseModel):
    """One quality-check run (`maintain check`) of one tenant: how many expectations held, and those that did not."""

    run_id: str
    run_at: UtcDatetime
    expectations: int
    failed: int
    failures: list[QualityFailure]


class RunsOverview(BaseModel):
    evaluations: list[EvalRunInfo]
    quality: list[QualityRunInfo]
