"""What the graph queries answer (entity list, card, memories, subgraph, evolution, conflicts), as
users see them through every interface. Apart from `models` because they are one concept: the
entity graph as a scope sees it, through the memories it may read.

Counts, times and hotness are the scope's own: they come from the memories the scope sees, never
from the tenant-wide entity row, so they say nothing of another owner's memories.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from mnemoflow.models import Citation, MemoryItem
from mnemoflow.timeutil import UtcDatetime

ConflictType = Literal["CONFLICTS_WITH", "MAY_UPDATE"]
CONFLICT_TYPES: tuple[str, ...] = ("CONFLICTS_WITH", "MAY_UPDATE")


class NamedEntity(BaseModel):
    entity_id: str = Field(description="Opaque id: read the name and type, never the id.")
    name: str
    type: str


class Entity(NamedEntity):
    """An entity as one scope sees it."""

    aliases: list[str] = Field(default_factory=list)
    mention_count: int = Field(description="Memories of the scope naming it, past versions included, deleted "
                                           "ones not.")
    current_mentions: int = Field(description="Of those, the current ones (latest, not expired or archived).")
    hotness: float = Field(description="Decayed mention rate as of now: each mention adds 1, halving every 30 "
                                       "days since it was said.")
    first_seen: UtcDatetime | None = None
    last_seen: UtcDatetime | None = None


class EntityList(BaseModel):
    entities: list[Entity]


class CitedMemory(BaseModel):
    """A memory with where it came from (the turns or the document it was read from)."""

    memory: MemoryItem
    citations: list[Citation]


class RelationNeighbour(BaseModel):
    """An entity a relation joins to this one (`works_on`, `located_at`, ...)."""

    entity: NamedEntity
    predicates: list[str]
    direction: Literal["out", "in", "both"] = Field(description="out: this entity is the subject.")
    current: bool = Field(description="Some relation to it is still stated by a current memory.")
    memory_ids: list[str]


class SharedNeighbour(BaseModel):
    """An entity named in the same memories as this one."""

    entity: NamedEntity
    shared_memories: int
    memory_ids: list[str] = Field(description="Up to five of the memories both name, newest first.")


class KeyRelation(BaseModel):
    """A triple stated about the entity, with how many memories state it; `object_name` is None for a
    literal ("morning meetings") and `subject_name` None when the subject is the memory itself."""

    subject: str
    subject_name: str | None = None
    subject_type: str | None = None
    predicate: str
    object: str
    object_name: str | None = None
    object_type: str | None = None
    memories: int
    confidence: float
    current: bool
    since: UtcDatetime
    memory_ids: list[str] = Field(description="Up to five of the memories stating it, newest first.")


class Neighbour(BaseModel):
    """An entity joined to this one, and how: by relations (their predicates), by shared memories, or both."""

    entity: NamedEntity
    predicates: list[str] = Field(default_factory=list)
    shared_memories: int = 0


class EntityCard(BaseModel):
    entity: Entity
    neighbours: list[Neighbour] = Field(description="Every neighbour below, once: by relation first, then by "
                                                    "shared memories.")
    neighbours_by_relation: list[RelationNeighbour]
    neighbours_by_memory: list[SharedNeighbour]
    recent_mentions: list[CitedMemory]
    key_relations: list[KeyRelation]


class EntityMemories(BaseModel):
    entity: NamedEntity
    include_history: bool
    memories: list[CitedMemory] = Field(description="Newest first.")
    truncated: bool = Field(description="More memories name it than the limit returned.")


# ---------------------------------------------------------------------- Cytoscape.js elements
class NodeData(BaseModel):
    id: str
    label: str
    type: str
    mentions: int
    hotness: float
    hops: int = Field(description="Hops from the entity asked about (0: that entity; overview graphs: 0).")


class EdgeData(BaseModel):
    id: str
    source: str
    target: str
    label: str = Field(description="The relation's predicate, or 'co-mentioned'.")
    kind: Literal["relation", "co-mention"]
    weight: int = Field(description="Memories stating it (relations) or naming both (co-mentions).")
    current: bool


class Node(BaseModel):
    data: NodeData


class Edge(BaseModel):
    data: EdgeData


class Elements(BaseModel):
    nodes: list[Node]
    edges: list[Edge]


class EntityGraph(BaseModel):
    """Cytoscape.js elements (`cy.add(graph.elements)`), bounded: `truncated` and `note` say when a cap
    cut it short."""

    elements: Elements
    depth: int
    max_nodes: int
    max_edges: int
    truncated: bool
    note: str | None = None


# ---------------------------------------------------------------------- evolution
class Replacement(BaseModel):
    """The change that replaced a fact: the newer version and the UPDATES link's reason."""

    memory_id: str
    content: str
    at: UtcDatetime
    reason: str | None = None
    confidence: float
    decided_by: str | None = None


class EvolutionStep(BaseModel):
    memory_id: str
    content: str
    kind: str
    said_at: UtcDatetime | None = Field(None, description="When it was said (observed), else when written.")
    valid_from: UtcDatetime
    valid_to: UtcDatetime | None = None
    is_latest: bool
    replaced_by: list[Replacement] = Field(default_factory=list)


class EvolutionChain(BaseModel):
    """One fact's versions, oldest first: each replaced by the next (a fork lists every replacement)."""

    steps: list[EvolutionStep]


class EntityEvolution(BaseModel):
    entity: NamedEntity
    chains: list[EvolutionChain] = Field(description="Chains that changed first, latest change first; then "
                                                     "facts never replaced, newest first.")
    facts: list[EvolutionStep] = Field(description="The chains' steps one after another, in the same order.")
    truncated: bool


# ---------------------------------------------------------------------- conflicts
class Conflict(BaseModel):
    """Two current memories linked CONFLICTS_WITH or MAY_UPDATE that wait for a person's decision."""

    link_id: str
    type: str
    confidence: float
    reason: str | None = None
    decided_by: str | None = None
    created_at: UtcDatetime
    src: MemoryItem
    dst: MemoryItem
    review_id: str | None = Field(None, description="The open review of the same pair, if any.")
    decidable: bool = Field(description="Both memories are the scope's own, so it may decide.")


class ConflictList(BaseModel):
    conflicts: list[Conflict]


class ConflictDecision(BaseModel):
    """What a decision did: the kept memory now UPDATES the other (a past version from then on), or,
    keeping both, a RELATES_TO link by the user settles the pair."""

    link_id: str
    applied: Literal["UPDATES", "RELATES_TO"]
    kept: list[str]
    superseded: list[str]
    review_id: str | None = None
    commit_id: str
