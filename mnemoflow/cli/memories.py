"""Commands on memories: add, recall, search, get, forget, history, and the review queue.

add, recall, search, get, forget and history call the service as JSON (`open_calls`): through a
running server they import no model, no storage engine and no pydantic model tree, and print what the
server sends (`--json` prints it as it came, with no rich renderable). The review commands print a
rich table and use the service's types.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

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
    iso_time,
    named_scope,
    out,
    review_app,
    scope_of,
    service_for,
)
from mnemoflow.remote import open_calls

# the recall presets (mnemoflow.recall.config.PRESETS, which builds pydantic models on import)
PRESET_NAMES = ("default", "summaries", "bm25", "rrf")
KINDS = ("fact", "preference", "episode", "procedure", "rule")


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
    at: Annotated[str | None, typer.Option(
        "--at", help="When it was said: an ISO date or time (2026-03-01 or 2026-03-01T09:00Z); default now. "
        "Dates it names (\"next Friday\") are read from then.")] = None,
) -> None:
    """Remember a statement; an exact repeat is recognised and not stored twice."""
    if not text.strip():
        raise ArgumentError("the memory text is empty")
    if kind is not None and kind not in KINDS:
        raise ArgumentError(f"--kind must be fact, preference, episode, procedure or rule; got {kind!r}")
    if kind is not None and infer:
        raise ArgumentError("--kind sets the kind of a memory stored as written: use it with --no-infer")
    said = iso_time("--at", at)
    said_at = None if said is None else said.isoformat()
    with open_calls(home) as (calls, default_tenant, default_user):
        scope = named_scope(default_tenant, default_user, tenant, user, agent, run, container)
        if not infer:
            memory, created = calls.call("add", {"scope": scope, "text": text, "kind": kind, "observed_at": said_at})
            verb = "added" if created else "already stored"
            out.line(f"{verb} {memory['id']} ({memory['kind']}, salience {memory['salience']:.2f}): {memory['content']}")
            return
        result = calls.call("add_messages", {"scope": scope, "messages": text, "timestamp": said_at})
        if not result["results"]:
            out.line("nothing to remember: small talk or a question (--no-infer stores it as written)")
        for event in result["results"]:
            memory = calls.call("get", {"scope": scope, "memory_id": event["id"]})
            if event["event"] == "NONE":
                out.line(f"already stored {event['id']}: {event['memory']}")
            else:
                replaces = f", replaces {event['previous_id']}" if event.get("previous_id") else ""
                verb = "added" if event["event"] == "ADD" else "updated"
                out.line(f"{verb} {event['id']} ({memory['kind']}, salience {memory['salience']:.2f}{replaces}): "
                         f"{event['memory']}")


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
    if preset is not None and preset not in PRESET_NAMES:
        raise ArgumentError(f"--preset must be one of {', '.join(PRESET_NAMES)}; got {preset!r}")
    if not query.strip():
        raise ArgumentError("the query is empty")
    with open_calls(home) as (calls, default_tenant, default_user):
        scope = named_scope(default_tenant, default_user, tenant, user, agent, run, container)
        result = calls.call("recall", {"scope": scope, "query": query, "k": k, "token_budget": budget,
                                       "config": preset, "filters": {"include_history": history}}, view="public")
    if as_json:
        _print_json(result)
    else:
        from mnemoflow.cli.output import print_recall

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
    with open_calls(home) as (calls, default_tenant, default_user):
        scope = named_scope(default_tenant, default_user, tenant, user, agent, run, container)
        found = calls.call("search", {"scope": scope, "query": query, "limit": limit}, view="mem0")
    if as_json:
        _print_json(found)
        return
    for memory in found["results"]:
        out.line(f"{memory.get('score') or 0:.3f}  {memory['id']}  {memory['memory']}")
    if not found["results"]:
        out.line("no memories found")


@app.command()
def get(
    memory_id: Annotated[str, typer.Argument(help="The memory to show.")],
    home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None, run: Run = None,
    container: Container = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the memory as JSON.")] = False,
) -> None:
    """A memory by the id of any of its versions, as it is now (after an update: the new text), if the
    scope may see it; a deleted one is gone."""
    with open_calls(home) as (calls, default_tenant, default_user):
        scope = named_scope(default_tenant, default_user, tenant, user, agent, run, container)
        memory = calls.call("get", {"scope": scope, "memory_id": memory_id})
    if as_json:
        sys.stdout.write(json.dumps(memory, separators=(",", ":"), ensure_ascii=False) + "\n")
        return
    state = "current" if memory["is_latest"] else "a past version"
    out.line(f"{memory['id']} ({memory['kind']}, {state}, salience {memory['salience']:.2f}): {memory['content']}")


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
    with open_calls(home) as (calls, default_tenant, default_user):
        scope = named_scope(default_tenant, default_user, tenant, user, agent, run, container)
        done = calls.call("delete", {"scope": scope, "memory_id": memory_id})
        out.line(f"forgot {', '.join(done['deleted'])}")


@app.command()
def history(
    memory_id: Annotated[str, typer.Argument(help="The memory whose commits to list.")],
    home: Home = None, tenant: Tenant = None, user: User = None, agent: Agent = None, run: Run = None,
    container: Container = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the entries as a JSON list.")] = False,
) -> None:
    """The commits that wrote a memory and the versions it replaced, oldest first, each with the text it
    wrote (a deleted memory has none: deletion means gone)."""
    from datetime import datetime

    with open_calls(home) as (calls, default_tenant, default_user):
        scope = named_scope(default_tenant, default_user, tenant, user, agent, run, container)
        entries = calls.call("history", {"scope": scope, "memory_id": memory_id})
        if as_json:
            _print_json(entries)
            return
        for entry in entries:
            version = f"  (version {entry['memory_id']})" if entry["memory_id"] != memory_id else ""
            out.line(f"{datetime.fromisoformat(entry['created_at']):%Y-%m-%d %H:%M:%S}  {entry['op']:<7} "
                     f"{entry['commit_id']}  {entry['actor']}: {entry['message']}{version}{_written(entry)}")


def _written(entry: dict[str, Any]) -> str:
    """What a history entry wrote, in mem0's terms: the text added, the text that replaced another, or none
    (the bookkeeping half of an update)."""
    if entry.get("event") == "UPDATE":
        return f"  UPDATE: {entry['new_memory']}  (was: {entry['old_memory']})"
    if entry.get("event") in ("ADD", "DELETE"):
        return f"  {entry['event']}: {entry['new_memory'] or entry['old_memory'] or ''}".rstrip()
    return ""


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")


ReviewId = Annotated[str, typer.Argument(help="The review to decide (an id from `mnemoflow review list`).")]


@review_app.command("list")
def review_list(
    home: Home = None, tenant: Tenant = None, user: User = None,
    status: Annotated[str, typer.Option(help="open, accepted, rejected or all.")] = "open",
    limit: Annotated[int, typer.Option(min=1, help="At most this many reviews, oldest first.")] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="Print the reviews as a JSON list.")] = False,
) -> None:
    """Relationship decisions the pipeline was unsure of, with both memories, to accept or reject."""
    from rich.table import Table

    from mnemoflow.models import REVIEW_STATUSES

    if status not in (*REVIEW_STATUSES, "all"):
        raise ArgumentError(f"--status must be open, accepted, rejected or all; got {status!r}")
    with service_for(home) as service:
        items = service.review_items(scope_of(service, tenant, user), status=status, limit=limit)
    if as_json:
        return _print_json([item.model_dump(mode="json") for item in items])
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

