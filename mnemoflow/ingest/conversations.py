"""Conversations: transcripts and posted events land through the conversations connector; the
turns landed but not yet processed become turns and chunks, one document per conversation."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote

from mnemoflow.chunking import chunk_session, sha256_text
from mnemoflow.config import Settings
from mnemoflow.connectors.conversations import CONNECTOR as CONVERSATIONS, land_transcripts
from mnemoflow.ingest.documents import WRITE_BATCH
from mnemoflow.models import DocumentRecord, DocumentWrite, DocumentWriteResult, IngestErrorRecord, TurnRecord
from mnemoflow.protect.pii import redaction
from mnemoflow.storage import Scope, Store
from mnemoflow.timeutil import parse_timestamp


def session_document_id(scope: Scope, session_id: str) -> str:
    key = f"{scope.key}\x1f{CONVERSATIONS}\x1f{session_id}"
    return "doc_" + hashlib.sha256(key.encode()).hexdigest()[:24]


def turn_key(scope: Scope, session_id: str, turn_id: str) -> str:
    key = f"{scope.key}\x1f{session_id}\x1f{turn_id}"
    return "turn_" + hashlib.sha256(key.encode()).hexdigest()[:24]


def _session_hash(turns: list[TurnRecord]) -> str:
    return sha256_text("\x1e".join(f"{t.turn_id}\x1f{t.speaker}\x1f{t.ts}\x1f{t.text}" for t in turns))


# ---------------------------------------------------------------------- which conversation a file's session is
# Chat exports number their sessions and turns the same way (s1/t1, s1/t2, ...), so two files can use
# the same ids for different conversations. A turn with the same ids and the same text is the same
# turn (a re-export, or a later export that goes on); the same ids with other text from another file
# is that file's conversation, kept beside the first as `<session_id>@<file name>`.
def _file_name(file_url: str) -> str:
    return unquote(PurePosixPath(file_url.split("?", 1)[0]).name) or file_url


def _fits(turns: dict[str, TurnRecord], rows: list[dict[str, Any]], file_url: str) -> bool:
    """No row says something else under a turn id the conversation has from another file (the file's own
    turns may change: an edited export)."""
    return all(t.text == row["text"] or t.source_uri == file_url
               for row in rows if (t := turns.get(row["turn_id"])) is not None)


def _overlaps(turns: dict[str, TurnRecord], rows: list[dict[str, Any]]) -> bool:
    return any(row["turn_id"] in turns for row in rows)


def _conversation_for(session_id: str, file_url: str, rows: list[dict[str, Any]],
                      conversations: dict[str, dict[str, TurnRecord]]) -> str:
    """The session a file's turns belong to: the one that already holds turns of this file, else the
    session id itself, else a conversation of another file that this one repeats, else a new one."""
    mine = [name for name, turns in conversations.items() if any(t.source_uri == file_url for t in turns.values())]
    for name in mine:
        if _fits(conversations[name], rows, file_url):
            return name
    if _fits(conversations.get(session_id, {}), rows, file_url):
        return session_id
    for name in sorted(conversations):
        if name != session_id and _overlaps(conversations[name], rows) and _fits(conversations[name], rows, file_url):
            return name
    name = f"{session_id}@{_file_name(file_url)}"
    if name in conversations:  # another folder's file of the same name took it
        name += "~" + hashlib.sha256(file_url.encode()).hexdigest()[:8]
    return name


def _turn(scope: Scope, session_id: str, row: dict[str, Any], ordinal: int) -> TurnRecord:
    metadata = json.loads(row["metadata"]) if row["metadata"] else None
    return TurnRecord(
        turn_key=turn_key(scope, session_id, row["turn_id"]), document_id=session_document_id(scope, session_id),
        session_id=session_id, turn_id=row["turn_id"], ordinal=ordinal, role=row["role"], speaker=row["speaker"],
        ts=parse_timestamp(row["ts"]), text=row["text"], metadata=metadata, source_uri=row["file_url"])


def _session_write(settings: Settings, scope: Scope, session_id: str, source: str, turns: dict[str, TurnRecord],
                   changed: list[TurnRecord]) -> DocumentWrite:
    """The document of a conversation: `session_id` as its turns are stored, `source` as the file says."""
    all_turns = sorted(turns.values(), key=lambda t: t.ordinal)
    document_id = session_document_id(scope, session_id)
    metadata: dict[str, Any] = {"session_id": session_id,
                                "source_uris": sorted({t.source_uri for t in all_turns})}
    if session_id != source:
        metadata["source_session_id"] = source
    document = DocumentRecord(
        document_id=document_id, connector=CONVERSATIONS, uri=f"conversation:{session_id}",
        mime="application/x-ndjson",
        title=session_id if session_id == source else f"{source} ({session_id.removeprefix(source + '@')})",
        content_hash=_session_hash(all_turns), metadata=metadata,
    )
    chunks = chunk_session(document_id, all_turns, settings.chunk_max_tokens, context=settings.chat_context,
                           captions=settings.chat_captions)
    return DocumentWrite(document, chunks, changed)


def process_landed_turns(store: Store, settings: Settings, scope: Scope) -> list[DocumentWriteResult]:
    """Turn landed-but-unprocessed transcript turns into turns and chunks, one document per conversation
    (a session, or a file's own conversation under a session id another file used first)."""
    by_file: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in store.landed_turns(scope):
        by_file[(row["session_id"], row["file_url"])].append(row)
    conversations: dict[str, dict[str, dict[str, TurnRecord]]] = {}  # session id -> conversation -> turn id -> turn
    changed: dict[str, dict[str, TurnRecord]] = defaultdict(dict)
    source_of: dict[str, str] = {}  # conversation -> the session id its file gave
    for (session_id, file_url), rows in by_file.items():
        if session_id not in conversations:
            conversations[session_id] = {name: {t.turn_id: t for t in turns}
                                         for name, turns in store.conversations_of(scope, session_id).items()}
        known = conversations[session_id]
        name = _conversation_for(session_id, file_url, rows, known)
        if name != session_id and name not in known:  # a new conversation: the file's whole session
            rows = store.landed_file_session(scope, file_url, session_id) or rows
        turns = known.setdefault(name, {})
        source_of[name] = session_id
        next_ordinal = max((t.ordinal for t in turns.values()), default=-1) + 1
        for row in rows:
            ordinal = turns[row["turn_id"]].ordinal if row["turn_id"] in turns else next_ordinal
            next_ordinal += row["turn_id"] not in turns
            turns[row["turn_id"]] = changed[name][row["turn_id"]] = _turn(scope, name, row, ordinal)
    writes = [_session_write(settings, scope, name, source_of[name], conversations[source_of[name]][name],
                             list(turns.values())) for name, turns in changed.items()]
    results: list[DocumentWriteResult] = []
    for start in range(0, len(writes), WRITE_BATCH):
        results += store.write_documents(scope, writes[start : start + WRITE_BATCH], actor="ingest",
                                          generate=settings.generate_memories)
    return results


def land_conversations(store: Store, settings: Settings, scope: Scope, sources: list[tuple[Path, str]]) -> list[IngestErrorRecord]:
    errors: list[IngestErrorRecord] = []
    for directory, file_glob in sources:
        landing = land_transcripts(store, scope, directory.resolve().as_uri(), file_glob,
                                   pipelines_dir=settings.dlt_dir, max_bytes=settings.max_file_bytes,
                                   redact=redaction(settings, scope))
        errors.extend(landing.errors)
    return errors
