"""Moving memories out and in: `export` (JSON lines on stdout or to a file) and `import` (our export,
or mem0's `get_all` output and its history)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from mnemoflow.cli.app import ArgumentError, Home, Tenant, app, err, out, service_for, writable


@app.command("export")
def export(
    home: Home = None, tenant: Tenant = None,
    user: Annotated[str | None, typer.Option("--user", help="Only this user's memories (default: the tenant's).")] = None,
    output: Annotated[Path | None, typer.Option("--out", help="Write here instead of stdout.")] = None,
) -> None:
    """A tenant's memories as JSON lines: every version, links, entities and citations; no vectors."""
    if output is not None:
        writable(output, "--out")
    with service_for(home) as service:
        lines = service.export_memories(tenant or service.settings.tenant_id, user_id=user)
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text)
        err.print(f"exported {lines[0]['memories']} memories to {output}")


@app.command("import")
def import_(
    path: Annotated[Path, typer.Argument(help="An export of mnemoflow's, or mem0's get_all output (JSON or JSON "
                                              "lines; history entries in the same file).")],
    home: Home = None,
    tenant: Annotated[str | None, typer.Option(
        "--tenant", help="Import into this tenant (default: the export's own; for mem0's, settings.tenant_id).")] = None,
) -> None:
    """Bring memories in with their ids and times, embedded with this store's model; already imported
    ones are skipped."""
    from mnemoflow.transfer import read_records

    if not path.is_file():
        raise ArgumentError(f"{path}: no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ArgumentError(f"{path}: not UTF-8 text") from None
    records = read_records(text)
    with service_for(home) as service:
        report = service.import_memories(records, tenant_id=tenant)
    out.print(f"imported {report.imported} memories ({report.format}), {report.skipped} already held, "
              f"{report.links} links", markup=False)
    for reason in report.rejected[:20]:
        err.print(f"  not imported: {reason}", markup=False)
    if report.rejected:
        raise typer.Exit(1)
