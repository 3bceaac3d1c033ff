"""Two chat exports that number their sessions and turns the same way are two conversations: every
turn of both is kept, ingested together or one after the other, and each is cited from its own file.
A turn with the same ids and the same text is the same turn (a re-export), never a second copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.conftest import turn, write_transcript

SCOPE = Scope("acme", "alex")
DAY = "2024-05-06T09:0{}:00Z"
GARDEN = ["We should plant the tomatoes after the last frost.", "The seedlings are on the kitchen windowsill.",
          "Buy two bags of compost from the hardware store."]
TRAVEL = ["The ferry to the island leaves at seven fifteen.", "Pack the waterproof jackets for the hike.",
          "Our cabin key is in the lockbox, code four four one nine."]


def export(path: Path, texts: list[str], speaker: str = "Noor") -> Path:
    return write_transcript(path, [turn("s1", f"t{n}", speaker, DAY.format(n), text)
                                   for n, text in enumerate(texts, start=1)])


def turn_rows(service: MemoryService) -> list[tuple[str, str, str]]:
    with service.store._db.read() as con:  # noqa: SLF001  an analyst's view of the turns table
        return con.execute("SELECT session_id, turn_id, text FROM turns ORDER BY session_id, turn_id").fetchall()


def recalled(service: MemoryService, query: str, wanted: str) -> tuple[str, str | None, str | None]:
    for item in service.recall(SCOPE, query, token_budget=512).items:
        if wanted in item.text and item.kind == "chunk":
            cite = item.citations[0]
            return cite.session_id or "", cite.turn_id, cite.title
    raise AssertionError(f"{wanted!r} not recalled for {query!r}")


@pytest.mark.parametrize("apart", [False, True], ids=["together", "apart"])
def test_two_exports_with_the_same_ids_keep_every_turn(service: MemoryService, tmp_path: Path, apart: bool) -> None:
    garden = export(tmp_path / "garden.jsonl", GARDEN)
    travel = export(tmp_path / "travel.jsonl", TRAVEL)
    if apart:
        service.ingest(SCOPE, [garden])
        outcome = service.ingest(SCOPE, [travel])
    else:
        outcome = service.ingest(SCOPE, [garden, travel])
    assert outcome.report.errors == []
    rows = turn_rows(service)
    assert sorted(text for _, _, text in rows) == sorted(GARDEN + TRAVEL)
    assert {session for session, _, _ in rows} == {"s1", "s1@travel.jsonl"}
    assert service.store.counts(SCOPE)["turns"] == 6

    # each turn is found and cited by its own ids, from its own file's conversation
    assert recalled(service, "when does the ferry leave?", "ferry") == ("s1@travel.jsonl", "t1", "s1 (travel.jsonl)")
    assert recalled(service, "where are the seedlings?", "seedlings") == ("s1", "t2", "s1")

    # ingesting both again changes nothing
    again = service.ingest(SCOPE, [garden, travel])
    assert again.report.turns_added == 0 and again.report.documents_changed == 0
    assert len(turn_rows(service)) == 6


def test_a_re_export_is_the_same_conversation_and_a_longer_one_goes_on(service: MemoryService,
                                                                       tmp_path: Path) -> None:
    service.ingest(SCOPE, [export(tmp_path / "chat.jsonl", GARDEN[:2])])
    (tmp_path / "later").mkdir()
    outcome = service.ingest(SCOPE, [export(tmp_path / "later" / "chat-export.jsonl", GARDEN)])
    assert outcome.report.turns_added == 1  # t1 and t2 are the same turns; t3 is new
    rows = turn_rows(service)
    assert [(s, t) for s, t, _ in rows] == [("s1", "t1"), ("s1", "t2"), ("s1", "t3")]


def test_a_file_edited_in_place_is_still_its_own_conversation(service: MemoryService, tmp_path: Path) -> None:
    chat = export(tmp_path / "chat.jsonl", GARDEN)
    service.ingest(SCOPE, [chat])
    export(chat, [GARDEN[0], "The seedlings moved to the greenhouse.", GARDEN[2]])
    service.ingest(SCOPE, [chat])
    rows = turn_rows(service)
    assert [(s, t) for s, t, _ in rows] == [("s1", "t1"), ("s1", "t2"), ("s1", "t3")]
    assert rows[1][2] == "The seedlings moved to the greenhouse."


def test_a_third_file_repeating_the_second_joins_it_and_same_names_in_two_folders_stay_apart(
        service: MemoryService, tmp_path: Path) -> None:
    service.ingest(SCOPE, [export(tmp_path / "garden.jsonl", GARDEN), export(tmp_path / "travel.jsonl", TRAVEL)])
    (tmp_path / "copy").mkdir()
    outcome = service.ingest(SCOPE, [export(tmp_path / "copy" / "travel-again.jsonl", TRAVEL)])
    assert outcome.report.turns_added == 0
    (tmp_path / "other").mkdir()
    work = ["Standup moves to ten.", "The release is on Thursday.", "Ask Omar about the invoices."]
    service.ingest(SCOPE, [export(tmp_path / "other" / "travel.jsonl", work)])
    sessions = {s for s, _, _ in turn_rows(service)}
    assert len(sessions) == 3 and "s1" in sessions and "s1@travel.jsonl" in sessions
    assert next(iter(sessions - {"s1", "s1@travel.jsonl"})).startswith("s1@travel.jsonl~")
    assert service.store.counts(SCOPE)["turns"] == 9
