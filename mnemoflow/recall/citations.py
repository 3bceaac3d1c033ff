"""Citations: where a packed item came from. A chunk cites its document and place, or the
conversation turns it shows; a memory the turns it was read from; a summary or a profile line the
memories it covers, in its own order (for a summary, the memories its text shows first)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mnemoflow.models import Citation, MemoryItem
from mnemoflow.storage.store import ChunkHit


@dataclass(frozen=True)
class Covered:
    """A summary or a profile line as recall cites it: the current memories it covers, in citation order."""

    memories: tuple[MemoryItem, ...]


def citations_of(source: ChunkHit | MemoryItem | Covered) -> list[Citation]:
    """Built only for the items that make it into the context."""
    if isinstance(source, Covered):
        seen: set[tuple[Any, ...]] = set()
        cited = []
        for memory in source.memories:
            for c in citations_of(memory):
                key = (c.session_id, c.turn_id) if c.turn_id else (c.memory_id,)
                if key not in seen:
                    seen.add(key)
                    cited.append(c)
        return cited
    if isinstance(source, MemoryItem):
        turns = source.metadata.get("source_turns") or []
        if turns:  # generated from a conversation: cite the turns it was read from
            return [_turn_citation(t["session_id"], t, memory_id=source.id) for t in turns]
        place = source.metadata.get("source")  # a dict when the writer recorded where it came from
        return [Citation(memory_id=source.id, ts=source.observed_at, locator=place if isinstance(place, dict) else {})]
    turns = source.locator.get("turns")
    if not turns:
        return [Citation(document_id=source.document_id, uri=source.uri, title=source.title, locator=source.locator)]
    return [_turn_citation(source.locator.get("session_id"), t, document_id=source.document_id, uri=source.uri,
                           title=source.title) for t in turns]


def _turn_citation(session_id: str | None, turn: dict[str, Any], **source: Any) -> Citation:
    """One conversation turn, cited by a memory read from it or by the chunk holding it."""
    return Citation(session_id=session_id, turn_id=turn["turn_id"], speaker=turn.get("speaker"),
                    ts=datetime.fromisoformat(turn["ts"]) if turn.get("ts") else None,
                    locator={"session_id": session_id, "turn_id": turn["turn_id"]}, **source)
