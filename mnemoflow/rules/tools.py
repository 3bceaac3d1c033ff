"""Selecting tools with rules: `tool.deny` lists join (a union), `tool.allow` lists narrow each other
(an intersection: two allow-lists are stricter together than either), `tool.prefer` orders what is
left. Strict (the default): allow-lists that leave none of the candidates select nothing. Not strict:
selection falls back to the deny-lists alone, and says so.

Names compare without case; what is returned is spelt as the caller's candidates spell it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mnemoflow.rules.evaluate import precedence
from mnemoflow.rules.model import Rule


@dataclass
class Choice:
    selected: list[str]
    denied: list[str] = field(default_factory=list)
    not_allowed: list[str] = field(default_factory=list)
    fallback: str | None = None
    explanation: list[str] = field(default_factory=list)
    shaped_by: list[str] = field(default_factory=list)  # the rules with a tool key that took part


def _ids(ids: list[str]) -> str:
    return ", ".join(ids)


def choose(rules: list[Rule], candidates: list[str], *, strict: bool = True) -> Choice:
    """The tools `rules` (already matched to the context) leave of `candidates`, in order."""
    ordered = [r for r in sorted(rules, key=precedence) if any(k.startswith("tool.") for k in r.then)]
    if not ordered:
        return Choice(list(candidates), explanation=["no matching rule names a tool: every candidate is selected"])
    deny: dict[str, list[str]] = {}
    prefer: list[str] = []
    allows: list[tuple[str, set[str]]] = []
    for rule in ordered:
        for name in rule.then.get("tool.deny", []):
            deny.setdefault(name.casefold(), []).append(rule.rule_id)
        prefer += [n.casefold() for n in rule.then.get("tool.prefer", []) if n.casefold() not in prefer]
        if "tool.allow" in rule.then:
            allows.append((rule.rule_id, {n.casefold() for n in rule.then["tool.allow"]}))
    choice = Choice([], shaped_by=[r.rule_id for r in ordered])
    for name in candidates:
        if name.casefold() in deny:
            choice.denied.append(name)
            choice.explanation.append(f"{name}: denied by {_ids(deny[name.casefold()])}")
    remaining = [n for n in candidates if n.casefold() not in deny]
    if allows:
        allowed = set.intersection(*(names for _, names in allows))
        kept = [n for n in remaining if n.casefold() in allowed]
        lists = _ids([rule_id for rule_id, _ in allows])
        if kept or not remaining:
            for name in remaining:
                if name not in kept:
                    missing = [rule_id for rule_id, names in allows if name.casefold() not in names]
                    choice.not_allowed.append(name)
                    choice.explanation.append(f"{name}: not on the allow-list of {_ids(missing)}")
            remaining = kept
        elif strict:
            choice.not_allowed = remaining
            choice.explanation.append(
                f"the allow-lists of {lists} together allow none of {', '.join(remaining)}: strict, so nothing is "
                "selected (not strict would fall back to the deny-lists alone)")
            remaining = []
        else:
            choice.fallback = (f"the allow-lists of {lists} together allow none of {', '.join(remaining)}; "
                               "fell back to the deny-lists alone")
            choice.explanation.append(choice.fallback)
    rank = {name: i for i, name in enumerate(prefer)}
    choice.selected = sorted(remaining, key=lambda n: rank.get(n.casefold(), len(rank)))
    if preferred := [n for n in choice.selected if n.casefold() in rank]:
        by = _ids([r.rule_id for r in ordered if r.then.get("tool.prefer")])
        choice.explanation.append(f"preferred first: {', '.join(preferred)} (tool.prefer of {by})")
    if choice.selected:
        choice.explanation.append(f"selected: {', '.join(choice.selected)}")
    else:
        choice.explanation.append("selected: nothing")
    return choice
