"""The memory-quality scenario suite: small hand-written conversations (`eval/scenarios/*.json`)
with the memories and relationships a careful person would store, and pure functions that score
what a generation run produced against them.

Nothing here runs an engine or touches a store. A runner ingests each scenario's conversations,
then hands over what came out (`ProducedMemory`, `ProducedLink`, the ids each recall check
returned); `score_scenario` and `build_report` turn that into a `ScenarioReport`.

Link direction is "src TYPE dst", the way `memory_links` reads: the newer memory UPDATES the one
it replaces, a duplicate is DUPLICATE_OF the original, a detail EXTENDS its base, an inferred
memory DERIVES from each memory that supports it; CONFLICTS_WITH is symmetric.

The suite is split once and for all into a tuning half and a checking half by each file's name
(`scenario_half`); the report carries the figures of both halves beside the overall ones.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    computed_field,
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


# ---------------------------------------------------------------------------------------------
# what a run produced


@dataclass(frozen=True)
class ProducedMemory:
    """A memory the pipeline stored for a scenario. `source_turn_ids` (the turns it cites) are
    optional: they break ties between candidates and show a duplicate folded into its original."""

    memory_id: str
    tenant_id: str
    user_id: str
    content: str
    kind: str
    is_latest: bool = True
    source_turn_ids: tuple[str, ...] = ()
    event_start_at: datetime | None = None


@dataclass(frozen=True)
class ProducedLink:
    """A `memory_links` row between two produced memories: `src TYPE dst`."""

    src: str
    dst: str
    type: str


@dataclass(frozen=True)
class ScenarioRun:
    """What one run produced for one scenario; `recalled[i]` are the ids the default recall
    returned for `scenario.recall_checks[i]` (memory ids; other ids, e.g. chunks, are ignored)."""

    memories: Sequence[ProducedMemory] = ()
    links: Sequence[ProducedLink] = ()
    recalled: Sequence[Sequence[str]] = ()


# ---------------------------------------------------------------------------------------------
# figures


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


class _Figures(BaseModel):
    # a report read back carries its computed figures (precision, ...): they are recomputed, not refused
    model_config = ConfigDict(extra="ignore")


class ExtractionCounts(_Figures):
    expected: int = 0
    produced: int = 0
    matched_expected: int = 0  # including duplicates folded into their original
    matched_produced: int = 0
    kind_correct: int = 0  # among matched pairs
    latest_correct: int = 0  # among matched pairs: produced is_latest == expected latest
    dated: int = 0  # matched pairs whose expected memory has an event_start
    date_correct: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def precision(self) -> float | None:
        return _ratio(self.matched_produced, self.produced)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def recall(self) -> float | None:
        return _ratio(self.matched_expected, self.expected)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def kind_accuracy(self) -> float | None:
        return _ratio(self.kind_correct, self.matched_produced)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def latest_accuracy(self) -> float | None:
        return _ratio(self.latest_correct, self.matched_produced)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def event_date_accuracy(self) -> float | None:
        return _ratio(self.date_correct, self.dated)

    def __add__(self, other: ExtractionCounts) -> ExtractionCounts:
        return ExtractionCounts(**{name: getattr(self, name) + getattr(other, name)
                                   for name in ExtractionCounts.model_fields})


class ClassCounts(_Figures):
    """One relationship class: `correct` of `expected` found (accuracy), and of the `produced`
    links of that type (for "new": matched memories classified new) how many were expected."""

    expected: int = 0
    correct: int = 0
    produced: int = 0
    produced_correct: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def accuracy(self) -> float | None:
        return _ratio(self.correct, self.expected)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def precision(self) -> float | None:
        return _ratio(self.produced_correct, self.produced)

    def __add__(self, other: ClassCounts) -> ClassCounts:
        return ClassCounts(**{name: getattr(self, name) + getattr(other, name) for name in ClassCounts.model_fields})


class UnmatchedExpected(_Figures):
    key: str
    content: str


class UnmatchedProduced(_Figures):
    memory_id: str
    content: str


class MemoryMatching(_Figures):
    """The one-to-one matching of expected keys to produced memory ids.

    `absorbed`: duplicates the pipeline folded into their original (no memory of their own, the
    original cites their turns) -> the original's produced id."""

    pairs: dict[str, str] = Field(default_factory=dict)
    absorbed: dict[str, str] = Field(default_factory=dict)
    unmatched_expected: list[UnmatchedExpected] = Field(default_factory=list)
    unmatched_produced: list[UnmatchedProduced] = Field(default_factory=list)
    counts: ExtractionCounts = Field(default_factory=ExtractionCounts)
    # what the scorers after matching need to know about both sides
    expected_latest: dict[str, bool] = Field(default_factory=dict)
    expected_scope: dict[str, tuple[str, str]] = Field(default_factory=dict)
    produced_latest: dict[str, bool] = Field(default_factory=dict)
    produced_scope: dict[str, tuple[str, str]] = Field(default_factory=dict)

    def resolve(self, key: str) -> str | None:
        """The produced memory id standing for expected `key`, if any."""
        return self.pairs.get(key) or self.absorbed.get(key)

    def keys_of(self, memory_id: str) -> list[str]:
        return [k for k, m in (*self.pairs.items(), *self.absorbed.items()) if m == memory_id]


def _date_matches(expected: str, produced: datetime | None) -> bool:
    return produced is not None and produced.date().isoformat().startswith(expected)


def match_memories(
    expected: Sequence[ExpectedMemory],
    produced: Sequence[ProducedMemory],
    relationships: Sequence[ExpectedRelationship] = (),
) -> MemoryMatching:
    """Greedy one-to-one matching: a produced memory may match an expected memory of the same tenant
    and user whose matcher its content satisfies. Pairs are taken in order of shared source turns
    (most first), then originals before their duplicates (the src of an expected DUPLICATE_OF, which
    match the same words), then expected order, then produced order. A duplicate left without a
    memory of its own counts as matched when its original's memory cites one of its turns (folded in, as idempotent storage
    does); it then adds nothing to the produced side."""
    duplicate_of = {r.src: r.dst for r in relationships if r.type == "DUPLICATE_OF"}
    candidates = []
    for ei, exp in enumerate(expected):
        wanted_turns = set(exp.source_turn_ids)
        for pi, prod in enumerate(produced):
            if (prod.tenant_id, prod.user_id) == exp.scope and memory_matches(exp, prod.content):
                shared = len(wanted_turns & set(prod.source_turn_ids))
                candidates.append((-shared, exp.key in duplicate_of, ei, pi))
    candidates.sort()
    pairs: dict[str, str] = {}
    taken: set[int] = set()
    for _, _, ei, pi in candidates:
        if expected[ei].key in pairs or pi in taken:
            continue
        pairs[expected[ei].key] = produced[pi].memory_id
        taken.add(pi)

    by_id = {p.memory_id: p for p in produced}
    absorbed: dict[str, str] = {}
    for exp in expected:
        original = duplicate_of.get(exp.key)
        if exp.key in pairs or original not in pairs:
            continue
        if set(exp.source_turn_ids) & set(by_id[pairs[original]].source_turn_ids):
            absorbed[exp.key] = pairs[original]

    counts = ExtractionCounts(expected=len(expected), produced=len(produced),
                              matched_expected=len(pairs) + len(absorbed), matched_produced=len(pairs))
    for exp in expected:
        if exp.key not in pairs:
            continue
        prod = by_id[pairs[exp.key]]
        counts.kind_correct += prod.kind == exp.kind
        counts.latest_correct += prod.is_latest == exp.latest
        if exp.event_start:
            counts.dated += 1
            counts.date_correct += _date_matches(exp.event_start, prod.event_start_at)
    return MemoryMatching(
        pairs=pairs, absorbed=absorbed,
        unmatched_expected=[UnmatchedExpected(key=e.key, content=e.content) for e in expected
                            if e.key not in pairs and e.key not in absorbed],
        unmatched_produced=[UnmatchedProduced(memory_id=p.memory_id, content=p.content)
                            for i, p in enumerate(produced) if i not in taken],
        counts=counts,
        expected_latest={e.key: e.latest for e in expected},
        expected_scope={e.key: e.scope for e in expected},
        produced_latest={p.memory_id: p.is_latest for p in produced},
        produced_scope={p.memory_id: (p.tenant_id, p.user_id) for p in produced},
    )


class RelationshipOutcome(_Figures):
    """How one expected relationship (or one expected "new" memory) came out: `outcome` is the
    produced type between the matched pair, "absorbed" (a duplicate folded into its original),
    "TYPE (reversed)", "missing" (both matched, no link) or "unmatched" (an end was not produced)."""

    src: str
    dst: str | None
    expected: str
    outcome: str
    correct: bool


class RelationshipScore(_Figures):
    by_class: dict[str, ClassCounts] = Field(default_factory=dict)
    confusion: dict[str, dict[str, int]] = Field(default_factory=dict)
    outcomes: list[RelationshipOutcome] = Field(default_factory=list)
    cross_scope_links: int = 0  # produced links between memories of different scopes


def score_relationships(
    expected_rels: Sequence[ExpectedRelationship],
    matching: MemoryMatching,
    produced_links: Sequence[ProducedLink],
) -> RelationshipScore:
    """Per class: an expected relationship is correct when a produced link of the same type joins the
    memories matched to its src and dst (either way for CONFLICTS_WITH); a duplicate folded into its
    original is correct too. "new": expected memories that are the src of no expected UPDATES,
    DUPLICATE_OF, EXTENDS or DERIVES (a conflicting memory is stored as new, with a CONFLICTS_WITH
    link besides), correct when matched and their memory is the src of no link of those types.
    Link types outside the classes (EXTRACTED_FROM, RELATES_TO, ...) are ignored."""
    links = [link for link in produced_links if link.type in RELATIONSHIP_TYPES]
    between: dict[tuple[str, str], set[str]] = defaultdict(set)
    for link in links:
        between[(link.src, link.dst)].add(link.type)
        if link.type in SYMMETRIC_TYPES:
            between[(link.dst, link.src)].add(link.type)

    by_class = {c: ClassCounts() for c in CLASSES}
    outcomes: list[RelationshipOutcome] = []
    expected_pairs: set[tuple[str, str, str]] = set()
    for rel in expected_rels:
        src, dst = matching.resolve(rel.src), matching.resolve(rel.dst)
        if rel.type == "DUPLICATE_OF" and rel.src in matching.absorbed:
            outcome = "absorbed"
        elif src is None or dst is None:
            outcome = "unmatched"
        elif rel.type in between[(src, dst)]:
            outcome = rel.type
        elif between[(src, dst)]:
            outcome = min(between[(src, dst)])
        elif between[(dst, src)]:
            outcome = f"{min(between[(dst, src)])} (reversed)"
        else:
            outcome = "missing"
        if src is not None and dst is not None:
            expected_pairs.add((src, dst, rel.type))
            if rel.type in SYMMETRIC_TYPES:
                expected_pairs.add((dst, src, rel.type))
        correct = outcome in (rel.type, "absorbed")
        by_class[rel.type].expected += 1
        by_class[rel.type].correct += correct
        outcomes.append(RelationshipOutcome(src=rel.src, dst=rel.dst, expected=rel.type, outcome=outcome,
                                            correct=correct))

    counted: set[tuple[str, str, str]] = set()
    for link in links:
        key = (link.src, link.dst, link.type)
        if link.type in SYMMETRIC_TYPES:
            key = (*sorted((link.src, link.dst)), link.type)  # type: ignore[assignment]
        if key in counted:
            continue
        counted.add(key)
        by_class[link.type].produced += 1
        by_class[link.type].produced_correct += (link.src, link.dst, link.type) in expected_pairs

    classifying: dict[str, list[str]] = defaultdict(list)
    for link in links:
        if link.type in NOT_NEW_LINK_TYPES:
            classifying[link.src].append(link.type)
    has_relationship = {rel.src for rel in expected_rels if rel.type in NOT_NEW_LINK_TYPES}
    for key in matching.expected_latest:
        if key in has_relationship:
            continue
        memory_id = matching.pairs.get(key)
        if memory_id is None:
            outcome = "unmatched"
        else:
            outcome = min(classifying[memory_id]) if classifying[memory_id] else "new"
        by_class["new"].expected += 1
        by_class["new"].correct += outcome == "new"
        outcomes.append(RelationshipOutcome(src=key, dst=None, expected="new", outcome=outcome,
                                            correct=outcome == "new"))
    new_keys = {o.src for o in outcomes if o.expected == "new"}
    for key, memory_id in matching.pairs.items():
        if not classifying[memory_id]:
            by_class["new"].produced += 1
            by_class["new"].produced_correct += key in new_keys

    confusion: dict[str, dict[str, int]] = {}
    for o in outcomes:
        row = confusion.setdefault(o.expected, {})
        row[o.outcome] = row.get(o.outcome, 0) + 1
    cross = sum(1 for link in links
                if link.src in matching.produced_scope and link.dst in matching.produced_scope
                and matching.produced_scope[link.src] != matching.produced_scope[link.dst])
    return RelationshipScore(by_class=by_class, confusion=confusion, outcomes=outcomes, cross_scope_links=cross)


class CheckOutcome(_Figures):
    tenant_id: str
    user_id: str
    query: str
    returned: list[str] = Field(default_factory=list)  # expected keys whose memory came back
    missing: list[str] = Field(default_factory=list)  # must_return keys that did not
    refused_returned: list[str] = Field(default_factory=list)  # must_not_return keys that did
    stale_returned: list[str] = Field(default_factory=list)  # produced ids of superseded memories
    out_of_scope_returned: list[str] = Field(default_factory=list)  # produced ids of another scope
    passed: bool = False


class RecallCheckScore(_Figures):
    checks: int = 0
    passed: int = 0
    must_return: int = 0
    must_return_hits: int = 0
    must_not_return_violations: int = 0
    stale_returned: int = 0
    out_of_scope_returned: int = 0
    outcomes: list[CheckOutcome] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def hit_rate(self) -> float | None:
        return _ratio(self.must_return_hits, self.must_return)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_rate(self) -> float | None:
        return _ratio(self.passed, self.checks)


def score_recall_checks(
    checks: Sequence[RecallCheck],
    matching: MemoryMatching,
    recalled_ids_per_check: Sequence[Sequence[str]],
) -> RecallCheckScore:
    """A check passes when all its must_return memories came back and nothing refused, stale or
    from another scope did. Stale: a returned memory that is superseded, by the expectation (its
    expected memory has latest false) or by the pipeline's own record (is_latest false)."""
    if len(recalled_ids_per_check) != len(checks):
        raise ValueError(f"{len(checks)} recall checks but {len(recalled_ids_per_check)} result lists")
    score = RecallCheckScore(checks=len(checks))
    for check, recalled in zip(checks, recalled_ids_per_check):
        ids = [i for i in dict.fromkeys(recalled) if i in matching.produced_scope]
        got = set(ids)
        outcome = CheckOutcome(tenant_id=check.tenant_id, user_id=check.user_id, query=check.query)
        outcome.returned = [k for k in matching.expected_latest if matching.resolve(k) in got]
        outcome.missing = [k for k in check.must_return if matching.resolve(k) not in got]
        outcome.refused_returned = [k for k in check.must_not_return if matching.resolve(k) in got]
        outcome.stale_returned = [
            i for i in ids
            if not matching.produced_latest[i] or any(not matching.expected_latest[k] for k in matching.keys_of(i))]
        outcome.out_of_scope_returned = [i for i in ids if matching.produced_scope[i] != check.scope]
        outcome.passed = not (outcome.missing or outcome.refused_returned or outcome.stale_returned
                              or outcome.out_of_scope_returned)
        score.passed += outcome.passed
        score.must_return += len(check.must_return)
        score.must_return_hits += len(check.must_return) - len(outcome.missing)
        score.must_not_return_violations += len(outcome.refused_returned)
        score.stale_returned += len(outcome.stale_returned)
        score.out_of_scope_returned += len(outcome.out_of_scope_returned)
        score.outcomes.append(outcome)
    return score


# ---------------------------------------------------------------------------------------------
# per scenario and the report


class ScenarioResult(_Figures):
    id: str
    tags: list[str]
    extraction: ExtractionCounts
    unmatched_expected: list[UnmatchedExpected]
    unmatched_produced: list[UnmatchedProduced]
    relationships: RelationshipScore
    recall_checks: RecallCheckScore

    @computed_field  # type: ignore[prop-decorator]
    @property
    def half(self) -> Half:
        """The suite half of its file (`scenario_half`)."""
        return scenario_half(f"{self.id}.json")


def score_scenario(scenario: Scenario, run: ScenarioRun) -> ScenarioResult:
    matching = match_memories(scenario.expected_memories, run.memories, scenario.expected_relationships)
    return ScenarioResult(
        id=scenario.id, tags=list(scenario.tags), extraction=matching.counts,
        unmatched_expected=matching.unmatched_expected, unmatched_produced=matching.unmatched_produced,
        relationships=score_relationships(scenario.expected_relationships, matching, run.links),
        recall_checks=score_recall_checks(scenario.recall_checks, matching, run.recalled),
    )


class RecallSummary(_Figures):
    checks: int = 0
    passed: int = 0
    must_return: int = 0
    must_return_hits: int = 0
    must_not_return_violations: int = 0
    stale_returned: int = 0
    out_of_scope_returned: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def hit_rate(self) -> float | None:
        return _ratio(self.must_return_hits, self.must_return)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_rate(self) -> float | None:
        return _ratio(self.passed, self.checks)


class HalfFigures(_Figures):
    """The headline figures of one half of the suite (`scenario_half`): extraction precision and
    recall, each relationship class's accuracy, the recall checks (passed, stale, out of scope)."""

    scenarios_count: int = 0
    extraction: ExtractionCounts = Field(default_factory=ExtractionCounts)
    relationships: dict[str, ClassCounts] = Field(default_factory=dict)
    cross_scope_links: int = 0
    recall: RecallSummary = Field(default_factory=RecallSummary)


class ScenarioReport(_Figures):
    """Every figure of one suite run; `model_dump_json()` is the report file. The top-level figures
    are over every scenario run; `halves` has the same headline figures for the tune and the check
    half (a half with no scenario in the run has scenarios_count 0 and no ratios)."""

    engine: str
    config: dict[str, Any] = Field(default_factory=dict)
    scenarios_count: int
    extraction: ExtractionCounts
    extraction_by_tag: dict[str, ExtractionCounts]
    relationships: dict[str, ClassCounts]
    confusion: dict[str, dict[str, int]]
    cross_scope_links: int
    recall: RecallSummary
    aims: dict[str, float]
    shortfalls: list[str]
    scenarios: list[ScenarioResult]
    halves: dict[str, HalfFigures] = Field(default_factory=dict)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def meets_aims(self) -> bool:
        return not self.shortfalls


def _shortfalls(extraction: ExtractionCounts, classes: Mapping[str, ClassCounts], recall: RecallSummary,
                aims: Mapping[str, float]) -> list[str]:
    out = []
    for name, value in (("extraction_precision", extraction.precision), ("extraction_recall", extraction.recall)):
        if value is not None and value < aims[name]:
            out.append(f"{name} {value:.3f} < {aims[name]}")
    for cls, counts in classes.items():
        if counts.accuracy is not None and counts.accuracy < aims["relationship_accuracy"]:
            out.append(f"{cls} accuracy {counts.accuracy:.3f} < {aims['relationship_accuracy']}")
    for name in ("stale_returned", "out_of_scope_returned"):
        if getattr(recall, name) > aims[name]:
            out.append(f"{name} {getattr(recall, name)} > {aims[name]:g}")
    return out


def _half_figures(results: Sequence[ScenarioResult]) -> HalfFigures:
    figures = HalfFigures(scenarios_count=len(results), relationships={c: ClassCounts() for c in CLASSES})
    for r in results:
        figures.extraction += r.extraction
        for cls, counts in r.relationships.by_class.items():
            figures.relationships[cls] += counts
        figures.cross_scope_links += r.relationships.cross_scope_links
        for name in RecallSummary.model_fields:
            setattr(figures.recall, name, getattr(figures.recall, name) + getattr(r.recall_checks, name))
    return figures


def build_report(results: Iterable[ScenarioResult], *, engine: str = "rule-based",
                 config: Mapping[str, Any] | None = None, aims: Mapping[str, float] | None = None) -> ScenarioReport:
    results = list(results)
    aims = {**DEFAULT_AIMS, **(aims or {})}
    overall = _half_figures(results)
    by_tag: dict[str, ExtractionCounts] = {}
    confusion: dict[str, dict[str, int]] = {}
    for r in results:
        for tag in r.tags:
            by_tag[tag] = by_tag.get(tag, ExtractionCounts()) + r.extraction
        for exp, row in r.relationships.confusion.items():
            target = confusion.setdefault(exp, {})
            for outcome, n in row.items():
                target[outcome] = target.get(outcome, 0) + n
    halves = {half: _half_figures([r for r in results if r.half == half]) for half in HALVES}
    return ScenarioReport(
        engine=engine, config=dict(config or {}), scenarios_count=len(results), extraction=overall.extraction,
        extraction_by_tag=dict(sorted(by_tag.items())), relationships=overall.relationships,
        confusion={c: dict(sorted(confusion[c].items(), key=lambda kv: (-kv[1], kv[0])))
                   for c in CLASSES if c in confusion},
        cross_scope_links=overall.cross_scope_links, recall=overall.recall, aims=aims,
        shortfalls=_shortfalls(overall.extraction, overall.relationships, overall.recall, aims), scenarios=results,
        halves=halves,
    )


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def summary_table(report: ScenarioReport) -> str:
    """The report on one screen, as plain text: every figure over the whole run, with the tune and
    the check half beside it (rows for extraction and recall checks, columns for relationships);
    a half with no scenario in the run is left out."""
    halves = [h for h in HALVES if h in report.halves and report.halves[h].scenarios_count]
    split = ", ".join(f"{h} {report.halves[h].scenarios_count}" for h in halves)
    lines = [f"Scenario suite: {report.scenarios_count} scenarios" + (f" ({split})" if split else "")
             + f", engine {report.engine}", ""]
    head = f"{'extraction':<20}{'expected':>9}{'produced':>9}{'matched':>8}{'precision':>10}{'recall':>8}" \
           f"{'kind':>7}{'latest':>8}{'dates':>7}"
    lines.append(head)

    def extraction_row(label: str, c: ExtractionCounts) -> str:
        return (f"{label:<20}{c.expected:>9}{c.produced:>9}{c.matched_expected:>8}{_fmt(c.precision):>10}"
                f"{_fmt(c.recall):>8}{_fmt(c.kind_accuracy):>7}{_fmt(c.latest_accuracy):>8}"
                f"{_fmt(c.event_date_accuracy):>7}")

    lines.append(extraction_row("all", report.extraction))
    for half in halves:
        lines.append(extraction_row(f"{half} half", report.halves[half].extraction))
    for tag, counts in report.extraction_by_tag.items():
        lines.append(extraction_row(f"  {tag}", counts))
    half_heads = "".join(f"{h + ' accuracy':>16}" for h in halves)
    lines += ["", (f"{'relationship':<20}{'expected':>9}{'correct':>9}{'accuracy':>10}{'links':>7}{'precision':>10}"
                   f"{half_heads}  confusion (expected -> produced)")]
    for cls, c in report.relationships.items():
        confusion = ", ".join(f"{k} {v}" for k, v in report.confusion.get(cls, {}).items())
        per_half = ""
        for h in halves:
            hc = report.halves[h].relationships.get(cls, ClassCounts())
            cell = f"{hc.correct}/{hc.expected} {_fmt(hc.accuracy)}" if hc.expected else "-"
            per_half += f"{cell:>16}"
        lines.append(f"{cls:<20}{c.expected:>9}{c.correct:>9}{_fmt(c.accuracy):>10}{c.produced:>7}"
                     f"{_fmt(c.precision):>10}{per_half}  {confusion}")

    def recall_row(label: str, r: RecallSummary) -> str:
        return (f"{label:<20}{f'{r.passed}/{r.checks}':>9}{_fmt(r.pass_rate):>9}{_fmt(r.hit_rate):>10}"
                f"{r.must_not_return_violations:>9}{r.stale_returned:>7}{r.out_of_scope_returned:>14}")

    lines += ["", (f"{'recall checks':<20}{'passed':>9}{'rate':>9}{'hit rate':>10}{'refused':>9}{'stale':>7}"
                   f"{'out of scope':>14}"), recall_row("all", report.recall)]
    for half in halves:
        lines.append(recall_row(f"{half} half", report.halves[half].recall))
    lines.append(f"cross-scope links {report.cross_scope_links}")
    lines.append("aims met" if report.meets_aims else "below aim: " + "; ".join(report.shortfalls))
    return "\n".join(lines)
