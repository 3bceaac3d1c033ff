"""Lifecycle commands as a user meets them: pin, share, and tenant deletion with its confirmation."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoflow.cli import main
from tests.test_cli import run


def _add(capsys: pytest.CaptureFixture[str], home: str, text: str, *scope: str) -> str:
    code, out, _ = run(capsys, "add", text, "--home", home, *scope)
    assert code == 0
    return out.split()[1]


def test_pin_and_share(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    home = str(tmp_path / "h")
    memory_id = _add(capsys, home, "Ines keeps the team calendar up to date", "--user", "ines")
    assert run(capsys, "pin", memory_id, "--home", home, "--user", "ines")[1].startswith(f"pinned {memory_id}")
    assert run(capsys, "pin", memory_id, "--home", home, "--user", "ines", "--unpin")[1].startswith("unpinned")
    assert run(capsys, "pin", memory_id, "--home", home, "--user", "someone-else")[0] == 1  # not theirs
    code, out, _ = run(capsys, "recall", "team calendar", "--home", home, "--user", "sam", "--json")
    assert memory_id not in out
    assert run(capsys, "share", memory_id, "--home", home, "--user", "ines")[0] == 0
    code, out, _ = run(capsys, "recall", "team calendar", "--home", home, "--user", "sam", "--json")
    assert memory_id in out  # shared with every user of the tenant
    code, out, _ = run(capsys, "recall", "team calendar", "--home", home, "--tenant", "other", "--user", "sam",
                       "--json")
    assert memory_id not in out  # never with another tenant
    history = run(capsys, "history", memory_id, "--home", home, "--user", "ines")[1]
    assert [line.split()[2] for line in history.splitlines()] == ["insert", "update", "update", "update"]


def test_tenant_delete_asks_refuses_bad_ids_and_deletes(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    home = str(tmp_path / "h")
    memory_id = _add(capsys, home, "Ines keeps the team calendar up to date", "--tenant", "acme", "--user", "ines")
    for bad in ("bad tenant", "nobody-here"):
        code, _, err = run(capsys, "tenant", "delete", bad, "--home", home, "--yes")
        assert code == 2 and err.count("\n") == 1 and err.startswith("mnemoflow: ")
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("n\n"))
    with pytest.raises(SystemExit) as declined:
        main(["tenant", "delete", "acme", "--home", home])
    assert declined.value.code != 0
    assert memory_id in run(capsys, "recall", "calendar", "--home", home, "--tenant", "acme", "--user", "ines",
                            "--json")[1]
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("y\n"))
    code, out, _ = run(capsys, "tenant", "delete", "acme", "--home", home)
    assert code == 0 and "deleted tenant acme" in out and "1 memories" in out
    assert run(capsys, "recall", "calendar", "--home", home, "--tenant", "acme", "--user", "ines", "--json")[1] \
        .startswith('{"items": []')
    code, out, _ = run(capsys, "verify", "--home", home)
    assert code == 0 and "acme:" in out and ": ok" in out
