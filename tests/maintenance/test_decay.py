"""The decay job on a real store: archiving (out of default recall, in history, marked), immunity,
accesses, expiry, hard deletion after the retention period, and deleted tenants purged."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from mnemoflow.config import load_settings
from mnemoflow.errors import NotFoundError
from mnemoflow.recall import RecallFilters
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.timeutil import utcnow
from tests.conftest import plant, turn, write_transcript

SCOPE = Scope("acme", "alex")
PLAIN = "Alex parks the grey company van behind the old bakery on weekdays"
SALIENT = "Remember: we decided the 2025 travel budget is $4000 and the deadline is Friday"
PINNED = "Alex waters the fern in the meeting room every other morning before standup"


def _age(service: MemoryService, days: int, *ids: str) -> None:
    """As if the store had learnt these memories `days` ago and nobody had recalled them since."""
    plant(service, f"UPDATE memories SET created_at = created_at - INTERVAL {days} DAY, last_accessed_at = NULL "
          "WHERE list_contains(?, memory_id)", [list(ids)])


def _ids(service: MemoryService, query: str, *, history: bool = False) -> list[str]:
    result = service.recall(SCOPE, query, token_budget=4000, filters=RecallFilters(include_history=history))
    return [i.id for i in result.items]


@pytest.mark.parametrize("engine", ["lancedb", "duckdb"])
def test_decay_archives_unused_memories_out_of_default_recall_and_keeps_them_in_history(
        tmp_path: Path, engine: str) -> None:
    with MemoryService(load_settings(tmp_path / "home", bm25_engine=engine, recall_track_access=False)) as service:
        plain, _ = service.add(SCOPE, PLAIN)
        salient, _ = service.add(SCOPE, SALIENT)
        pinned, _ = service.add(SCOPE, PINNED)
        assert salient.salience >= service.settings.decay_immune_salience > plain.salience
        service.pin(SCOPE, pinned.id)
        _age(service, 400, plain.id, salient.id, pinned.id)

        report = service.maintain("decay")
        assert report.ok and report.counts["scored"] == 3 and report.counts["archived"] == 1
        archived = service.get(SCOPE, plain.id)
        assert archived.archived_at is not None and service.get(SCOPE, salient.id).archived_at is None
        assert service.get(SCOPE, pinned.id).archived_at is None

        # out of every default path: recall, search, get_all, and the searches' own prefilters
        assert plain.id not in _ids(service, "where is the grey van parked")
        assert plain.id not in [m.id for m in service.search(SCOPE, "grey van bakery")]
        assert plain.id not in [m.id for m in service.get_all(SCOPE)]
        vector = service.embedder.embed_query("grey van behind the bakery")
        assert plain.id not in [h.id for h in service.store.vector_search(SCOPE, "memories", vector, 10)]
        assert plain.id not in [h.id for h in service.store.bm25_search(SCOPE, "memories", "bakery van", 10)]

        # in history, marked
        found = service.recall(SCOPE, "where is the grey van parked", token_budget=4000,
                               filters=RecallFilters(include_history=True))
        item = next(i for i in found.items if i.id == plain.id)
        assert item.scores["history"] == 1.0 and "archived" in item.why and "archived" in item.text
        assert [e.op for e in service.history(SCOPE, plain.id)] == ["insert", "archive"]

        # pinning brings it back, and decay leaves it alone from then on
        service.pin(SCOPE, plain.id)
        assert plain.id in _ids(service, "where is the grey van parked")
        assert service.maintain("decay").counts.get("archived", 0) == 0
        assert all(report.ok for report in service.verify())


def test_recall_counts_accesses_written_together_and_a_used_memory_lasts(tmp_path: Path) -> None:
    def accesses(service: MemoryService) -> dict[str, tuple]:
        return {r[0]: r[1:] for r in service.store.sql("SELECT memory_id, access_count, last_accessed_at "
                                                        "FROM memories")[1]}

    with MemoryService(load_settings(tmp_path / "home", recall_access_flush_s=3600)) as service:
        used, _ = service.add(SCOPE, PLAIN)
        unused, _ = service.add(SCOPE, "Alex keeps spare umbrellas in the cupboard next to the lifts")
        _age(service, 400, used.id, unused.id)
        service.recall(SCOPE, "grey van bakery", k=1)
        service.recall(SCOPE, "grey van bakery", k=1)
        assert accesses(service)[used.id] == (0, None)  # waiting in memory, not a commit per recall
        service.close()  # closing the store writes them
        assert accesses(service)[used.id][0] == 2 and accesses(service)[unused.id] == (0, None)
        assert accesses(service)[used.id][1] > utcnow() - timedelta(minutes=1)

        service.recall(SCOPE, "grey van bakery", k=1)
        report = service.maintain("decay")  # decay writes what waits before it reads
        assert accesses(service)[used.id][0] == 3
        assert report.counts["archived"] == 1
        assert service.get(SCOPE, unused.id).archived_at is not None and service.get(SCOPE, used.id).archived_at is None


def test_accesses_are_written_with_every_recall_when_asked(tmp_path: Path) -> None:
    with MemoryService(load_settings(tmp_path / "home", recall_access_flush_s=0)) as service:
        memory, _ = service.add(SCOPE, PLAIN)
        service.recall(SCOPE, "grey van bakery", k=1)
        assert service.store.sql("SELECT access_count FROM memories")[1] == [(1,)]


def test_counting_accesses_can_be_switched_off(tmp_path: Path) -> None:
    with MemoryService(load_settings(tmp_path / "home", recall_track_access=False)) as service:
        memory, _ = service.add(SCOPE, PLAIN)
        assert _ids(service, "grey van") == [memory.id]
        assert service.store.sql("SELECT access_count, last_accessed_at FROM memories")[1] == [(0, None)]


def test_memories_naming_hot_entities_carry_their_heat(tmp_path: Path) -> None:
    chat = write_transcript(tmp_path / "chat.jsonl", [
        turn("s1", "1", "Maya", "2025-01-06T09:00:00Z", "I moved to Porto last month."),
        turn("s1", "2", "Maya", "2025-01-06T09:01:00Z", "I started running along the river in Porto every morning."),
        turn("s1", "3", "Maya", "2025-01-06T09:02:00Z", "My sister Ines visits me in Porto in March."),
    ])
    with MemoryService(load_settings(tmp_path / "home")) as service:
        service.ingest(SCOPE, [chat])
        inputs = service.store.decay_inputs("acme")
        assert inputs and all(i.heat > 0 for i in inputs)  # every memory names Maya (or Porto), mentioned thrice
        assert max(i.heat for i in inputs) >= 2


def test_the_expired_are_swept_into_the_archive_as_of_their_expiry(tmp_path: Path) -> None:
    with MemoryService(load_settings(tmp_path / "home")) as service:
        ends = utcnow() - timedelta(hours=1)
        expired, _ = service.add(SCOPE, "The office wifi password is tulip-42 until the end of the audit",
                                 expires_at=ends)
        report = service.maintain("decay")
        assert report.counts["expired"] == 1 and service.get(SCOPE, expired.id).archived_at == ends
        assert [e.op for e in service.history(SCOPE, expired.id)] == ["insert", "expire"]


def test_what_was_deleted_or_archived_longer_ago_than_the_retention_period_is_purged(tmp_path: Path) -> None:
    with MemoryService(load_settings(tmp_path / "home", retention_days=30)) as service:
        old, _ = service.add(SCOPE, PLAIN)
        recent, _ = service.add(SCOPE, "Alex keeps spare umbrellas in the cupboard next to the lifts")
        archived, _ = service.add(SCOPE, "The canteen serves vegetarian lasagne on the first Tuesday")
        service.delete(SCOPE, old.id)
        service.delete(SCOPE, recent.id)
        _age(service, 400, archived.id)
        assert service.maintain("decay").counts["archived"] == 1
        plant(service, "UPDATE memories SET deleted_at = deleted_at - INTERVAL 31 DAY WHERE memory_id = ?", [old.id])
        plant(service, "UPDATE memories SET archived_at = archived_at - INTERVAL 31 DAY WHERE memory_id = ?",
              [archived.id])

        report = service.maintain("decay")
        assert report.counts["purged memories"] == 2 and report.counts["purged memory_vectors"] == 2
        held = {r[0] for r in service.store.sql("SELECT memory_id FROM memories")[1]}
        assert held == {recent.id}  # deleted yesterday: kept until its retention period ends
        for gone in (old.id, archived.id):
            with pytest.raises(NotFoundError):
                service.history(SCOPE, gone)
        purge = service.store.sql("SELECT message, diff_json FROM commits ORDER BY seq DESC LIMIT 1")[1][0]
        assert purge[0].startswith("purge") and old.id in purge[1] and archived.id in purge[1]
        assert all(r.ok for r in service.verify())


def test_a_tenant_deletion_that_stopped_before_its_purge_is_finished_by_decay(tmp_path: Path) -> None:
    with MemoryService(load_settings(tmp_path / "home")) as service:
        service.add(SCOPE, PLAIN)
        service.add(Scope("globex", "kim"), PLAIN)
        service.store.delete_tenant("acme", actor="test")  # the soft half only, as if the process died after it
        assert service.get_all(SCOPE).results == [] and _ids(service, "grey van") == []
        assert service.store.tenants_awaiting_purge() == ["acme"]
        report = service.maintain("decay")
        assert report.counts["tenants purged"] == 1
        assert service.store.tenants_awaiting_purge() == []
        assert service.store.sql("SELECT tenant_id FROM memories")[1] == [("globex",)]
        assert all(r.ok for r in service.verify())
