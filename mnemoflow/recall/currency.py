"""The newer of two candidates about the same owner and subject ranks and packs first.

- **Newer first.** Among the top candidates (memories and turns alike), two said by the same person whose
  vectors are nearer than `RecallConfig.newer_first_at` are about one thing of theirs, as are two memories
  the relationship step linked (MAY_UPDATE, EXTENDS) and a memory and the turn it was read from. The newest
  candidate about the same thing as a higher one moves to just above it. "I write our backend in Go"
  (January) and "it's Rust for me day to day now" (February) answer "which language?" in that order,
  whichever the searches liked better. A question about what holds now (`intent.asks_about_now`) says what
  the thing is even where the two share no word: one person's candidates about as near the question as the
  nearest (`RecallConfig.newer_first_query_share`) are its answers, and the newest of them moves to just
  above the highest ("Living in Rotterdam is great" / "Boxes finally all unpacked here in Utrecht" for
  "which city does Ingrid live in?"). Once a question, not once an answer: each move pushes the rest down
  one, and in a long chat most turns of a person are somewhat near any question about them. And only an
  answer said on a later day: the next turn of the same talk goes on about the thing ("Pepper, my beagle"
  / "She sleeps all day"), it does not replace what was just said. And not when a document (or the
  assistant) is nearest the question: it is about that.
- **Possible updates.** A memory linked MAY_UPDATE to an older one (`memory.relate.versions`) is put right
  above it when it is not above it already, and the older one says so in its `why` and in the context:
  "said on 2026-01-10; possibly superseded by "..." on 2026-02-20".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from mnemoflow.models import MemoryItem
from mnemoflow.recall.config import RecallConfig
from mnemoflow.recall.intent import without_names
from mnemoflow.storage import Scope, Store
from mnemoflow.storage.store import ChunkHit

GIST_WORDS = 8  # of the newer memory, quoted in the older one's line


def _when(memory: MemoryItem) -> datetime:
    return memory.observed_at or memory.created_at


@dataclass(frozen=True)
class NowQuestion:
    """A question about what holds now (`intent.asks_about_now`): its words, its vector, and a way to embed
    other words (the question without the speakers' names)."""

    text: str
    vector: np.ndarray
    embed: Callable[[str], np.ndarray]

    def named(self, names: set[str]) -> set[str]:
        """Those of `names` the question says."""
        return {n for n in names if without_names(self.text, {n}) != " ".join(self.text.split())}

    def without(self, names: set[str]) -> np.ndarray:
        """Its vector with `names` left out, embedded again only when it says one of them."""
        return self.embed(without_names(self.text, names)) if self.named(names) else self.vector


def _chunk_said(chunk: ChunkHit) -> tuple[str | None, datetime | None, bool]:
    turns = chunk.locator.get("turns") or []
    if not turns:
        return None, None, False
    ts = turns[0].get("ts")
    return turns[0].get("speaker"), datetime.fromisoformat(ts) if ts else None, _by_assistant(turns[0])


def _memory_said(memory: MemoryItem, user: str | None) -> tuple[str | None, datetime, bool]:
    turns = memory.metadata.get("source_turns") or []
    return (turns[0].get("speaker") if turns else user), _when(memory), bool(turns) and _by_assistant(turns[0])


def _by_assistant(turn: dict[str, Any]) -> bool:
    """As generation reads it (memory.pipeline): the role says so, or, in turns stored without one, the name."""
    return (turn.get("role") or turn.get("speaker") or "").lower() == "assistant"


def newer_first(store: Store, scope: Scope, ranked: list[Any], memories: dict[str, MemoryItem],
                chunks: dict[str, ChunkHit], config: RecallConfig,
                now: NowQuestion | None = None) -> list[Any]:
    """`ranked` (items with `key` (target, id) and `score`) with, above each top candidate, the newest
    candidate below it about the same owner and subject (see the module docstring); `now` is the question
    when it asks about what holds now.

    The newer one is moved, not swapped: the older keeps its place but one, so a long chat in which one
    person comes back to a subject many times does not send the turn a question asks about to the bottom
    of the list."""
    top = ranked[:config.newer_first_depth]
    who: dict[tuple[str, str], str] = {}
    when: dict[tuple[str, str], datetime] = {}
    assistant: set[tuple[str, str]] = set()
    for r in top:
        target, item_id = r.key
        speaker, at, by_assistant = (
            _memory_said(memories[item_id], scope.user_id) if target == "memories" and item_id in memories
            else _chunk_said(chunks[item_id]) if target == "chunks" and item_id in chunks else (None, None, False))
        if speaker and at:
            who[r.key], when[r.key] = speaker, at
        if by_assistant:
            assistant.add(r.key)
    if len(who) < 2:
        return ranked
    looked_up = [r.key for r in top] if now is not None else list(who)  # about now: documents too (`_answers`)
    vectors = {(target, i): v for target in ("memories", "chunks") for i, v in store.vectors_of(
        scope, target, [k[1] for k in looked_up if k[0] == target]).items()}
    keys = [k for k in who if k in vectors]
    said = set(keys)
    answers = _answers([k for k in keys if k not in assistant], [k for k in looked_up if k in vectors], who, vectors,
                       now, config.newer_first_query_share)
    top_answer = next((r.key for r in top if r.key in answers), None)
    group = {k: k for k in keys}  # a memory and the turn it was read from are one statement: they chain

    def root(k: tuple[str, str]) -> tuple[str, str]:
        while group[k] != k:
            k = group[k]
        return k
    for a, b in _read_from(keys, memories, chunks):
        group[root(b)] = root(a)
    linked = {frozenset((root(a), root(b))) for a, b in _linked(store, scope, keys)}

    def newer_about_it(anchor: tuple[str, str], k: tuple[str, str]) -> bool:
        """Nearness and links are judged pair by pair: chained, they would join all of a long chat."""
        return when[k] > when[anchor] and (root(anchor) == root(k) or frozenset((root(anchor), root(k))) in linked or (
            who[anchor] == who[k] and (float(vectors[anchor] @ vectors[k]) >= config.newer_first_at
                                       or anchor == top_answer and k in answers
                                       and when[k].date() > when[anchor].date())))
    out, settled = list(ranked), set()
    n = 0
    while n < min(len(out), config.newer_first_depth):
        anchor = out[n].key
        if anchor in said and anchor not in settled:
            settled.add(anchor)
            below = [m for m in range(n + 1, min(len(out), config.newer_first_depth))
                     if out[m].key in said and out[m].key not in settled and newer_about_it(anchor, out[m].key)]
            if below:
                m = max(below, key=lambda m: when[out[m].key])
                settled.add(out[m].key)
                out.insert(n, _placed(out.pop(m), out[n].score))
                n += 1
        n += 1
    return out


def _answers(keys: list[tuple[str, str]], candidates: list[tuple[str, str]], who: dict[tuple[str, str], str],
             vectors: dict[tuple[str, str], np.ndarray], now: NowQuestion | None, share: float) -> set[tuple[str, str]]:
    """Of `keys` (what people said), those as near the question about now as `share` of the nearest, of the
    people it names (of anyone when it names none): one person's two answers to it are about one thing of
    theirs, however far apart their own words are ("Living in Rotterdam is great" / "Boxes finally all
    unpacked here in Utrecht" for "which city does Ingrid live in?"). None when the nearest of all the
    `candidates` is no one's statement (a document, the assistant): the question is about that, and what a
    person said near it need not be one thing ("how do I get to the venue?": Priya's standups, her flight).
    The question is compared without the speakers' names: a candidate that says the name would otherwise come
    near it whatever it is about, and one that leaves the name out would seem to answer nothing."""
    if now is None or not keys:
        return set()
    speakers = {who[k] for k in keys}
    query = now.without(speakers)
    near = {k: float(vectors[k] @ query) for k in candidates}
    if max(near, key=near.__getitem__) not in keys:
        return set()
    named = now.named(speakers)
    keys = [k for k in keys if not named or who[k] in named]
    best = max((near[k] for k in keys), default=0.0)
    return {k for k in keys if best > 0 and near[k] >= share * best}


def _linked(store: Store, scope: Scope, keys: list[tuple[str, str]]) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """Pairs of memories about one thing whatever their vectors: those the relationship step linked as one
    subject (a possible update, a detail of what it extends)."""
    ids = [k[1] for k in keys if k[0] == "memories"]
    return [(("memories", src), ("memories", dst)) for src, dst, _ in store.linked_memories(
        scope, ids, ("MAY_UPDATE", "EXTENDS")) if src in ids and dst in ids]


def _read_from(keys: list[tuple[str, str]], memories: dict[str, MemoryItem],
               chunks: dict[str, ChunkHit]) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """Each candidate memory with the candidate turn it was read from."""
    turn_of = {(t.get("session_id", chunks[k[1]].locator.get("session_id")), t["turn_id"]): k for k in keys
               if k[0] == "chunks" for t in (chunks[k[1]].locator.get("turns") or [])[:1] if t.get("turn_id")}
    return [(k, found) for k in keys if k[0] == "memories" for t in memories[k[1]].metadata.get("source_turns") or []
            if (found := turn_of.get((t.get("session_id"), t.get("turn_id")))) is not None]


def _gist(content: str, words: int = GIST_WORDS) -> str:
    """The opening words of the newer memory: enough to find it right above, without packing it twice."""
    said = content.split()
    return content if len(said) <= words else " ".join(said[:words]) + " ..."


def _placed(item: Any, score: float) -> Any:
    why = (item.why + "; " if item.why else "") + "newer of candidates about the same owner and subject"
    return replace(item, score=score, why=why, factors={**item.factors, "newer_first": 1.0})


def possible_updates(store: Store, scope: Scope, ranked: list[Any], memories: dict[str, MemoryItem],
                     placed_above: Callable[[Any, MemoryItem], Any]) -> tuple[list[Any], dict[str, str]]:
    """`ranked` with the newer memory of each MAY_UPDATE pair above the older one (`placed_above` makes a
    ranked item for a newer memory not among them), and a note for each older memory."""
    ids = [r.key[1] for r in ranked if r.key[0] == "memories"]
    pairs = [(src, dst) for src, dst in store.waiting_possible_updates(scope, ids) if dst in ids]
    if not pairs:
        return ranked, {}
    newer = store.fetch_memories(scope, list({src for src, _ in pairs} - set(memories)))
    memories.update(newer)
    notes: dict[str, str] = {}
    out = list(ranked)
    for src, dst in pairs:
        if src not in memories or dst not in memories:
            continue
        new, old = memories[src], memories[dst]
        if _when(new) < _when(old):
            continue
        notes[dst] = (f"said on {_when(old):%Y-%m-%d}; possibly superseded by \"{_gist(new.content)}\" on "
                      f"{_when(new):%Y-%m-%d}")
        at = next(n for n, r in enumerate(out) if r.key == ("memories", dst))
        here = next((n for n, r in enumerate(out) if r.key == ("memories", src)), None)
        if here is not None and here < at:
            continue
        item = out.pop(here) if here is not None else placed_above(out[at], new)
        at = next(n for n, r in enumerate(out) if r.key == ("memories", dst))
        out.insert(at, replace(item, score=max(item.score, out[at].score)))
    return out, notes

