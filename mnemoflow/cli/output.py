"""How the CLI shows a run: live progress, what ingestion and memory generation did, recalled items
with their citations."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from mnemoflow.cli.app import err, out, progress_bar
from mnemoflow.storage.scope import Scope

if TYPE_CHECKING:
    from rich.progress import Progress

    from mnemoflow.reports import GenerationDrainReport, IngestOutcome
    from mnemoflow.service import MemoryService


class IngestProgress:
    """Live progress of a run: files read, then embeddings written (mnemoflow.ingest.Progress)."""

    def __init__(self, progress: Progress, reading: bool = True) -> None:
        self._progress = progress
        self._reading = progress.add_task("reading inputs", total=None, visible=reading)
        self._embedding = progress.add_task("embedding", total=None, visible=False)

    def file_read(self, path: Path) -> None:
        self._progress.advance(self._reading)

    def deriving(self, pending: int) -> None:
        self._progress.update(self._reading, visible=False)
        self._progress.update(self._embedding, total=pending, visible=True)

    def embedded(self, count: int) -> None:
        self._progress.advance(self._embedding, count)


def run_ingest(service: MemoryService, scope: Scope, paths: list[Path], wait: bool) -> IngestOutcome:
    """Ingest with live progress: files read, then embeddings written."""
    with progress_bar() as progress:
        return service.ingest(scope, paths, wait=wait, progress=IngestProgress(progress))


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
    retired = (f"; {r.documents_retired} documents whose files are gone retired, with {r.memories_retired} "
               "memories drawn from them" if r.documents_retired else "")
    out.print(f"ingested: {r.documents_changed} documents changed, {r.turns_added} turns, "
              f"{r.chunks_added} chunks added, {r.chunks_removed} removed{retired}")
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
        from mnemoflow.timeutil import clock

        parts.append(f"{clock(locator['start'])}-{clock(locator['end'])}")
    if "resource" in locator and "id" in locator:
        parts.append(f"{locator['resource']} {locator['id']}")
    elif "record" in locator:
        parts.append(f"record {locator['record']}" + (f", line {locator['line']}" if "line" in locator else ""))
    return ", ".join(parts)


def citation_line(c: dict[str, Any]) -> str:
    """A citation (its JSON view) as a person reads it: a conversation turn, a memory, or a place in a
    document."""
    if c.get("turn_id"):
        ts = datetime.fromisoformat(c["ts"]) if c.get("ts") else None
        return f"{c.get('session_id')}#{c['turn_id']}" + (f" @ {ts:%Y-%m-%d %H:%M}" if ts else "")
    if c.get("memory_id"):
        return c["memory_id"]
    where = place_in_document(c.get("locator") or {})
    place = unquote(c["uri"].removeprefix("file://")) if c.get("uri") else c.get("document_id")
    return f"{place}" + (f" ({where})" if where else "")


def print_recall(result: dict[str, Any]) -> None:
    """A recall as people read it, from its public JSON view (`RecallResult.public()`, which a server
    sends as it is): each item, where it came from, and the warnings."""
    if not result["items"]:
        out.line("nothing recalled")
        return
    for n, item in enumerate(result["items"], start=1):
        cites = [citation_line(c) for c in item["citations"]]
        if len(cites) > 6:  # a summary cites every turn it covers; the first are those its text shows
            cites = [*cites[:6], f"and {len(cites) - 6} more"]
        out.line((f"[{n}]", "bold"), f" {item['text']}")
        out.line(("    " + f"{item['kind']} {item['id']} | {item['why']} | cites: {'; '.join(cites)}", "dim"))
    out.line((f"{len(result['items'])} items, {result['tokens']} tokens", "dim"))
    for w in result["warnings"]:
        err.line(("warning:", "yellow"), f" {w}")
