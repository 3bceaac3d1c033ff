"""How an input that cannot be read is recorded."""

from __future__ import annotations

from pathlib import Path

from mnemoflow.connectors.filesystem import CONNECTOR as FILES
from mnemoflow.models import IngestErrorRecord


def path_error(uri: Path | str, kind: str, reason: str, connector: str = FILES) -> IngestErrorRecord:
    """A local path is recorded as the file URI its document would have had (percent-encoded, so a
    file name that is not UTF-8 is stored and named exactly)."""
    return IngestErrorRecord(connector, uri.absolute().as_uri() if isinstance(uri, Path) else uri, kind, reason)
