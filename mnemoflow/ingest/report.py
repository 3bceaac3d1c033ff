"""What an ingestion run reports: documents, turns and chunks written, and what could not be read."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mnemoflow.connectors.filesystem import CONNECTOR as FILES
from mnemoflow.models import DocumentWriteResult, IngestErrorRecord


@dataclass
class IngestReport:
    documents_changed: int = 0  # conversation sessions included
    sessions_changed: int = 0
    turns_added: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    errors: list[IngestErrorRecord] = field(default_factory=list)

    def add(self, write: DocumentWriteResult, *, session: bool = False) -> None:
        self.documents_changed += int(write.changed)
        self.sessions_changed += int(write.changed and session)
        self.turns_added += write.turns_added
        self.chunks_added += write.chunks_added
        self.chunks_removed += write.chunks_removed


def path_error(uri: Path | str, kind: str, reason: str, connector: str = FILES) -> IngestErrorRecord:
    """A local path is recorded as the file URI its document would have had (percent-encoded, so a
    file name that is not UTF-8 is stored and named exactly)."""
    return IngestErrorRecord(connector, uri.absolute().as_uri() if isinstance(uri, Path) else uri, kind, reason)
