"""Messages added directly (mem0's `add`): a string, or a list of {"role", "content"} turns, read the
way an ingested conversation is read (the same `MemoryGenerator`: drafting, then relationship
classification against what the scope holds), or kept verbatim.

A list is a conversation: the engine decides what in it is worth keeping, as for a transcript. A
string is a statement the caller asked to keep: the engine drafts it (who, when, what kind) and the
relationship step decides what it does to the store (new, the same again, an UPDATE of what was
true before); when the engine would keep none of it, the statement is kept as the engine drafted
it, or as written when it drafted nothing. Small talk and questions ("thanks!", "what time is it?")
are no statements: nothing is kept of them (`infer=False` keeps them as written).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np

from mnemoflow.client_settings import DEFAULT_USER
from mnemoflow.embedding import Embedder
from mnemoflow.embedding.base import normalize
from mnemoflow.embedding.worker import vectors_by_hash
from mnemoflow.errors import BadInputError, EmbeddingUnavailableError
from mnemoflow.memory.generate.candidates import (
    Candidate,
    GenerationContext,
    GenerationEngine,
    TurnView,
)
from mnemoflow.memory.english.smalltalk import is_small_talk
from mnemoflow.memory.generate.direct import classify_kind, draft_memory
from mnemoflow.memory.pipeline import MemoryGenerator, WriteEvent
from mnemoflow.models import MemoryItem
from mnemoflow.results import AddResult, MemoryEvent, Message, as_message
from mnemoflow.scoring import fast_score
from mnemoflow.storage import Scope, Store
from mnemoflow.storage.store import memory_content_hash
from mnemoflow.timeutil import naive_utc, utcnow

MAX_MESSAGES = 500  # per call; a longer conversation is a transcript to ingest


def as_messages(messages: str | list[Message] | list[dict[str, Any]]) -> tuple[list[Message], bool]:
    """The messages, and whether they are one statement (a plain string)."""
    if isinstance(messages, str):
        if not messages.strip():
            raise BadInputError("add needs some text")
        return [Message(role="user", content=messages)], True
    if not isinstance(messages, list) or not messages:
        raise BadInputError("add takes a string or a non-empty list of {'role', 'content'} messages")
    if len(messages) > MAX_MESSAGES:
        raise BadInputError(f"add takes at most {MAX_MESSAGES} messages; ingest a longer conversation as a "
                            "transcript")
    return [as_message(message, n) for n, message in enumerate(messages, start=1)], False


def speaker_of(message: Message, scope: Scope) -> str:
    """Who said it: its `name`; else, for the user's turns, the user the scope names when that id reads as a
    name ("alex"), or "User" (the default id, "u_81f2", an email address: a memory says "User likes tea", never
    "Default likes tea"); else the role."""
    if message.name:
        return message.name
    if message.role == "user":
        user = scope.user_id or ""
        return user if user != DEFAULT_USER and re.fullmatch(r"[^\W\d_]+(?:[ '-][^\W\d_]+)*", user) else "User"
    return message.role


class Statement:
    """An engine that keeps a statement the caller asked to keep (see the module docstring)."""

    def __init__(self, engine: GenerationEngine) -> None:
        self.engine = engine
        self.name = f"{engine.name}+statement"
        self.memory_context = engine.memory_context
        self.judge = getattr(engine, "judge", None)

    def generate(self, context: GenerationContext) -> list[Candidate]:
        drafted = [c for c in self.engine.generate(context) if c.content.strip()]
        if any(c.should_store for c in drafted):
            return drafted
        text = " ".join(context.turn.text.split())
        if is_small_talk(text.rstrip(".!;:,- ")) or text.endswith("?"):
            return drafted
        if drafted:
            return [replace(c, should_store=True, reasons=(*c.reasons, "kept: asked to")) for c in drafted]
        return [Candidate(True, text, classify_kind(text), 1.0, fast_score(text), (context.turn.turn_id,),
                          observed_at=context.now, reasons=("kept: asked to, as written",))]

    def close(self) -> None:
        """The wrapped engine belongs to the caller."""


def remember(
    store: Store, embedder: Embedder, engine: GenerationEngine, scope: Scope,
    messages: str | list[Message] | list[dict[str, Any]], *, metadata: dict[str, Any] | None = None,
    infer: bool = True, said_at: datetime | None = None, actor: str = "api", embed: bool = True,
) -> list[WriteEvent]:
    """Read `messages` into the scope's memories; what each decision did, in order. A message without a
    timestamp was said at `said_at` (default now). Generated memories are written with the vectors
    generation computed; with `infer=False` the messages are embedded as they are written when `embed`
    (else, or while the embedder is down, the worker embeds them)."""
    read, statement = as_messages(messages)
    said_at = _naive(said_at)
    if not infer:
        return _verbatim(store, embedder if embed else None, scope, read, metadata or {}, said_at, actor)
    session = scope.run_id or f"add-{uuid.uuid4().hex[:12]}"
    now = said_at or utcnow()
    turns = [TurnView(turn_id=str(n), session_id=session, speaker=speaker_of(m, scope), text=m.content,
                      ts=_naive(m.timestamp) or now, role=m.role)
             for n, m in enumerate(read, start=1) if m.role != "system" and m.content.strip()]
    if not turns:
        return []
    generator = MemoryGenerator(store, embedder, Statement(engine) if statement else engine, scope, actor=actor,
                                metadata=metadata, with_vectors=True)
    generator.run(turns)
    return generator.events


def _verbatim(store: Store, embedder: Embedder | None, scope: Scope, read: list[Message], metadata: dict[str, Any],
              said_at: datetime | None, actor: str) -> list[WriteEvent]:
    """Each message as a memory of its own, as written (an exact repeat is the held memory), with its
    vector when an `embedder` is given and answers."""
    drafts = [draft_memory(m.content, metadata=metadata, observed_at=_naive(m.timestamp) or said_at)  # the caller's
              for m in read if m.role != "system" and m.content.strip()]
    vectors = _vectors(store, embedder, [d.content for d in drafts]) if embedder is not None and drafts else None
    events = []
    with store.memory_writes(scope, actor=actor) as writes:
        for n, draft in enumerate(drafts):
            memory, created = writes.add(draft, vector=None if vectors is None else vectors[n])
            events.append(WriteEvent("ADD" if created else "NONE", memory.id))
    return events


def _vectors(store: Store, embedder: Embedder, texts: list[str]) -> np.ndarray | None:
    """The texts' vectors through the store's vector cache; None while the embedder is down (the rows
    wait for the embedding worker, as any write does)."""
    hashes = [memory_content_hash(t) for t in texts]
    try:
        found, _ = vectors_by_hash(store, embedder, dict(zip(hashes, texts)))
    except EmbeddingUnavailableError:
        return None
    return normalize(np.stack([found[h] for h in hashes]))


def _naive(value: datetime | None) -> datetime | None:
    return None if value is None else naive_utc(value)


def touched(store: Store, scope: Scope, events: list[WriteEvent]) -> dict[str, MemoryItem]:
    """The memories the events name, and the ones they replaced."""
    wanted = [*(e.memory_id for e in events), *(e.previous_id for e in events if e.previous_id)]
    return store.fetch_memories(scope, wanted, include_history=True)


def waiting_for_vectors(events: list[WriteEvent], found: dict[str, MemoryItem]) -> bool:
    """Whether a memory the events wrote waits for its vector (vector search would miss it)."""
    return any(e.event != "NONE" and e.memory_id in found and found[e.memory_id].embedding_status == "pending"
               for e in events)


def add_result(events: list[WriteEvent], found: dict[str, MemoryItem]) -> AddResult:
    """The events with their memories' texts (and the ones they replaced: `touched`), each memory once
    per event."""
    results: list[MemoryEvent] = []
    seen: set[tuple[str, str]] = set()
    for e in events:
        if (e.memory_id, e.event) in seen or e.memory_id not in found:
            continue
        seen.add((e.memory_id, e.event))
        previous = found.get(e.previous_id) if e.previous_id else None
        results.append(MemoryEvent(id=e.memory_id, memory=found[e.memory_id].content, event=e.event,
                                   previous_id=e.previous_id, previous_memory=previous.content if previous else None,
                                   review=list(e.review)))
    first = next((r for r in results if r.event != "NONE"), results[0] if results else None)
    return AddResult(results=results, memory=found[first.id] if first else None,
                     created=any(r.event != "NONE" for r in results))
