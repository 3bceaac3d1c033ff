"""`mnemoflow cluster up|status|down`: the distributed mode on one machine (see `mnemoflow.cluster.local`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from mnemoflow.cli.app import ArgumentError, app, out

cluster_app = typer.Typer(
    no_args_is_help=True,
    help="Run the distributed mode on 127.0.0.1: PostgreSQL, an S3 server, Dask, Prefect, N servers and N workers.")
app.add_typer(cluster_app, name="cluster")

Dir = Annotated[Path, typer.Option("--dir", help="Where the cluster keeps its data, logs and cluster.json.")]


def _directory(directory: Path) -> Path:
    directory = directory.expanduser()
    if directory.exists() and not directory.is_dir():
        raise ArgumentError(f"--dir {directory}: not a directory")
    return directory


@cluster_app.command("up")
def up(
    directory: Dir,
    servers: Annotated[int, typer.Option(min=1, max=32, help="`mnemoflow serve` processes.")] = 2,
    workers: Annotated[int, typer.Option(min=0, max=32, help="`mnemoflow worker` processes draining the outbox.")] = 2,
    dask_workers: Annotated[int, typer.Option(min=1, max=32, help="Dask workers (one thread each).")] = 2,
) -> None:
    """Start every part that is not running and print, as one JSON object, the servers' URLs, the `env`
    that points the CLI and the Python client at the cluster, and each part's endpoint."""
    from mnemoflow.cluster.local import up as start

    summary = start(_directory(directory), servers=servers, workers=workers, dask_workers=dask_workers)
    sys.stdout.write(json.dumps(summary, indent=2) + "\n")


@cluster_app.command("status")
def status(
    directory: Dir,
    as_json: Annotated[bool, typer.Option("--json", help="A JSON list of the processes.")] = False,
) -> None:
    """Every process the cluster started, with its role, pid and whether it runs."""
    from mnemoflow.cluster.local import processes

    found = processes(_directory(directory))
    if as_json:
        sys.stdout.write(json.dumps(found, indent=2) + "\n")
        return
    if not found:
        out.print(f"no cluster in {directory}", markup=False)
        raise typer.Exit(1)
    for part in found:
        state = "running" if part["running"] else "stopped"
        out.print(f"{part['role']:<15} {part['name']:<15} pid {part['pid'] or '-':<8} {state:<8} "
                  f"{part['endpoint'] or ''}", markup=False)


@cluster_app.command("down")
def down(directory: Dir) -> None:
    """Stop every process the cluster started (servers and workers first, PostgreSQL last); the data
    stays in --dir for the next `up`."""
    from mnemoflow.cluster.local import down as stop

    stopped = stop(_directory(directory))
    out.print(f"stopped {len(stopped)} processes", markup=False)
