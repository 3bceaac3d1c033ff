"""Syncing configured sources: each source kind lands raw data through its dlt connector, then
what is new or changed becomes documents through the same stages as any ingest; a filesystem
sync also retires the documents of files that are gone.

An API cannot tell what it deleted through an incremental cursor, so a REST source retires
nothing; a record whose content hash is unchanged writes nothing.
"""

from __future__ import annotations

import hashlib

from mnemoflow.config import ConversationsSource, FilesystemSource, RestApiSource, Settings
from mnemoflow.connectors import filesystem as fs
from mnemoflow.connectors import rest_api
from mnemoflow.connectors.conversations import land_transcripts
from mnemoflow.errors import BadInputError, ConfigError
from mnemoflow.extractors import mime_for
from mnemoflow.ingest.conversations import process_landed_turns
from mnemoflow.ingest.documents import WRITE_BATCH, extract_document, record_document, write_in_batches
from mnemoflow.models import DocumentWrite, IngestErrorRecord
from mnemoflow.protect.pii import redaction
from mnemoflow.reports import SyncReport
from mnemoflow.storage import Scope, Store

ATTACHMENT_MARK = "#attachment="


def source_scope(settings: Settings, name: str) -> tuple[Scope, FilesystemSource | ConversationsSource | RestApiSource]:
    source = settings.sources.get(name)
    if source is None:
        configured = ", ".join(sorted(settings.sources)) or "none"
        raise ConfigError(f"no source named {name!r} is configured (configured: {configured}); "
                          "declare it under [sources.NAME] in the settings file")
    return Scope(source.tenant_id, source.user_id), source


def sync_source(store: Store, settings: Settings, name: str) -> SyncReport:
    """Run one configured source up to its documents (the sequence records its errors and embeds)."""
    scope, source = source_scope(settings, name)
    report = SyncReport(name, source.kind)
    if isinstance(source, FilesystemSource):
        sync_filesystem(store, settings, scope, name, source, report)
    elif isinstance(source, ConversationsSource):
        sync_conversations(store, settings, scope, source, report)
    else:
        sync_rest_api(store, settings, scope, name, source, report)
    return report


def sync_conversations(
    store: Store, settings: Settings, scope: Scope, source: ConversationsSource, report: SyncReport
) -> None:
    location = fs.bucket_url_for(source.location)
    for glob in source.globs:
        landing = land_transcripts(store, scope, location, glob, pipelines_dir=settings.dlt_dir,
                                   max_bytes=settings.max_file_bytes, redact=redaction(settings, scope))
        report.files_read += len(landing.files_read)
        report.ingested.errors.extend(landing.errors)
    for write in process_landed_turns(store, settings, scope):
        report.ingested.add(write, session=True)


def _base_uri(uri: str) -> str:
    return uri.split(ATTACHMENT_MARK, 1)[0]


def sync_filesystem(
    store: Store, settings: Settings, scope: Scope, name: str, source: FilesystemSource, report: SyncReport
) -> None:
    """New or touched files are read once; unchanged content writes nothing; gone files are retired.

    A file that changed and now cannot be read keeps its previous document (nothing is lost)
    and its error is recorded."""
    bucket = fs.bucket_url_for(source.location)
    landing = fs.land_files(store, scope, name, source.location, source.globs, pipelines_dir=settings.dlt_dir,
                            max_bytes=settings.max_file_bytes)
    report.ingested.errors.extend(landing.errors)
    known = store.documents_under(scope, fs.CONNECTOR, bucket)
    pending: list[DocumentWrite] = []
    stale: list[str] = []
    for item in landing.changed:
        uri = item["file_url"]
        report.files_read += 1
        try:
            data = item.read_bytes()
        except OSError as exc:
            report.ingested.errors.append(IngestErrorRecord(fs.CONNECTOR, uri, "unreadable", str(exc)))
            continue
        if uri in known and known[uri][1] == hashlib.sha256(data).hexdigest():
            report.files_unchanged += 1
            continue
        mime = mime_for(item["file_name"])
        try:
            writes, errors = extract_document(settings, scope, connector=fs.CONNECTOR, uri=uri,
                                              name=item["file_name"], data=data, mime=mime)
        except BadInputError as exc:
            report.ingested.errors.append(IngestErrorRecord(fs.CONNECTOR, uri, mime, str(exc)))
            continue
        produced = {w.document.uri for w in writes}
        stale += [doc_id for u, (doc_id, _) in known.items()
                  if ATTACHMENT_MARK in u and _base_uri(u) == uri and u not in produced]
        pending += writes
        report.ingested.errors.extend(errors)
        if len(pending) >= WRITE_BATCH:
            write_in_batches(store, scope, pending, actor="sync", report=report.ingested)
            pending = []
    write_in_batches(store, scope, pending, actor="sync", report=report.ingested)

    present = fs.current_files(source.location, source.globs)
    gone = [doc_id for u, (doc_id, _) in known.items()
            if _base_uri(u) not in present and fs.matches(_relative(bucket, _base_uri(u)), source.globs)]
    deleted = store.delete_documents(scope, gone + stale, actor=f"sync:{name}")
    report.documents_deleted = deleted.documents
    report.memories_deleted = deleted.memories


def _relative(bucket: str, uri: str) -> str:
    from urllib.parse import unquote

    return unquote(uri[len(bucket):].lstrip("/"))


def sync_rest_api(
    store: Store, settings: Settings, scope: Scope, name: str, source: RestApiSource, report: SyncReport
) -> None:
    """Land what is new or changed since the last sync, then make (or replace) one document per record."""
    landing = rest_api.land_records(store, scope, name, source, pipelines_dir=settings.dlt_dir,
                                    redact=redaction(settings, scope))
    report.ingested.errors.extend(landing.errors)
    report.records = len(landing.records) + len(landing.errors)
    resources = {r.name: r for r in source.resources}
    latest: dict[str, DocumentWrite] = {}  # a record seen twice in one run: the last copy wins
    for resource_name, record in landing.records:
        resource = resources[resource_name]
        try:
            write = record_document(settings, scope, name, resource, record)
        except BadInputError as exc:
            uri = rest_api.record_uri(name, resource_name, rest_api.record_key(record, resource))
            report.ingested.errors.append(IngestErrorRecord(rest_api.CONNECTOR, uri, "record", str(exc)))
            continue
        latest.pop(write.document.uri, None)
        latest[write.document.uri] = write
    write_in_batches(store, scope, list(latest.values()), actor=f"sync:{name}", report=report.ingested)
