"""DERIVES by a chat model: what follows from two or more of one scope's current memories taken together
("Rhea is Sunil's sister" + "Rhea's daughter Mina ..." -> "Mina is Sunil's niece"), each conclusion naming
the memories it rests on. Only with a model configured: the six rule families that did this offline were
templates written with the scenario suite's own derive scenarios, and on every set they were not written
against they derived nothing (bench/README.md, "DERIVES without the rule families"). A request that fails,
or an answer that does not fit, derives nothing and is counted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from mnemoflow.llm.chat import ChatClient, ChatFailed, Said, Share

MAX_MEMORIES = 40  # the newest current memories of a run the model reads (a prompt of about 1,000 tokens)
MAX_INFERENCES = 4
MAX_SUPPORTS = 4
RESPONSE_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {"name": "memory_inferences", "strict": True, "schema": {
        "type": "object", "additionalProperties": False, "required": ["inferences"],
        "properties": {"inferences": {"type": "array", "maxItems": MAX_INFERENCES, "items": {
            "type": "object", "additionalProperties": False, "required": ["content", "supports", "confidence"],
            "properties": {
                "content": {"type": "string", "description": "One self-contained sentence naming people."},
                "supports": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": MAX_SUPPORTS,
                             "description": "The ids of the memories the conclusion rests on."},
                "confidence": {"type": "number", "description": "How sure it follows, 0 to 1."}}}}}}},
}
SYSTEM_PROMPT = """\
You read memories about people, each with its id, and state what follows from two or more of them \
taken together that none of them says alone: a family relation through another one, an amount left \
or a share from two amounts, a date reached from a date and a duration, a document that runs out \
before a dated plan. Answer with JSON that matches the schema; an empty list when nothing follows for \
certain, which is the usual case.
- content: one self-contained sentence that names people, never "he", "she" or "they".
- supports: the ids of the memories the conclusion rests on, at least two.
- confidence: how sure you are that it follows, 0 to 1. Never guess."""


@dataclass(frozen=True)
class Derived:
    """A conclusion to write as a memory, DERIVES from each of its supports."""

    content: str
    confidence: float
    supporting_ids: tuple[str, ...]
    reason: str


class _Inference(BaseModel):
    content: Said
    supports: list[str]
    confidence: Share


class _Inferences(BaseModel):
    inferences: list[_Inference]


class Inferrer:
    """Asks one chat model what a run's memories imply (see the module docstring)."""

    def __init__(self, client: ChatClient) -> None:
        self._client = client
        self.failures = 0  # runs whose request or answer failed: nothing was derived

    def infer(self, memories: Sequence[tuple[str, str]]) -> list[Derived]:
        """Conclusions from `memories` ((id, content) of ONE scope, oldest first): each rests on at least two
        of them, by ids it was shown, and says what none of them already says."""
        shown = list(memories)[-MAX_MEMORIES:]
        if len(shown) < 2:
            return []
        ids = {mid for mid, _ in shown}
        try:
            answer = self._client.complete_json(SYSTEM_PROMPT, "\n".join(f"[{mid}] {text}" for mid, text in shown),
                                                RESPONSE_FORMAT, _Inferences)
        except ChatFailed:
            self.failures += 1
            return []
        known = {_norm(text) for _, text in shown}
        out: dict[str, Derived] = {}
        for inference in answer.inferences:
            supports = tuple(dict.fromkeys(s for s in inference.supports if s in ids))
            if len(supports) >= 2 and _norm(inference.content) not in known:
                out.setdefault(_norm(inference.content), Derived(
                    inference.content, inference.confidence, supports,
                    f"llm-infer: from {len(supports)} memories at {inference.confidence:.2f}"))
        return list(out.values())


def _norm(text: str) -> str:
    return " ".join(text.lower().rstrip(".").split())
