"""`mnemoflow serve`: own the home's store and serve everyone else (see `mnemoflow.api.server`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from mnemoflow.cli.app import Home, Tenant, User, err, out, serve_app
from mnemoflow.config import load_settings

if TYPE_CHECKING:
    from mnemoflow.remote import ServerInfo

Host = Annotated[str | None, typer.Option(help="Interface to listen on (default: settings.server_host, 127.0.0.1).")]
Port = Annotated[int | None, typer.Option(min=0, max=65535, help="Port (default: settings.server_port; 0: any free).")]


def _ready(info: ServerInfo, notes: list[str]) -> None:
    out.print(f"serving {info.url} (HTTP API /v1, OpenAPI /docs, MCP /mcp, dashboard /ui/), pid {info.pid}",
              markup=False)
    if info.quack_uri:
        out.print(f"SQL, read-only: ATTACH '{info.quack_uri}' AS mf (READ_ONLY), token in server.json",
                  markup=False)
    for note in notes:
        err.print(note, markup=False)


def _run(home: Path | None, host: str | None, port: int | None, **parts: bool) -> None:
    from mnemoflow.api.server import Parts, serve

    settings = load_settings(home)
    serve(settings, host=host, port=port, parts=Parts(**parts), on_ready=_ready)


@serve_app.callback()
def serve_everything(ctx: typer.Context, home: Home = None, host: Host = None, port: Port = None,
                     schedules: Annotated[bool, typer.Option(help="Run the maintenance and sync schedules.")] = True,
                     sql: Annotated[bool, typer.Option(help="Serve the store read-only over Quack.")] = True) -> None:
    """Everything: the HTTP API, MCP, the outbox worker, the schedules and the SQL endpoint, until
    SIGTERM or Ctrl-C. Clients of this home (CLI, Python API, flows) send it their work."""
    if ctx.invoked_subcommand is None:
        _run(home, host, port, schedules=schedules, quack=sql)


@serve_app.command("http")
def serve_http(home: Home = None, host: Host = None, port: Port = None) -> None:
    """The HTTP API alone (OpenAPI at /docs; keys from `mnemoflow keys create`); clients of this home
    send it their work too."""
    _run(home, host, port, mcp=False, worker=False, quack=False, schedules=False)


@serve_app.command("mcp")
def serve_mcp(home: Home = None, tenant: Tenant = None, user: User = None) -> None:
    """The MCP server over stdio for a desktop client, acting for one tenant and user (from the options).
    It uses the home's running server when there is one, else the store in this process."""
    from mnemoflow.api.mcp import build_mcp
    from mnemoflow.remote import connect
    from mnemoflow.storage.scope import Scope

    settings = load_settings(home)
    scope = Scope(tenant or settings.tenant_id, user or settings.user_id)
    with connect(settings) as service:
        build_mcp(service, scope=scope).run("stdio")
