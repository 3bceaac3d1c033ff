"""`mnemoflow review`: list, accept (optionally as another relation) and reject queued decisions."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoflow.config import load_settings
from mnemoflow.memory.generate.direct import draft_memory
from mnemoflow.models import LinkDraft
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.test_cli import run

SCOPE = Scope("acme", "lena")


@pytest.fixture
def queued(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[str], str, str]:
    """A home with two open reviews for acme/lena: (home, review ids, new memory id, old memory id)."""
    monkeypatch.setenv("COLUMNS", "400")  # one table row per line, whatever the terminal
    home = tmp_path / "h"
    with MemoryService(load_settings(home)) as service:
        old, _ = service.store.write_memory(SCOPE, draft_memory("Lena's standup is at 9:00"), actor="test")
        new, _ = service.store.write_memory(
            SCOPE, draft_memory("Lena's standup is at 9:30"), actor="test",
            review=(LinkDraft("UPDATES", old.id, 0.7, "time changed, no change marker"),))
        team, _ = service.store.write_memory(SCOPE, draft_memory("Lena works on the billing team"), actor="test")
        service.store.write_memory(
            SCOPE, draft_memory("Lena leads the billing team since May"), actor="test",
            review=(LinkDraft("UPDATES", team.id, 0.6, "same subject, role changed"),))
        ids = [item.review_id for item in service.review_items(SCOPE)]
    return str(home), ids, new.id, old.id


def _who(home: str, user: str = "lena") -> list[str]:
    return ["--home", home, "--tenant", "acme", "--user", user]


def _one_line_error(err: str) -> None:
    assert err.count("\n") == 1 and err.startswith("mnemoflow: ") and "Traceback" not in err


def test_list_shows_what_to_judge(capsys: pytest.CaptureFixture[str], queued: tuple) -> None:
    home, ids, _, _ = queued
    code, out, err = run(capsys, "review", "list", *_who(home))
    assert code == 0, err
    for text in (*ids, "UPDATES", "0.70", "0.60", "time changed, no change marker", "Lena's standup is at 9:30",
                 "Lena's standup is at 9:00", "Lena leads the billing team since May"):
        assert text in out
    code, out, _ = run(capsys, "review", "list", *_who(home, "omar"))
    assert code == 0 and "no open reviews" in out and ids[0] not in out


def test_list_as_json_gives_each_review_with_both_memories(capsys: pytest.CaptureFixture[str], queued: tuple) -> None:
    """For scripts: one JSON list, each review with its ids, proposal and both memories; another user's is []."""
    import json

    home, ids, new_id, old_id = queued
    code, out, err = run(capsys, "review", "list", "--json", *_who(home))
    assert code == 0, err
    listed = json.loads(out)
    assert [r["review_id"] for r in listed] == ids
    first = listed[0]
    assert (first["src"], first["dst"], first["proposed_type"], first["confidence"], first["status"]) == \
        (new_id, old_id, "UPDATES", 0.7, "open")
    assert (first["src_content"], first["dst_content"]) == ("Lena's standup is at 9:30", "Lena's standup is at 9:00")
    assert json.loads(run(capsys, "review", "list", "--json", *_who(home, "omar"))[1]) == []


def test_accept_as_another_type_then_reject(capsys: pytest.CaptureFixture[str], queued: tuple) -> None:
    home, (first, second), new_id, old_id = queued
    code, out, err = run(capsys, "review", "accept", first, "--as", "extends", *_who(home))
    assert code == 0, err
    assert out.strip() == f"accepted {first}: {new_id} EXTENDS {old_id}"
    code, out, err = run(capsys, "review", "reject", second, *_who(home))
    assert code == 0 and out.strip() == f"rejected {second}"

    assert "no open reviews" in run(capsys, "review", "list", *_who(home))[1]
    code, out, _ = run(capsys, "review", "list", "--status", "all", *_who(home))
    assert "accepted as EXTENDS" in out and "rejected" in out and first in out and second in out
    code, out, _ = run(capsys, "review", "list", "--status", "rejected", *_who(home))
    assert second in out and first not in out

    code, _, err = run(capsys, "review", "accept", first, *_who(home))
    assert code == 1 and "already accepted" in err
    _one_line_error(err)
    assert run(capsys, "verify", "--home", home)[0] == 0


def test_accept_updates_retires_the_old_memory(capsys: pytest.CaptureFixture[str], queued: tuple) -> None:
    home, (first, _), new_id, old_id = queued
    code, out, err = run(capsys, "review", "accept", first, *_who(home))
    assert code == 0 and out.strip() == f"accepted {first}: {new_id} UPDATES {old_id}", err
    code, out, _ = run(capsys, "history", old_id, *_who(home))
    # one line of versions now: the old memory's insert, the new one's, and the update joining them
    assert [line.split()[2] for line in out.strip().splitlines()] == ["insert", "insert", "update"]
    assert f"(version {new_id})" in out.splitlines()[1]
    assert "  UPDATE: " in out.splitlines()[2] and "(was: " in out.splitlines()[2]  # the texts, new and old


@pytest.mark.parametrize(("args", "code"), [
    (["review", "accept", "rev_doesnotexist"], 1),
    (["review", "reject", "rev_doesnotexist"], 1),
    (["review", "accept", "FIRST", "--as", "REPLACES"], 2),
    (["review", "list", "--status", "pending"], 2),
    (["review", "accept"], 2),
])
def test_bad_ids_and_arguments_get_one_line(
    capsys: pytest.CaptureFixture[str], queued: tuple, args: list[str], code: int,
) -> None:
    home, ids, _, _ = queued
    got, _, err = run(capsys, *[ids[0] if a == "FIRST" else a for a in args], *_who(home))
    assert got == code
    _one_line_error(err)


def test_another_user_cannot_decide_it(capsys: pytest.CaptureFixture[str], queued: tuple) -> None:
    home, ids, _, _ = queued
    code, _, foreign = run(capsys, "review", "accept", ids[0], *_who(home, "omar"))
    assert code == 1
    _one_line_error(foreign)
    code, _, unknown = run(capsys, "review", "accept", "rev_doesnotexist", *_who(home, "omar"))
    assert foreign.replace(ids[0], "ID") == unknown.replace("rev_doesnotexist", "ID")
    assert ids[0] in run(capsys, "review", "list", *_who(home))[1]
