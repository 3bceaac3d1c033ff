"""Conversations: transcripts and posted events land through the conversations connector; the
turns landed but not yet processed become turns and chunks, one document per session."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

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


def process_landed_turns(store: Store, settings: Settings, scope: Scope) -> list[DocumentWriteResult]:
    """Turn landed-but-unprocessed transcript turns into turns and chunks, one commit per session."""
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
                                   pipelines_dir=settings.dlt_dir, max_bytes=settings.max_file_bytes,
                                   redact=redaction(settings, scope))
        errors.extend(landing.errors)
    return errors
