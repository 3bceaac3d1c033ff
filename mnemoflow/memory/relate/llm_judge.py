"""A chat model's judgement of a pair the rules could not classify (a possible update, `versions`): does
the new memory replace the held one, add detail to it, or neither? Its answer is held to a JSON schema
and applied at the pipeline's thresholds like any decision; a request that fails, or an answer that does
not fit, leaves the rules' MAY_UPDATE link and review as they were."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from mnemoflow.llm.chat import ChatClient, ChatFailed, Share
from mnemoflow.memory.relate.relations import Decision

RESPONSE_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {"name": "memory_relation", "strict": True, "schema": {
        "type": "object", "additionalProperties": False, "required": ["relation", "confidence"],
        "properties": {"relation": {"type": "string", "enum": ["UPDATES", "EXTENDS", "new"]},
                       "confidence": {"type": "number", "description": "How sure, 0 to 1."}}}},
}
SYSTEM_PROMPT = """\
You compare two memories about the same person. Answer with JSON that matches the schema.
- UPDATES: the NEW memory states a value that replaces what the OLD memory states (a move, a switch, a \
changed number, date or habit); the OLD one is no longer true.
- EXTENDS: the NEW memory adds detail to the OLD one, and both stay true.
- new: they are about different things, or both can hold at once.
confidence: how sure you are, 0 to 1."""


class _Verdict(BaseModel):
    relation: Literal["UPDATES", "EXTENDS", "new"]
    confidence: Share


class RelationJudge:
    """Asks one chat model about one pair at a time (see the module docstring)."""

    def __init__(self, client: ChatClient) -> None:
        self._client = client
        self.failures = 0  # pairs whose request or answer failed: the rules' decision stood

    def judge(self, new: str, old: str, old_id: str, *, new_said: datetime | None = None,
              old_said: datetime | None = None) -> Decision | None:
        """The model's decision about `new` against the held memory `old_id` (`old`); None when it fails."""
        when = lambda at: f" (said {at:%Y-%m-%d})" if at else ""  # noqa: E731
        user = f"OLD{when(old_said)}: {old}\nNEW{when(new_said)}: {new}"
        try:
            verdict = self._client.complete_json(SYSTEM_PROMPT, user, RESPONSE_FORMAT, _Verdict)
        except ChatFailed:
            self.failures += 1
            return None
        return Decision(verdict.relation, None if verdict.relation == "new" else old_id, verdict.confidence,
                        f"llm-judge: {verdict.relation} at {verdict.confidence:.2f}")
