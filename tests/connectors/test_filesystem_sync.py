"""Incremental filesystem sync: add, change, touch and delete files between syncs; assert what changed."""

import os
import time
from pathlib import Path

import pytest

from mnemoflow.config import load_settings
from mnemoflow.errors import ConfigError
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

SCOPE = Scope("acme", "alex")


def _settings(tmp_path: Path, docs: Path):
    return load_settings(tmp_path / "home", sources={
        "notes": {"kind": "filesystem", "tenant_id": "acme", "user_id": "alex", "location": str(docs),
                  "globs": ["**/*.md", "**/*.txt"]}})


def _touch_later(path: Path) -> None:
    """Move the mtime forward so the listing sees a change even within the filesystem's clock tick."""
    stamp = time.time() + 5
    os.utime(path, (stamp, stamp))


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "team").mkdir(parents=True)
    (root / "team" / "oncall.md").write_text("# On-call\n\nThe on-call rotation changes every Monday at 10:00.\n")
    (root / "vpn.txt").write_text("The VPN endpoint is vpn.acme.example and needs the hardware key.\n")
    (root / "ignored.csv").write_text("a,b\n1,2\n")  # not matched by the globs
    return root


def test_sync_reads_only_what_changed_and_retires_what_is_gone(tmp_path: Path, docs: Path) -> None:
    with MemoryService(_settings(tmp_path, docs)) as service:
        first = service.sync("notes")
        assert (first.files_read, first.ingested.documents_changed, first.documents_deleted) == (2, 2, 0)
        vpn_chunk = service.recall(SCOPE, "vpn endpoint", k=1).items[0]
        memory, _ = service.add(SCOPE, "Alex keeps the VPN hardware key in the top drawer",
                                derived_from=[vpn_chunk.citations[0].document_id])
        kept, _ = service.add(SCOPE, "Alex prefers written on-call handovers")  # derived from nothing

        again = service.sync("notes")
        assert (again.files_read, again.ingested.documents_changed) == (0, 0)  # nothing touched, nothing read

        _touch_later(docs / "vpn.txt")  # touched, content unchanged: read, not rewritten
        touched = service.sync("notes")
        assert (touched.files_read, touched.files_unchanged, touched.ingested.documents_changed) == (1, 1, 0)

        (docs / "team" / "oncall.md").write_text("# On-call\n\nThe on-call rotation changes every Tuesday at 09:00.\n")
        _touch_later(docs / "team" / "oncall.md")
        (docs / "new.md").write_text("# Parking\n\nVisitor parking is behind building C.\n")
        changed = service.sync("notes")
        assert changed.files_read == 2
        assert (changed.ingested.documents_changed, changed.ingested.chunks_added,
                changed.ingested.chunks_removed) == (2, 2, 1)
        oncall = service.recall(SCOPE, "when does the on-call rotation change?", k=1).items[0].text
        assert "Tuesday" in oncall and "Monday" not in oncall

        (docs / "vpn.txt").unlink()
        gone = service.sync("notes")
        assert (gone.documents_deleted, gone.memories_deleted) == (1, 1)
        texts = [i.text for i in service.recall(SCOPE, "vpn hardware key", token_budget=4000).items]
        assert not any("vpn.acme" in t or "top drawer" in t for t in texts)
        assert service.store.get_memory(SCOPE, memory.id).deleted_at is not None
        assert service.store.get_memory(SCOPE, kept.id).deleted_at is None
        assert service.store.verify("acme").ok


def test_an_unknown_source_is_a_clear_error(tmp_path: Path, docs: Path) -> None:
    with MemoryService(_settings(tmp_path, docs)) as service, pytest.raises(ConfigError, match="no source named"):
        service.sync("nope")
