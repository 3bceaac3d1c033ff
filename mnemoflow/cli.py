"""The `mnemoflow` command. Thin: parse, call the service, print.

Exit codes: 0 done; 1 done, but some input could not be read (see ingest_errors)
or the operation failed; 2 a wrong argument (one line on stderr).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import unquote

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from typer.exceptions import TyperException

from mnemoflow.config import load_settings
from mnemoflow.errors import MnemoflowError, ScopeError
from mnemoflow.storage.scope import Scope
from mnemoflow.timeutil import clock

if TYPE_CHECKING:  # the service loads the storage engines (~2 s); parsing arguments should not wait
    from mnemoflow.memory.worker import GenerationDrainReport
    from mnemoflow.models import RecallResult
    from mnemoflow.service import IngestOutcome, MemoryService

app = typer.Typer(
    add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
    help="Durable, per-tenant long-term memory for AI agents.",
)
eval_app = typer.Typer(no_args_is_help=True, help="Evaluation suites.")
app.add_typer(eval_app, name="eval")
keys_app = typer.Typer(no_args_is_help=True, help="API keys of the HTTP API (one tenant per key).")
app.add_typer(keys_app, name="keys")
serve_app = typer.Typer(no_args_is_help=True, help="Long-running servers (one process, one store connection).")
app.add_typer(serve_app, name="serve")
review_app = typer.Typer(no_args_is_help=True, help="Relationship decisions waiting for a person (review queue).")
app.add_typer(review_app, name="review")

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

Home = Annotated[Path | None, typer.Option("--home", help="Data directory (default: $MNEMOFLOW_HOME or ~/.mnemoflow).")]
Tenant = Annotated[str | None, typer.Option("--tenant", help="Tenant id (default: settings.tenant_id).")]
User = Annotated[str | None, typer.Option("--user", help="User id (default: settings.user_id).")]


class ArgumentError(MnemoflowError):
    """A value the parser accepted but the command cannot use; exits 2 like a parse error."""


def _writable(path: Path, option: str) -> Path:
    """Refuse an output path that cannot be written before any work is done."""
    if path.is_dir() or not path.parent.is_dir():
        raise ArgumentError(f"{option} {path}: " + ("a directory" if path.is_dir() else "no such directory"))
    return path


def _service(home: Path | None) -> MemoryService:
    from mnemoflow.service import MemoryService

    return MemoryService(load_settings(home))


def _scope(service: MemoryService, tenant: str | None, user: str | None) -> Scope:
    return Scope(tenant or service.settings.tenant_id, user or service.settings.user_id)


def _progress() -> Progress:
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=err, transient=True)


def run_ingest(service: MemoryService, scope: Scope, paths: list[Path], wait: bool) -> IngestOutcome:
    """Ingest with live progress: files read, then embeddings written."""
    with _progress() as progress:
        reading = progress.add_task("reading inputs", total=None)
        embedding = progress.add_task("embedding", total=None, visible=False)

        def on_embedded(n: int) -> None:
            progress.update(embedding, visible=True, advance=n)

        outcome = service.ingest(
            scope, paths, wait=False, on_file=lambda _: progress.advance(reading),
        )
        progress.update(reading, visible=False)
        if wait:
            progress.update(embedding, total=outcome.pending_embeddings, visible=True)
            outcome.drain = service.drain(on_embedded)
            outcome.pending_embeddings = service.store.counts(scope)["pending_embeddings"]
    return outcome


def print_generation(report: GenerationDrainReport | None, scope: Scope | None = None) -> None:
    """What memory generation did, in one line, when it ran on any session."""
    if report and report.sessions:
        out.print(generation_line(report, scope))


def generation_line(report: GenerationDrainReport, scope: Scope | None = None) -> str:
    """What memory generation did, in one line; with the scope ingested, the review command for it."""
    parts = [f"{report.created} new", f"{report.reinforced} reinforced"]
    parts += [f"{n} {kind}" for kind, n in sorted(report.linked.items())]
    if report.reviews:
        where = f" --tenant {scope.tenant_id} --user {scope.user_id}" if scope else ""
        parts.append(f"{report.reviews} waiting for `mnemoflow review list{where}`")
    if report.failed:
        parts.append(f"{report.failed} sessions failed")
    return f"memories from {report.turns} turns: " + ", ".join(parts)


def print_ingest(outcome: IngestOutcome, scope: Scope) -> None:
    r = outcome.report
    out.print(f"ingested: {r.documents_changed} documents changed, {r.turns_added} turns, "
              f"{r.chunks_added} chunks added, {r.chunks_removed} removed")
    if outcome.drain:
        print_generation(outcome.drain.generation, scope)
    if outcome.drain and outcome.drain.unavailable:
        out.print(f"embedder unavailable ({outcome.drain.unavailable}); "
                  f"{outcome.pending_embeddings} rows wait for `mnemoflow worker`")
    elif outcome.pending_embeddings:
        out.print(f"{outcome.pending_embeddings} rows wait for embedding (`mnemoflow worker`)")
    for e in r.errors[:20]:
        err.print(f"[yellow]skipped[/] {e.uri}: {e.reason}")
    if len(r.errors) > 20:
        err.print(f"... and {len(r.errors) - 20} more (table ingest_errors)")


def place_in_document(locator: dict[str, Any]) -> str:
    """A locator as a person reads it: a page, a heading path, a symbol and its lines, a time range, a record."""
    parts = []
    if "page" in locator:
        parts.append(f"p. {locator['page']}")
    if locator.get("heading_path"):
        parts.append(" > ".join(locator["heading_path"]))
    if "symbol" in locator:
        parts.append(str(locator["symbol"]))
    if "lines" in locator:
        first, last = locator["lines"]
        parts.append(f"lines {first}-{last}")
    if "start" in locator and "end" in locator:
        parts.append(f"{clock(locator['start'])}-{clock(locator['end'])}")
    if "resource" in locator and "id" in locator:
        parts.append(f"{locator['resource']} {locator['id']}")
    elif "record" in locator:
        parts.append(f"record {locator['record']}" + (f", line {locator['line']}" if "line" in locator else ""))
    return ", ".join(parts)


def print_recall(result: RecallResult) -> None:
    if not result.items:
        out.print("nothing recalled")
        return
    for n, item in enumerate(result.items, start=1):
        cites = []
        for c in item.citations:
            if c.turn_id:
                cites.append(f"{c.session_id}#{c.turn_id}" + (f" @ {c.ts:%Y-%m-%d %H:%M}" if c.ts else ""))
            elif c.memory_id:
                cites.append(c.memory_id)
            else:
                where = place_in_document(c.locator)
                place = unquote(c.uri.removeprefix("file://")) if c.uri else c.document_id
                cites.append(f"{place}" + (f" ({where})" if where else ""))
        out.print(f"[bold][{n}][/] {item.text}")
        out.print(f"    [dim]{item.kind} {item.id} | {item.why} | cites: {'; '.join(cites)}[/]")
    out.print(f"[dim]{len(result.items)} items, {result.tokens} tokens[/]")
    for w in result.warnings:
        err.print(f"[yellow]warning:[/] {w}")


# ---------------------------------------------------------------------- commands
@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or directories (transcripts .jsonl/.json, .md, .txt).")],
    home: Home = None, tenant: Tenant = None, user: User = None,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Leave embedding to `mnemoflow worker`.")] = False,
) -> None:
    """Ingest files and directories into the user's memory."""
    with _service(home) as service:
        scope = _scope(service, tenant, user)
        outcome = run_ingest(service, scope, paths, wait=not no_wait)
        print_ingest(outcome, scope)
        if outcome.report.errors:
            raise typer.Exit(1)


@app.command()
def sync(
    source: Annotated[str, typer.Argument(help="Name of a configured source ([sources.NAME] in the settings file).")],
    home: Home = None,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Leave embedding to `mnemoflow worker`.")] = False,
) -> None:
    """Sync one configured source: only what is new or changed is read; what is gone is retired."""
    with _service(home) as service:
        if source not in service.settings.sources:
            configured = ", ".join(sorted(service.settings.sources)) or "none configured"
            raise ArgumentError(f"no source named {source!r} ({configured})")
        with _progress() as progress:
            progress.add_task(f"syncing {source}", total=None)
            report = service.sync(source, wait=not no_wait)
        r = report.ingested
        out.print(f"{source} ({report.kind}): {report.files_read} files read ({report.files_unchanged} unchanged), "
                  f"{report.records} records, {r.documents_changed} documents changed, {r.turns_added} turns, "
                  f"{r.chunks_added} chunks added, {r.chunks_removed} removed, {report.documents_deleted} documents "
                  f"and {report.memories_deleted} memories retired")
        for e in report.errors[:20]:
            err.print(f"[yellow]skipped[/] {e.uri}: {e.reason}")
        if report.errors:
            raise typer.Exit(1)


@app.command()
def add(
    text: Annotated[str, typer.Argument(help="The memory, one self-contained statement.")],
    home: Home = None, tenant: Tenant = None, user: User = None,
    kind: Annotated[str | None, typer.Option(help="fact, preference, episode, procedure or rule (default: inferred).")] = None,
) -> None:
    """Store one memory directly; an exact repeat is recognised and not stored twice."""
    if not text.strip():
        raise ArgumentError("the memory text is empty")
    if kind is not None and kind not in ("fact", "preference", "episode", "procedure", "rule"):
        raise ArgumentError(f"--kind must be fact, preference, episode, procedure or rule; got {kind!r}")
    with _service(home) as service:
        memory, created = service.add(_scope(service, tenant, user), text, kind=kind)  # type: ignore[arg-type]
        verb = "added" if created else "already stored"
        out.print(f"{verb} {memory.id} ({memory.kind}, salience {memory.salience:.2f})")


@app.command()
def recall(
    query: Annotated[str, typer.Argument(help="What to remember.")],
    home: Home = None, tenant: Tenant = None, user: User = None,
    k: Annotated[int | None, typer.Option("--k", min=1, help="At most this many items (default: as many as fit).")] = None,
    budget: Annotated[int | None, typer.Option("--budget", min=16, help="Token budget (ceil(chars/4)).")] = None,
    preset: Annotated[str | None, typer.Option(help="Recall preset: default, bm25, rrf.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    history: Annotated[bool, typer.Option(
        "--history", help="Also show memories that are no longer current (superseded, expired), marked.")] = False,
) -> None:
    """Hybrid recall with citations, packed into a token budget."""
    from mnemoflow.recall import PRESETS, RecallFilters

    if preset is not None and preset not in PRESETS:
        raise ArgumentError(f"--preset must be one of {', '.join(PRESETS)}; got {preset!r}")
    if not query.strip():
        raise ArgumentError("the query is empty")
    with _service(home) as service:
        result = service.recall(_scope(service, tenant, user), query, k=k, token_budget=budget, config=preset,
                                filters=RecallFilters(include_history=history))
    if as_json:
        sys.stdout.write(json.dumps(result.public(), ensure_ascii=False) + "\n")
    else:
        print_recall(result)


@app.command()
def forget(
    memory_id: Annotated[str, typer.Argument(help="The memory to delete.")],
    home: Home = None, tenant: Tenant = None, user: User = None,
) -> None:
    """Delete one of the user's memories (recall stops returning it; history keeps the record)."""
    with _service(home) as service:
        service.delete(_scope(service, tenant, user), memory_id)
        out.print(f"forgot {memory_id}")


@app.command()
def history(
    memory_id: Annotated[str, typer.Argument(help="The memory whose commits to list.")],
    home: Home = None, tenant: Tenant = None, user: User = None,
) -> None:
    """The commits that wrote a memory, oldest first."""
    with _service(home) as service:
        for entry in service.history(_scope(service, tenant, user), memory_id):
            out.print(f"{entry.created_at:%Y-%m-%d %H:%M:%S}  {entry.op:<7} {entry.commit_id}  {entry.actor}: {entry.message}")


@app.command()
def worker(home: Home = None) -> None:
    """Run the outbox until it is empty: memory generation for new turns, then embeddings (what
    `ingest --no-wait` left, or what waited while the embedder was down)."""
    with _service(home) as service:
        with _progress() as progress:
            task = progress.add_task("embedding", total=service.store.outbox_counts().get("pending"))
            report = service.drain(lambda n: progress.advance(task, n))
        print_generation(report.generation)
        out.print(f"embedded {report.embedded}, reused {report.reused} cached vectors, "
                  f"skipped {report.skipped} stale jobs, {report.failed} failed")
        if report.unavailable:
            err.print(f"embedder unavailable: {report.unavailable}")
            raise typer.Exit(1)


@app.command()
def reembed(home: Home = None) -> None:
    """Rebuild every vector with the configured embedding model (run after changing the model)."""
    with _service(home) as service:
        with _progress() as progress:
            task = progress.add_task("re-embedding", total=None)
            queued, report = service.reembed(lambda n: progress.advance(task, n))
        out.print(f"queued {queued} rows; embedded {report.embedded}, reused {report.reused} cached vectors")
        if report.unavailable:
            err.print(f"embedder unavailable: {report.unavailable}; `mnemoflow worker` finishes the job")
            raise typer.Exit(1)


@app.command()
def verify(home: Home = None, tenant: Tenant = None) -> None:
    """Re-derive the commit chain and every row digest; exit 1 on any mismatch."""
    with _service(home) as service:
        reports = service.verify(tenant)
    bad = False
    for report in reports:
        status = "ok" if report.ok else f"{len(report.problems)} problems"
        out.print(f"{report.tenant_id}: {report.commits_checked} commits, {report.rows_checked} rows: {status}")
        for problem in report.problems[:20]:
            out.print(f"  {problem}")
        bad |= not report.ok
    if bad:
        raise typer.Exit(1)


@app.command()
def deployments(
    home: Home = None,
    write: Annotated[Path | None, typer.Option("--write", help="Write prefect.yaml here instead of printing it.")] = None,
    timezone: Annotated[str, typer.Option(help="Time zone of the sources' cron schedules.")] = "UTC",
) -> None:
    """Prefect deployments from the settings: `ingest`, and `sync-<source>` on each source's schedule."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from mnemoflow.flows.deployments import prefect_yaml

    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ArgumentError(f"unknown time zone {timezone!r} (an IANA name such as Europe/Berlin)") from None
    if write is not None:
        _writable(write, "--write")
    text = prefect_yaml(load_settings(home), timezone)
    if write is None:
        sys.stdout.write(text)
        return
    write.write_text(text)
    out.print(f"wrote {write}; deploy with `prefect deploy --all --prefect-file {write}`")


@app.command()
def demo(home: Home = None) -> None:
    """Ingest the bundled sample (a chat, markdown, PDF, HTML, code, audio) and answer questions with citations."""
    from mnemoflow.demo import DEMO_QUESTIONS, DEMO_SCOPE, sample_paths

    with _service(home) as service:
        out.print(f"[bold]mnemoflow demo[/] (home: {service.settings.home})")
        outcome = run_ingest(service, DEMO_SCOPE, sample_paths(), wait=True)
        print_ingest(outcome, DEMO_SCOPE)
        for question in DEMO_QUESTIONS:
            out.print(f"\n[bold]Q:[/] {question}")
            print_recall(service.recall(DEMO_SCOPE, question, k=5, token_budget=400))
        # the sample lives in its own scope: a bare `recall` (tenant and user "default") finds none of it
        where = f" --home {home}" if home else ""
        out.print(f'\nAsk your own: mnemoflow recall "Who leads the roadmap workshop?" '
                  f"--tenant {DEMO_SCOPE.tenant_id} --user {DEMO_SCOPE.user_id}{where}", markup=False)


@keys_app.command("create")
def keys_create(
    tenant: Annotated[str, typer.Option("--tenant", help="The tenant the key reaches.")],
    name: Annotated[str | None, typer.Option(help="A label for the key.")] = None,
    home: Home = None,
) -> None:
    """Create an API key; its secret is printed once and only its hash is kept."""
    with _service(home) as service:
        key_id, secret = service.store.create_api_key(tenant, name)
    out.print(f"{key_id} for tenant {tenant}")
    sys.stdout.write(secret + "\n")


@keys_app.command("list")
def keys_list(tenant: Tenant = None, home: Home = None) -> None:
    """List API keys (never their secrets)."""
    with _service(home) as service:
        for key in service.store.list_api_keys(tenant):
            state = f"revoked {key['revoked_at']:%Y-%m-%d}" if key["revoked_at"] else "active"
            out.print(f"{key['key_id']}  {key['tenant_id']}  {key['name'] or '-'}  {state}")


@keys_app.command("revoke")
def keys_revoke(key_id: Annotated[str, typer.Argument(help="The key to revoke.")], home: Home = None) -> None:
    """Revoke an API key at once."""
    with _service(home) as service:
        if not service.store.revoke_api_key(key_id):
            raise ArgumentError(f"no active key {key_id}")
    out.print(f"revoked {key_id}")


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
    with _service(home) as service:
        items = service.review_items(_scope(service, tenant, user), status=status, limit=limit)
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
    with _service(home) as service:
        item = service.decide_review(_scope(service, tenant, user), review_id, True, link_type=as_type, actor="cli")
    out.print(f"accepted {item.review_id}: {item.src} {item.applied_type or item.proposed_type} {item.dst}",
              markup=False)


@review_app.command("reject")
def review_reject(review_id: ReviewId, home: Home = None, tenant: Tenant = None, user: User = None) -> None:
    """Drop a queued relationship; both memories stay as they are."""
    with _service(home) as service:
        item = service.decide_review(_scope(service, tenant, user), review_id, False, actor="cli")
    out.print(f"rejected {item.review_id}", markup=False)


@serve_app.command("http")
def serve_http(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8000,
    home: Home = None,
) -> None:
    """Serve the HTTP API (OpenAPI at /docs); keys come from `mnemoflow keys create`."""
    import uvicorn

    from mnemoflow.api.http import create_app

    with _service(home) as service:
        uvicorn.run(create_app(service), host=host, port=port, log_level="info")


@eval_app.command("locomo")
def eval_locomo(
    data: Annotated[Path, typer.Option("--data", help="Directory with conversations.jsonl and questions.jsonl.")],
    out_path: Annotated[Path, typer.Option("--out", help="Where to write report.json.")] = Path("report.json"),
    budgets: Annotated[str, typer.Option("--budgets", help="Comma-separated token budgets.")] = "512,2048",
    preset: Annotated[str, typer.Option(help="Recall preset to evaluate.")] = "default",
    home: Annotated[Path | None, typer.Option("--home", help="Store to build (default: a fresh temporary one).")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N conversations.")] = None,
) -> None:
    """LoCoMo evidence recall per token budget (DESIGN.md, evaluation protocol)."""
    from mnemoflow.eval.locomo import parse_budgets, run_locomo
    from mnemoflow.eval.report import print_summary
    from mnemoflow.recall import PRESETS

    try:
        budget_list = parse_budgets(budgets)
    except ValueError as exc:
        raise ArgumentError(str(exc)) from None
    if preset not in PRESETS:
        raise ArgumentError(f"--preset must be one of {', '.join(PRESETS)}; got {preset!r}")
    for name in ("conversations.jsonl", "questions.jsonl"):
        if not (data / name).is_file():
            raise ArgumentError(f"--data {data}: {name} not found")
    _writable(out_path, "--out")
    with _progress() as progress:
        report = run_locomo(data, budgets=budget_list, preset=preset, home=home, limit=limit, progress=progress)
    out_path.write_text(json.dumps(report, ensure_ascii=False))
    print_summary(report, out)
    out.print(f"report: {out_path}")


@eval_app.command("scenarios")
def eval_scenarios(
    data: Annotated[Path, typer.Option("--data", help="Directory of scenario files.")] = Path("eval/scenarios"),
    out_path: Annotated[Path, typer.Option("--out", help="Where to write the report (JSON).")] = Path(
        "scenarios-report.json"),
    home: Annotated[Path | None, typer.Option("--home", help="Store to build (default: a fresh temporary one).")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N scenarios (of the half chosen).", min=1)] = None,
    half: Annotated[str, typer.Option("--half", help="Which half of the suite: tune, check or all (see "
                                      "eval/scenarios/README.md).")] = "all",
) -> None:
    """Memory quality on the scenario suite: extraction precision/recall, relationships per class,
    recall checks and stale memories, for the rule-based engine; overall and per half (tune / check)."""
    import tempfile

    from mnemoflow.eval.scenario_run import run_scenarios
    from mnemoflow.eval.scenarios import load_scenarios, select_half, summary_table
    from mnemoflow.memory.rules import RuleEngine
    from mnemoflow.service import MemoryService

    if half not in ("tune", "check", "all"):
        raise ArgumentError(f"--half must be one of tune, check, all; got {half!r}")
    if not data.is_dir():
        raise ArgumentError(f"--data {data}: not a directory of scenario files")
    _writable(out_path, "--out")
    scenarios = select_half(load_scenarios(data), half)[:limit]
    with tempfile.TemporaryDirectory(prefix="mnemoflow-scenarios-") as scratch:
        with MemoryService(load_settings(home or Path(scratch))) as service, _progress() as progress:
            task = progress.add_task("scenarios", total=len(scenarios))
            report = run_scenarios(service, scenarios, RuleEngine(), on_done=lambda _: progress.advance(task),
                                   config={"half": half, "limit": limit})
    out_path.write_text(report.model_dump_json(indent=1))
    out.print(summary_table(report))
    out.print(f"report: {out_path}")


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
    except (ArgumentError, ScopeError) as exc:
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


if __name__ == "__main__":  # `python -m mnemoflow.cli ...` runs the command too
    main()
