"""The `mnemoflow` command's frame: the app and its groups, the shared options, how a command gets
its service and scope, and `main`, which turns every error into one line and an exit code.

Exit codes: 0 done; 1 done, but some input could not be read (see ingest_errors) or the
operation failed; 2 a wrong argument or a configured store that cannot be reached (one line on stderr).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from typer.exceptions import TyperException

from mnemoflow.config import load_settings
from mnemoflow.errors import MnemoflowError, ScopeError, UnreachableError
from mnemoflow.storage.scope import Scope

if TYPE_CHECKING:  # the service loads the storage engines (~2 s); parsing arguments should not wait
    from mnemoflow.service import MemoryService

app = typer.Typer(
    add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
    help="Durable, per-tenant long-term memory for AI agents.",
)
eval_app = typer.Typer(no_args_is_help=True, help="Evaluation suites.")
app.add_typer(eval_app, name="eval")
keys_app = typer.Typer(no_args_is_help=True, help="API keys of the HTTP API (one tenant per key).")
app.add_typer(keys_app, name="keys")
serve_app = typer.Typer(
    invoke_without_command=True,
    help="Own the home's store and serve everyone else: the HTTP API, MCP, the outbox worker, the schedules "
    "and a read-only SQL endpoint (`serve`), or one part (`serve http`, `serve mcp`).")
app.add_typer(serve_app, name="serve")
review_app = typer.Typer(no_args_is_help=True, help="Relationship decisions waiting for a person (review queue).")
app.add_typer(review_app, name="review")

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

Home = Annotated[Path | None, typer.Option("--home", help="Data directory (default: $MNEMOFLOW_HOME or ~/.mnemoflow).")]
Tenant = Annotated[str | None, typer.Option("--tenant", help="Tenant id (default: settings.tenant_id).")]
User = Annotated[str | None, typer.Option("--user", help="User id (default: settings.user_id, unless --agent or "
                                                        "--run names the owner).")]
Agent = Annotated[str | None, typer.Option("--agent", help="Agent id: the agent's memories (with --user, those it "
                                                          "keeps for that user).")]
Run = Annotated[str | None, typer.Option("--run", help="Run (session) id: narrows to one run's memories.")]
Container = Annotated[str | None, typer.Option("--container", help="Container (project, workspace, group): "
                                                                  "narrows to it; its shared memories join.")]


class ArgumentError(MnemoflowError):
    """A value the parser accepted but the command cannot use; exits 2 like a parse error."""


def writable(path: Path, option: str) -> Path:
    """Refuse an output path that cannot be written before any work is done."""
    if path.is_dir() or not path.parent.is_dir():
        raise ArgumentError(f"{option} {path}: " + ("a directory" if path.is_dir() else "no such directory"))
    return path


def service_for(home: Path | None) -> MemoryService:
    """The home's running server when there is one (the work is sent there), else the store in this
    process."""
    from mnemoflow.remote import connect

    return connect(load_settings(home))


def scope_of(service: MemoryService, tenant: str | None, user: str | None, agent: str | None = None,
             run: str | None = None, container: str | None = None) -> Scope:
    """The scope the options name: the settings' user unless an agent or a run is named without one."""
    owner = user or (None if agent or run else service.settings.user_id)
    return Scope(tenant or service.settings.tenant_id, owner, agent, run, container)


def progress_bar() -> Progress:
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=err, transient=True)


def main(argv: list[str] | None = None) -> None:
    command = typer.main.get_command(app)
    try:
        code = command.main(argv if argv is not None else sys.argv[1:], prog_name="mnemoflow",
                            standalone_mode=False)
    except TyperException as exc:
        ctx = getattr(exc, "ctx", None)
        hint = f" (try '{ctx.command_path} --help')" if ctx is not None else ""
        err.print(f"mnemoflow: {exc.format_message()}{hint}", markup=False)
        sys.exit(getattr(exc, "exit_code", 2))
    except (ArgumentError, ScopeError, UnreachableError) as exc:
        err.print(f"mnemoflow: {exc}", markup=False)
        sys.exit(2)
    except MnemoflowError as exc:
        err.print(f"mnemoflow: {exc}", markup=False)
        sys.exit(1)
    except typer.Abort:
        err.print("aborted")
        sys.exit(130)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    sys.exit(code or 0)
