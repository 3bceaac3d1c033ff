"""The `conversations` connector: chat and agent transcripts landed by dlt into `raw_conversations.turns`.

Format (DESIGN.md): JSONL, one turn per line with `session_id`, `turn_id` (unique
within the file), `speaker`, optional `role` (user/assistant/other), `ts` (ISO 8601),
`text`, optional `metadata` (object); or a `.json` file holding a list of them.
Incremental: dlt remembers each file's modification date per (scope, path), so a
re-sync reads only new or changed files, and the merge on the turn's key makes
a re-read idempotent. Bad lines and bad files become ingest errors; the rest loads.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from mnemoflow.errors import BadInputError
from mnemoflow.extractors.records import looks_like_transcript
from mnemoflow.extractors.text import decode_utf8
from mnemoflow.models import IngestErrorRecord
from mnemoflow.storage import Scope, Store
from mnemoflow.storage.scope import require_user_level
from mnemoflow.timeutil import parse_timestamp

Redact = Callable[[Any], Any]  # a JSON-like value with personal data replaced (`protect.pii`)
CONNECTOR = "conversations"
DATASET = "raw_conversations"
TRANSCRIPT_SUFFIXES = (".jsonl", ".json")
# A turn is what one person said at once; a million characters (a 500-page book) is not one, and
# every thousand characters become a chunk that storage holds in memory while the session is written.
MAX_TURN_CHARS = 1_000_000


class TranscriptTurn(BaseModel):
    """One line of a transcript, validated."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    session_id: str
    turn_id: str
    speaker: str
    role: Literal["user", "assistant", "other"] | None = None
    ts: str
    text: str
    metadata: dict[str, Any] | None = None

    @field_validator("session_id", "turn_id", "speaker", mode="before")
    @classmethod
    def _id_like(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return value

    @field_validator("session_id", "turn_id", "speaker")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value:
            raise ValueError("must not be empty")
        return value

    @field_validator("text")
    @classmethod
    def _not_a_book(cls, value: str) -> str:
        if len(value) > MAX_TURN_CHARS:
            raise ValueError(f"{len(value)} characters, over the {MAX_TURN_CHARS}-character limit for one turn")
        return value

    @field_validator("ts")
    @classmethod
    def _iso(cls, value: str) -> str:
        try:
            return parse_timestamp(value).isoformat()
        except ValueError:
            raise ValueError(f"not an ISO 8601 timestamp: {value!r}") from None


def _describe(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "turn"
    if first["type"] == "string_unicode":  # JSON escaped half a surrogate pair: no text holds it
        return f"{where}: not valid Unicode text (a lone surrogate such as \\ud800)"
    return f"{where}: {first['msg'].removeprefix('Value error, ')}"


@dataclass
class ParsedTranscript:
    rows: list[dict[str, Any]] = field(default_factory=list)
    errors: list[IngestErrorRecord] = field(default_factory=list)


def parse_transcript(data: bytes, uri: str, *, max_bytes: int) -> ParsedTranscript:
    """Validate a transcript file's bytes into landing rows; every problem becomes an error record.
    A turn without `session_id` belongs to the file's own session, named after the file."""
    parsed = ParsedTranscript()
    file_session = PurePosixPath(uri.split("?", 1)[0]).stem

    def error(reason: str) -> None:
        parsed.errors.append(IngestErrorRecord(CONNECTOR, uri, "transcript", reason))

    if len(data) > max_bytes:
        error(f"file is {len(data)} bytes, over the {max_bytes}-byte limit")
        return parsed
    try:
        text = decode_utf8(data)
    except BadInputError as exc:
        error(str(exc))
        return parsed
    if not text.strip():
        error("empty file: no turns")
        return parsed

    records: list[tuple[int, Any]] = []
    if uri.lower().endswith(".json"):
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            error(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
            return parsed
        except RecursionError:
            error("invalid JSON: nested too deeply to read")
            return parsed
        if not isinstance(document, list):
            error("a .json transcript must hold a list of turns")
            return parsed
        records = list(enumerate(document, start=1))
    else:
        for line_no, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append((line_no, json.loads(line)))
            except json.JSONDecodeError as exc:
                error(f"line {line_no}: invalid JSON ({exc.msg})")
            except RecursionError:
                error(f"line {line_no}: invalid JSON (nested too deeply to read)")

    seen: set[str] = set()
    for line_no, record in records:
        if not isinstance(record, dict):
            error(f"line {line_no}: a turn must be a JSON object")
            continue
        try:
            turn = TranscriptTurn.model_validate({"session_id": file_session, **record})
        except ValidationError as exc:
            error(f"line {line_no}: {_describe(exc)}")
            continue
        if not turn.text and not turn.metadata:
            error(f"line {line_no}: turn {turn.turn_id} has no text")
            continue
        if turn.turn_id in seen:
            error(f"line {line_no}: turn_id {turn.turn_id} repeats an earlier turn of this file")
            continue
        seen.add(turn.turn_id)
        parsed.rows.append({"line_no": line_no, **turn.model_dump()})
    if not parsed.rows and not parsed.errors:
        error("empty file: no turns")
    return parsed


@dataclass
class LandingResult:
    files_read: list[str] = field(default_factory=list)
    turns_landed: int = 0
    errors: list[IngestErrorRecord] = field(default_factory=list)


def _pipeline_name(scope: Scope, bucket_url: str, file_glob: str) -> str:
    key = hashlib.sha256(f"{scope.tenant_id}\x1f{scope.user_id}\x1f{bucket_url}\x1f{file_glob}".encode())
    return f"conversations_{key.hexdigest()[:16]}"


# the landing table's shape, shared by transcript files and agent events posted to the API
TURNS_TABLE: dict[str, Any] = {
    "table_name": "turns",
    "primary_key": ("tenant_id", "user_id", "file_url", "turn_id"),
    "write_disposition": "merge",
    "columns": {
        "tenant_id": {"data_type": "text", "nullable": False},
        "user_id": {"data_type": "text", "nullable": False},
        "file_url": {"data_type": "text", "nullable": False},
        "line_no": {"data_type": "bigint"},
        "session_id": {"data_type": "text"},
        "turn_id": {"data_type": "text", "nullable": False},
        "speaker": {"data_type": "text"},
        "role": {"data_type": "text", "nullable": True},
        "ts": {"data_type": "text"},
        "text": {"data_type": "text"},
        "metadata": {"data_type": "json", "nullable": True},
    },
}


def _run(store: Store, pipeline_name: str, pipelines_dir: Path, data: Any) -> None:
    import dlt

    with store.landing() as destination:
        pipeline = dlt.pipeline(pipeline_name=pipeline_name, pipelines_dir=str(pipelines_dir),
                                destination=destination, dataset_name=DATASET)
        pipeline.run(data)


def land_transcripts(
    store: Store, scope: Scope, bucket_url: str, file_glob: str, *, pipelines_dir: Path, max_bytes: int,
    redact: Redact | None = None,
) -> LandingResult:
    """Run the dlt pipeline for the transcripts under `bucket_url` (file:// or any fsspec URL) matching
    `file_glob`; `redact` (PII redaction) rewrites each turn's words before dlt lands anything."""
    import dlt
    from dlt.sources.filesystem import filesystem

    require_user_level(scope, "ingesting transcripts")
    result = LandingResult()

    @dlt.transformer(name="turns", **TURNS_TABLE)
    def read_turns(items: list[Any]) -> Iterator[dict[str, Any]]:
        for item in items:
            url = item["file_url"]
            if not url.lower().endswith(TRANSCRIPT_SUFFIXES):
                continue
            size = item.get("size_in_bytes")
            if size is not None and size > max_bytes:  # before reading: a 2 GiB file would be read whole
                result.errors.append(IngestErrorRecord(CONNECTOR, url, "transcript",
                                                       f"file is {size} bytes, over the {max_bytes}-byte limit"))
                continue
            try:
                data = item.read_bytes()
            except OSError as exc:
                result.errors.append(IngestErrorRecord(CONNECTOR, url, "transcript", f"unreadable: {exc}"))
                continue
            if not looks_like_transcript(data, url):
                continue  # JSON records, not turns: the extractors read those
            result.files_read.append(url)
            parsed = parse_transcript(data, url, max_bytes=max_bytes)
            result.errors.extend(parsed.errors)
            result.turns_landed += len(parsed.rows)
            for row in parsed.rows:
                if redact is not None:
                    row = {**row, **redact({k: row[k] for k in ("speaker", "text", "metadata")})}
                yield {"tenant_id": scope.tenant_id, "user_id": scope.user_id, "file_url": url, **row}

    files = filesystem(
        bucket_url=bucket_url, file_glob=file_glob, incremental=dlt.sources.incremental("modification_date")
    )
    _run(store, _pipeline_name(scope, bucket_url, file_glob), pipelines_dir, files | read_turns)
    return result


EVENTS_URI = "api:events"


def land_events(store: Store, scope: Scope, turns: list[dict[str, Any]], *, pipelines_dir: Path) -> LandingResult:
    """Agent events (turns posted to the API) land in the same table as transcript files, validated
    the same way; they count as one stream per session (`api:events/<session_id>`)."""
    import dlt

    require_user_level(scope, "posting conversation events")
    result = LandingResult()
    rows = []
    for n, raw in enumerate(turns, start=1):
        try:
            turn = TranscriptTurn.model_validate(raw)
        except ValidationError as exc:
            result.errors.append(IngestErrorRecord(CONNECTOR, EVENTS_URI, "event", f"event {n}: {_describe(exc)}"))
            continue
        if not turn.text and not turn.metadata:
            result.errors.append(IngestErrorRecord(CONNECTOR, EVENTS_URI, "event", f"event {n}: no text"))
            continue
        rows.append({"tenant_id": scope.tenant_id, "user_id": scope.user_id,
                     "file_url": f"{EVENTS_URI}/{turn.session_id}", "line_no": n, **turn.model_dump()})
    result.turns_landed = len(rows)
    if rows:
        _run(store, _pipeline_name(scope, EVENTS_URI, ""), pipelines_dir,
             dlt.resource(rows, name="turns", **TURNS_TABLE))
    return result
