"""The `mnemoflow` command's frame: the app and its groups, the shared options, how a command gets
its service and scope, and `main`, which turns every error into one line and an exit code.

Exit codes: 0 done; 1 done, but some input could not be read (see ingest_errors) or the
operation failed; 2 a wrong argument or a configured store that cannot be reached (one line on stderr).

Starting fast (a command a running server answers costs ~0.2 CPU s; tests/test_startup.py keeps it so):
- A command module registers its commands on `app` (or a group of it) when imported, and `main`
  imports only the module of the command typed: `COMMANDS` maps each top-level word to its module.
  A new module adds its words there; a word missing from it still works (every module of the
  package is then imported: correct, only slower), and tests/test_startup.py checks the table
  against what the modules register.
- Nothing heavy at the top of a command module: the service, the storage engines, the model, rich
  tables and pydantic models are imported inside the command that uses them. `out` and `err` make
  their rich console on first use.
- A command that only prints an answer calls the service as JSON through `open_calls` (see
  `memories.py`): the server does the work, and the command never imports the service's types.
- typer converts option values with pydantic; `coercion.py` spares the values that need no
  conversion (a str, a Path, a default), so pydantic is imported only for an `--k 5`.
"""

from __future__ import annotations

import gc
import importlib
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from mnemoflow.errors import MnemoflowError, ScopeError, UnreachableError
from mnemoflow.storage.scope import Scope

if TYPE_CHECKING:  # the service loads the storage engines (~2 s); parsing arguments should not wait
    from rich.console import Console
    from rich.progress import Progress

    from mnemoflow.service import MemoryService

# the module (under mnemoflow.cli) that registers each top-level command or group, in --help order
COMMANDS = {
    "ingest": "ingest", "sync": "ingest", "worker": "ingest", "reembed": "ingest", "backfill": "ingest",
    "demo": "ingest",
    "add": "memories", "recall": "memories", "search": "memories", "get": "memories", "forget": "memories",
    "history": "memories", "review": "memories",
    "export": "transfer", "import": "transfer",
    "profile": "tree", "summaries": "tree", "topics": "tree",
    "pin": "lifecycle", "share": "lifecycle", "tenant": "lifecycle",
    "maintain": "maintenance",
    "outbox": "outbox", "replay": "outbox",
    "sql": "sql", "snapshot": "sql",
    "verify": "admin", "deployments": "admin", "keys": "admin",
    "serve": "serve",
    "eval": "evaluate",
    "entities": "entities", "conflicts": "entities",
    "rules": "rules", "tools": "rules",
    "cluster": "cluster",
}


def load_commands(word: str | None) -> None:
    """Import the module of the command `word`; every module of the package when the word is not a
    known command (`--help`, a typo, a command missing from COMMANDS), those of COMMANDS first."""
    if word in COMMANDS:
        importlib.import_module(f"mnemoflow.cli.{COMMANDS[word]}")
        return
    import pkgutil

    every = sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if m.name != "__main__")
    for module in dict.fromkeys([*COMMANDS.values(), *every]):
        importlib.import_module(f"mnemoflow.cli.{module}")

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


class LazyConsole:
    """A rich `Console` made on first use (importing rich costs a command that prints plain lines
    ~0.07 CPU s); it has the console's methods."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    def get(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.get(), name)

    def line(self, *parts: str | tuple[str, str]) -> None:
        """One line of text and (text, style) segments: styled by rich on a terminal, written as it is
        anywhere else (a pipe, a file: what rich would write there, without importing rich)."""
        stream = sys.stderr if self._options.get("stderr") else sys.stdout
        if not stream.isatty():
            stream.write("".join(part if isinstance(part, str) else part[0] for part in parts) + "\n")
            return
        from rich.text import Text

        self.get().print(Text.assemble(*parts))


out = LazyConsole(highlight=False, soft_wrap=True)
err = LazyConsole(stderr=True, highlight=False, soft_wrap=True)

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


def iso_time(option: str, value: str | None) -> datetime | None:
    """An option's ISO date or time, as naive UTC; a one-line error for anything else."""
    if value is None:
        return None
    from mnemoflow.timeutil import parse_timestamp  # pydantic: only when the option is given

    try:
        return parse_timestamp(value)
    except ValueError:
        raise ArgumentError(f"{option} must be an ISO date or time (2026-03-01 or 2026-03-01T09:00Z); "
                            f"got {value!r}") from None


def writable(path: Path, option: str) -> Path:
    """Refuse an output path that cannot be written before any work is done."""
    if path.is_dir() or not path.parent.is_dir():
        raise ArgumentError(f"{option} {path}: " + ("a directory" if path.is_dir() else "no such directory"))
    return path


def service_for(home: Path | None) -> MemoryService:
    """The home's running server when there is one (the work is sent there), else the store in this
    process."""
    from mnemoflow.config import load_settings
    from mnemoflow.remote import connect

    return connect(load_settings(home))


def scope_of(service: MemoryService, tenant: str | None, user: str | None, agent: str | None = None,
             run: str | None = None, container: str | None = None) -> Scope:
    """The scope the options name: the settings' user unless an agent or a run is named without one."""
    return named_scope(service.settings.tenant_id, service.settings.user_id, tenant, user, agent, run, container)


def named_scope(default_tenant: str, default_user: str, tenant: str | None, user: str | None,
                agent: str | None = None, run: str | None = None, container: str | None = None) -> Scope:
    """The scope the options name, given the settings' tenant and user (`open_calls` says them)."""
    owner = user or (None if agent or run else default_user)
    return Scope(tenant or default_tenant, owner, agent, run, container)


def progress_bar() -> Progress:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = err.get()  # into a pipe or a file it draws nothing (rich would leave an empty line there)
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console, transient=True, disable=not console.is_terminal)


def _fail(message: str, code: int) -> None:
    sys.stderr.write(f"mnemoflow: {message}\n")
    sys.exit(code)


def main(argv: list[str] | None = None) -> None:
    """Run the command line `argv` (default: this process's) and exit with its code."""
    try:
        _run(argv if argv is not None else sys.argv[1:])
    finally:
        if argv is None:  # the process ends here, its work done and its store closed: the collector's
            gc.freeze()   # last pass over everything imported (~0.25 CPU s of a cold recall) finds nothing


def _empty_value(args: list[str]) -> str | None:
    """The option (or "an argument") given an empty value: no option or argument of these commands takes one."""
    for n, arg in enumerate(args):
        if arg.startswith("--") and arg.endswith("="):
            return arg[:-1]
        if arg == "":
            return args[n - 1] if n and args[n - 1].startswith("--") else "an argument"
    return None


def _run(args: list[str]) -> None:
    from typer.exceptions import TyperException

    from mnemoflow.cli.coercion import defer_coercion

    if empty := _empty_value(args):  # a script's unset variable: never the default tenant or user instead
        _fail(f"{empty} is empty: give it a value, or leave it out", 2)
    load_commands(args[0] if args else None)
    command = typer.main.get_command(app)
    defer_coercion(command)
    try:
        code = command.main(args, prog_name="mnemoflow", standalone_mode=False)
    except TyperException as exc:
        ctx = getattr(exc, "ctx", None)
        hint = f" (try '{ctx.command_path} --help')" if ctx is not None else ""
        _fail(f"{exc.format_message()}{hint}", getattr(exc, "exit_code", 2))
    except (ArgumentError, ScopeError, UnreachableError) as exc:
        _fail(str(exc), 2)
    except MnemoflowError as exc:
        _fail(str(exc), 1)
    except typer.Abort:
        sys.stderr.write("aborted\n")
        sys.exit(130)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    sys.exit(code or 0)
