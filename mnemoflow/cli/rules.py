"""`mnemoflow rules add|list|state|evaluate` and `mnemoflow tools select|feedback`: procedural rules
and the tool selections they shape."""

from __future__ import annotations

import getpass
import json
import sys
from typing import Annotated, Any

import typer

from mnemoflow.cli.app import Agent, ArgumentError, Container, Home, Run, Tenant, User, app, out, scope_of, service_for
from mnemoflow.errors import BadInputError

rules_app = typer.Typer(no_args_is_help=True, help="Procedural rules: if / then / exceptions, DRAFT -> SHADOW -> "
                                                   "ACTIVE (and RETIRED).")
tools_app = typer.Typer(no_args_is_help=True, help="Tool selection by the rules, and feedback on it.")
app.add_typer(rules_app, name="rules")
app.add_typer(tools_app, name="tools")

STATES = ("draft", "shadow", "active", "retired")
Json = Annotated[bool, typer.Option("--json", help="Print the answer as JSON.")]
Context = Annotated[str, typer.Option("--context", help='The situation, as a JSON object: \'{"topic": "data"}\'.')]


def _actor() -> str:
    """Who moves a rule from the command line: the operating-system user."""
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


def _state(value: str | None, option: str) -> Any:
    if value is not None and value.lower() not in STATES:
        raise ArgumentError(f"{option} must be one of {', '.join(STATES)}; got {value!r}")
    return value.lower() if value is not None else None


def _context(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ArgumentError(f"--context is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ArgumentError("--context must be a JSON object, e.g. '{\"topic\": \"data\"}'")
    return value


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")


def _pairs(values: dict[str, Any]) -> str:
    return " ".join(f"{k}={','.join(v) if isinstance(v, list) else json.dumps(v) if not isinstance(v, str) else v}"
                    for k, v in values.items())


@rules_app.command("add")
def rules_add(
    if_: Annotated[list[str] | None, typer.Option("--if", help="A condition KEY=VALUE (several: all required).")] = None,
    then: Annotated[list[str] | None, typer.Option(
        "--then", help="A patch KEY=VALUE: output.format=json, tool.deny=a,b, tool.allow=..., tool.prefer=...")] = None,
    except_: Annotated[list[str] | None, typer.Option(
        "--except", help="An exception KEY=VALUE: the rule does not apply when it holds (any of them).")] = None,
    state: Annotated[str, typer.Option(help="draft (recorded), shadow (reported) or active (applied).")] = "draft",
    shared: Annotated[bool, typer.Option("--shared", help="Show the rule to every user of the tenant.")] = False,
    home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None, run: Run = None,
    container: Container = None, as_json: Json = False,
) -> None:
    """Record a rule; prints its id (rul_...)."""
    from mnemoflow.rules.model import RuleSpec

    if _state(state, "--state") == "retired":
        raise ArgumentError("--state of a new rule is draft, shadow or active")
    try:
        spec = RuleSpec.from_pairs(if_ or [], then or [], except_ or [])
    except BadInputError as exc:
        raise ArgumentError(str(exc)) from None
    with service_for(home) as service:
        rule = service.add_rule(scope_of(service, tenant, user, agent, run, container), spec, state=state.lower(),
                                shared=shared, actor=_actor())
    if as_json:
        _print_json(rule.model_dump(mode="json"))
    else:
        out.print(rule.rule_id)


@rules_app.command("list")
def rules_list(
    state: Annotated[str | None, typer.Option(help="Only rules in this state.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=10_000, help="At most this many.")] = 100,
    home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None, run: Run = None,
    container: Container = None, as_json: Json = False,
) -> None:
    """The rules the scope sees (its own and the shared ones), with their records."""
    chosen = _state(state, "--state")
    with service_for(home) as service:
        rules = service.list_rules(scope_of(service, tenant, user, agent, run, container), state=chosen, limit=limit)
    if as_json:
        _print_json([r.model_dump(mode="json") for r in rules])
        return
    for rule in rules:
        s = rule.stats
        unless = "".join(f" except {_pairs(e)}" for e in rule.exceptions)
        condition = f"if {_pairs(rule.if_)}" if rule.if_ else "always"
        out.print(f"{rule.rule_id}  {rule.state:<7} {condition} then {_pairs(rule.then)}{unless}  "
                  f"({s.evaluations} evaluations, {s.applications} applied, +{s.positive}/-{s.negative})", markup=False)
    if not rules:
        out.print("no rules")


@rules_app.command("state")
def rules_state(
    rule_id: Annotated[str, typer.Argument(help="The rule to move.")],
    state: Annotated[str, typer.Argument(help="draft, shadow, active or retired.")],
    home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None, run: Run = None,
    container: Container = None, as_json: Json = False,
) -> None:
    """Move a rule to another state (a commit naming who moved it)."""
    chosen = _state(state, "STATE")
    with service_for(home) as service:
        scope = scope_of(service, tenant, user, agent, run, container)
        rule = service.set_rule_state(scope, rule_id, chosen, actor=_actor())
    if as_json:
        _print_json(rule.model_dump(mode="json"))
        return
    last = rule.transitions[-1]
    out.print(f"{rule.rule_id}: {last.from_state or 'new'} -> {last.to_state} (by {last.actor})", markup=False)


@rules_app.command("evaluate")
def rules_evaluate(
    context: Context,
    home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None, run: Run = None,
    container: Container = None, as_json: Json = False,
) -> None:
    """What the rules make of a context: matched rules, `applied` (ACTIVE), `shadow`, conflicts."""
    situation = _context(context)
    with service_for(home) as service:
        result = service.evaluate_rules(scope_of(service, tenant, user, agent, run, container), situation)
    if as_json:
        _print_json(result.model_dump(mode="json"))
        return
    for rule in result.matched:
        out.print(f"matched {rule.rule_id} ({rule.state}): then {_pairs(rule.then)}", markup=False)
    out.print(f"applied: {_pairs(result.applied) or 'nothing'}", markup=False)
    for held in result.excepted:
        out.print(f"excepted {held.rule_id} ({held.state}): {_pairs(held.exception)} holds", markup=False)
    if result.shadow:
        out.print(f"shadow would change: {_pairs(result.shadow)}", markup=False)
    for conflict in result.conflicts:
        out.print(f"conflict on {conflict.key}: {conflict.winner} over {conflict.loser} ({conflict.why})", markup=False)


@tools_app.command("select")
def tools_select(
    context: Context,
    candidates: Annotated[str, typer.Option("--candidates", help="The tools to choose from: a,b,c.")],
    strict: Annotated[bool, typer.Option(
        "--strict/--no-strict", help="Strict: allow-lists that leave nothing select nothing. Not strict: fall back "
        "to the deny-lists alone (and say so).")] = True,
    home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None, run: Run = None,
    container: Container = None, as_json: Json = False,
) -> None:
    """Which candidate tools the ACTIVE rules leave, in order; rate it with `tools feedback`."""
    from mnemoflow.rules.model import tool_names

    situation = _context(context)
    try:
        names = tool_names(candidates)
    except BadInputError as exc:
        raise ArgumentError(f"--candidates: {exc}") from None
    with service_for(home) as service:
        choice = service.select_tools(scope_of(service, tenant, user, agent, run, container), situation, names,
                                      strict=strict)
    if as_json:
        _print_json(choice.model_dump(mode="json"))
        return
    out.print(f"{choice.selection_id}: {', '.join(choice.selected) or 'nothing'}", markup=False)
    if choice.fallback:
        out.print(f"fallback: {choice.fallback}", markup=False)
    for line in choice.explanation:
        out.print(f"  {line}", markup=False)


@tools_app.command("feedback")
def tools_feedback(
    selection_id: Annotated[str, typer.Argument(help="The selection to rate (sel_...).")],
    rating: Annotated[str, typer.Argument(help="positive or negative.")],
    home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None, run: Run = None,
    container: Container = None, as_json: Json = False,
) -> None:
    """Rate a tool selection; each rule that matched it counts the rating."""
    if rating.lower() not in ("positive", "negative"):
        raise ArgumentError(f"RATING must be positive or negative; got {rating!r}")
    with service_for(home) as service:
        result = service.rate_selection(scope_of(service, tenant, user, agent, run, container), selection_id,
                                        rating.lower())
    if as_json:
        _print_json(result.model_dump(mode="json"))
        return
    out.print(f"{selection_id} rated {result.rating}; counted by {len(result.rules)} rules", markup=False)
    for rule in result.rules:
        out.print(f"  {rule.rule_id} ({rule.state}): +{rule.stats.positive}/-{rule.stats.negative}", markup=False)
