"""Procedural rules as values: their slots (`if`, `then`, `exceptions`), states, and what evaluating
them and selecting tools with them answers. Pure data: no storage, no I/O.

A rule's `if` is a set of context conditions (key=value, all required), its `then` a policy patch
of flat dotted keys (`output.format=json`, `tool.deny=shell,browser`), its `exceptions` a list of
condition sets, any one of which holding keeps the rule from applying.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from mnemoflow.errors import BadInputError
from mnemoflow.timeutil import UtcDatetime

RuleState = Literal["draft", "shadow", "active", "retired"]
RULE_STATES: tuple[str, ...] = get_args(RuleState)
LIVE_STATES = ("shadow", "active")  # what evaluation reads: a draft is recorded only, a retired rule is over
RuleOrigin = Literal["api", "llm", "rules"]  # written by a person or a call, or read from a memory by an engine
Rating = Literal["positive", "negative"]

TOOL_KEYS = ("tool.deny", "tool.allow", "tool.prefer")
ANY_VALUE = "*"  # a condition value that asks only that the key is there
_KEY = re.compile(r"^[a-z][a-z0-9_-]*(?:\.[a-z0-9_-]+)*$")
_TOOL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}$")
MAX_SLOTS = 32  # conditions, patch keys or exceptions in one rule


def check_key(key: str, what: str) -> str:
    key = key.strip().lower()
    if not _KEY.fullmatch(key) or len(key) > 128:
        raise BadInputError(f"{what} key {key!r}: a dotted name of letters, digits, _ and - (e.g. output.format)")
    return key


def condition_value(value: Any) -> str:
    """A condition's value as text, compared without case: true/false, numbers as written, strings trimmed."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise BadInputError(f"a condition's value must be a non-empty string, a number or true/false; got {value!r}")


def conditions(pairs: dict[str, Any], what: str) -> dict[str, str]:
    if len(pairs) > MAX_SLOTS:
        raise BadInputError(f"at most {MAX_SLOTS} {what} conditions")
    return {check_key(k, what): condition_value(v) for k, v in pairs.items()}


def tool_names(value: Any) -> list[str]:
    """`a,b,c` or a list of names: the names, in order, once each."""
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, list) or not names:
        raise BadInputError(f"tool names are a comma-separated list; got {value!r}")
    found: list[str] = []
    for name in names:
        name = str(name).strip()
        if not _TOOL_NAME.fullmatch(name):
            raise BadInputError(f"tool name {name!r}: letters, digits and _ . : / - (at most 128)")
        if name.casefold() not in {f.casefold() for f in found}:
            found.append(name)
    return found


def patch_value(key: str, value: Any) -> Any:
    """A `then` value: tool lists as lists of names, `true`/`false`/numbers typed, other text as written."""
    if key.startswith("tool."):
        if key not in TOOL_KEYS:
            raise BadInputError(f"then key {key!r}: the tool keys are {', '.join(TOOL_KEYS)}")
        return tool_names(value)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            raise BadInputError(f"then {key}: the value is empty")
        try:
            parsed = json.loads(text)
        except ValueError:
            return text
        return parsed if isinstance(parsed, bool | int | float) else text
    if isinstance(value, bool | int | float):
        return value
    raise BadInputError(f"then {key}: a value is text, a number or true/false; got {value!r}")


def patch(pairs: dict[str, Any]) -> dict[str, Any]:
    if not pairs:
        raise BadInputError("a rule needs at least one `then` (e.g. output.format=json or tool.deny=shell)")
    if len(pairs) > MAX_SLOTS:
        raise BadInputError(f"at most {MAX_SLOTS} then keys")
    return {(key := check_key(k, "then")): patch_value(key, v) for k, v in pairs.items()}


def parse_pairs(items: list[str], what: str) -> list[tuple[str, str]]:
    """`K=V` strings (a CLI's --if/--then/--except) as pairs; BadInputError naming the one without `=`."""
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise BadInputError(f"{what} {item!r}: write it as KEY=VALUE")
        pairs.append((key.strip(), value.strip()))
    return pairs


class RuleSpec(BaseModel):
    """What a rule says, checked and normalised: the slots a person, a call or a reader wrote."""

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True, serialize_by_alias=True, frozen=True)

    if_: dict[str, str] = Field(default_factory=dict, alias="if",
                                description="Context conditions, all required (key=value; value * means any).")
    then: dict[str, Any] = Field(description="The policy patch: flat dotted keys; tool.deny, tool.allow and "
                                             "tool.prefer hold lists of tool names.")
    exceptions: list[dict[str, str]] = Field(
        default_factory=list, description="Condition sets under which the rule does not apply (any one holding).")

    @classmethod
    def of(cls, if_: dict[str, Any], then: dict[str, Any], exceptions: list[dict[str, Any]] | None = None) -> RuleSpec:
        excepted = [conditions(e, "except") for e in exceptions or [] if e]
        if len(excepted) > MAX_SLOTS:
            raise BadInputError(f"at most {MAX_SLOTS} exceptions")
        return cls(if_=conditions(if_, "if"), then=patch(then), exceptions=excepted)

    @classmethod
    def from_pairs(cls, if_: list[str], then: list[str], exceptions: list[str] | None = None) -> RuleSpec:
        """From `K=V` strings; a key given twice in `if` or `then` is refused (it names no one value)."""
        def once(items: list[str], what: str) -> dict[str, str]:
            pairs = parse_pairs(items, what)
            keys = [k.lower() for k, _ in pairs]
            if repeated := sorted({k for k in keys if keys.count(k) > 1}):
                raise BadInputError(f"{what} names {', '.join(repeated)} twice")
            return dict(pairs)

        excepted = [{k: v} for k, v in parse_pairs(exceptions or [], "except")]
        return cls.of(once(if_, "if"), once(then, "then"), excepted)


class RuleStats(BaseModel):
    """What a rule's record says: how often it matched, shaped an answer, and how that was rated."""

    evaluations: int = 0
    applications: int = 0
    positive: int = 0
    negative: int = 0


class RuleTransition(BaseModel):
    """One move of a rule's state, a commit in the tenant's chain naming who made it."""

    from_state: RuleState | None
    to_state: RuleState
    actor: str
    at: UtcDatetime
    commit_id: str


class Rule(RuleSpec):
    """A stored rule: its slots, its owner (a scope, like any memory), its state and its record."""

    rule_id: str
    tenant_id: str
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    container: str | None = None
    shared: bool = False
    state: RuleState
    origin: RuleOrigin
    memory_id: str | None = Field(None, description="The memory it was read from, when an engine drafted it.")
    created_at: UtcDatetime
    updated_at: UtcDatetime
    stats: RuleStats = Field(default_factory=RuleStats)
    transitions: list[RuleTransition] = Field(default_factory=list)

    @property
    def specificity(self) -> int:
        """More conditions, more specific: it wins a conflict over a rule with fewer."""
        return len(self.if_)


class MatchedRule(BaseModel):
    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)

    rule_id: str
    state: RuleState
    if_: dict[str, str] = Field(alias="if")
    then: dict[str, Any]
    specificity: int
    created_at: UtcDatetime
    memory_id: str | None = None


class Excepted(BaseModel):
    """A rule whose conditions held but one of its exceptions did too: it does not apply."""

    rule_id: str
    state: RuleState
    exception: dict[str, str]


class Conflict(BaseModel):
    """Two rules setting one key differently: who won and why (more conditions, then the newer rule)."""

    key: str
    winner: str
    winner_value: Any
    loser: str
    loser_value: Any
    why: str
    shadow: bool = Field(False, description="True when a SHADOW rule is in it: it shapes `shadow`, not `applied`.")


class Evaluation(BaseModel):
    """What the scope's rules make of a context."""

    matched: list[MatchedRule]
    applied: dict[str, Any] = Field(description="The patch of the ACTIVE rules that matched, flat dotted keys.")
    shadow: dict[str, Any] = Field(description="What the SHADOW rules that matched would add or change.")
    conflicts: list[Conflict]
    sources: dict[str, list[str]] = Field(description="Which rules each applied key comes from.")
    excepted: list[Excepted] = Field(default_factory=list)


class ShadowSelection(BaseModel):
    selected: list[str]
    denied: list[str]


class ToolSelection(BaseModel):
    """Which of the candidate tools the scope's ACTIVE rules leave, in order; rate it with its id."""

    selection_id: str
    selected: list[str]
    denied: list[str] = Field(description="Candidates a tool.deny list names.")
    not_allowed: list[str] = Field(default_factory=list, description="Candidates the allow-lists leave out.")
    fallback: str | None = Field(None, description="Null, or why selection fell back to deny-only (not strict).")
    strict: bool = True
    explanation: list[str]
    rules: list[str] = Field(description="The rules that matched the context (ACTIVE and SHADOW): rating the "
                                         "selection rates them.")
    shadow: ShadowSelection | None = Field(None, description="What the SHADOW rules would change, when anything.")


class RatedRule(BaseModel):
    rule_id: str
    state: RuleState
    stats: RuleStats


class Feedback(BaseModel):
    selection_id: str
    rating: Rating
    rules: list[RatedRule]
