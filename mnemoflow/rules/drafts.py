"""Rule memories become DRAFT rules: after each outbox pass, every current memory of kind `rule` that
no reader has read yet is read, with the slots the LLM engine wrote for it when there are any (its
`metadata["rule"]`), else with the rule reader (`rules.text`). A rule read is recorded as DRAFT, owned
by the memory's scope and naming the memory; nothing read here is ever more than a draft: a person
or an API call moves it on. Every memory read is recorded (`rule_readings`), read or not, so it is
read once.
"""

from __future__ import annotations

from typing import Any

from mnemoflow.rules.text import read_rule, read_slots
from mnemoflow.storage import Store

ACTOR = "generate"


def read_memory(content: str, metadata: dict[str, Any]) -> tuple[Any, str, str]:
    """(spec or None, origin, what was read or why not): the model's slots first, then the words."""
    slots = metadata.get("rule")
    if isinstance(slots, dict):
        spec, why = read_slots(slots)
        if spec is not None:
            return spec, "llm", why
        text_spec, text_why = read_rule(content)
        return text_spec, "rules", text_why if text_spec is not None else f"{why}; {text_why}"
    spec, why = read_rule(content)
    return spec, "rules", why


def draft_rules(store: Store, *, batch: int = 500) -> int:
    """Read every unread rule memory; returns how many DRAFT rules were written."""
    drafted = 0
    while unread := store.unread_rule_memories(batch):
        for scope, memory_id, content, metadata in unread:
            spec, origin, why = read_memory(content, metadata)
            rule_id = None
            if spec is not None:
                rule_id = store.add_rule(scope, spec, state="draft", actor=ACTOR, origin=origin,
                                         memory_id=memory_id).rule_id
                drafted += 1
            store.record_rule_reading(scope, memory_id, why, rule_id)
    return drafted
