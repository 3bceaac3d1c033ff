"""Evaluating rules against a context: which match, what the ACTIVE ones apply, what the SHADOW ones
would change, and how conflicts are settled. Pure functions over `Rule` values.

Precedence, for a key two rules set differently: the rule with more `if` conditions wins (it is
about a narrower situation), then the newer rule. Tool lists are not conflicts: `tool.deny` lists
join (a union), `tool.allow` lists narrow each other (an intersection), `tool.prefer` lists are
merged in precedence order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mnemoflow.rules.model import (
    ANY_VALUE,
    Conflict,
    Evaluation,
    Excepted,
    MatchedRule,
    Rule,
    condition_value,
)

_MISSING = object()


def _lowered(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k).strip().lower(): _lowered(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lowered(v) for v in value]
    return value


def context_of(context: dict[str, Any]) -> dict[str, Any]:
    """The context as conditions read it: keys without case (a condition's keys are lower case)."""
    return _lowered(context)


def _lookup(context: dict[str, Any], key: str) -> Any:
    """`key` in the context, as a flat dotted key (`{"user.tier": ...}`) or a path into nested objects."""
    if key in context:
        return context[key]
    node: Any = context
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _equals(expected: str, actual: Any) -> bool:
    if isinstance(actual, list):  # a context value that is a list holds each of its items
        return any(_equals(expected, item) for item in actual)
    if actual is None or isinstance(actual, dict):
        return False
    if isinstance(actual, str):
        return actual.strip().casefold() == expected.casefold()
    return condition_value(actual).casefold() == expected.casefold()


def holds(conditions: dict[str, str], context: dict[str, Any]) -> bool:
    """Every condition holds in the (lowered) context; `*` asks only that the key is there."""
    for key, expected in conditions.items():
        actual = _lookup(context, key)
        if actual is _MISSING or (expected != ANY_VALUE and not _equals(expected, actual)):
            return False
    return True


def precedence(rule: Rule) -> tuple[int, float, str]:
    """Sort key, first wins: more conditions, then newer, then (for two of one instant) the larger id."""
    return (-rule.specificity, -rule.created_at.timestamp(), _descending(rule.rule_id))


def _descending(text: str) -> str:
    return "".join(chr(0x10FFFF - ord(c)) for c in text)


def _why(winner: Rule, loser: Rule) -> str:
    if winner.specificity != loser.specificity:
        return f"more specific: {winner.specificity} conditions against {loser.specificity}"
    if winner.created_at != loser.created_at:
        return f"newer: created {winner.created_at:%Y-%m-%d %H:%M:%S} after {loser.created_at:%Y-%m-%d %H:%M:%S}"
    return "as specific and as new: the later id wins"


def _folded(names: list[str]) -> list[str]:
    return [n.casefold() for n in names]


@dataclass
class Resolved:
    """Rules resolved into one patch: the patch, the rules behind each key, the conflicts settled."""

    patch: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, list[str]] = field(default_factory=dict)
    conflicts: list[Conflict] = field(default_factory=list)


def resolve(rules: list[Rule]) -> Resolved:
    """One patch from `rules` (see the module docstring for how keys combine)."""
    out, winners = Resolved(), {}
    for rule in sorted(rules, key=precedence):
        for key, value in rule.then.items():
            held = out.patch.get(key, _MISSING)
            if key in ("tool.deny", "tool.prefer"):
                joined = list(held) if held is not _MISSING else []
                joined += [n for n in value if n.casefold() not in _folded(joined)]
                out.patch[key] = joined
            elif key == "tool.allow":
                out.patch[key] = list(value) if held is _MISSING else [n for n in held if n.casefold() in _folded(value)]
            elif held is _MISSING:
                out.patch[key], winners[key] = value, rule
            elif held != value or type(held) is not type(value):
                out.conflicts.append(Conflict(key=key, winner=winners[key].rule_id, winner_value=held,
                                              loser=rule.rule_id, loser_value=value, why=_why(winners[key], rule)))
                continue
            out.sources.setdefault(key, []).append(rule.rule_id)
    return out


def matching(rules: list[Rule], context: dict[str, Any]) -> tuple[list[Rule], list[Excepted]]:
    """The SHADOW and ACTIVE rules whose conditions hold and none of whose exceptions do; and those an
    exception kept out."""
    lowered = context_of(context)
    matched, excepted = [], []
    for rule in rules:
        if rule.state not in ("shadow", "active") or not holds(rule.if_, lowered):
            continue
        hit = next((e for e in rule.exceptions if holds(e, lowered)), None)
        if hit is not None:
            excepted.append(Excepted(rule_id=rule.rule_id, state=rule.state, exception=hit))
        else:
            matched.append(rule)
    return sorted(matched, key=precedence), excepted


def evaluate(rules: list[Rule], context: dict[str, Any]) -> tuple[Evaluation, list[str]]:
    """The evaluation of `context`, and the ACTIVE rules it applied (those behind a key of `applied`)."""
    matched, excepted = matching(rules, context)
    active = resolve([r for r in matched if r.state == "active"])
    watched = resolve(matched)
    shadow_ids = {r.rule_id for r in matched if r.state == "shadow"}
    shadow = {k: v for k, v in watched.patch.items() if active.patch.get(k, _MISSING) != v}
    conflicts = active.conflicts + [c.model_copy(update={"shadow": True}) for c in watched.conflicts
                                    if c.winner in shadow_ids or c.loser in shadow_ids]
    applied_by = sorted({rule_id for ids in active.sources.values() for rule_id in ids})
    evaluation = Evaluation(
        matched=[MatchedRule(rule_id=r.rule_id, state=r.state, if_=r.if_, then=r.then, specificity=r.specificity,
                             created_at=r.created_at, memory_id=r.memory_id) for r in matched],
        applied=active.patch, shadow=shadow, conflicts=conflicts, sources=active.sources, excepted=excepted)
    return evaluation, applied_by
