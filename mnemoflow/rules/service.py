"""The service methods of procedural rules (part of `MemoryService`, so every interface reaches them
the one way: Python `Memory`, HTTP, MCP, the CLI through a server's RPC).

Evaluating and selecting read the scope's SHADOW and ACTIVE rules (its own and the tenant's shared
ones) and count what matched and what applied; a selection is kept so that it can be rated once,
and a rating counts for every rule that matched it.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

from mnemoflow.errors import BadInputError, NotFoundError
from mnemoflow.rules.evaluate import evaluate, matching
from mnemoflow.rules.model import (
    RULE_STATES,
    Evaluation,
    Feedback,
    RatedRule,
    Rating,
    Rule,
    RuleSpec,
    RuleState,
    ShadowSelection,
    ToolSelection,
    tool_names,
)
from mnemoflow.rules.tools import choose
from mnemoflow.storage.scope import Scope

if TYPE_CHECKING:
    from mnemoflow.storage import Store

MAX_CANDIDATES = 256
MAX_CONTEXT_CHARS = 64_000


def _checked_context(context: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(context, dict):
        raise BadInputError("a context is a JSON object of key: value")
    if len(json.dumps(context, default=str)) > MAX_CONTEXT_CHARS:
        raise BadInputError(f"a context is at most {MAX_CONTEXT_CHARS} characters of JSON")
    return context


class RuleMethods:
    """Mixed into `MemoryService`."""

    if TYPE_CHECKING:
        @property
        def store(self) -> Store: ...

        def _redact(self, tenant_id: str, value: Any) -> Any: ...

    def add_rule(self, scope: Scope, spec: RuleSpec, *, state: RuleState = "draft", shared: bool = False,
                 actor: str = "api") -> Rule:
        """Record a rule in `state` (a new rule is draft, shadow or active); `shared` shows it to the whole
        tenant (or, with a container, to the container)."""
        spec = RuleSpec.model_validate(self._redact(scope.tenant_id, spec.model_dump()))
        return self.store.add_rule(scope, spec, state=state, actor=actor, shared=shared)

    def list_rules(self, scope: Scope, *, state: RuleState | None = None, limit: int = 100) -> list[Rule]:
        """The rules the scope sees (its own and the shared ones), oldest first, with their records."""
        if limit < 1:
            raise BadInputError(f"limit must be at least 1; got {limit}")
        if state is not None and state not in RULE_STATES:
            raise BadInputError(f"a rule's state is one of {', '.join(RULE_STATES)}; got {state!r}")
        return self.store.list_rules(scope, states=None if state is None else (state,), limit=limit)

    def get_rule(self, scope: Scope, rule_id: str) -> Rule:
        """One rule with its record and every move of its state."""
        found = self.store.get_rule(scope, rule_id)
        if found is None:
            raise NotFoundError(f"no rule {rule_id} for {scope}")
        return found

    def set_rule_state(self, scope: Scope, rule_id: str, state: RuleState, *, actor: str = "api") -> Rule:
        """Move a rule (DRAFT -> SHADOW -> ACTIVE, or back, or to RETIRED for good): a commit naming `actor`."""
        return self.store.set_rule_state(scope, rule_id, state, actor=actor)

    def evaluate_rules(self, scope: Scope, context: dict[str, Any]) -> Evaluation:
        """What the scope's rules make of `context`: the matched rules with their states, `applied` (the
        ACTIVE rules' patch), `shadow` (what the SHADOW ones would add or change), conflicts with their
        winner, and the rules behind each applied key."""
        context = self._redact(scope.tenant_id, _checked_context(context))
        rules = self.store.live_rules(scope)
        evaluation, applied = evaluate(rules, context)
        self.store.count_rule_use(scope.tenant_id, [m.rule_id for m in evaluation.matched], applied)
        return evaluation

    def select_tools(self, scope: Scope, context: dict[str, Any], candidates: list[str], *,
                     strict: bool = True) -> ToolSelection:
        """Which of `candidates` the scope's ACTIVE rules leave for `context`, in order (`rules.tools`);
        rate the answer with `rate_selection(selection_id, ...)`."""
        names = tool_names(candidates)
        if len(names) > MAX_CANDIDATES:
            raise BadInputError(f"at most {MAX_CANDIDATES} candidate tools")
        context = self._redact(scope.tenant_id, _checked_context(context))
        matched, _ = matching(self.store.live_rules(scope), context)
        active = [r for r in matched if r.state == "active"]
        choice = choose(active, names, strict=strict)
        watched = choose(matched, names, strict=strict)
        shadow = None
        if (watched.selected, watched.denied) != (choice.selected, choice.denied):
            shadow = ShadowSelection(selected=watched.selected, denied=watched.denied)
        selection_id = f"sel_{uuid.uuid4().hex[:20]}"
        rule_ids = [r.rule_id for r in matched]
        self.store.save_selection(scope, selection_id, context=context, candidates=names, selected=choice.selected,
                                  strict=strict, fallback=choice.fallback, rule_ids=rule_ids)
        self.store.count_rule_use(scope.tenant_id, rule_ids, choice.shaped_by)
        return ToolSelection(selection_id=selection_id, selected=choice.selected, denied=choice.denied,
                             not_allowed=choice.not_allowed, fallback=choice.fallback, strict=strict,
                             explanation=choice.explanation, rules=rule_ids, shadow=shadow)

    def rate_selection(self, scope: Scope, selection_id: str, rating: Rating) -> Feedback:
        """Rate a tool selection positive or negative (once); every rule that matched it counts the rating."""
        rule_ids = self.store.rate_selection(scope, selection_id, rating)
        rules = self.store.rules_by_id(scope.tenant_id, rule_ids)
        return Feedback(selection_id=selection_id, rating=rating,
                        rules=[RatedRule(rule_id=r.rule_id, state=r.state, stats=r.stats) for r in rules])
