"""DERIVES by a chat model (`relate/llm_infer.py`) against a loopback chat endpoint: what it sends, which of
the model's conclusions it keeps, and the derived memory the pipeline writes with its links. Without a
model nothing is derived."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mnemoflow.config import load_settings
from mnemoflow.llm.chat import ChatClient
from mnemoflow.memory.relate.llm_infer import RESPONSE_FORMAT, Inferrer
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.llm_double import ChatDouble, Reply, candidates

MEMORIES = [("m1", "Rhea is Sunil's sister"), ("m2", "Rhea's daughter Mina started school in 2024"),
            ("m3", "Sunil plays the cello")]


def inferences(*items: tuple[str, list[str], float]) -> str:
    return json.dumps({"inferences": [{"content": c, "supports": s, "confidence": p} for c, s, p in items]})


@pytest.fixture
def inferrer(double: ChatDouble) -> Iterator[Inferrer]:
    client = ChatClient(base_url=double.base_url, model="chat-model", timeout_s=2.0, max_retries=1, backoff_s=0.01)
    yield Inferrer(client)
    client.close()


def test_a_conclusion_keeps_only_supports_it_was_shown_and_needs_two(double: ChatDouble, inferrer: Inferrer) -> None:
    double.script(Reply(inferences(("Mina is Sunil's niece", ["m1", "m2", "m2", "m9"], 0.9),
                                   ("Sunil is musical", ["m3", "m9"], 0.8),  # one support it was shown: dropped
                                   ("Rhea is Sunil's sister", ["m1", "m2"], 0.9))))  # says what m1 says
    [derived] = inferrer.infer(MEMORIES)
    assert (derived.content, derived.supporting_ids, derived.confidence) == ("Mina is Sunil's niece", ("m1", "m2"), 0.9)
    [request] = double.requests
    assert request["response_format"] == RESPONSE_FORMAT
    assert "[m2] Rhea's daughter Mina started school in 2024" in request["messages"][-1]["content"]


def test_a_failed_request_or_answer_derives_nothing(double: ChatDouble, inferrer: Inferrer) -> None:
    double.script(Reply(status=400))
    assert inferrer.infer(MEMORIES) == [] and inferrer.failures == 1
    double.script(Reply('{"inferences": [{"content": "Mina is Sunil\'s niece"}]}'))  # no supports, no confidence
    assert inferrer.infer(MEMORIES) == [] and inferrer.failures == 2
    double.script(Reply(inferences(("Mina is Sunil's niece", ["m1", "m2"], 0.9))))
    assert inferrer.infer(MEMORIES[:1]) == [] and double.requests == []  # one memory implies nothing together


def _niece_from_what_was_shown(body: dict[str, Any]) -> str:
    """The model's answer: a conclusion citing the ids the request showed for the sister and the daughter."""
    shown = dict(re.findall(r"^\[(\S+)\] (.*)$", body["messages"][-1]["content"], re.M))
    ids = [mid for mid, text in shown.items() if "sister" in text or "daughter" in text]
    return inferences(("Mina is Sunil's niece", ids, 0.9))


def test_the_pipeline_writes_the_conclusion_with_a_derives_link_to_each_support(double: ChatDouble,
                                                                               tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "home", llm_provider="openai", llm_model="chat-model",
                             llm_base_url=double.base_url, llm_timeout_s=5, llm_max_retries=0)
    scope = Scope("acme", "sunil")
    turns = ["My sister Rhea is visiting next week.", "Her daughter Mina started school this year."]
    double.script(Reply(candidates({"content": "Rhea is Sunil's sister", "entities": ["Rhea", "Sunil"]})),
                  Reply(candidates({"content": "Rhea's daughter Mina started school in 2024",
                                    "entities": ["Rhea", "Mina"]})),
                  Reply(_niece_from_what_was_shown))  # any relation judged in between gets an answer it cannot read
    with MemoryService(settings) as service:
        service.post_events(scope, [{"session_id": "s1", "turn_id": f"t{n}", "speaker": "Sunil", "role": "user",
                                     "ts": "2024-10-01T09:00:00Z", "text": text} for n, text in enumerate(turns)])
        memories = {m.content: m for m in service.store.list_memories(scope)}
        niece = memories["Mina is Sunil's niece"]
        supports = {memories["Rhea is Sunil's sister"].id, memories["Rhea's daughter Mina started school in 2024"].id}
        assert niece.metadata["derived_by"] == "llm-infer"
        assert set(service.store.linked_memories(scope, [niece.id], ("DERIVES",))) == {
            (niece.id, support, "DERIVES") for support in supports}


def test_without_a_model_nothing_is_derived(tmp_path: Path) -> None:
    scope = Scope("acme", "sunil")
    with MemoryService(load_settings(tmp_path / "home")) as service:
        service.post_events(scope, [{"session_id": "s1", "turn_id": f"t{n}", "speaker": "Sunil", "role": "user",
                                     "ts": "2024-10-01T09:00:00Z", "text": text} for n, text in enumerate(
                                         ["Rhea is my sister.", "Rhea's son Leo is four."])])
        memories = service.store.list_memories(scope)
        assert memories and not any("derived_by" in m.metadata for m in memories)
