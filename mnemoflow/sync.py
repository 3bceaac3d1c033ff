"""Syncing configured sources as plain functions (the CLI and the Prefect `sync` flow call these).

Each source kind lands raw data through its dlt connector, then turns what is new or changed
into documents; a filesystem sync also retires the documents of files that are gone.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from mnemoflow.config import ConversationsSource, FilesystemSource, RestApiSource, Settings
from mnemoflow.connectors import filesystem as fs
from mnemoflow.connectors.conversations import land_transcripts
from mnemoflow.errors import BadInputError, ConfigError
from mnemoflow.extractors import mime_for
from mnemoflow.ingest import WRITE_BATCH, IngestReport, extract_document, process_landed_turns
from mnemoflow.models import DocumentWrite, IngestErrorRecord
from mnemoflow.storage import Scope, Store

ATTACHMENT_MARK = "#attachment="


@dataclass
class SyncReport:
    source: str
    kind: str
    ingested: IngestReport = field(default_factory=IngestReport)
    files_read: int = 0
    files_unchanged: int = 0
    records: int = 0
    documents_deleted: int = 0
    memories_deleted: int = 0

    @property
    def errors(self) -> list[IngestErrorRecord]:
        return self.ingested.errors


def source_scope(settings: Settings, name: str) -> tuple[Scope, FilesystemSource | ConversationsSource | RestApiSource]:
    source = settings.sources.get(name)
    if source is None:
        configured = ", ".join(sorted(settings.sources)) or "none"
        raise ConfigError(f"no source named {name!r} is configured (configured: {configured}); "
                          "declare it under [sources.NAME] in the settings file")
    return Scope(source.tenant_id, source.user_id), source


def sync_source(store: Store, settings: Settings, name: str) -> SyncReport:
    """Run one configured source end to end, up to (not including) embedding."""
    scope, source = source_scope(settings, name)
    report = SyncReport(name, source.kind)
    if isinstance(source, FilesystemSource):
        sync_filesystem(store, settings, scope, name, source, report)
    elif isinstance(source, ConversationsSource):
        sync_conversations(store, settings, scope, source, report)
    else:
        from mnemoflow.connectors.rest_api import sync_rest_api

        sync_rest_api(store, settings, scope, name, source, report)
    store.record_ingest_errors(scope, report.errors)
    return report


def sync_conversations(
    store: Store, settings: Settings, scope: Scope, source: ConversationsSource, report: SyncReport
) -> None:
    location = fs.bucket_url_for(source.location)
    for glob in source.globs:
        landing = land_transcripts(store, scope, location, glob, pipelines_dir=settings.dlt_dir,
                                   max_bytes=settings.max_file_bytes)
        report.files_read += len(landing.files_read)
        report.ingested.errors.extend(landing.errors)
    for write in process_landed_turns(store, settings, scope):
        report.ingested.add(write)


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
            _write(store, scope, pending, report)
            pending = []
    _write(store, scope, pending, report)

    present = fs.current_files(source.location, source.globs)
    gone = [doc_id for u, (doc_id, _) in known.items()
            if _base_uri(u) not in present and fs.matches(_relative(bucket, _base_uri(u)), source.globs)]
    deleted = store.delete_documents(scope, gone + stale, actor=f"sync:{name}")
    report.documents_deleted = deleted.documents
    report.memories_deleted = deleted.memories


def _relative(bucket: str, uri: str) -> str:
    from urllib.parse import unquote

    return unquote(uri[len(bucket):].lstrip("/"))


def _write(store: Store, scope: Scope, writes: list[DocumentWrite], report: SyncReport) -> None:
    if writes:
        for result in store.write_documents(scope, writes, actor="sync"):
            report.ingested.add(result)
