"""A flag changed while a row's vector is computed (share, delete) is what the vector index holds after
the embedding job writes the vector: the job read the row before the change and must not put the old
flags back. Served, the worker embeds beside the requests that change flags."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from mnemoflow.embedding.worker import drain_embeddings
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.conftest import raw_vectors

OWNER = Scope("acme", "ana")


class FlagChangedWhileEmbedding:
    """The service's own embedder, which runs `change` once, after the job has read its rows."""

    def __init__(self, service: MemoryService, change: Callable[[], object]) -> None:
        self._embedder, self._change = service.embedder, change
        self.dim = service.embedder.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        self._change()
        self._change = lambda: None
        return self._embedder.embed(texts)


def index_row(service: MemoryService, memory_id: str) -> dict:
    service.store.refresh_search_indexes()
    table = raw_vectors(service.settings).open_table("memory_vectors")
    return table.search().where(f"memory_id = '{memory_id}'").to_list()[0]


def test_a_memory_shared_while_it_is_embedded_is_found_by_the_tenants_other_users(service: MemoryService) -> None:
    memory, _ = service.add(OWNER, "The amber ledger is filed under zqsharedmid", wait=False)
    embedder = FlagChangedWhileEmbedding(service, lambda: service.share(OWNER, memory.id))
    assert drain_embeddings(service.store, embedder).embedded == 1
    assert index_row(service, memory.id)["shared"] is True
    found = service.search(Scope("acme", "bo"), "filed under zqsharedmid")
    assert [m.id for m in found.results] == [memory.id]
    assert service.search(Scope("other", "bo"), "filed under zqsharedmid").results == []


def test_a_memory_deleted_while_it_is_embedded_stays_deleted_in_the_index(service: MemoryService) -> None:
    memory, _ = service.add(OWNER, "The slate ledger is filed under zqdeletedmid", wait=False)
    embedder = FlagChangedWhileEmbedding(service, lambda: service.delete(OWNER, memory.id))
    drain_embeddings(service.store, embedder)
    assert index_row(service, memory.id)["deleted"] is True


def test_a_shared_memory_stays_shared_while_a_new_model_embeds_it_again(service: MemoryService) -> None:
    """`reembed` writes every row again before its new vector: a shared memory is still the tenant's."""
    memory, _ = service.add(OWNER, "The teal ledger is filed under zqreembedded")
    service.share(OWNER, memory.id)
    assert service.store.reset_vectors_for_model() >= 1
    assert index_row(service, memory.id)["shared"] is True


def test_an_imported_shared_memory_is_shared_before_its_vector_is_written(service: MemoryService) -> None:
    memory, _ = service.add(OWNER, "The plum ledger is filed under zqimported")
    service.share(OWNER, memory.id)
    exported = service.export_memories("acme")
    service.delete_tenant("acme")
    assert service.import_memories(exported, wait=False).imported == 1
    assert index_row(service, memory.id)["shared"] is True
