"""Scoring a run against a scenario: what the pipeline produced (`ProducedMemory`, `ProducedLink`,
`ScenarioRun`), matched to the expected memories, relationships and recall checks
(`score_scenario`). Pure functions: nothing here runs an engine or touches a store."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    computed_field,
)

from mnemoflow.eval.scenarios import (
    CLASSES,
    NOT_NEW_LINK_TYPES,
    RELATIONSHIP_TYPES,
    SYMMETRIC_TYPES,
    ExpectedMemory,
    ExpectedRelationship,
    Half,
    RecallCheck,
    Scenario,
    memory_matches,
    scenario_half,
)

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


def ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


class Figures(BaseModel):
    # a report read back carries its computed figures (precision, ...): they are recomputed, not refused
    model_config = ConfigDict(extra="ignore")


class ExtractionCounts(Figures):
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
        return ratio(self.matched_produced, self.produced)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def recall(self) -> float | None:
        return ratio(self.matched_expected, self.expected)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def kind_accuracy(self) -> float | None:
        return ratio(self.kind_correct, self.matched_produced)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def latest_accuracy(self) -> float | None:
        return ratio(self.latest_correct, self.matched_produced)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def event_date_accuracy(self) -> float | None:
        return ratio(self.date_correct, self.dated)

    def __add__(self, other: ExtractionCounts) -> ExtractionCounts:
        return ExtractionCounts(**{name: getattr(self, name) + getattr(other, name)
                                   for name in ExtractionCounts.model_fields})


class ClassCounts(Figures):
    """One relationship class: `correct` of `expected` found (accuracy), and of the `produced`
    links of that type (for "new": matched memories classified new) how many were expected."""

    expected: int = 0
    correct: int = 0
    produced: int = 0
    produced_correct: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def accuracy(self) -> float | None:
        return ratio(self.correct, self.expected)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def precision(self) -> float | None:
        return ratio(self.produced_correct, self.produced)

    def __add__(self, other: ClassCounts) -> ClassCounts:
        return ClassCounts(**{name: getattr(self, name) + getattr(other, name) for name in ClassCounts.model_fields})


class UnmatchedExpected(Figures):
    key: str
    content: str


class UnmatchedProduced(Figures):
    memory_id: str
    content: str


class MemoryMatching(Figures):
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


class RelationshipOutcome(Figures):
    """How one expected relationship (or one expected "new" memory) came out: `outcome` is the
    produced type between the matched pair, "absorbed" (a duplicate folded into its original),
    "TYPE (reversed)", "missing" (both matched, no link) or "unmatched" (an end was not produced)."""

    src: str
    dst: str | None
    expected: str
    outcome: str
    correct: bool


class RelationshipScore(Figures):
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


class CheckOutcome(Figures):
    tenant_id: str
    user_id: str
    query: str
    returned: list[str] = Field(default_factory=list)  # expected keys whose memory came back
    missing: list[str] = Field(default_factory=list)  # must_return keys that did not
    refused_returned: list[str] = Field(default_factory=list)  # must_not_return keys that did
    stale_returned: list[str] = Field(default_factory=list)  # produced ids of superseded memories
    out_of_scope_returned: list[str] = Field(default_factory=list)  # produced ids of another scope
    passed: bool = False


class RecallCheckScore(Figures):
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
        return ratio(self.must_return_hits, self.must_return)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_rate(self) -> float | None:
        return ratio(self.passed, self.checks)


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


class ScenarioResult(Figures):
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
