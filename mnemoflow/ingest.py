"""Ingestion as plain functions: discover inputs, land transcripts, turn landed turns and files into chunks.

The Prefect flow and the CLI call these same functions. Bad inputs become
`ingest_errors` rows and the run goes on; embedding is left to the outbox.
"""

from __future__ import annotations

import glob
import hashlib
import os
import stat
from urllib.parse import quote
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemoflow.chunking import chunk_extracted, chunk_session, sha256_text
from mnemoflow.config import Settings
from mnemoflow.connectors.conversations import CONNECTOR as CONVERSATIONS, TRANSCRIPT_SUFFIXES, land_transcripts
from mnemoflow.connectors.filesystem import CONNECTOR as FILESYSTEM
from mnemoflow.errors import BadInputError
from mnemoflow.extractors import Extracted, extractor_for, mime_for, supported_suffixes
from mnemoflow.extractors.records import looks_like_transcript
from mnemoflow.models import DocumentRecord, DocumentWrite, DocumentWriteResult, IngestErrorRecord, TurnRecord
from mnemoflow.storage import Scope, Store
from mnemoflow.timeutil import parse_timestamp

FILES = FILESYSTEM  # ad-hoc ingest and `sync` of a filesystem source make the same documents
TRANSCRIPT_SNIFF_BYTES = 65_536  # enough for the first turn of a JSONL file
WRITE_BATCH = 200  # documents per transaction (and commit): bounded commits, few statements


@dataclass
class Inputs:
    """What `discover` found: transcript sources for dlt, documents for extractors, and problems."""

    transcripts: list[tuple[Path, str]] = field(default_factory=list)  # (directory, glob)
    documents: list[Path] = field(default_factory=list)
    errors: list[IngestErrorRecord] = field(default_factory=list)


@dataclass
class IngestReport:
    documents_changed: int = 0
    turns_added: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    errors: list[IngestErrorRecord] = field(default_factory=list)

    def add(self, write: DocumentWriteResult) -> None:
        self.documents_changed += int(write.changed)
        self.turns_added += write.turns_added
        self.chunks_added += write.chunks_added
        self.chunks_removed += write.chunks_removed


def _error(uri: Path | str, kind: str, reason: str, connector: str = FILES) -> IngestErrorRecord:
    """A local path is recorded as the file URI its document would have had (percent-encoded, so a
    file name that is not UTF-8 is stored and named exactly)."""
    return IngestErrorRecord(connector, uri.absolute().as_uri() if isinstance(uri, Path) else uri, kind, reason)


def _is_transcript(path: Path, max_bytes: int) -> bool:
    """JSON that holds conversation turns (or cannot be judged: the transcript parser then says
    precisely what is wrong, including a file over the size limit) goes to the conversations
    connector; other JSON is records. A JSON Lines file is judged by its first lines."""
    try:
        if path.stat().st_size > max_bytes:
            return True
        if path.suffix.lower() == ".jsonl":
            with path.open("rb") as handle:
                head = handle.read(TRANSCRIPT_SNIFF_BYTES)
            head = head[: head.rfind(b"\n") + 1] or head  # whole lines only
        else:
            head = path.read_bytes()
    except OSError:
        return True
    return looks_like_transcript(head, path.name)


def _not_regular(path: Path) -> str | None:
    """Why a path that is not a directory cannot be read as a file: a named pipe blocks a read
    forever, and a device (a link to /dev/zero, say) claims 0 bytes and never ends."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None  # the read that follows says what is wrong
    return None if stat.S_ISREG(mode) else "not a regular file (a named pipe, device or socket)"


def discover(paths: Iterable[Path], max_bytes: int) -> Inputs:
    """Sort the given files and directories (recursively, hidden entries skipped) by how they are read."""
    found = Inputs()
    for path in paths:
        if path.is_symlink() and not path.exists():
            found.errors.append(_error(path, "unreadable", "broken symbolic link"))
        elif not path.exists():
            found.errors.append(_error(path, "missing", "no such file or directory"))
        elif path.is_dir():
            found.transcripts.append((path, "**/*.json*"))
            for child in sorted(path.rglob("*")):
                relative = child.relative_to(path).parts
                if any(part.startswith(".") for part in relative) or child.is_dir():
                    continue
                if reason := _not_regular(child):
                    found.errors.append(_error(child, "unreadable", reason))
                    continue
                if child.suffix.lower() in TRANSCRIPT_SUFFIXES and _is_transcript(child, max_bytes):
                    continue  # the directory's transcripts go through the conversations connector
                if child.is_symlink() and not child.exists():
                    found.errors.append(_error(child, "unreadable", "broken symbolic link"))
                elif child.suffix.lower() in supported_suffixes():
                    found.documents.append(child)
                else:
                    found.errors.append(_error(child, "unsupported", f"no extractor for {mime_for(child)}"))
        elif reason := _not_regular(path):
            found.errors.append(_error(path, "unreadable", reason))
        elif path.suffix.lower() in TRANSCRIPT_SUFFIXES and _is_transcript(path, max_bytes):
            found.transcripts.append((path.parent, glob.escape(path.name)))
        elif path.suffix.lower() in supported_suffixes():
            found.documents.append(path)
        else:
            found.errors.append(_error(path, "unsupported", f"no extractor for {mime_for(path)}"))
    return found


# ---------------------------------------------------------------------- conversations
def session_document_id(scope: Scope, session_id: str) -> str:
    key = f"{scope.tenant_id}\x1f{scope.user_id}\x1f{CONVERSATIONS}\x1f{session_id}"
    return "doc_" + hashlib.sha256(key.encode()).hexdigest()[:24]


def turn_key(scope: Scope, session_id: str, turn_id: str) -> str:
    key = f"{scope.tenant_id}\x1f{scope.user_id}\x1f{session_id}\x1f{turn_id}"
    return "turn_" + hashlib.sha256(key.encode()).hexdigest()[:24]


def _session_hash(turns: list[TurnRecord]) -> str:
    return sha256_text("\x1e".join(f"{t.turn_id}\x1f{t.speaker}\x1f{t.ts}\x1f{t.text}" for t in turns))


def process_landed_turns(store: Store, settings: Settings, scope: Scope) -> list[DocumentWriteResult]:
    """Turn landed-but-unprocessed transcript turns into turns and chunks, one commit per session."""
    import json

    by_session: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in store.landed_turns(scope):
        by_session[row["session_id"]].append(row)
    writes: list[DocumentWrite] = []
    for session_id, rows in by_session.items():
        document_id = session_document_id(scope, session_id)
        turns = {t.turn_key: t for t in store.session_turns(scope, document_id)}
        next_ordinal = max((t.ordinal for t in turns.values()), default=-1) + 1
        changed: dict[str, TurnRecord] = {}  # two files may carry the same turn: the last landed wins
        for row in rows:
            key = turn_key(scope, session_id, row["turn_id"])
            ordinal = turns[key].ordinal if key in turns else next_ordinal
            next_ordinal += key not in turns
            metadata = json.loads(row["metadata"]) if row["metadata"] else None
            turn = TurnRecord(
                turn_key=key, document_id=document_id, session_id=session_id, turn_id=row["turn_id"],
                ordinal=ordinal, role=row["role"], speaker=row["speaker"], ts=parse_timestamp(row["ts"]),
                text=row["text"], metadata=metadata, source_uri=row["file_url"],
            )
            turns[key] = turn
            changed[key] = turn
        all_turns = sorted(turns.values(), key=lambda t: t.ordinal)
        document = DocumentRecord(
            document_id=document_id, connector=CONVERSATIONS, uri=f"conversation:{session_id}",
            mime="application/x-ndjson", title=session_id, content_hash=_session_hash(all_turns),
            metadata={"session_id": session_id, "source_uris": sorted({t.source_uri for t in all_turns})},
        )
        chunks = chunk_session(document_id, all_turns, settings.chunk_max_tokens, context=settings.chat_context,
                               captions=settings.chat_captions)
        writes.append(DocumentWrite(document, chunks, list(changed.values())))
    results: list[DocumentWriteResult] = []
    for start in range(0, len(writes), WRITE_BATCH):
        results += store.write_documents(scope, writes[start : start + WRITE_BATCH], actor="ingest",
                                          generate=settings.generate_memories)
    return results


def land_conversations(store: Store, settings: Settings, scope: Scope, sources: list[tuple[Path, str]]) -> list[IngestErrorRecord]:
    errors: list[IngestErrorRecord] = []
    for directory, file_glob in sources:
        landing = land_transcripts(store, scope, directory.resolve().as_uri(), file_glob,
                                   pipelines_dir=settings.dlt_dir, max_bytes=settings.max_file_bytes)
        errors.extend(landing.errors)
    return errors


# ---------------------------------------------------------------------- files
MAX_ATTACHMENT_DEPTH = 3


def document_id_for(scope: Scope, connector: str, uri: str) -> str:
    key = f"{scope.tenant_id}\x1f{scope.user_id}\x1f{connector}\x1f{uri}"
    return "doc_" + hashlib.sha256(key.encode()).hexdigest()[:24]


def _extract(data: bytes, name: str, mime: str, settings: Settings) -> Extracted:
    """The registry's extractor, with any library failure translated into a reason to record."""
    extractor = extractor_for(mime)
    try:
        return extractor(data, name, settings)
    except BadInputError:
        raise
    except Exception as exc:  # a vendor library choking on bad input must not end the run
        detail = str(exc).splitlines()[0][:300] if str(exc) else ""
        raise BadInputError(f"could not be read as {mime}: {type(exc).__name__}: {detail}".rstrip(": ")) from None


def extract_document(
    settings: Settings, scope: Scope, *, connector: str, uri: str, name: str, data: bytes, mime: str,
    metadata: dict[str, Any] | None = None, depth: int = 0,
) -> tuple[list[DocumentWrite], list[IngestErrorRecord]]:
    """Extract and chunk one input, and its attachments as documents of their own.

    Raises `BadInputError` when the input itself cannot be read; an attachment that cannot
    be read is returned as an error record and its parent is still ingested."""
    extracted = _extract(data, name, mime, settings)
    document_id = document_id_for(scope, connector, uri)
    chunks = chunk_extracted(document_id, extracted, settings.chunk_max_tokens)
    if not chunks:
        raise BadInputError(f"no text in this {extracted.mime} input")
    if len(chunks) > settings.max_chunks_per_document:  # storage holds every chunk of a document at once
        raise BadInputError(f"{len(chunks)} chunks, over the max_chunks_per_document limit of "
                            f"{settings.max_chunks_per_document}: split the input or raise the limit")
    document = DocumentRecord(
        document_id=document_id, connector=connector, uri=uri, mime=extracted.mime, title=extracted.title,
        content_hash=hashlib.sha256(data).hexdigest(), metadata={**extracted.metadata, **(metadata or {})},
    )
    writes, errors = [DocumentWrite(document, chunks)], []
    for attachment in extracted.attachments:
        child_uri = f"{uri}#attachment={quote(attachment.name)}"
        child_mime = attachment.mime or mime_for(attachment.name)
        if depth + 1 > MAX_ATTACHMENT_DEPTH:
            errors.append(IngestErrorRecord(connector, child_uri, child_mime,
                                            f"attachments nested deeper than {MAX_ATTACHMENT_DEPTH} levels"))
            continue
        try:
            child_writes, child_errors = extract_document(
                settings, scope, connector=connector, uri=child_uri, name=attachment.name, data=attachment.data,
                mime=child_mime, metadata={"parent_document_id": document_id}, depth=depth + 1)
        except BadInputError as exc:
            errors.append(IngestErrorRecord(connector, child_uri, child_mime, str(exc)))
            continue
        writes += child_writes
        errors += child_errors
    return writes, errors


def prepare_document_file(settings: Settings, scope: Scope, path: Path) -> tuple[list[DocumentWrite], list[IngestErrorRecord]]:
    """Read one local file and extract it; raises `BadInputError` with the reason when it cannot."""
    try:
        size = path.stat().st_size
        if size > settings.max_file_bytes:
            raise BadInputError(f"file is {size} bytes, over the {settings.max_file_bytes}-byte limit")
        data = path.read_bytes()
    except OSError as exc:
        raise BadInputError(f"unreadable: {exc.strerror or exc}") from None
    name = os.fsencode(path.name).decode("utf-8", "replace")  # a title must be text, whatever the file system holds
    return extract_document(settings, scope, connector=FILES, uri=path.resolve().as_uri(), name=name,
                            data=data, mime=mime_for(path))


def ingest_documents(store: Store, settings: Settings, scope: Scope, paths: list[Path],
                     on_file: Callable[[Path], None] | None = None) -> tuple[list[DocumentWriteResult], list[IngestErrorRecord]]:
    results: list[DocumentWriteResult] = []
    errors: list[IngestErrorRecord] = []
    pending: list[DocumentWrite] = []
    for n, path in enumerate(paths, start=1):
        try:
            writes, attachment_errors = prepare_document_file(settings, scope, path)
            pending += writes
            errors += attachment_errors
        except BadInputError as exc:
            errors.append(_error(path, mime_for(path), str(exc)))
        if on_file:
            on_file(path)
        if pending and (len(pending) >= WRITE_BATCH or n == len(paths)):
            results += store.write_documents(scope, pending, actor="ingest")
            pending = []
    return results, errors


def ingest_paths(
    store: Store, settings: Settings, scope: Scope, paths: Iterable[Path],
    on_file: Callable[[Path], None] | None = None,
) -> IngestReport:
    """Everything up to embedding: land, process, extract, record errors. The caller embeds (or
    leaves that to the worker) and then refreshes the search indexes once for the whole batch."""
    inputs = discover(paths, settings.max_file_bytes)
    report = IngestReport(errors=list(inputs.errors))
    report.errors.extend(land_conversations(store, settings, scope, inputs.transcripts))
    for write in process_landed_turns(store, settings, scope):
        report.add(write)
    writes, errors = ingest_documents(store, settings, scope, inputs.documents, on_file)
    for write in writes:
        report.add(write)
    report.errors.extend(errors)
    store.record_ingest_errors(scope, report.errors)
    return report
