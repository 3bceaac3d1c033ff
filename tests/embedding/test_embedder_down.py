"""Writes succeed while the embedder is down; the worker fills the vectors once it is back."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from mnemoflow.config import load_settings
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.conftest import turn, write_transcript
from tests.loopback import free_port
from tests.openai_double import OpenAIDouble

SCOPE = Scope("acme", "noor")


@pytest.fixture
def endpoint() -> Iterator[OpenAIDouble]:
    double = OpenAIDouble(free_port())
    yield double
    double.stop()


@pytest.fixture
def remote_service(tmp_path: Path, endpoint: OpenAIDouble) -> Iterator[MemoryService]:
    settings = load_settings(
        tmp_path / "home", embedding_provider="openai", openai_base_url=endpoint.base_url,
        embedding_model="all-MiniLM-L6-v2", embedding_dimensions=384, openai_timeout_s=2,
    )
    with MemoryService(settings) as service:
        yield service


def test_embedder_down_then_back(remote_service: MemoryService, endpoint: OpenAIDouble, tmp_path: Path) -> None:
    chat = write_transcript(tmp_path / "chat.jsonl", [
        turn("s", "1", "Noor", "2024-02-01T08:00:00Z", "My new bike is a green Brompton I bought in Lyon."),
        turn("s", "2", "Eli", "2024-02-01T08:01:00Z", "Nice! Did it fit on the train home?"),
    ])
    outcome = remote_service.ingest(SCOPE, [chat])  # endpoint not started: nothing listens
    assert outcome.report.turns_added == 2
    assert outcome.drain is not None and outcome.drain.unavailable
    memory, created = remote_service.add(SCOPE, "Noor cycles to work every day")
    assert created and memory.embedding_status == "pending"
    assert remote_service.store.counts(SCOPE)["pending_embeddings"] == 3
    # two chunks and a memory to embed, and the session's memory generation, which needs the embedder too
    assert remote_service.store.outbox_counts() == {"pending": 4}

    degraded = remote_service.recall(SCOPE, "Brompton bike")
    assert degraded.items and "Brompton" in degraded.items[0].text  # BM25 still answers
    assert degraded.warnings and "vector search skipped" in degraded.warnings[0]

    endpoint.start()
    report = remote_service.drain()
    assert report.generation is not None and report.generation.sessions == 1
    # two chunks, the direct memory and the generated ones (the worker's runs leave their vectors to
    # the embedding worker, which reuses the vectors generation cached for the candidates)
    assert report.generation.created >= 1
    assert (report.embedded + report.reused, report.unavailable) == (3 + report.generation.created, None)
    assert remote_service.store.counts(SCOPE)["pending_embeddings"] == 0
    assert remote_service.store.get_memory(SCOPE, memory.id).embedding_status == "done"

    found = remote_service.recall(SCOPE, "what bicycle does Noor own?", k=3)
    assert not found.warnings
    assert any("Brompton" in i.text and "vector" in i.scores for i in found.items)
    commute = remote_service.recall(SCOPE, "how does Noor get to the office?", k=1)
    assert commute.items[0].id == memory.id and "vector" in commute.items[0].scores


def test_unchanged_content_is_never_embedded_twice(remote_service: MemoryService, endpoint: OpenAIDouble,
                                                   tmp_path: Path) -> None:
    endpoint.start()
    chat = write_transcript(tmp_path / "chat.jsonl", [
        turn("s", "1", "Noor", "2024-02-01T08:00:00Z", "The lease on the studio ends in June."),
    ])
    remote_service.ingest(SCOPE, [chat])
    # the turn, and the memory generated from it (embedded once, to find its neighbours; the
    # embedding worker reuses that vector)
    assert len(remote_service.store.list_memories(SCOPE)) == 1
    assert endpoint.texts_embedded == 2
    remote_service.ingest(SCOPE, [chat])
    chat.write_text(chat.read_text())  # touched, unchanged
    remote_service.ingest(SCOPE, [chat])
    assert endpoint.texts_embedded == 2
    # the same content written for another user reuses the cached vectors
    remote_service.ingest(Scope("acme", "eli"), [chat])
    assert endpoint.texts_embedded == 2
    assert remote_service.store.counts(Scope("acme", "eli"))["pending_embeddings"] == 0


def test_a_model_change_is_a_reembed_tracked_per_row(endpoint: OpenAIDouble, tmp_path: Path) -> None:
    """Local MiniLM first; then an endpoint serving another model: reembed rebuilds every vector."""
    from mnemoflow.errors import ConfigError

    home = tmp_path / "home"
    with MemoryService(load_settings(home)) as local:
        local.add(SCOPE, "Noor's favourite ferry leaves Ghent at 7")
        assert local.store.get_memory(SCOPE, local.get_all(SCOPE)[0].id).embedding_status == "done"
    endpoint.start()
    remote = load_settings(home, embedding_provider="openai", openai_base_url=endpoint.base_url,
                           embedding_model="minilm-served", embedding_dimensions=384)
    with MemoryService(remote) as service:
        with pytest.raises(ConfigError, match="mnemoflow reembed"):
            service.recall(SCOPE, "ferry")
        queued, report = service.reembed()
        assert (queued, report.embedded) == (1, 1)
        memory = service.get_all(SCOPE)[0]
        assert memory.embedding_status == "done"
        assert service.store.sql("SELECT embedding_model FROM memories")[1] == [("minilm-served",)]
        hit = service.recall(SCOPE, "when does the boat leave?", k=1).items[0]
        assert "ferry" in hit.text and "vector" in hit.scores


def test_a_reembed_under_the_same_model_rebuilds_every_vector(tmp_path: Path) -> None:
    """The path an upgrade takes when a vector table's schema changed: same model, jobs that already ran."""
    with MemoryService(load_settings(tmp_path / "home")) as service:
        service.add(SCOPE, "Noor's favourite ferry leaves Ghent at 7")
        queued, report = service.reembed()
        assert (queued, report.embedded + report.reused) == (1, 1)
        assert service.get_all(SCOPE)[0].embedding_status == "done"
        assert "vector" in service.recall(SCOPE, "when does the boat leave?", k=1).items[0].scores


def test_a_verbatim_add_while_the_embedder_is_down_waits_for_its_vector(remote_service: MemoryService,
                                                                        endpoint: OpenAIDouble) -> None:
    added = remote_service.add_messages(SCOPE, [{"role": "user", "content": "Noor keeps bees on the roof"}],
                                        infer=False)
    [event] = added.results
    assert event.event == "ADD" and added.memory is not None and added.memory.embedding_status == "pending"
    assert remote_service.recall(SCOPE, "bees").items[0].id == event.id  # BM25 answers meanwhile
    endpoint.start()
    remote_service.drain()
    assert remote_service.store.get_memory(SCOPE, event.id).embedding_status == "done"
    assert remote_service.recall(SCOPE, "does Noor have any insects?", k=1).items[0].id == event.id
