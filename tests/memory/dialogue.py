"""Conversations as generation sees them: one GenerationContext per turn, built the way the pipeline
does (previous = the latest earlier turn by someone else, window = the turns just before)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from mnemoflow.memory.generate.candidates import Candidate, GenerationContext, TurnView
from mnemoflow.memory.generate.rules import RuleEngine
from mnemoflow.memory.turns import turn_context

Line = tuple[str, str] | tuple[str, str, str]  # (speaker, text) or (speaker, text, role)


def contexts(lines: Sequence[Line], start: datetime) -> list[GenerationContext]:
    turns = [
        TurnView(turn_id=f"t{i + 1}", session_id="s1", speaker=line[0], text=line[1],
                 ts=start + timedelta(minutes=i), role=line[2] if len(line) > 2 else None)
        for i, line in enumerate(lines)
    ]
    return [turn_context(turns, i) for i in range(len(turns))]


def stored(lines: Sequence[Line], start: datetime, engine: RuleEngine | None = None) -> list[Candidate]:
    """Every candidate the engine would store for the whole conversation, in order."""
    engine = engine or RuleEngine()
    return [c for ctx in contexts(lines, start) for c in engine.generate(ctx) if c.should_store]


def say(speaker: str, text: str, previous: tuple[str, str] | None = None, now: datetime | None = None,
        role: str | None = None) -> list[Candidate]:
    """The stored candidates of one turn, optionally answering `previous` = (speaker, text)."""
    lines: list[Line] = [previous] if previous else []
    lines.append((speaker, text, role) if role else (speaker, text))
    start = (now or datetime(2024, 5, 8, 10, 0)) - timedelta(minutes=len(lines) - 1)
    ctx = contexts(lines, start)[-1]
    return [c for c in (RuleEngine().generate(ctx)) if c.should_store]
