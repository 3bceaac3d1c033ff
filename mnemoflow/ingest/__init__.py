"""Ingestion: everything from a path, an event or a configured source to stored documents, turns and
chunks with their derived work (memories, vectors). `sequence` is the one place the stages are put
in order; the service layer and the Prefect flows run it."""

from mnemoflow.ingest.report import IngestReport
from mnemoflow.ingest.sequence import Drained, IngestOutcome, Progress, drain, ingest_events, ingest_paths, sync
from mnemoflow.ingest.sync import SyncReport

__all__ = ["Drained", "IngestOutcome", "IngestReport", "Progress", "SyncReport", "drain", "ingest_events",
           "ingest_paths", "sync"]
