"""The HTTP routes of procedural rules and tool selection (part of the tenant API, `api.http`): each a
thin call into `MemoryService`, the tenant from the key, the owner from the request. State moves
name the key that made them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Query, Request
from pydantic import ConfigDict, Field

from mnemoflow.api.http import Key, QueryScope
from mnemoflow.api.schemas import JsonBool, Scoped
from mnemoflow.rules.model import (
    Evaluation,
    Feedback,
    Rating,
    Rule,
    RuleSpec,
    RuleState,
    ToolSelection,
)
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

Scalar = str | int | float | bool
NewState = RuleState  # the service refuses a new rule in `retired`


class RuleIn(Scoped):
    """A rule for an owner: `if` conditions (all required), a `then` patch, `exceptions`, its state."""

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True)

    if_: dict[str, Scalar] = Field(default_factory=dict, alias="if", description="Context conditions, key: value.")
    then: dict[str, Scalar | list[str]] = Field(description="The patch: dotted keys (output.format: json); tool.deny, "
                                                            "tool.allow, tool.prefer take lists of tool names.")
    exceptions: list[dict[str, Scalar]] = Field(default_factory=list, description="Condition sets, any one of "
                                                                                  "which keeps the rule from applying.")
    state: NewState = Field("draft", description="draft (recorded), shadow (reported) or active (applied).")
    shared: JsonBool = Field(False, description="Show the rule to every user of the tenant (or of the container).")


class StateIn(Scoped):
    state: RuleState


class ContextIn(Scoped):
    context: dict[str, Any] = Field(description="The situation, as JSON: {\"topic\": \"data\", ...}.")


class SelectIn(ContextIn):
    candidates: list[Annotated[str, Field(min_length=1, max_length=128)]] = Field(min_length=1, max_length=256)
    strict: JsonBool = Field(True, description="Allow-lists that leave nothing select nothing; false: fall back to the "
                                           "deny-lists alone, saying so in `fallback`.")


class FeedbackIn(Scoped):
    rating: Rating


def _scope(tenant_id: str, body: Scoped) -> Scope:
    return Scope(tenant_id, body.user_id, body.agent_id, body.run_id, body.container)


def add_rule_routes(keyed: Callable[..., Any]) -> None:
    """Register the routes on the app `keyed` (`api.http.create_app`'s route maker) serves."""
    def service_of(request: Request) -> MemoryService:
        return request.app.state.service

    @keyed("POST", "/v1/rules", response_model=Rule, refuses=(400,))
    def add_rule(request: Request, body: RuleIn, key: Key) -> Rule:
        """Record a rule; a new one is draft unless `state` says shadow or active."""
        spec = RuleSpec.of(body.if_, body.then, body.exceptions)
        return service_of(request).add_rule(_scope(key.tenant_id, body), spec, state=body.state, shared=body.shared,
                                            actor=f"key:{key.key_id}")

    @keyed("GET", "/v1/rules", response_model=list[Rule])
    def list_rules(request: Request, scope: QueryScope, state: RuleState | None = None,
                   limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> list[Rule]:
        """The rules the owner sees (its own and the shared ones), with their records."""
        return service_of(request).list_rules(scope, state=state, limit=limit)

    @keyed("GET", "/v1/rules/{rule_id}", response_model=Rule, refuses=(404,))
    def get_rule(request: Request, rule_id: str, scope: QueryScope) -> Rule:
        """One rule, with every move of its state."""
        return service_of(request).get_rule(scope, rule_id)

    @keyed("POST", "/v1/rules/{rule_id}/state", response_model=Rule, refuses=(400, 404))
    def set_state(request: Request, rule_id: str, body: StateIn, key: Key) -> Rule:
        """Move a rule (DRAFT -> SHADOW -> ACTIVE, back, or to RETIRED): a commit naming this key."""
        return service_of(request).set_rule_state(_scope(key.tenant_id, body), rule_id, body.state,
                                                  actor=f"key:{key.key_id}")

    @keyed("POST", "/v1/rules/evaluate", response_model=Evaluation, refuses=(400,), kind="read")
    def evaluate(request: Request, body: ContextIn, key: Key) -> Evaluation:
        """The matched rules, `applied` (ACTIVE only), `shadow`, conflicts and sources for a context."""
        return service_of(request).evaluate_rules(_scope(key.tenant_id, body), body.context)

    @keyed("POST", "/v1/tools/select", response_model=ToolSelection, refuses=(400,), kind="read")
    def select(request: Request, body: SelectIn, key: Key) -> ToolSelection:
        """Which candidate tools the ACTIVE rules leave, in order; rate it at /v1/tools/selections/{id}/feedback."""
        return service_of(request).select_tools(_scope(key.tenant_id, body), body.context, body.candidates,
                                                strict=body.strict)

    @keyed("POST", "/v1/tools/selections/{selection_id}/feedback", response_model=Feedback, refuses=(400, 404))
    def feedback(request: Request, selection_id: str, body: FeedbackIn, key: Key) -> Feedback:
        """Rate a selection (once): every rule that matched it counts the rating."""
        return service_of(request).rate_selection(_scope(key.tenant_id, body), selection_id, body.rating)

