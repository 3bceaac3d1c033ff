"""The review queue: a person lists the uncertain relationship decisions and accepts or rejects them.

Accepting applies the link the way an automatic decision would (an UPDATES supersedes its target,
in DuckDB and in the LanceDB index), recorded as decided by the user, in one commit."""

from __future__ import annotations

import pytest

from mnemoflow.errors import BadInputError
from mnemoflow.memory.generate.direct import draft_memory
from mnemoflow.models import LinkDraft, MemoryItem, ReviewItem
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.storage.test_memory_links import _links

SCOPE = Scope("acme", "lena")
SAME_TENANT = Scope("acme", "omar")
OTHER_TENANT = Scope("globex", "lena")


def _queued(service: MemoryService, scope: Scope = SCOPE) -> tuple[MemoryItem, MemoryItem, ReviewItem]:
    old, _ = service.store.write_memory(scope, draft_memory("Lena's standup is at 9:00"), actor="test")
    new, _ = service.store.write_memory(
        scope, draft_memory("Lena's standup is at 9:30"), actor="test",
        review=(LinkDraft("UPDATES", old.id, 0.7, "time changed, no change marker"),))
    [item] = service.review_items(scope)
    return old, new, item


def _commits(service: MemoryService, tenant: str = "acme") -> list[tuple[str, str]]:
    return service.store.sql("SELECT actor, message FROM commits WHERE tenant_id = ? ORDER BY seq", [tenant])[1]


def test_the_list_shows_the_queued_decision_with_both_memories(service: MemoryService) -> None:
    old, new, item = _queued(service)
    assert (item.src, item.dst, item.proposed_type, item.confidence) == (new.id, old.id, "UPDATES", 0.7)
    assert item.reason == "time changed, no change marker"
    assert item.src_content == "Lena's standup is at 9:30" and item.dst_content == "Lena's standup is at 9:00"
    assert item.status == "open" and item.decided_at is None and item.decided_by is None
    assert item.src_current and item.dst_current and item.applied_type is None
    assert service.review_items(SCOPE, status="accepted") == []
    assert [i.review_id for i in service.review_items(SCOPE, status="all")] == [item.review_id]
    with pytest.raises(BadInputError, match="status"):
        service.review_items(SCOPE, status="pending")


def test_accepting_an_update_supersedes_the_old_memory_everywhere(service: MemoryService) -> None:
    old, new, item = _queued(service)
    service.drain()
    before = _commits(service)
    decided = service.decide_review(SCOPE, item.review_id, True, actor="lena")

    assert decided.status == "accepted" and decided.decided_by == "user" and decided.decided_at is not None
    assert decided.applied_type == "UPDATES" and not decided.dst_current and decided.src_current
    assert _links(service) == {(new.id, old.id, "UPDATES", "user")}
    past = service.store.get_memory(SCOPE, old.id)
    assert past is not None and not past.is_latest and past.valid_to is not None
    assert service.store.sql("SELECT subject, predicate, object FROM relations")[1] == [(new.id, "supersedes", old.id)]
    assert [m.id for m in service.get_all(SCOPE)] == [new.id]
    # the LanceDB index knows too: its own search no longer offers the old version
    service.store.refresh_search_indexes()
    assert {h.id for h in service.store.bm25_search(SCOPE, "memories", "standup", 10)} == {new.id}
    ids = [i.id for i in service.recall(SCOPE, "when is Lena's standup?").items]
    assert new.id in ids and old.id not in ids
    after = _commits(service)
    assert len(after) == len(before) + 1
    actor, message = after[-1]
    assert actor == "lena" and item.review_id in message and "accepted" in message
    assert [(e.op, e.memory_id) for e in service.history(SCOPE, old.id) if e.memory_id == old.id] == [
        ("insert", old.id), ("update", old.id)]  # the memory's history (new's insert too), old's rows as before
    assert all(report.ok for report in service.verify("acme"))


def test_a_person_can_accept_it_as_another_relation(service: MemoryService) -> None:
    old, new, item = _queued(service)
    decided = service.decide_review(SCOPE, item.review_id, True, actor="lena", link_type="extends")
    assert decided.proposed_type == "UPDATES" and decided.applied_type == "EXTENDS"
    assert _links(service) == {(new.id, old.id, "EXTENDS", "user")}
    assert service.store.get_memory(SCOPE, old.id).is_latest
    assert {m.id for m in service.get_all(SCOPE)} == {old.id, new.id}
    assert service.store.sql("SELECT count(*) FROM relations")[1] == [(0,)]
    [listed] = service.review_items(SCOPE, status="accepted")
    assert listed.applied_type == "EXTENDS"
    with pytest.raises(BadInputError, match="link type must be one of"):
        service.decide_review(SCOPE, item.review_id, True, actor="lena", link_type="REPLACES")


def test_rejecting_leaves_both_memories_current_and_links_nothing(service: MemoryService) -> None:
    old, new, item = _queued(service)
    before = _commits(service)
    with pytest.raises(BadInputError, match="only when accepting"):
        service.decide_review(SCOPE, item.review_id, False, actor="lena", link_type="EXTENDS")
    decided = service.decide_review(SCOPE, item.review_id, False, actor="lena")
    assert decided.status == "rejected" and decided.decided_by == "user" and decided.applied_type is None
    assert _links(service) == set()
    assert {m.id for m in service.get_all(SCOPE)} == {old.id, new.id}
    assert service.store.get_memory(SCOPE, old.id).is_latest
    assert service.review_items(SCOPE) == []
    assert [i.review_id for i in service.review_items(SCOPE, status="rejected")] == [item.review_id]
    after = _commits(service)
    assert len(after) == len(before) + 1 and item.review_id in after[-1][1]
    assert all(report.ok for report in service.verify("acme"))


def test_a_decision_is_made_once(service: MemoryService) -> None:
    _, _, item = _queued(service)
    service.decide_review(SCOPE, item.review_id, True, actor="lena")
    commits = len(_commits(service))
    for accept in (True, False):
        with pytest.raises(BadInputError, match="already accepted"):
            service.decide_review(SCOPE, item.review_id, accept, actor="lena")
    assert len(_commits(service)) == commits


@pytest.mark.parametrize("intruder", [SAME_TENANT, OTHER_TENANT], ids=["same-tenant", "other-tenant"])
def test_another_scope_cannot_see_or_decide_it(service: MemoryService, intruder: Scope) -> None:
    old, _, item = _queued(service)
    service.store.write_memory(intruder, draft_memory("Omar's standup is at 10:00"), actor="test")
    assert service.review_items(intruder, status="all") == []
    for accept in (True, False):
        with pytest.raises(BadInputError) as foreign:
            service.decide_review(intruder, item.review_id, accept, actor="omar")
        with pytest.raises(BadInputError) as unknown:
            service.decide_review(intruder, "rev_0123456789abcdef", accept, actor="omar")
        assert str(foreign.value).replace(item.review_id, "ID") == str(unknown.value).replace(
            "rev_0123456789abcdef", "ID")
    [still] = service.review_items(SCOPE)
    assert still.status == "open" and service.store.get_memory(SCOPE, old.id).is_latest
    assert _links(service) == set()


def test_accepting_fails_once_a_memory_is_gone_or_superseded(service: MemoryService) -> None:
    old, new, item = _queued(service)
    newest, _ = service.store.write_memory(
        SCOPE, draft_memory("Lena's standup is at 10:00 from now on"), actor="test",
        links=(LinkDraft("UPDATES", old.id, 0.95, "explicit change"),))
    with pytest.raises(BadInputError, match=f"existing memory {old.id} has been superseded"):
        service.decide_review(SCOPE, item.review_id, True, actor="lena")
    assert service.review_items(SCOPE)[0].dst_current is False

    service.delete(SCOPE, new.id)
    with pytest.raises(BadInputError, match=f"new memory {new.id} has been deleted"):
        service.decide_review(SCOPE, item.review_id, True, actor="lena", link_type="RELATES_TO")
    assert _links(service) == {(newest.id, old.id, "UPDATES", "auto")}
    assert service.decide_review(SCOPE, item.review_id, False, actor="lena").status == "rejected"
