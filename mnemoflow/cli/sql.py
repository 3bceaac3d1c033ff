"""Analyst commands: read-only SQL over the live store, and a consistent Parquet snapshot of it."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from mnemoflow.cli.app import ArgumentError, Home, app, out, service_for
from mnemoflow.errors import BadInputError


@app.command()
def sql(
    statement: Annotated[str, typer.Argument(help="One read-only statement (SELECT, WITH, SHOW, DESCRIBE, EXPLAIN).")],
    home: Home = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per row.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="CSV with a header row.")] = False,
) -> None:
    """Query every table and view, through the running server when there is one. This is an operator's
    view: it spans every tenant (tenant API keys never reach it)."""
    if as_json and as_csv:
        raise ArgumentError("--json and --csv exclude each other")
    if not statement.strip():
        raise ArgumentError("the statement is empty")
    with service_for(home) as service:
        try:
            result = service.sql(statement)
        except BadInputError as exc:  # the statement is the argument: a write, two statements, a typo
            raise ArgumentError(str(exc)) from None
    if as_json:
        for row in result.rows:
            sys.stdout.write(json.dumps(dict(zip(result.columns, row)), ensure_ascii=False) + "\n")
    elif as_csv:
        writer = csv.writer(sys.stdout)
        writer.writerow(result.columns)
        writer.writerows([json.dumps(v) if isinstance(v, dict | list) else v for v in row] for row in result.rows)
    else:
        from rich.table import Table

        table = Table(*result.columns)
        for row in result.rows:
            table.add_row(*("" if v is None else str(v) for v in row))
        out.print(table)
        out.print(f"[dim]{len(result.rows)} rows[/]")


@app.command()
def snapshot(
    out_dir: Annotated[str, typer.Option("--out", help="A new or empty directory for the Parquet files, or an "
                                                       "s3://bucket/prefix (reached with the s3_* settings).")],
    home: Home = None,
) -> None:
    """A consistent Parquet copy of every table and view (one file each), for notebooks and BI."""
    if out_dir.startswith("s3://"):
        target = out_dir
    else:
        local = Path(out_dir).expanduser().resolve()
        if local.exists() and (not local.is_dir() or any(local.iterdir())):
            raise ArgumentError(f"--out {out_dir}: exists and is not an empty directory")
        if not local.parent.is_dir():
            raise ArgumentError(f"--out {out_dir}: no such directory {local.parent}")
        target = str(local)
    with service_for(home) as service:
        written = service.snapshot(target)
    out.print(f"{len(written)} tables, {sum(written.values())} rows in {target}", markup=False)
