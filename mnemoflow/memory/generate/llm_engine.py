"""The LLM generation engine: one chat-completions request per turn to any OpenAI-compatible endpoint.

The model is held to a strict JSON schema and its answer is validated again here (a server may not
enforce the schema); ids it cites must be turns it was shown. Endpoint trouble never stops a run:
transient failures (timeouts, connection errors, HTTP 429/5xx) are retried with backoff (`chat.ChatClient`), and a turn
whose request still fails, or whose answer does not fit the schema, is handed to the fallback engine
(the rule-based one), its candidates marked "llm-fallback: <reason>" and `fallbacks` counted.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta
from typing import Any, get_args

from pydantic import BaseModel

from mnemoflow.memory.generate.candidates import (
    Candidate,
    GenerationContext,
    GenerationEngine,
    MemoryContext,
    TurnView,
)
from mnemoflow.llm.chat import ChatClient, ChatFailed, ResponseFormat, Said, Share
from mnemoflow.memory.generate.judge import display_name
from mnemoflow.memory.relate.llm_infer import Inferrer
from mnemoflow.memory.relate.llm_judge import RelationJudge
from mnemoflow.memory.turns import WINDOW_TURNS
from mnemoflow.models import MemoryKind

MAX_CANDIDATES = 8  # memories one turn may give
MAX_ENTITIES = 8
MAX_CONDITIONS = 4  # key=value pairs on one side of a rule
_NULLABLE_DATE = {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}],  # a decoder holds the format
                  "description": "YYYY-MM-DD, or null when no event time is stated."}
_CANDIDATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "should_store": {"type": "boolean", "description": "False for what is deliberately passed over."},
        "content": {"type": "string", "description": "One self-contained, third-person sentence naming people."},
        "kind": {"type": "string", "enum": list(get_args(MemoryKind))},
        "confidence": {"type": "number", "description": "How sure the content is right, 0 to 1."},
        "salience": {"type": "number", "description": "How much it matters to remember later, 0 to 1."},
        # bounded, so a constrained decoder cannot run a list until max_tokens (a small model will)
        "entities": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_ENTITIES},
        "source_turn_ids": {"type": "array", "items": {"type": "string"}, "maxItems": WINDOW_TURNS + 1},
        "event_start_at": {**_NULLABLE_DATE, "description": "First day of the event: " + _NULLABLE_DATE["description"]},
        "event_end_at": {**_NULLABLE_DATE, "description": "Last day of the event: " + _NULLABLE_DATE["description"]},
        "temporal_text": {"type": ["string", "null"], "description": "The words that gave the event time."},
        **{f"rule_{slot}": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_CONDITIONS,
                            "description": what} for slot, what in (
            ("if", "kind rule: when it applies, as key=value (topic=data); empty for other kinds or always"),
            ("then", "kind rule: what it sets, as dotted key=value (output.format=json, tool.deny=shell)"),
            ("unless", "kind rule: when it does not apply, as key=value"))},
    },
}
_CANDIDATE_SCHEMA["required"] = list(_CANDIDATE_SCHEMA["properties"])
RESPONSE_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "memory_candidates",
        "strict": True,
        "schema": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"candidates": {"type": "array", "items": _CANDIDATE_SCHEMA, "maxItems": MAX_CANDIDATES}},
            "required": ["candidates"],
        },
    },
}

SYSTEM_PROMPT = """\
You turn one conversation turn into long-term memories about people. Answer with JSON that matches \
the schema: a list of candidates, empty when the current turn holds nothing worth remembering.
- One candidate per distinct fact, preference, event, procedure or rule stated in the CURRENT turn. \
Earlier turns are there to understand it: a short answer answers the previous question ("Yes" to \
"Are you vegan?" means the speaker is vegan); do not repeat what earlier turns or known memories say.
- content: one self-contained sentence, centred on the person or thing it is about. Write the \
speaker's name instead of I/me/my and the addressed person's name instead of you/your; never leave \
"I", "you", "he", "she" or "they" without a name. Keep names, numbers, amounts, titles and rare terms \
exactly as written.
- Resolve relative dates ("tomorrow", "last weekend", "next April") against the current date and \
write the absolute date in content ("in April 2025"). event_start_at and event_end_at are the first \
and last day (YYYY-MM-DD) of when the event happens, temporal_text the words that gave it; all null \
when the turn names no event time.
- kind: fact (a lasting truth), preference (likes, dislikes, wants, diet), episode (something that \
happened or will happen at a time), procedure (how to do something, steps), rule (an instruction to \
follow always or never).
- Greetings, thanks, small talk, questions, requests, advice and bare feelings are not memories: \
leave them out, or set should_store false.
- confidence: how sure you are the content is right (0 to 1); salience: how much it would matter \
to remember later (0 to 1). entities: the people, places, organisations and things named in content.
- source_turn_ids: the ids of the turns a candidate comes from: the current turn, plus the previous \
turn when it is needed to understand it.
- For kind rule, rule_if, rule_then and rule_unless read it as policy: rule_then what it sets as dotted \
key=value (output.format=json, output.language=french, tool.deny=shell, tool.allow=calendar,email, \
tool.prefer=ripgrep), rule_if when it applies (topic=data, channel=mobile; empty: always), rule_unless \
when it does not. All three empty for other kinds."""


class _Proposal(BaseModel):
    """One candidate as the model wrote it; checked because servers need not enforce the schema."""

    should_store: bool
    content: Said
    kind: MemoryKind
    confidence: Share
    salience: Share
    entities: list[str]
    source_turn_ids: list[str]
    event_start_at: date | None
    event_end_at: date | None
    temporal_text: str | None
    rule_if: list[str] = []  # optional here: a server that ignores the schema may leave them out
    rule_then: list[str] = []
    rule_unless: list[str] = []


class _Proposals(BaseModel):
    candidates: list[_Proposal]


class LLMEngine:
    """Proposes memories with a chat model; see the module docstring for how it fails."""

    name = "llm"
    memory_context: MemoryContext = "relevant"

    def __init__(self, *, base_url: str, model: str, fallback: GenerationEngine, api_key: str | None = None,
                 timeout_s: float = 60.0, max_retries: int = 2, backoff_s: float = 0.5,
                 response_format: ResponseFormat = "auto", max_tokens: int | None = None) -> None:
        self.model, self.fallback = model, fallback
        self.max_retries = max_retries
        self.fallbacks = 0  # turns handed to the fallback engine, for run reports
        self._client = ChatClient(base_url=base_url, model=model, api_key=api_key, timeout_s=timeout_s,
                                  max_retries=max_retries, backoff_s=backoff_s, response_format=response_format,
                                  max_tokens=max_tokens)
        self.judge = RelationJudge(self._client)  # what the rules leave unclassified, the model judges
        self.inferrer = Inferrer(self._client)  # what a run's memories imply together (DERIVES)

    def close(self) -> None:
        self._client.close()

    def generate(self, context: GenerationContext) -> list[Candidate]:
        if not context.turn.text.strip():
            return []
        try:
            proposals = self._propose(context)
        except ChatFailed as failure:
            self.fallbacks += 1
            why = f"llm-fallback: {failure}"
            return [replace(c, reasons=(*c.reasons, why)) for c in self.fallback.generate(context)]
        return [_candidate(p, context) for p in proposals]

    def _propose(self, context: GenerationContext) -> list[_Proposal]:
        return self._client.complete_json(SYSTEM_PROMPT, prompt(context), RESPONSE_FORMAT, _Proposals).candidates


def prompt(context: GenerationContext) -> str:
    """What the model is told about the turn: the date to resolve against, what the scope knows,
    the recent turns, the question this turn may answer, and the turn itself."""
    now = context.now
    lines = [f"Current date: {now:%Y-%m-%d} ({now:%A})"]
    if context.entities:
        lines.append("Known entities: " + "; ".join(context.entities))
    if context.memories:
        lines += ["Known memories:", *(f"- {m}" for m in context.memories)]
    if context.window:
        lines += ["Recent turns, oldest first:", *(_line(t) for t in context.window)]
    if context.previous is not None:
        lines += ["Previous turn by another speaker (what the current turn may answer):", _line(context.previous)]
    lines += [f"Current turn, said by {display_name(context.turn.speaker)}:", _line(context.turn)]
    return "\n".join(lines)


def _line(turn: TurnView) -> str:
    when = f" {turn.ts:%Y-%m-%d %H:%M}" if turn.ts else ""
    role = f" ({turn.role})" if turn.role else ""
    return f"[{turn.turn_id}]{when} {display_name(turn.speaker)}{role}: {turn.text}"


def _candidate(proposal: _Proposal, context: GenerationContext) -> Candidate:
    shown = {t.turn_id for t in (context.turn, context.previous, *context.window) if t is not None}
    sources = tuple(dict.fromkeys(i for i in proposal.source_turn_ids if i in shown)) or (context.turn.turn_id,)
    start, end = _event_span(proposal.event_start_at, proposal.event_end_at)
    return Candidate(
        should_store=proposal.should_store, content=proposal.content, kind=proposal.kind,
        confidence=proposal.confidence, salience=proposal.salience, source_turn_ids=sources,
        entities=tuple(dict.fromkeys(e.strip() for e in proposal.entities if e.strip())),
        observed_at=context.now, event_start_at=start, event_end_at=end,
        temporal_text=(proposal.temporal_text or "").strip() or None, reasons=("llm",),
        rule={"if": proposal.rule_if, "then": proposal.rule_then, "unless": proposal.rule_unless}
        if proposal.kind == "rule" and proposal.rule_then else None,
    )


def _event_span(first: date | None, last: date | None) -> tuple[datetime | None, datetime | None]:
    """Days as the rule engine writes event time: naive midnights, the end exclusive, both or neither."""
    if first is None:
        if last is None:
            return None, None
        first = last
    last = max(last or first, first)
    midnight = datetime.min.time()
    return datetime.combine(first, midnight), datetime.combine(last + timedelta(days=1), midnight)
