"""`mnemoflow eval scenarios`: every scenario through the real pipeline into one fresh store.

Each conversation is posted as agent events (landed by dlt, turns and chunks as in production),
then the generation worker drains them (the production path) with the engine under test and the
relationship step, writing through the store. Each scenario's tenants are prefixed with its id, so
scenarios never see each other; the produced memories, links and default recalls are then scored against the
scenario's expectations (`mnemoflow.eval.scenarios`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mnemoflow.eval.scenario_report import ScenarioReport, build_report
from mnemoflow.eval.scenario_scores import (
    ProducedLink,
    ProducedMemory,
    ScenarioRun,
    score_scenario,
)
from mnemoflow.eval.scenarios import Scenario
from mnemoflow.memory.generate.candidates import GenerationEngine
from mnemoflow.memory.worker import drain_generation
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

RECALL_BUDGET = 512


def _scope(scenario: Scenario, tenant_id: str, user_id: str) -> Scope:
    return Scope(f"{scenario.id}.{tenant_id}"[:128], user_id)


def run_scenario(service: MemoryService, scenario: Scenario, engine: GenerationEngine) -> ScenarioRun:
    scopes: dict[Scope, tuple[str, str]] = {}
    for conversation in scenario.conversations:
        scope = _scope(scenario, conversation.tenant_id, conversation.user_id)
        scopes[scope] = (conversation.tenant_id, conversation.user_id)
        service.post_events(scope, [t.model_dump() for t in conversation.turns], wait=False)
    drain_generation(service.store, service.embedder, engine)
    service.drain()
    memories: list[ProducedMemory] = []
    links: list[ProducedLink] = []
    for scope, (tenant_id, user_id) in scopes.items():
        cited = service.store.memory_source_turns(scope)
        for m in service.store.list_memories(scope, limit=10_000, include_inactive=True):
            if m.deleted_at is None:
                memories.append(ProducedMemory(memory_id=m.id, tenant_id=tenant_id, user_id=user_id, content=m.content,
                                               kind=m.kind, is_latest=m.is_latest,
                                               source_turn_ids=tuple(cited.get(m.id, ())),
                                               event_start_at=m.event_start_at))
        links += [ProducedLink(src, dst, kind) for src, kind, dst in service.store.memory_links(scope)]
    recalled = []
    for check in scenario.recall_checks:
        result = service.recall(_scope(scenario, check.tenant_id, check.user_id), check.query,
                                token_budget=RECALL_BUDGET)
        recalled.append([item.id for item in result.items if item.kind == "memory"])
    return ScenarioRun(memories=memories, links=links, recalled=recalled)


def run_scenarios(service: MemoryService, scenarios: Sequence[Scenario], engine: GenerationEngine,
                  on_done: Callable[[Scenario], None] | None = None,
                  config: Mapping[str, Any] | None = None) -> ScenarioReport:
    """Every scenario through the pipeline, scored; the report has the figures over all of them and
    per half of the suite (tune / check, `scenario_half`). `config` is recorded in the report."""
    results = []
    for scenario in scenarios:
        results.append(score_scenario(scenario, run_scenario(service, scenario, engine)))
        if on_done is not None:
            on_done(scenario)
    return build_report(results, engine=engine.name, config=config)
