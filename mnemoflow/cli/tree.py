"""Commands on the memory tree: a user's profile, sealed summaries and topics (the maintenance jobs
profiles, seal and cluster build them)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from mnemoflow.cli.app import ArgumentError, Home, Tenant, User, app, out, scope_of, service_for


@app.command()
def profile(
    home: Home = None, tenant: Tenant = None, user: User = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the profile as JSON.")] = False,
) -> None:
    """The user's static and dynamic profile, each line with the memories it cites."""
    with service_for(home) as service:
        found = service.profile(scope_of(service, tenant, user))
    if as_json:
        sys.stdout.write(found.model_dump_json() + "\n")
        return
    out.print(f"profile of {found.tenant_id}/{found.user_id}, version {found.version}, "
              f"updated {found.updated_at:%Y-%m-%d %H:%M}", markup=False)
    for title, lines in (("static", found.static), ("dynamic", found.dynamic)):
        out.print(f"{title}:" if lines else f"{title}: (nothing yet)", markup=False)
        for line in lines:
            out.print(f"  - {line.text}  [{', '.join(line.memory_ids)}]", markup=False)
    if found.withheld:
        out.print(f"({found.withheld} lines withheld: a memory they cite is no longer current; the next "
                  "`mnemoflow maintain profiles` drops them)", markup=False)


@app.command()
def summaries(
    home: Home = None, tenant: Tenant = None, user: User = None,
    level: Annotated[str | None, typer.Option(help="L1 or L2 only.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many.")] = 20,
    retired: Annotated[bool, typer.Option("--retired", help="Also those retired (a memory they cover went).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print them as JSON.")] = False,
) -> None:
    """The user's sealed summaries, latest period first."""
    if level is not None and level not in ("L1", "L2"):
        raise ArgumentError(f"--level must be L1 or L2; got {level!r}")
    with service_for(home) as service:
        found = service.summaries(scope_of(service, tenant, user), level=level, include_retired=retired, limit=limit)
    if as_json:
        sys.stdout.write(json.dumps([s.model_dump(mode="json") for s in found], ensure_ascii=False) + "\n")
        return
    if not found:
        out.print("no summaries yet; `mnemoflow maintain seal` writes them")
    for s in found:
        state = f", retired: {s.retired_reason}" if s.retired_at else ""
        out.print(f"{s.id} {s.level} {s.subject_kind} ({len(s.memory_ids)} memories, {s.method}{state})", markup=False)
        out.print(f"  {s.content}", markup=False)


@app.command()
def topics(
    home: Home = None, tenant: Tenant = None, user: User = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print them as JSON.")] = False,
) -> None:
    """The user's topics, largest first, with their distinctive terms."""
    with service_for(home) as service:
        found = service.topics(scope_of(service, tenant, user))
    if as_json:
        sys.stdout.write(json.dumps([t.model_dump(mode="json") for t in found], ensure_ascii=False) + "\n")
        return
    if not found:
        out.print("no topics yet; `mnemoflow maintain cluster` finds them")
    for t in found:
        out.print(f"{t.id} {t.label} ({t.size} memories; terms: {', '.join(t.terms)})", markup=False)
