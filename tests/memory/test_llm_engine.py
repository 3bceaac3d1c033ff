"""The LLM engine against a loopback chat endpoint: what it sends, what it makes of the answer, and
how it falls back on the rule engine when the endpoint or the answer fails."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest

from mnemoflow.config import Settings
from mnemoflow.errors import ConfigError
from mnemoflow.memory.generate.candidates import Candidate, GenerationContext
from mnemoflow.memory.generate.engines import generation_engine
from mnemoflow.memory.generate.llm_engine import LLMEngine
from mnemoflow.memory.generate.rules import RuleEngine
from tests.llm_double import ChatDouble, Reply, candidates
from tests.memory.dialogue import contexts
from tests.loopback import free_port

LINES = [("Sam", "Are you and Jo still moving abroad?"), ("Alex", "Yes, we're moving to Lisbon next April.")]
START = datetime(2024, 5, 8, 10, 0)
MOVE = {"content": "Alex and Jo are moving to Lisbon in April 2025", "kind": "episode", "entities": ["Alex", "Jo"],
        "source_turn_ids": ["t2"], "event_start_at": "2025-04-01", "event_end_at": "2025-04-30",
        "temporal_text": "next April"}


@pytest.fixture
def engine(double: ChatDouble) -> Iterator[LLMEngine]:
    llm = LLMEngine(base_url=double.base_url, model="chat-model", fallback=RuleEngine(), timeout_s=2.0,
                    max_retries=2, backoff_s=0.01)
    yield llm
    llm.close()


@pytest.fixture
def context() -> GenerationContext:
    return contexts(LINES, START)[-1]


def fallback_of(context: GenerationContext, reason: str) -> list[Candidate]:
    expected = [replace(c, reasons=(*c.reasons, f"llm-fallback: {reason}")) for c in RuleEngine().generate(context)]
    assert expected, "the rule engine should have something to say about the turn"
    return expected


def test_valid_answer_becomes_candidates(double: ChatDouble, engine: LLMEngine, context: GenerationContext) -> None:
    double.script(Reply(candidates({**MOVE, "confidence": 1.4, "salience": -0.2, "source_turn_ids": ["t1", "t2"]},
                                   {"content": "Alex is glad", "should_store": False, "source_turn_ids": []})))
    move, feeling = engine.generate(context)
    assert move.content == MOVE["content"] and move.kind == "episode" and move.should_store
    assert (move.confidence, move.salience) == (1.0, 0.0)
    assert move.source_turn_ids == ("t1", "t2") and move.entities == ("Alex", "Jo")
    assert (move.event_start_at, move.event_end_at) == (datetime(2025, 4, 1), datetime(2025, 5, 1))
    assert move.temporal_text == "next April" and move.observed_at == context.turn.ts == context.now
    assert move.reasons == ("llm",)
    assert not feeling.should_store and feeling.source_turn_ids == ("t2",) and feeling.event_start_at is None
    assert engine.fallbacks == 0


def test_request_carries_schema_turn_question_and_date(double: ChatDouble, engine: LLMEngine,
                                                       context: GenerationContext) -> None:
    double.script(Reply(candidates()))
    assert engine.generate(context) == []
    (request,) = double.requests
    assert request["model"] == "chat-model"
    response_format = request["response_format"]
    assert response_format["type"] == "json_schema" and response_format["json_schema"]["strict"] is True
    item = response_format["json_schema"]["schema"]["properties"]["candidates"]["items"]
    assert item["properties"]["kind"]["enum"] == ["fact", "preference", "episode", "procedure", "rule"]
    assert set(item["required"]) == set(item["properties"])
    system, user = request["messages"]
    assert system["role"] == "system" and "instead of I/me/my" in system["content"]
    said = user["content"]
    assert "Current date: 2024-05-08 (Wednesday)" in said
    assert "[t1] 2024-05-08 10:00 Sam: Are you and Jo still moving abroad?" in said
    assert said.endswith("Current turn, said by Alex:\n"
                         "[t2] 2024-05-08 10:01 Alex: Yes, we're moving to Lisbon next April.")


def test_unknown_source_ids_are_dropped(double: ChatDouble, engine: LLMEngine, context: GenerationContext) -> None:
    double.script(Reply(candidates({**MOVE, "source_turn_ids": ["t99", "t2", "t2"]},
                                   {**MOVE, "source_turn_ids": ["elsewhere"]})))
    first, second = engine.generate(context)
    assert first.source_turn_ids == ("t2",) and second.source_turn_ids == ("t2",)


def test_end_day_alone_is_a_one_day_event(double: ChatDouble, engine: LLMEngine, context: GenerationContext) -> None:
    double.script(Reply(candidates({**MOVE, "event_start_at": None, "event_end_at": "2025-04-12"})))
    (move,) = engine.generate(context)
    assert (move.event_start_at, move.event_end_at) == (datetime(2025, 4, 12), datetime(2025, 4, 13))


def test_transient_failure_is_retried(double: ChatDouble, engine: LLMEngine, context: GenerationContext) -> None:
    double.script(Reply(status=503), Reply(status=429), Reply(candidates(MOVE)))
    (move,) = engine.generate(context)
    assert move.content == MOVE["content"] and len(double.requests) == 3 and engine.fallbacks == 0


def test_endpoint_down_falls_back_to_rules(double: ChatDouble, engine: LLMEngine, context: GenerationContext) -> None:
    double.script(Reply(status=500))
    assert engine.generate(context) == fallback_of(context, "HTTP 500 after 3 attempts")
    assert len(double.requests) == 3 and engine.fallbacks == 1
    engine.generate(context)
    assert engine.fallbacks == 2


def test_client_error_is_not_retried(double: ChatDouble, engine: LLMEngine, context: GenerationContext) -> None:
    double.script(Reply(status=400))
    assert engine.generate(context) == fallback_of(context, "HTTP 400")
    assert len(double.requests) == 1


def test_slow_endpoint_times_out(double: ChatDouble, context: GenerationContext) -> None:
    double.script(Reply(candidates(MOVE), delay_s=1.0))
    with_timeout = LLMEngine(base_url=double.base_url, model="m", fallback=RuleEngine(), timeout_s=0.2,
                             max_retries=1, backoff_s=0.01)
    assert with_timeout.generate(context) == fallback_of(context, "timeout after 2 attempts")
    assert with_timeout.fallbacks == 1
    with_timeout.close()


def test_unreachable_endpoint_falls_back(context: GenerationContext) -> None:
    nobody = LLMEngine(base_url=f"http://127.0.0.1:{free_port()}/v1", model="m", fallback=RuleEngine(),
                       timeout_s=1.0, max_retries=0)
    assert nobody.generate(context) == fallback_of(context, "connection error (ConnectError) after 1 attempt")
    nobody.close()


@pytest.mark.parametrize(("content", "reason"), [
    ('{"candidates": [{"content": "Alex', "invalid JSON"),
    (candidates({**MOVE, "kind": "opinion"}), "schema violation at candidates.0.kind"),
    (candidates({**MOVE, "content": "  "}), "schema violation at candidates.0.content"),
    (candidates({**MOVE, "event_start_at": "next April"}), "schema violation at candidates.0.event_start_at"),
    ('{"memories": []}', "schema violation at candidates"),
])
def test_bad_answer_falls_back(double: ChatDouble, engine: LLMEngine, context: GenerationContext,
                               content: str, reason: str) -> None:
    double.script(Reply(content))
    got = engine.generate(context)
    assert got
    expected = RuleEngine().generate(context)
    assert [replace(c, reasons=c.reasons[:-1]) for c in got] == expected
    assert all(c.reasons[-1].startswith(f"llm-fallback: {reason}") for c in got)
    assert len(double.requests) == 1 and engine.fallbacks == 1


def test_empty_turn_sends_nothing(double: ChatDouble, engine: LLMEngine) -> None:
    double.script(Reply(candidates(MOVE)))
    assert engine.generate(contexts([("Alex", "   ")], START)[0]) == []
    assert double.requests == []


def test_settings_pick_the_engine(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert isinstance(generation_engine(Settings(home=home)), RuleEngine)
    llm = generation_engine(Settings(home=home, llm_provider="openai", llm_model="m",
                                     openai_base_url="http://127.0.0.1:9/v1", llm_max_retries=5, llm_timeout_s=3))
    assert isinstance(llm, LLMEngine) and isinstance(llm.fallback, RuleEngine)
    assert (llm.name, llm.model, llm.max_retries) == ("llm", "m", 5)
    llm.close()
    own = generation_engine(Settings(home=home, llm_provider="openai", llm_model="m",
                                     openai_base_url="http://embeddings/v1", llm_base_url="http://chat/v1"))
    assert isinstance(own, LLMEngine) and str(own._client.base_url) == "http://chat/v1/"
    own.close()


@pytest.mark.parametrize("settings", [
    {"llm_model": None, "openai_base_url": "http://127.0.0.1:9/v1"},
    {"llm_model": "m"},
])
def test_incomplete_llm_settings_are_a_config_error(tmp_path: Path, settings: dict) -> None:
    with pytest.raises(ConfigError, match="llm_provider 'openai' needs"):
        generation_engine(Settings(home=tmp_path, llm_provider="openai", **settings))
