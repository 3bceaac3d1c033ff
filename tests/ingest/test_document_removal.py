"""Documents can be removed: a folder ingested again retires the documents of its files that are gone
(their chunks, vectors and the memories drawn only from them, as a sync does), `forget doc_...` removes
one on every interface, and ingesting a path that is gone is one clear line."""

from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client

from mnemoflow.api.http import create_app
from mnemoflow.api.mcp import build_mcp
from mnemoflow.cli import main
from mnemoflow.config import load_settings
from mnemoflow.errors import NotFoundError
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.conftest import turn, write_transcript

OWNER = Scope("acme", "wren")
BOILER = "# Boiler\n\nThe boiler engineer comes every March and the service code is 5521.\n"
GARDEN = "# Garden\n\nThe shed key hangs on the hook behind the pantry door.\n"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "house"
    folder.mkdir()
    (folder / "boiler.md").write_text(BOILER)
    (folder / "garden.md").write_text(GARDEN)
    write_transcript(folder / "allotment.jsonl", [
        turn("plots", "1", "Wren", "2025-04-02T18:00:00Z", "I moved my allotment plot to Fernhill last spring.")])
    return folder


def _cited_uris(service: MemoryService, query: str) -> set[str]:
    return {c.uri or "" for item in service.recall(OWNER, query).items for c in item.citations}


def test_a_folder_ingested_again_retires_the_files_that_are_gone(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    with MemoryService(load_settings(tmp_path / "home", retention_days=0)) as service:
        first = service.ingest(OWNER, [folder]).report
        assert first.documents_changed == 3 and first.documents_retired == 0
        assert (folder / "boiler.md").resolve().as_uri() in _cited_uris(service, "boiler service code")
        assert any("Fernhill" in m.content for m in service.get_all(OWNER))

        (folder / "boiler.md").unlink()
        (folder / "allotment.jsonl").unlink()
        again = service.ingest(OWNER, [folder]).report
        assert (again.documents_retired, again.memories_retired) == (2, 1) and not again.errors

        recalled = service.recall(OWNER, "boiler service code 5521")
        assert "5521" not in recalled.context and "Fernhill" not in service.recall(OWNER, "allotment plot").context
        assert not any("Fernhill" in m.content for m in service.get_all(OWNER))
        assert (folder / "garden.md").resolve().as_uri() in _cited_uris(service, "where is the shed key?")
        assert all(r.ok for r in service.verify())
        assert service.ingest(OWNER, [folder]).report.documents_retired == 0  # nothing more to retire
        service.maintain("decay")  # retention 0: the retired rows go for good
        assert service.sql("SELECT count(*) FROM chunks WHERE text LIKE '%5521%'").rows == [[0]]
        assert all(r.ok for r in service.verify())


def test_forget_takes_a_document_id_on_every_interface(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    notes = tmp_path / "notes"
    notes.mkdir()
    for name in ("python", "http", "mcp", "cli"):
        (notes / f"{name}.md").write_text(f"# {name}\n\nThe {name} locker combination is 80{len(name)}4.\n")
    mail = EmailMessage()
    mail["Subject"], mail["From"], mail["To"] = "Locker", "wren@example.com", "sam@example.com"
    mail.set_content("The spare locker key is with reception.")
    mail.add_attachment(b"The attachment says the locker room closes at 22:00.", maintype="text", subtype="plain",
                        filename="hours.txt")
    (notes / "locker.eml").write_bytes(mail.as_bytes())
    with MemoryService(load_settings(home)) as service:
        service.ingest(OWNER, [notes])
        docs = {Path(uri).name.split("#")[0] + ("#" if "#" in uri else ""): doc for uri, (doc, _) in
                service.store.documents_under(OWNER, "filesystem", notes.resolve().as_uri()).items()}
        assert len(docs) == 6  # five files, one attachment

        gone = service.delete(OWNER, docs["locker.eml"]).deleted  # Python (the service every interface calls)
        assert gone == [docs["locker.eml"], docs["locker.eml#"]]  # the mail and its attachment
        assert "22:00" not in service.recall(OWNER, "when does the locker room close?").context
        with pytest.raises(NotFoundError, match="no document"):
            service.delete(OWNER, docs["locker.eml"])
        service.delete(OWNER, docs["python.md"])

        key = service.create_api_key("acme")[1]
        http = TestClient(create_app(service), headers={"Authorization": f"Bearer {key}"})
        assert http.delete(f"/v1/memories/{docs['http.md']}", params={"user_id": "wren"}).status_code == 204
        assert http.delete(f"/v1/memories/{docs['http.md']}", params={"user_id": "wren"}).status_code == 404
        assert http.delete(f"/v1/memories/{docs['cli.md']}", params={"user_id": "sam"}).status_code == 404

        async def over_mcp() -> None:
            async with Client(build_mcp(service, scope=OWNER)) as client:
                assert not (await client.call_tool("forget", {"memory_id": docs["mcp.md"]})).is_error

        anyio.run(over_mcp)
    with pytest.raises(SystemExit) as cli:
        main(["forget", docs["cli.md"], "--home", str(home), "--tenant", "acme", "--user", "wren"])
    assert cli.value.code == 0 and docs["cli.md"] in capsys.readouterr().out
    with MemoryService(load_settings(home)) as service:
        for name in ("python", "http", "mcp", "cli"):
            assert f"80{len(name)}4" not in service.recall(OWNER, f"{name} locker combination").context
        assert service.counts(OWNER)["documents"] == 0
        again = service.ingest(OWNER, [notes / "http.md"]).report  # asked for again: it comes back
        assert again.documents_changed == 1 and "8044" in service.recall(OWNER, "http locker combination").context
        assert all(r.ok for r in service.verify())


def test_ingesting_a_path_that_is_gone_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _folder(tmp_path)
    home = tmp_path / "home"
    with MemoryService(load_settings(home)) as service:
        service.ingest(OWNER, [folder])
        (folder / "boiler.md").unlink()
        [error] = service.ingest(OWNER, [folder / "boiler.md"]).report.errors
        assert "no such file or directory" in error.reason and "still held from it: doc_" in error.reason
    with pytest.raises(SystemExit) as cli:
        main(["ingest", str(folder / "boiler.md"), "--home", str(home), "--tenant", "acme", "--user", "wren"])
    said = capsys.readouterr().err.strip()
    assert cli.value.code == 2 and said.count("\n") == 0 and "boiler.md: no such file or directory" in said
    assert "Traceback" not in said
