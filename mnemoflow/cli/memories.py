"""Commands on memories: add, recall, search, get, forget, history, and the review queue."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from mnemoflow.cli.app import (
    Agent,
    ArgumentError,
    Container,
    Home,
    Run,
    Tenant,
    User,
    app,
    out,
    review_app,
    scope_of,
    service_for,
)
from mnemoflow.cli.output import print_recall


@app.command()
def add(
    text: Annotated[str, typer.Argument(help="What to remember: a statement.")],
    home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None, run: Run = None,
    container: Container = None,
    infer: Annotated[bool, typer.Option(
        "--infer/--no-infer", help="Read it like a conversation turn and relate it to what is stored (an UPDATE "
        "replaces an older version); --no-infer stores it as written.")] = True,
    kind: Annotated[str | None, typer.Option(
        help="fact, preference, episode, procedure or rule (with --no-infer; default: inferred).")] = None,
) -> None:
    """Remember a statement; an exact repeat is recognised and not stored twice."""
    if not text.strip():
        raise ArgumentError("the memory text is empty")
    if kind is not None and kind not in ("fact", "preference", "episode", "procedure", "rule"):
        raise ArgumentError(f"--kind must be fact, preference, episode, procedure or rule; got {kind!r}")
    if kind is not None and infer:
        raise ArgumentError("--kind sets the kind of a memory stored as written: use it with --no-infer")
    with service_for(home) as service:
        scope = scope_of(service, tenant, user, agent, run, container)
        if not infer:
            memory, created = service.add(scope, text, kind=kind)  # type: ignore[arg-type]
            verb = "added" if created else "already stored"
            out.print(f"{verb} {memory.id} ({memory.kind}, salience {memory.salience:.2f})")
            return
        result = service.add_messages(scope, text)
        for event in result.results:
            memory = service.get(scope, event.id)
            if event.event == "NONE":
                out.print(f"already stored {event.id}: {event.memory}", markup=False)
            else:
                replaces = f", replaces {event.previous_id}" if event.previous_id else ""
                verb = "added" if event.event == "ADD" else "updated"
                out.print(f"{verb} {event.id} ({memory.kind}, salience {memory.salience:.2f}{replaces}): "
                          f"{event.memory}", markup=False)


@app.command()
def recall(
    query: Annotated[str, typer.Argument(help="What to remember.")],
    home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None, run: Run = None,
    container: Container = None,
    k: Annotated[int | None, typer.Option("--k", min=1, help="At most this many items (default: as many as fit).")] = None,
    budget: Annotated[int | None, typer.Option("--budget", min=16, help="Token budget (ceil(chars/4)).")] = None,
    preset: Annotated[str | None, typer.Option(help="Recall preset: default, summaries, bm25, rrf.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    history: Annotated[bool, typer.Option(
        "--history", help="Also show memories that are no longer current (superseded, expired, archived), marked.")] = False,
) -> None:
    """Hybrid recall with citations, packed into a token budget."""
    from mnemoflow.recall import PRESETS, RecallFilters

    if preset is not None and preset not in PRESETS:
        raise ArgumentError(f"--preset must be one of {', '.join(PRESETS)}; got {preset!r}")
    if not query.strip():
        raise ArgumentError("the query is empty")
    with service_for(home) as service:
        scope = scope_of(service, tenant, user, agent, run, container)
        result = service.recall(scope, query, k=k, token_budget=budget, config=preset,
                                filters=RecallFilters(include_history=history))
    if as_json:
        sys.stdout.write(json.dumps(result.public(), ensure_ascii=False) + "\n")
    else:
        print_recall(result)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None, run: Run = None,
    container: Container = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="At most this many memories.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print mem0's {\"results\": [...]} as JSON.")] = False,
) -> None:
    """Memories only, best first, with their scores (mem0's search; `recall` also cites sources)."""
    if not query.strip():
        raise ArgumentError("the query is empty")
    with service_for(home) as service:
        found = service.search(scope_of(service, tenant, user, agent, run, container), query, limit=limit)
    if as_json:
        sys.stdout.write(json.dumps(found.mem0(), ensure_ascii=False) + "\n")
        return
    for memory in found:
        out.print(f"{memory.score or 0:.3f}  {memory.id}  {memory.content}", markup=False)
    if not found.results:
        out.print("no memories found")


@app.command()
def get(
    memory_id: Annotated[str, typer.Argument(help="The memory to show.")],
    home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None, run: Run = None,
    container: Container = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the memory as JSON.")] = False,
) -> None:
    """A memory by the id of any of its versions, as it is now (after an update: the new text), if the
    scope may see it; a deleted one is gone."""
    with service_for(home) as service:
        memory = service.get(scope_of(service, tenant, user, agent, run, container), memory_id)
    if as_json:
        sys.stdout.write(memory.model_dump_json() + "\n")
        return
    state = "current" if memory.is_latest else "a past version"
    out.print(f"{memory.id} ({memory.kind}, {state}, salience {memory.salience:.2f}): {memory.content}", markup=False)


@app.command()
def forget(
    memory_id: Annotated[str, typer.Argument(help="The memory (mem_..., any version's id) or document (doc_...) "
                                                  "to delete.")],
    home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None, run: Run = None,
    container: Container = None,
) -> None:
    """Delete a memory (every version of it) or an ingested document (its attachments, chunks, vectors and
    the memories drawn only from it). Deletion means gone: recall, get and history answer as if it never
    was; `maintain decay` removes it for good after the retention period (the commit chain keeps ids and
    digests, no text)."""
    with service_for(home) as service:
        done = service.delete(scope_of(service, tenant, user, agent, run, container), memory_id)
        out.print(f"forgot {', '.join(done.deleted)}")


@app.command()
def history(
    memory_id: Annotated[str, typer.Argument(help="The memory whose commits to list.")],
    home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None, run: Run = None,
    container: Container = None,
) -> None:
    """The commits that wrote a memory and the versions it replaced, oldest first (a deleted memory has
    none: deletion means gone)."""
    with service_for(home) as service:
        for entry in service.history(scope_of(service, tenant, user, agent, run, container), memory_id):
            version = f"  (version {entry.memory_id})" if entry.memory_id != memory_id else ""
            out.print(f"{entry.created_at:%Y-%m-%d %H:%M:%S}  {entry.op:<7} {entry.commit_id}  {entry.actor}: "
                      f"{entry.message}{version}", markup=False)





ReviewId = Annotated[str, typer.Argument(help="The review to decide (an id from `mnemoflow review list`).")]


@review_app.command("list")
def review_list(
    home: Home = None, tenant: Tenant = None, user: User = None,
    status: Annotated[str, typer.Option(help="open, accepted, rejected or all.")] = "open",
    limit: Annotated[int, typer.Option(min=1, help="At most this many reviews, oldest first.")] = 100,
) -> None:
    """Relationship decisions the pipeline was unsure of, with both memories, to accept or reject."""
    from rich.table import Table

    from mnemoflow.models import REVIEW_STATUSES

    if status not in (*REVIEW_STATUSES, "all"):
        raise ArgumentError(f"--status must be open, accepted, rejected or all; got {status!r}")
    with service_for(home) as service:
        items = service.review_items(scope_of(service, tenant, user), status=status, limit=limit)
    if not items:
        out.print(f"no {'' if status == 'all' else status + ' '}reviews")
        return

    def shown(content: str | None, current: bool) -> str:
        return (content or "") + ("" if current else " [deleted or superseded]")

    table = Table(show_lines=True)
    table.add_column("id", no_wrap=True)
    if status != "open":
        table.add_column("status", no_wrap=True)
    table.add_column("proposed", no_wrap=True)
    table.add_column("conf.", justify="right", no_wrap=True)
    table.add_column("reason")
    table.add_column("new memory")
    table.add_column("existing memory")
    for item in items:
        state = [item.status + (f" as {item.applied_type}" if item.applied_type else "")] if status != "open" else []
        table.add_row(item.review_id, *state, item.proposed_type, f"{item.confidence:.2f}", item.reason or "",
                      shown(item.src_content, item.src_current), shown(item.dst_content, item.dst_current))
    out.print(table, markup=False)
    plural = "" if len(items) == 1 else "s"
    out.print(f"[dim]{len(items)} review{plural}; decide with `mnemoflow review accept ID [--as TYPE]` "
              "or `mnemoflow review reject ID`[/]")


@review_app.command("accept")
def review_accept(
    review_id: ReviewId,
    as_type: Annotated[str | None, typer.Option("--as", help="Apply another relation than the proposed one "
                                                 "(UPDATES, EXTENDS, DERIVES, RELATES_TO, DUPLICATE_OF, "
                                                 "CONFLICTS_WITH).")] = None,
    home: Home = None, tenant: Tenant = None, user: User = None,
) -> None:
    """Apply a queued relationship as if it had been decided automatically (an UPDATES supersedes)."""
    from mnemoflow.models import LINK_TYPES

    if as_type is not None and as_type.strip().upper() not in LINK_TYPES:
        raise ArgumentError(f"--as must be one of {', '.join(LINK_TYPES)}; got {as_type!r}")
    with service_for(home) as service:
        item = service.decide_review(scope_of(service, tenant, user), review_id, True, link_type=as_type, actor="cli")
    out.print(f"accepted {item.review_id}: {item.src} {item.applied_type or item.proposed_type} {item.dst}",
              markup=False)


@review_app.command("reject")
def review_reject(review_id: ReviewId, home: Home = None, tenant: Tenant = None, user: User = None) -> None:
    """Drop a queued relationship; both memories stay as they are."""
    with service_for(home) as service:
        item = service.decide_review(scope_of(service, tenant, user), review_id, False, actor="cli")
    out.print(f"rejected {item.review_id}", markup=False)

