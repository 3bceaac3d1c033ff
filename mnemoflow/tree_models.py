"""The memory tree's records: the summaries `seal` writes (L1 of a source, topic or day; L2 of a month), the
profiles `profiles` rebuilds and the topics `cluster` finds, as drafts for the store and as users see them.
Apart from `models` because they are one concept, the maintained digest of a scope's memories."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

from pydantic import BaseModel

from mnemoflow.timeutil import UtcDatetime

SummaryLevel = Literal["L1", "L2"]
# what a summary is about: a source (a document, a conversation session), a topic, a day (L1) or a month (L2)
SubjectKind = Literal["source", "topic", "day", "month"]


@dataclass(frozen=True)
class SummaryDraft:
    """A summary `seal` decided to write. `child_ids` are memories (L1) or L1 summaries (L2);
    `memory_ids` every memory it covers down the tree (recall shows it only while all are current);
    `cited_ids` the memories in the order its citations list them, those its text shows first."""

    level: SummaryLevel
    subject_kind: SubjectKind
    subject_key: str
    title: str
    content: str
    child_ids: tuple[str, ...]
    memory_ids: tuple[str, ...]
    cited_ids: tuple[str, ...]
    method: str  # extractive, llm, or extractive after a failed LLM request ("extractive (llm-fallback: ...)")
    period_start: datetime | None
    period_end: datetime | None
    day: date | None = None


class Summary(BaseModel):
    """A sealed summary as users see it."""

    id: str
    tenant_id: str
    user_id: str
    level: SummaryLevel
    subject_kind: SubjectKind
    subject_key: str
    title: str
    content: str
    child_ids: list[str]
    memory_ids: list[str]
    cited_ids: list[str]
    method: str
    period_start: UtcDatetime | None = None
    period_end: UtcDatetime | None = None
    tokens: int
    created_at: UtcDatetime
    retired_at: UtcDatetime | None = None
    retired_reason: str | None = None


ProfileSection = Literal["static", "dynamic"]


class ProfileLine(BaseModel):
    """One line of a profile and the memories it was built from."""

    section: ProfileSection
    text: str
    memory_ids: list[str]


class Profile(BaseModel):
    """What the store holds about a user at a glance: stable facts (static) and what is going on now
    (dynamic). `withheld` counts lines not shown because a memory they cite is no longer current;
    the next `profiles` run rebuilds without them."""

    tenant_id: str
    user_id: str
    version: int
    updated_at: UtcDatetime
    static: list[ProfileLine]
    dynamic: list[ProfileLine]
    withheld: int = 0


@dataclass(frozen=True)
class TopicDraft:
    """A topic `cluster` found: the stored topic it continues (None: a new one), its label and
    distinctive terms, and its memories with their membership strength (0-1)."""

    topic_id: str | None
    label: str
    terms: tuple[str, ...]
    members: dict[str, float]


class Topic(BaseModel):
    """A topic of a user's memories."""

    id: str
    tenant_id: str
    user_id: str
    label: str
    terms: list[str]
    size: int
    memory_ids: list[str]
    created_at: UtcDatetime
    updated_at: UtcDatetime
