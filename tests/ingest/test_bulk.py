"""Bulk work on Dask through Prefect's Dask task runner: the documents are extracted, chunked and embedded
on the workers and written by the flow, whose embedding jobs then reuse every vector; a re-embedding spreads
its model calls over the workers; a backfill generates memories for conversations read with generation off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemoflow.config import load_settings
from mnemoflow.flows.bulk import backfill_flow, bulk_ingest_flow, reembed_flow, run_bulk
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

pytestmark = pytest.mark.slow
SCOPE = Scope("acme", "ines")


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "share"
    folder.mkdir()
    for n in range(7):
        (folder / f"site-{n}.md").write_text(
            f"# Site visit {n}\n\nThe crane at yard {n} was inspected on Monday. Its service tag reads "
            f"ORCHID-{n}.\n\n## Follow-up\n\nReplace the hoist cable at yard {n} before the winter.\n")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    chat = [{"session_id": "s1", "turn_id": f"t{n}", "speaker": "Ines", "ts": "2026-03-02T09:00:00",
             "text": text} for n, text in enumerate(["I moved to Leeds last week.", "My bike is a red Brompton."])]
    (folder / "chat.jsonl").write_text("".join(json.dumps(t) + "\n" for t in chat))
    return folder


def test_bulk_ingest_reembed_and_backfill_on_a_local_dask_cluster(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOFLOW_GENERATE_MEMORIES", "false")  # the flows read the settings of their home
    settings = load_settings(tmp_path / "home")
    folder = _folder(tmp_path)
    outcome = run_bulk(bulk_ingest_flow, settings, 2, paths=[str(folder)], tenant_id=SCOPE.tenant_id,
                       user_id=SCOPE.user_id)
    assert [e.uri.rsplit("/", 1)[1] for e in outcome.report.errors] == ["broken.pdf"]
    assert outcome.drain is not None and outcome.drain.embedded == 2  # the chat's two turns, embedded here
    assert outcome.drain.reused == outcome.report.chunks_added - 2  # every document chunk came with its vector
    with MemoryService(settings) as service:
        hits = service.recall(SCOPE, "service tag of the crane at yard 4").items
        assert hits and "ORCHID-4" in hits[0].text
        assert service.get_all(SCOPE).results == []  # generation was off

    result = run_bulk(reembed_flow, settings, 2)
    assert result["queued"] == outcome.report.chunks_added and result["embedded"] + result["reused"] == result["queued"]

    monkeypatch.setenv("MNEMOFLOW_GENERATE_MEMORIES", "true")
    generated = backfill_flow.fn(tenant_id=SCOPE.tenant_id, home=str(settings.home), workers=1)
    assert generated["queued"] == 1 and generated["created"] >= 1
    with MemoryService(settings) as service:
        assert any("Leeds" in m.content for m in service.get_all(SCOPE).results)
        assert backfill_flow.fn(tenant_id=SCOPE.tenant_id, home=str(settings.home), workers=1)["queued"] == 0
