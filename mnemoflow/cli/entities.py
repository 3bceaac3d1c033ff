"""`mnemoflow entities list|show|memories|graph|evolution` and `mnemoflow conflicts`: the entity graph
as the owner's memories show it, and the conflicts waiting for a decision."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer

from mnemoflow.cli.app import (
    Agent, ArgumentError, Container, Home, Run, Tenant, User, app, iso_time, out, scope_of, service_for,
)
from mnemoflow.errors import BadInputError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from mnemoflow.service import MemoryService
    from mnemoflow.storage.scope import Scope

entities_app = typer.Typer(no_args_is_help=True, help="Entities the owner's memories name: list, card, memories, "
                                                       "graph, evolution.")
app.add_typer(entities_app, name="entities")
conflicts_app = typer.Typer(invoke_without_command=True, help="Current memories linked CONFLICTS_WITH or "
                            "MAY_UPDATE that wait for a decision (`conflicts resolve` decides).")
app.add_typer(conflicts_app, name="conflicts")

EntityArg = Annotated[str, typer.Argument(help="An entity id from `entities list`, or an entity's exact name.")]
Json = Annotated[bool, typer.Option("--json", help="Print the answer as JSON.")]
Types = Annotated[str | None, typer.Option("--type", help="Entity types, comma-separated (person, place, ...).")]
Since = Annotated[str | None, typer.Option(help="Only what was said at or after this ISO date or time.")]
Until = Annotated[str | None, typer.Option(help="Only what was said before this ISO date or time.")]


def _types(value: str | None) -> list[str] | None:
    return [t for t in value.split(",") if t.strip()] if value else None


def _print_json(answer: BaseModel) -> None:
    sys.stdout.write(answer.model_dump_json() + "\n")


def _entity_id(service: MemoryService, scope: Scope, given: str) -> str:
    """The one entity named exactly `given` (any case), else `given` as an id (one the scope does not
    see is not found by the service)."""
    named = [e for e in service.entities(scope, q=given, limit=1000).entities if e.name.casefold() == given.casefold()]
    if len(named) > 1:
        raise ArgumentError(f"{len(named)} entities are named {given!r} (" + ", ".join(
            f"{e.entity_id} {e.type}" for e in named) + "): name one by its id")
    return named[0].entity_id if named else given


@contextmanager
def _arguments() -> Iterator[None]:
    """What the service refuses in these commands is an argument (a depth above the cap, a type, a
    window): exit 2 like a parse error."""
    try:
        yield
    except BadInputError as exc:
        raise ArgumentError(str(exc)) from None


def _owner(home: Any, tenant: Any, user: Any, agent: Any, run: Any, container: Any) -> tuple[MemoryService, Scope]:
    service = service_for(home)
    return service, scope_of(service, tenant, user, agent, run, container)


@entities_app.command("list")
def entities_list(
    home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None, run: Run = None,
    container: Container = None, types: Types = None,
    q: Annotated[str | None, typer.Option("--q", help="Only those whose name or an alias contains this.")] = None,
    since: Since = None, until: Until = None,
    order: Annotated[str, typer.Option(help="mentions, hotness, recent or name.")] = "mentions",
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many.")] = 50, as_json: Json = False,
) -> None:
    """Entities with their type, aliases, mentions, hotness and first and last time said."""
    window = iso_time("--since", since), iso_time("--until", until)
    service, scope = _owner(home, tenant, user, agent, run, container)
    with service, _arguments():
        found = service.entities(scope, types=_types(types), q=q, since=window[0], until=window[1], order=order,
                                 limit=limit)
    if as_json:
        return _print_json(found)
    for e in found.entities:
        aliases = f", also {', '.join(e.aliases)}" if e.aliases else ""
        seen = f", last seen {e.last_seen:%Y-%m-%d %H:%M}" if e.last_seen else ""
        out.print(f"{e.name} ({e.type}{aliases}): {e.mention_count} mentions, {e.current_mentions} current, "
                  f"hotness {e.hotness:.2f}{seen}  {e.entity_id}", markup=False)
    if not found.entities:
        out.print("no entities")
    return None


@entities_app.command("show")
def entities_show(
    entity: EntityArg, home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None,
    run: Run = None, container: Container = None, as_json: Json = False,
) -> None:
    """An entity's card: neighbours by relation and by shared memories, recent mentions, key relations."""
    from mnemoflow.cli.output import citation_line

    service, scope = _owner(home, tenant, user, agent, run, container)
    with service:
        card = service.entity(scope, _entity_id(service, scope, entity))
    if as_json:
        return _print_json(card)
    e = card.entity
    out.print(f"{e.name} ({e.type}) {e.entity_id}: {e.mention_count} mentions, {e.current_mentions} current, "
              f"hotness {e.hotness:.2f}", markup=False)
    out.print("neighbours by relation:" if card.neighbours_by_relation else "neighbours by relation: none")
    for n in card.neighbours_by_relation:
        out.print(f"  {'<-' if n.direction == 'in' else '->'} {n.entity.name} ({n.entity.type}): "
                  f"{', '.join(n.predicates)}{'' if n.current else ' [past]'}", markup=False)
    out.print("neighbours by shared memories:" if card.neighbours_by_memory else "neighbours by shared memories: none")
    for s in card.neighbours_by_memory:
        out.print(f"  {s.entity.name} ({s.entity.type}): {s.shared_memories} memories", markup=False)
    out.print("key relations:" if card.key_relations else "key relations: none")
    for r in card.key_relations:
        out.print(f"  {r.subject_name or r.subject} {r.predicate} {r.object_name or r.object} "
                  f"({r.memories} memories{'' if r.current else ', past'})", markup=False)
    out.print("recent mentions:")
    for m in card.recent_mentions:
        out.print(f"  {m.memory.content}{'' if m.memory.is_latest else ' [past]'}  "
                  f"[{'; '.join(citation_line(c.model_dump(mode='json')) for c in m.citations)}]", markup=False)
    return None


@entities_app.command("memories")
def entities_memories(
    entity: EntityArg, home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None,
    run: Run = None, container: Container = None,
    history: Annotated[bool, typer.Option("--history", help="Also past versions and expired ones.")] = False,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 100, as_json: Json = False,
) -> None:
    """Every current memory naming the entity, newest first (with --history the superseded ones too)."""
    service, scope = _owner(home, tenant, user, agent, run, container)
    with service, _arguments():
        found = service.entity_memories(scope, _entity_id(service, scope, entity), include_history=history,
                                        limit=limit)
    if as_json:
        return _print_json(found)
    for m in found.memories:
        out.print(f"{m.memory.id}  {m.memory.content}{'' if m.memory.is_latest else ' [past]'}", markup=False)
    if not found.memories:
        out.print("no memories")
    return None


@entities_app.command("graph")
def entities_graph(
    entity: Annotated[str | None, typer.Argument(help="Around this entity (id or exact name); omitted: the "
                                                      "owner's most mentioned entities.")] = None,
    home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None, run: Run = None,
    container: Container = None,
    depth: Annotated[int, typer.Option(help="Hops from the entity (the server's cap refuses more).")] = 1,
    max_nodes: Annotated[int | None, typer.Option(help="At most this many entities (default: the cap).")] = None,
    max_edges: Annotated[int | None, typer.Option(help="At most this many edges (default: the cap).")] = None,
    types: Types = None, since: Since = None, until: Until = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the Cytoscape.js elements as JSON.")] = False,
) -> None:
    """The subgraph as Cytoscape.js elements (--json), or its edges as lines."""
    window = iso_time("--since", since), iso_time("--until", until)
    service, scope = _owner(home, tenant, user, agent, run, container)
    with service, _arguments():
        chosen = _entity_id(service, scope, entity) if entity is not None else None
        graph = service.entity_graph(scope, chosen, depth=depth, max_nodes=max_nodes, max_edges=max_edges,
                                     types=_types(types), since=window[0], until=window[1])
    if as_json:
        return _print_json(graph)
    names = {n.data.id: n.data.label for n in graph.elements.nodes}
    out.print(f"{len(graph.elements.nodes)} entities, {len(graph.elements.edges)} edges"
              + (f" ({graph.note})" if graph.note else ""), markup=False)
    for edge in graph.elements.edges:
        d = edge.data
        out.print(f"  {names.get(d.source, d.source)} -[{d.label}]-> {names.get(d.target, d.target)} "
                  f"({d.weight}{'' if d.current else ', past'})", markup=False)
    return None


@entities_app.command("evolution")
def entities_evolution(
    entity: EntityArg, home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None,
    run: Run = None, container: Container = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="The newest memories naming it to follow.")] = 100,
    as_json: Json = False,
) -> None:
    """The facts about the entity in supersedes order, each with its time and the change that replaced it."""
    service, scope = _owner(home, tenant, user, agent, run, container)
    with service, _arguments():
        found = service.entity_evolution(scope, _entity_id(service, scope, entity), limit=limit)
    if as_json:
        return _print_json(found)
    for n, chain in enumerate(found.chains, start=1):
        out.print(f"[{n}]", markup=False)
        for step in chain.steps:
            said = f"{step.said_at:%Y-%m-%d %H:%M}" if step.said_at else "?"
            out.print(f"  {'current' if step.is_latest else 'past   '} {said}  {step.content}", markup=False)
            for r in step.replaced_by:
                out.print(f"          replaced {r.at:%Y-%m-%d %H:%M} by {r.memory_id}: {r.reason or ''}", markup=False)
    if not found.chains:
        out.print("no facts")
    return None


@conflicts_app.callback()
def conflicts(
    ctx: typer.Context, home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None,
    run: Run = None, container: Container = None, limit: Annotated[int, typer.Option(min=1, max=1000)] = 100,
    as_json: Json = False,
) -> None:
    """List the conflicts waiting for a decision."""
    if ctx.invoked_subcommand is not None:
        return
    service, scope = _owner(home, tenant, user, agent, run, container)
    with service:
        found = service.conflicts(scope, limit=limit)
    if as_json:
        _print_json(found)
        return
    for c in found.conflicts:
        review = f" review {c.review_id}" if c.review_id else ""
        out.print(f"{c.link_id} {c.type} {c.confidence:.2f}{review}: {c.src.content!r} / {c.dst.content!r}"
                  f" ({c.src.id} / {c.dst.id})", markup=False)
    if not found.conflicts:
        out.print("no conflicts waiting")


@conflicts_app.command("resolve")
def conflicts_resolve(
    link_id: Annotated[str, typer.Argument(help="The conflict's id (a link id from `mnemoflow conflicts`).")],
    keep: Annotated[str | None, typer.Option(help="The memory to keep: it UPDATES the other.")] = None,
    both: Annotated[bool, typer.Option("--both", help="Keep both memories.")] = False,
    home: Home = None, tenant: Tenant = None, user: User = None,
) -> None:
    """Decide a conflict: keep one memory (--keep ID) or both (--both)."""
    if (keep is None) == (not both):
        raise ArgumentError("name the memory to keep with --keep ID, or keep both with --both")
    with service_for(home) as service:
        done = service.resolve_conflict(scope_of(service, tenant, user), link_id, keep, actor="cli")
    out.print(f"{done.applied}: kept {', '.join(done.kept)}" + (f"; {', '.join(done.superseded)} is now a past "
                                                                 "version" if done.superseded else ""), markup=False)
