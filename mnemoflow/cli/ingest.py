"""Commands that bring data in: ingest, sync, the outbox worker, re-embedding, the demo."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import click
import typer
from typer.core import TyperArgument, TyperCommand

from mnemoflow.cli.app import ArgumentError, Home, Tenant, User, app, err, out, progress_bar, scope_of, service_for
from mnemoflow.cli.output import IngestProgress, print_generation, print_ingest, print_recall, run_ingest
from mnemoflow.config import load_settings
from mnemoflow.storage.scope import Scope


class _IngestCommand(TyperCommand):
    """`ingest --help` names every input kind the extractor registry reads, asked of the registry only when
    help is shown (loading the extractors costs about a second no other command should pay)."""

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from mnemoflow.extractors.registry import supported_kinds

        endings = ", ".join(" ".join(suffixes) for suffixes in supported_kinds().values())
        for param in self.params:
            if isinstance(param, TyperArgument) and param.name == "paths":
                param.help = (f"Files or directories: transcripts (.jsonl, or .json with a list of turns) and "
                              f"every kind an extractor reads: {endings}.")
        super().format_help(ctx, formatter)


@app.command(cls=_IngestCommand)
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or directories (`ingest --help` lists every kind read).")],
    home: Home = None, tenant: Tenant = None, user: User = None,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Leave embedding to `mnemoflow worker`.")] = False,
    dask: Annotated[bool, typer.Option("--dask", help="Bulk: extract, chunk and embed on Dask workers (dask_address, "
                                                      "or a local cluster) and write here in batches.")] = False,
    dask_workers: Annotated[int, typer.Option(min=1, max=64, help="With --dask and no dask_address: local "
                                                                  "workers.")] = 2,
) -> None:
    """Ingest files and directories into the user's memory; a folder ingested again also retires the
    documents of its files that are gone."""
    if dask:
        from mnemoflow.flows.bulk import bulk_ingest_flow, run_bulk

        settings = load_settings(home)
        scope = Scope(tenant or settings.tenant_id, user or settings.user_id)
        outcome = run_bulk(bulk_ingest_flow, settings, dask_workers, paths=[str(p) for p in paths],
                           tenant_id=scope.tenant_id, user_id=scope.user_id)
        print_ingest(outcome, scope)
        if outcome.report.errors:
            raise typer.Exit(1)
        return
    with service_for(home) as service:
        scope = scope_of(service, tenant, user)
        outcome = run_ingest(service, scope, paths, wait=not no_wait)
        if all(e.kind == "missing" for e in outcome.report.errors) and len(outcome.report.errors) == len(paths):
            raise ArgumentError(f"{paths[0]}: {outcome.report.errors[0].reason}" if len(paths) == 1 else
                                f"none of these paths exists: {', '.join(map(str, paths))}")
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
    with service_for(home) as service:
        if source not in service.settings.sources:
            configured = ", ".join(sorted(service.settings.sources)) or "none configured"
            raise ArgumentError(f"no source named {source!r} ({configured})")
        with progress_bar() as progress:
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
def worker(
    home: Home = None,
    forever: Annotated[bool, typer.Option("--forever", help="Keep draining as work arrives until SIGTERM or Ctrl-C "
                                                            "(a cluster's workers); default: once, until empty.")] = False,
    poll: Annotated[float, typer.Option(min=0.1, help="With --forever: seconds between looks at the outbox.")] = 1.0,
) -> None:
    """Run the outbox until it is empty: memory generation for new turns, then embeddings (what
    `ingest --no-wait` left, or what waited while the embedder was down). On a shared store any number
    of workers drain it together, each job done once."""
    if forever:
        from mnemoflow.api.server import run_worker

        run_worker(load_settings(home), poll)
        return
    with service_for(home) as service:
        with progress_bar() as progress:
            report = service.drain_all(IngestProgress(progress, reading=False))
        print_generation(report.generation)
        out.print(f"embedded {report.embedded}, reused {report.reused} cached vectors, "
                  f"skipped {report.skipped} stale jobs, {report.failed} failed")
        if report.unavailable:
            err.print(f"embedder unavailable: {report.unavailable}")
            raise typer.Exit(1)


@app.command()
def reembed(
    home: Home = None,
    dask: Annotated[bool, typer.Option("--dask", help="Spread the embedding over Dask workers.")] = False,
    dask_workers: Annotated[int, typer.Option(min=1, max=64, help="With --dask and no dask_address: local "
                                                                  "workers.")] = 2,
) -> None:
    """Rebuild every vector with the configured embedding model (run after changing the model)."""
    if dask:
        from mnemoflow.flows.bulk import reembed_flow, run_bulk

        result = run_bulk(reembed_flow, load_settings(home), dask_workers)
        out.print(f"queued {result['queued']} rows; embedded {result['embedded']}, reused {result['reused']} "
                  "cached vectors")
        return
    with service_for(home) as service:
        with progress_bar() as progress:
            queued, report = service.reembed(IngestProgress(progress, reading=False))
        out.print(f"queued {queued} rows; embedded {report.embedded}, reused {report.reused} cached vectors")
        if report.unavailable:
            err.print(f"embedder unavailable: {report.unavailable}; `mnemoflow worker` finishes the job")
            raise typer.Exit(1)



@app.command()
def backfill(
    home: Home = None, tenant: Tenant = None,
    dask: Annotated[bool, typer.Option("--dask", help="Generate on Dask workers (a shared store: each takes "
                                                      "whole owners).")] = False,
    dask_workers: Annotated[int, typer.Option(min=1, max=64, help="With --dask: generating tasks (and local "
                                                                  "workers when no dask_address).")] = 2,
) -> None:
    """Generate memories from every conversation no generation has read (ingested while generation was
    off, or before it existed)."""
    from mnemoflow.flows.bulk import backfill_flow, run_bulk

    settings = load_settings(home)
    if dask:
        result = run_bulk(backfill_flow, settings, dask_workers, tenant_id=tenant, workers=dask_workers)
    else:
        result = backfill_flow.fn(tenant_id=tenant, home=str(settings.home), workers=1)
    out.print(f"queued {result['queued']} sessions; {result['created']} memories created")


@app.command()
def demo(home: Home = None) -> None:
    """Ingest the bundled sample (a chat, markdown, PDF, HTML, code, audio) and answer questions with citations."""
    from mnemoflow.demo import DEMO_QUESTIONS, DEMO_SCOPE, sample_in

    with service_for(home) as service:
        out.print(f"[bold]mnemoflow demo[/] (home: {service.settings.home})")
        outcome = run_ingest(service, DEMO_SCOPE, sample_in(service.settings.home), wait=True)
        print_ingest(outcome, DEMO_SCOPE)
        for question in DEMO_QUESTIONS:
            out.print(f"\n[bold]Q:[/] {question}")
            print_recall(service.recall(DEMO_SCOPE, question, k=5, token_budget=400).public())
        # the sample lives in its own scope: a bare `recall` (tenant and user "default") finds none of it
        where = f" --home {home}" if home else ""
        out.print(f'\nAsk your own: mnemoflow recall "Who leads the roadmap workshop?" '
                  f"--tenant {DEMO_SCOPE.tenant_id} --user {DEMO_SCOPE.user_id}{where}", markup=False)

