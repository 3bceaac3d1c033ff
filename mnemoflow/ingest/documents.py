"""Documents: one input (a file, an attachment, an API record) extracted and chunked into the
document writes the store takes, written in bounded batches (one transaction and commit each)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote_to_bytes, urlparse

from mnemoflow.chunking import chunk_extracted
from mnemoflow.config import RestResource, Settings
from mnemoflow.connectors.filesystem import CONNECTOR as FILES
from mnemoflow.connectors.rest_api import CONNECTOR as REST_API, record_key, record_uri
from mnemoflow.errors import BadInputError
from mnemoflow.extractors import Extracted, extractor_for, mime_for
from mnemoflow.extractors.records import record_unit
from mnemoflow.ingest.report import path_error
from mnemoflow.models import (
    DOCUMENT_PREFIX, DeletionResult, DocumentRecord, DocumentWrite, DocumentWriteResult, IngestErrorRecord,
)
from mnemoflow.protect.pii import redactor_for
from mnemoflow.reports import IngestReport
from mnemoflow.storage import Scope, Store

WRITE_BATCH = 200  # documents per transaction (and commit): bounded commits, few statements
RECORD_MIME = "application/json"


def write_in_batches(store: Store, scope: Scope, writes: list[DocumentWrite], *, actor: str,
                     report: IngestReport) -> None:
    """Write documents WRITE_BATCH at a time, counting what changed into `report`."""
    for start in range(0, len(writes), WRITE_BATCH):
        for result in store.write_documents(scope, writes[start : start + WRITE_BATCH], actor=actor):
            report.add(result)


MAX_ATTACHMENT_DEPTH = 3


def document_id_for(scope: Scope, connector: str, uri: str) -> str:
    key = f"{scope.key}\x1f{connector}\x1f{uri}"
    return DOCUMENT_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:24]


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
    if (redact := redactor_for(settings, scope.tenant_id)) is not None:  # before anything is chunked or stored
        extracted = redact.dataclass(extracted, "title", "text", "metadata")
        extracted = replace(extracted, units=[redact.dataclass(u, "text", "context", "locator") for u in extracted.units])
    document_id = document_id_for(scope, connector, uri)
    chunks = chunk_extracted(document_id, extracted, settings.chunk_max_tokens)
    if not chunks and not extracted.no_text:
        raise BadInputError(f"no text in this {extracted.mime} input")
    if len(chunks) > settings.max_chunks_per_document:  # storage holds every chunk of a document at once
        raise BadInputError(f"{len(chunks)} chunks, over the max_chunks_per_document limit of "
                            f"{settings.max_chunks_per_document}: split the input or raise the limit")
    document = DocumentRecord(
        document_id=document_id, connector=connector, uri=uri, mime=extracted.mime, title=extracted.title,
        content_hash=hashlib.sha256(data).hexdigest(),
        metadata={**extracted.metadata, **({"no_text": extracted.no_text} if not chunks else {}), **(metadata or {})},
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
            errors.append(path_error(path, mime_for(path), str(exc)))
        if on_file:
            on_file(path)
        if pending and (len(pending) >= WRITE_BATCH or n == len(paths)):
            results += store.write_documents(scope, pending, actor="ingest")
            pending = []
    return results, errors


def retire_missing_files(store: Store, scope: Scope, folders: list[Path]) -> DeletionResult:
    """Retire the documents read from files under `folders` whose files are all gone now (their chunks,
    vectors and the memories drawn only from them, one commit), as a sync of a source does: ingesting
    a folder again leaves it as the folder is."""
    gone: set[str] = set()
    for folder in folders:
        held = store.documents_from_files(scope, folder.resolve().as_uri().rstrip("/") + "/")
        for document_id, files in held.items():
            if not any(_still_there(url) for url in files):
                gone.add(document_id)
    return store.delete_documents(scope, sorted(gone), actor="ingest")


def _still_there(url: str) -> bool:
    """Whether the file a URL names exists (what is not a local file is not judged here: it stays)."""
    parsed = urlparse(url)  # the URL's bytes as the file system holds them, UTF-8 or not (`path_error`)
    return parsed.scheme != "file" or Path(os.fsdecode(unquote_to_bytes(parsed.path))).exists()


# ---------------------------------------------------------------------- API records
def _title(record: dict[str, Any], resource: RestResource, key: str) -> str:
    if resource.title_field:
        value: Any = record
        for part in resource.title_field.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None and not isinstance(value, dict | list) and str(value).strip():
            return str(value).strip()
    return f"{resource.name} {key}"


def record_document(
    settings: Settings, scope: Scope, source_name: str, resource: RestResource, record: dict[str, Any]
) -> DocumentWrite:
    """One API record as a document of one `key: value` text unit, citing {resource, id};
    `BadInputError` when the record holds no text."""
    key = record_key(record, resource)
    uri = record_uri(source_name, resource.name, key)
    title = _title(record, resource, key)
    unit = record_unit(record, {"resource": resource.name, "id": key}, f"{source_name}/{resource.name}")
    if unit is None:
        raise BadInputError("the record holds no text: every field is empty")
    document_id = document_id_for(scope, REST_API, uri)
    chunks = chunk_extracted(document_id, Extracted(mime=RECORD_MIME, title=title, layout="units", units=[unit]),
                             settings.chunk_max_tokens)
    if not chunks:
        raise BadInputError("the record holds no text")
    canonical = json.dumps({"title": title, "record": record}, sort_keys=True, default=str, ensure_ascii=False)
    document = DocumentRecord(
        document_id=document_id, connector=REST_API, uri=uri, mime=RECORD_MIME, title=title,
        content_hash=hashlib.sha256(canonical.encode()).hexdigest(),
        metadata={"source": source_name, "resource": resource.name, "id": key})
    return DocumentWrite(document, chunks)
