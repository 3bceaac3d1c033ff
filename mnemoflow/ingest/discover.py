"""Sorting what a user points at: transcripts (read by the conversations connector, through dlt),
documents (read by the extractors), and paths that cannot be read at all."""

from __future__ import annotations

import glob
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from mnemoflow.connectors.conversations import TRANSCRIPT_SUFFIXES
from mnemoflow.extractors import mime_for, supported_suffixes
from mnemoflow.extractors.records import looks_like_transcript
from mnemoflow.ingest.report import path_error
from mnemoflow.models import IngestErrorRecord

TRANSCRIPT_SNIFF_BYTES = 65_536  # enough for the first turn of a JSONL file


@dataclass
class Inputs:
    """What `discover` found: transcript sources for dlt, documents for extractors, and problems."""

    transcripts: list[tuple[Path, str]] = field(default_factory=list)  # (directory, glob)
    documents: list[Path] = field(default_factory=list)
    errors: list[IngestErrorRecord] = field(default_factory=list)


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
            found.errors.append(path_error(path, "unreadable", "broken symbolic link"))
        elif not path.exists():
            found.errors.append(path_error(path, "missing", "no such file or directory"))
        elif path.is_dir():
            found.transcripts.append((path, "**/*.json*"))
            for child in sorted(path.rglob("*")):
                relative = child.relative_to(path).parts
                if any(part.startswith(".") for part in relative) or child.is_dir():
                    continue
                if reason := _not_regular(child):
                    found.errors.append(path_error(child, "unreadable", reason))
                    continue
                if child.suffix.lower() in TRANSCRIPT_SUFFIXES and _is_transcript(child, max_bytes):
                    continue  # the directory's transcripts go through the conversations connector
                if child.is_symlink() and not child.exists():
                    found.errors.append(path_error(child, "unreadable", "broken symbolic link"))
                elif child.suffix.lower() in supported_suffixes():
                    found.documents.append(child)
                else:
                    found.errors.append(path_error(child, "unsupported", f"no extractor for {mime_for(child)}"))
        elif reason := _not_regular(path):
            found.errors.append(path_error(path, "unreadable", reason))
        elif path.suffix.lower() in TRANSCRIPT_SUFFIXES and _is_transcript(path, max_bytes):
            found.transcripts.append((path.parent, glob.escape(path.name)))
        elif path.suffix.lower() in supported_suffixes():
            found.documents.append(path)
        else:
            found.errors.append(path_error(path, "unsupported", f"no extractor for {mime_for(path)}"))
    return found
