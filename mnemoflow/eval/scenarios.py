"""The memory-quality scenario suite: small hand-written conversations (`eval/scenarios/*.json`)
with the memories and relationships a careful person would store, and pure functions that score
what a generation run produced against them.

Nothing here runs an engine or touches a store. A runner ingests each scenario's conversations,
then hands over what came out (`ProducedMemory`, `ProducedLink`, the ids each recall check
returned); `scenario_scores.score_scenario` and `scenario_report.build_report` turn that into a
`ScenarioReport`.

Link direction is "src TYPE dst", the way `memory_links` reads: the newer memory UPDATES the one
it replaces, a duplicate is DUPLICATE_OF the original, a detail EXTENDS its base, an inferred
memory DERIVES from each memory that supports it; CONFLICTS_WITH is symmetric.

The suite is split once and for all into a tuning half and a checking half by each file's name
(`scenario_half`); the report carries the figures of both halves beside the overall ones.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from mnemoflow.errors import BadInputError
from mnemoflow.models import MemoryKind
from mnemoflow.timeutil import parse_timestamp

TAGS = frozenset({
    "follow-up",          # a short answer that only makes sense with the question before it
    "correction",         # the speaker corrects something said earlier
    "preference-change",  # a preference that changes over time
    "update",             # a fact replaced by a newer version (UPDATES)
    "extends",            # a detail added to an earlier memory (EXTENDS)
    "duplicate",          # the same fact said again, phrased differently (DUPLICATE_OF)
    "derives",            # a memory inferred from others (DERIVES)
    "conflict",           # two sources disagree, neither supersedes (CONFLICTS_WITH)
    "multi-user",         # several users of one tenant; isolation matters
    "multi-tenant",       # several tenants; isolation matters
    "dated",              # relative dates to resolve against the turn's time
    "assistant",          # assistant turns in the conversation
    "chit-chat",          # turns that should produce no memory
    "move",               # a home, address or office changes
    "switch",             # a tool, product, provider or habit replaced by another
    "numeric-change",     # an amount, price, count or dose changes to a stated new value
    "device-change",      # a phone, computer, operating system, car or router replaced
    "date-change",        # an appointment, trip, launch or deadline moved to another date or time
    "exact-token",        # a value that must be kept verbatim (address, code, reference, version, amount)
    "group-chat",         # three or more speakers: who said it and who it is about differ
    "not-an-update",      # looks like a change but is not one (a second thing, a past event, someone else)
})
RELATIONSHIP_TYPES: tuple[str, ...] = ("UPDATES", "EXTENDS", "DUPLICATE_OF", "DERIVES", "CONFLICTS_WITH")
CLASSES: tuple[str, ...] = ("new", *RELATIONSHIP_TYPES)
SYMMETRIC_TYPES = frozenset({"CONFLICTS_WITH"})
# a produced memory that is the src of one of these was not classified "new"
NOT_NEW_LINK_TYPES = frozenset({"UPDATES", "DUPLICATE_OF", "EXTENDS", "DERIVES"})
DEFAULT_AIMS: dict[str, float] = {"extraction_precision": 0.85, "extraction_recall": 0.85,
                                  "relationship_accuracy": 0.85, "stale_returned": 0, "out_of_scope_returned": 0}

HALVES: tuple[str, ...] = ("tune", "check")
Half = Literal["tune", "check"]


def scenario_half(file_name: str | Path) -> Half:
    """The half of the suite a scenario file belongs to, fixed by its file name alone.

    The rule: take the file's name with its extension (`update-moved-hamburg-munich.json`; for a
    path, only the last part counts), encode it as UTF-8, hash it with SHA-256; an even first byte
    of the digest puts it in the **tune** half, an odd one in the **check** half. The rule never
    changes and never looks at the contents, so adding, editing or removing other files moves no
    scenario from one half to the other. Engine rules may be written and tuned while looking at
    tune-half scenarios; no engine rule may be written against a check-half scenario, whose figures
    are what the engine does on wording it was not fitted to."""
    name = Path(file_name).name
    return "tune" if hashlib.sha256(name.encode("utf-8")).digest()[0] % 2 == 0 else "check"


RelationshipType = Literal["UPDATES", "EXTENDS", "DUPLICATE_OF", "DERIVES", "CONFLICTS_WITH"]
Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]*$")]
NonBlank = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Needle = Annotated[str, StringConstraints(pattern=r"^\S(?:.*\S)?$")]  # no surrounding whitespace
EventDate = Annotated[str, StringConstraints(pattern=r"^\d{4}(-\d{2}(-\d{2})?)?$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------------------------------------
# the file format


class ScenarioTurn(_Strict):
    """One turn, in the transcript format the conversations connector reads (DESIGN.md)."""

    session_id: NonBlank
    turn_id: NonBlank
    speaker: NonBlank
    role: Literal["user", "assistant", "other"]
    ts: NonBlank
    text: NonBlank

    @field_validator("ts")
    @classmethod
    def _iso(cls, value: str) -> str:
        try:
            parse_timestamp(value)
        except ValueError:
            raise ValueError(f"not an ISO 8601 timestamp: {value!r}") from None
        return value

    @property
    def at(self) -> datetime:
        return parse_timestamp(self.ts)


class ScenarioConversation(_Strict):
    """The turns one user of one tenant had; turns are in time order."""

    tenant_id: Slug
    user_id: Slug
    turns: list[ScenarioTurn] = Field(min_length=1)

    @model_validator(mode="after")
    def _in_time_order(self) -> ScenarioConversation:
        for before, after in zip(self.turns, self.turns[1:]):
            if after.at < before.at:
                raise ValueError(f"turn {after.turn_id} is earlier than turn {before.turn_id}")
        return self

    @property
    def scope(self) -> tuple[str, str]:
        return (self.tenant_id, self.user_id)

    def transcript(self) -> list[dict[str, Any]]:
        """The turns as transcript rows (one JSONL line each), ready for the conversations connector."""
        return [turn.model_dump() for turn in self.turns]


class ExpectedMemory(_Strict):
    """A memory a careful person would store. A produced memory in the same tenant and user matches
    it when its content contains every `must_include` and no `must_not_include` substring
    (case-insensitive). `latest: false` marks a memory superseded later in the scenario."""

    key: NonBlank
    tenant_id: Slug
    user_id: Slug
    kind: MemoryKind
    content: NonBlank
    must_include: list[Needle] = Field(min_length=1)
    must_not_include: list[Needle] = Field(default_factory=list)
    source_turn_ids: list[NonBlank] = Field(min_length=1)
    latest: bool = True
    event_start: EventDate | None = None  # "2025", "2025-04" or "2025-04-12": when it happens in the world

    @model_validator(mode="after")
    def _content_matches_itself(self) -> ExpectedMemory:
        if not memory_matches(self, self.content):
            raise ValueError(f"memory {self.key}: its own content does not satisfy must_include/must_not_include")
        return self

    @property
    def scope(self) -> tuple[str, str]:
        return (self.tenant_id, self.user_id)


class ExpectedRelationship(_Strict):
    """`src TYPE dst` between two expected memories of the same scope."""

    src: NonBlank
    dst: NonBlank
    type: RelationshipType


class RecallCheck(_Strict):
    """A default recall in one scope: `must_return` keys (of that scope, all latest) are expected among
    the results; `must_not_return` keys (any scope: stale versions, other users' memories) must not be."""

    tenant_id: Slug
    user_id: Slug
    query: NonBlank
    must_return: list[NonBlank] = Field(default_factory=list)
    must_not_return: list[NonBlank] = Field(default_factory=list)

    @property
    def scope(self) -> tuple[str, str]:
        return (self.tenant_id, self.user_id)


class Scenario(_Strict):
    id: Slug
    tags: list[str] = Field(min_length=1)
    description: NonBlank
    conversations: list[ScenarioConversation] = Field(min_length=1)
    expected_memories: list[ExpectedMemory] = Field(min_length=1)
    expected_relationships: list[ExpectedRelationship] = Field(default_factory=list)
    recall_checks: list[RecallCheck] = Field(default_factory=list)

    @field_validator("tags")
    @classmethod
    def _known_tags(cls, tags: list[str]) -> list[str]:
        unknown = sorted(set(tags) - TAGS)
        if unknown:
            raise ValueError(f"unknown tags {unknown}; known: {sorted(TAGS)}")
        if len(set(tags)) != len(tags):
            raise ValueError("tags repeat")
        return tags

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        scopes: dict[tuple[str, str], set[str]] = {}
        seen_turns: set[str] = set()
        for conversation in self.conversations:
            if conversation.scope in scopes:
                raise ValueError(f"two conversations for tenant {conversation.tenant_id} user {conversation.user_id}")
            ids = [t.turn_id for t in conversation.turns]
            repeated = sorted((set(ids) & seen_turns) | {i for i, n in Counter(ids).items() if n > 1})
            if repeated:
                raise ValueError(f"turn ids repeat: {repeated}")
            seen_turns.update(ids)
            scopes[conversation.scope] = set(ids)

        memories: dict[str, ExpectedMemory] = {}
        for memory in self.expected_memories:
            if memory.key in memories:
                raise ValueError(f"memory key {memory.key} repeats")
            if memory.scope not in scopes:
                raise ValueError(f"memory {memory.key}: no conversation for tenant {memory.tenant_id} "
                                 f"user {memory.user_id}")
            unknown = sorted(set(memory.source_turn_ids) - scopes[memory.scope])
            if unknown:
                raise ValueError(f"memory {memory.key}: source turns {unknown} are not turns of its conversation")
            memories[memory.key] = memory

        replaced: set[str] = set()
        duplicates: set[frozenset[str]] = set()
        pairs: set[tuple[str, str, str]] = set()
        for rel in self.expected_relationships:
            for key in (rel.src, rel.dst):
                if key not in memories:
                    raise ValueError(f"relationship {rel.src} {rel.type} {rel.dst}: no memory {key}")
            if rel.src == rel.dst:
                raise ValueError(f"relationship {rel.src} {rel.type} {rel.dst} joins a memory to itself")
            if memories[rel.src].scope != memories[rel.dst].scope:
                raise ValueError(f"relationship {rel.src} {rel.type} {rel.dst} crosses scopes")
            pair = (rel.src, rel.dst) if rel.type not in SYMMETRIC_TYPES else tuple(sorted((rel.src, rel.dst)))
            if (*pair, rel.type) in pairs:
                raise ValueError(f"relationship {rel.src} {rel.type} {rel.dst} repeats")
            pairs.add((*pair, rel.type))
            if rel.type == "UPDATES":
                replaced.add(rel.dst)
                if memories[rel.dst].latest:
                    raise ValueError(f"{rel.src} UPDATES {rel.dst}: {rel.dst} must have latest false")
            if rel.type == "DUPLICATE_OF":
                duplicates.add(frozenset((rel.src, rel.dst)))
        stale = {key for key, m in memories.items() if not m.latest}
        if stale - replaced:
            raise ValueError(f"memories {sorted(stale - replaced)} have latest false but nothing UPDATES them")

        # every expected memory must be told apart from the others of its scope by its matcher,
        # so that a run that stores exactly the expected contents scores 1.0 in any order
        for a in self.expected_memories:
            for b in self.expected_memories:
                if a is b or a.scope != b.scope or frozenset((a.key, b.key)) in duplicates:
                    continue
                if memory_matches(a, b.content):
                    raise ValueError(f"memory {b.key}'s content also matches memory {a.key}: "
                                     f"add a must_not_include to {a.key} or a sharper must_include")

        for check in self.recall_checks:
            if check.scope not in scopes:
                raise ValueError(f"recall check {check.query!r}: no conversation for tenant {check.tenant_id} "
                                 f"user {check.user_id}")
            if not check.must_return and not check.must_not_return:
                raise ValueError(f"recall check {check.query!r} expects nothing")
            for key in (*check.must_return, *check.must_not_return):
                if key not in memories:
                    raise ValueError(f"recall check {check.query!r}: no memory {key}")
            both = sorted(set(check.must_return) & set(check.must_not_return))
            if both:
                raise ValueError(f"recall check {check.query!r}: {both} both wanted and refused")
            for key in check.must_return:
                if memories[key].scope != check.scope:
                    raise ValueError(f"recall check {check.query!r}: must_return {key} is outside its scope")
                if not memories[key].latest:
                    raise ValueError(f"recall check {check.query!r}: must_return {key} is superseded")
        return self

    @property
    def memory_by_key(self) -> dict[str, ExpectedMemory]:
        return {m.key: m for m in self.expected_memories}

    @property
    def half(self) -> Half:
        """`scenario_half` of its file (`<id>.json`)."""
        return scenario_half(f"{self.id}.json")


def memory_matches(expected: ExpectedMemory, content: str) -> bool:
    """Whether `content` contains all of `expected.must_include` and none of `must_not_include`."""
    text = content.casefold()
    return (all(s.casefold() in text for s in expected.must_include)
            and not any(s.casefold() in text for s in expected.must_not_include))


def _describe(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "scenario"
    return f"{where}: {first['msg']}" + (f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else "")


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise BadInputError(f"keys repeat in one object: {repeated}")
    return dict(pairs)


def load_scenario(path: Path) -> Scenario:
    """One scenario file, validated; its id must be its file name."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_no_repeated_keys)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadInputError(f"{path.name}: cannot read scenario: {exc}") from None
    except BadInputError as exc:
        raise BadInputError(f"{path.name}: {exc}") from None
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise BadInputError(f"{path.name}: {_describe(exc)}") from None
    if scenario.id != path.stem:
        raise BadInputError(f"{path.name}: id {scenario.id!r} differs from the file name")
    return scenario


def load_scenarios(directory: Path | str) -> list[Scenario]:
    """Every `*.json` scenario under `directory`, in file-name order."""
    root = Path(directory)
    if not root.is_dir():
        raise BadInputError(f"{root}: not a scenario directory")
    scenarios = [load_scenario(path) for path in sorted(root.glob("*.json"))]
    if not scenarios:
        raise BadInputError(f"{root}: no scenario files (*.json)")
    return scenarios


def select_half(scenarios: Iterable[Scenario], half: str) -> list[Scenario]:
    """The scenarios of one half ("tune" or "check"), or all of them ("all"), order kept."""
    if half == "all":
        return list(scenarios)
    if half not in HALVES:
        raise ValueError(f"half must be one of tune, check, all; got {half!r}")
    return [s for s in scenarios if s.half == half]
