"""Decided relationships land in one commit: an update supersedes, reviews wait, repeats reinforce."""

from __future__ import annotations

import pytest

from mnemoflow.errors import BadInputError
from mnemoflow.memory.generate.direct import draft_memory
from mnemoflow.models import LinkDraft
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

SCOPE = Scope("acme", "lena")
OTHER = Scope("acme", "omar")


def _links(service: MemoryService) -> set[tuple[str, str, str, str]]:
    return set(service.store.sql("SELECT src, dst, type, decided_by FROM memory_links WHERE type <> 'EXTRACTED_FROM'")[1])


def test_an_update_supersedes_the_old_version_and_recall_shows_only_the_new(service: MemoryService) -> None:
    old, _ = service.store.write_memory(SCOPE, draft_memory("Lena lives in Hamburg"), actor="test")
    new, created = service.store.write_memory(
        SCOPE, draft_memory("Lena lives in Munich now"), actor="test",
        links=(LinkDraft("UPDATES", old.id, 0.93, "same slot 'lives in', new value"),))
    assert created
    assert _links(service) == {(new.id, old.id, "UPDATES", "auto")}
    past = service.store.get_memory(SCOPE, old.id)
    assert past is not None and not past.is_latest and past.valid_to is not None
    assert service.store.sql("SELECT subject, predicate, object FROM relations")[1] == [(new.id, "supersedes", old.id)]
    service.drain()
    service.store.refresh_search_indexes()
    ids = [item.id for item in service.recall(SCOPE, "where does Lena live?").items]
    assert new.id in ids and old.id not in ids
    assert all(report.ok for report in service.verify("acme"))


def test_uncertain_decisions_wait_for_review_and_change_nothing(service: MemoryService) -> None:
    old, _ = service.store.write_memory(SCOPE, draft_memory("Lena's standup is at 9:00"), actor="test")
    new, _ = service.store.write_memory(
        SCOPE, draft_memory("Lena's standup is at 9:30"), actor="test",
        review=(LinkDraft("UPDATES", old.id, 0.7, "time changed, no change marker"),))
    assert _links(service) == set()
    assert service.store.get_memory(SCOPE, old.id).is_latest
    assert service.store.sql("SELECT src, dst, proposed_type, status FROM review_queue")[1] == [
        (new.id, old.id, "UPDATES", "open")]


def test_a_link_never_reaches_another_users_memory(service: MemoryService) -> None:
    theirs, _ = service.store.write_memory(OTHER, draft_memory("Omar lives in Porto"), actor="test")
    with pytest.raises(BadInputError, match="does not hold"):
        service.store.write_memory(SCOPE, draft_memory("Lena lives in Porto"), actor="test",
                                   links=(LinkDraft("UPDATES", theirs.id, 0.99, "x"),))
    assert service.store.get_memory(OTHER, theirs.id).is_latest
    assert service.store.list_memories(SCOPE) == []


def test_a_repeat_reinforces_instead_of_copying(service: MemoryService) -> None:
    memory, _ = service.store.write_memory(SCOPE, draft_memory("Lena is allergic to peanuts"), actor="test")
    assert service.store.reinforce_memory(SCOPE, memory.id, (), actor="test")
    assert not service.store.reinforce_memory(OTHER, memory.id, (), actor="test")
    assert service.store.sql("SELECT reinforcement FROM memories")[1] == [(1,)]
    assert len(service.store.list_memories(SCOPE)) == 1
