"""The MemoryDraft a generation run writes: from a candidate, with the turns it cites; or, when a change
replaces a memory of several facts, the new version holding the facts it left (`relate/facts.py`)."""

from __future__ import annotations

from collections.abc import Sequence

from mnemoflow.memory.generate.candidates import Candidate, TurnView
from mnemoflow.memory.relate.entities import typed_entities
from mnemoflow.memory.relate.triples import categories_of, relation_triples
from mnemoflow.models import MemoryDraft, MemoryItem, RelationDraft


def candidate_draft(candidate: Candidate, cited: tuple[str, ...], turns: dict[str, TurnView], said_in: str,
                    speakers: tuple[str, ...]) -> MemoryDraft:
    """`source_turns` lets recall cite a memory the way it cites a conversation chunk: session,
    turn, speaker and time of each turn it was read from, the turn that said it first (then the
    question it answers)."""
    order = sorted(candidate.source_turn_ids, key=lambda i: i != said_in)
    sources = [{"session_id": t.session_id, "turn_id": t.turn_id, "speaker": t.speaker, "role": t.role,
                "ts": t.ts.isoformat() if t.ts else None}
               for t in (turns.get(i) for i in order) if t is not None]
    entities = tuple(typed_entities(candidate.content, candidate.entities, speakers=speakers))
    return MemoryDraft(
        content=candidate.content, kind=candidate.kind, salience=candidate.salience, confidence=candidate.confidence,
        observed_at=candidate.observed_at, event_start_at=candidate.event_start_at,
        event_end_at=candidate.event_end_at, temporal_text=candidate.temporal_text,
        metadata={"entities": list(candidate.entities), "source_turn_ids": list(candidate.source_turn_ids),
                  "source_turns": sources, "why": list(candidate.reasons),
                  **({"rule": candidate.rule} if candidate.rule else {})},
        derived_from=cited, entities=entities,
        relations=tuple(RelationDraft(*t) for t in relation_triples(candidate.content, entities)),
        categories=tuple(categories_of(candidate.content, candidate.kind)),
    )


def kept_version(old: MemoryItem, kept: list[str], sources: tuple[str, ...], speakers: Sequence[str]) -> MemoryDraft:
    """The new version of `old` that holds the facts a change left: its kind, times and salience, cited
    where it was read, with the names it still holds."""
    content = "; ".join(kept)
    entities = [e for e in old.metadata.get("entities") or () if e.casefold() in content.casefold()]
    typed = tuple(typed_entities(content, entities, speakers=speakers))
    return MemoryDraft(
        content=content, kind=old.kind, salience=old.salience, confidence=old.confidence,
        observed_at=old.observed_at, event_start_at=old.event_start_at, event_end_at=old.event_end_at,
        temporal_text=old.temporal_text, derived_from=sources, entities=typed,
        metadata={**old.metadata, "entities": entities,
                  "why": [*old.metadata.get("why", []), f"kept: what {old.id} said that the change left"]},
        relations=tuple(RelationDraft(*t) for t in relation_triples(content, typed)),
        categories=tuple(categories_of(content, old.kind)))
