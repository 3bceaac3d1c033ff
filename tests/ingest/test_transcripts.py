"""Transcripts through the real dlt connector: idempotent, incremental, bad lines recorded."""

import json
from pathlib import Path

from mnemoflow.connectors.conversations import parse_transcript
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.conftest import turn, write_transcript

SCOPE = Scope("acme", "alex")
TURNS = [
    turn("trip", "1", "Alex", "2024-03-01T09:00:00Z", "I'm planning a trip to Japan with Maya.", role="user"),
    turn("trip", "2", "Bot", "2024-03-01T09:00:05Z", "When are you going?", role="assistant"),
    turn("trip", "3", "Alex", "2024-03-01T09:00:30Z", "Next April, for two weeks.", role="user"),
    turn("work", "4", "Alex", "2024-03-02T10:00:00Z", "The quarterly report is due on Friday.", role="user"),
]


def test_ingesting_the_same_transcript_twice_adds_nothing(service: MemoryService, tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "chat.jsonl", TURNS)
    first = service.ingest(SCOPE, [path])
    assert (first.report.turns_added, first.report.chunks_added, first.report.documents_changed) == (4, 4, 2)
    counts = service.store.counts(SCOPE)
    commits = service.store.verify("acme").commits_checked
    second = service.ingest(SCOPE, [path])
    assert (second.report.turns_added, second.report.chunks_added, second.report.documents_changed) == (0, 0, 0)
    assert service.store.counts(SCOPE) == counts
    assert service.store.verify("acme").commits_checked == commits


def test_a_touched_but_unchanged_file_adds_nothing(service: MemoryService, tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "chat.jsonl", TURNS)
    service.ingest(SCOPE, [path])
    path.write_text(path.read_text())  # new modification time, same content: dlt re-reads it
    again = service.ingest(SCOPE, [path])
    assert (again.report.turns_added, again.report.chunks_added) == (0, 0)


def test_appended_turns_are_the_only_new_rows(service: MemoryService, tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "chat.jsonl", TURNS[:2])
    service.ingest(SCOPE, [path])
    write_transcript(path, TURNS)
    outcome = service.ingest(SCOPE, [path])
    assert outcome.report.turns_added == 2
    assert outcome.report.chunks_added == 2
    assert outcome.report.chunks_removed == 0
    assert service.store.counts(SCOPE)["turns"] == 4
    # the turn before the appended one now has it as search context, in place: same chunk, same vector
    hit = service.recall(SCOPE, "When are you going? Next April", k=2)
    assert {c.turn_id for i in hit.items for c in i.citations} >= {"3"}
    assert service.store.verify("acme").ok


def test_turns_are_cited_by_session_turn_and_time(service: MemoryService, tmp_path: Path) -> None:
    service.ingest(SCOPE, [write_transcript(tmp_path / "chat.jsonl", TURNS)])
    result = service.recall(SCOPE, "when is the trip to Japan?", k=3)
    cited = {(c.session_id, c.turn_id) for item in result.items for c in item.citations}
    assert ("trip", "3") in cited or ("trip", "1") in cited
    citation = next(c for item in result.items for c in item.citations if c.turn_id)
    assert citation.ts is not None and citation.speaker


def test_a_json_list_transcript_is_read_like_jsonl(service: MemoryService, tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(TURNS))
    assert service.ingest(SCOPE, [path]).report.turns_added == 4


def test_a_transcript_without_sessions_is_one_session_named_after_its_file(
        service: MemoryService, tmp_path: Path) -> None:
    path = tmp_path / "alex-chat.jsonl"
    path.write_text("".join(json.dumps({k: v for k, v in t.items() if k != "session_id"}) + "\n" for t in TURNS))
    outcome = service.ingest(SCOPE, [path])
    assert (outcome.report.turns_added, outcome.report.errors) == (4, [])
    assert service.store.list_memories(SCOPE)  # a transcript, not records: memories are made from its turns
    result = service.recall(SCOPE, "when is the trip to Japan?", k=3)
    assert {c.session_id for item in result.items for c in item.citations if c.turn_id} == {"alex-chat"}


def test_the_same_file_in_two_scopes_stays_apart(service: MemoryService, tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "chat.jsonl", TURNS)
    service.ingest(SCOPE, [path])
    other = Scope("acme", "maya")
    assert service.ingest(other, [path]).report.turns_added == 4
    assert service.store.counts(other)["turns"] == 4
    assert service.store.counts(SCOPE)["turns"] == 4


def test_parse_transcript_reports_each_bad_line() -> None:
    good = json.dumps(TURNS[0])
    lines = [
        good,
        "{not json",
        json.dumps({**TURNS[1], "ts": "last tuesday"}),
        json.dumps({k: v for k, v in TURNS[2].items() if k != "speaker"}),
        json.dumps({**TURNS[1], "role": "wizard"}),
        json.dumps(["a", "list"]),
        good,  # repeated turn_id
        json.dumps(TURNS[3]),
    ]
    parsed = parse_transcript("\n".join(lines).encode(), "file:///x.jsonl", max_bytes=10_000)
    assert [r["turn_id"] for r in parsed.rows] == ["1", "4"]
    reasons = [e.reason for e in parsed.errors]
    assert reasons[0].startswith("line 2: invalid JSON")
    assert reasons[1].startswith("line 3: ts") and "ISO 8601" in reasons[1]
    assert reasons[2].startswith("line 4: speaker")
    assert reasons[3].startswith("line 5: role")
    assert reasons[4] == "line 6: a turn must be a JSON object"
    assert "repeats an earlier turn" in reasons[5]


def test_parse_transcript_file_level_problems() -> None:
    assert parse_transcript(b"", "f.jsonl", max_bytes=100).errors[0].reason.startswith("empty file")
    assert "not UTF-8" in parse_transcript(b"\xff\xfe{}", "f.jsonl", max_bytes=100).errors[0].reason
    assert "over the 10-byte limit" in parse_transcript(b"x" * 11, "f.jsonl", max_bytes=10).errors[0].reason
    assert "must hold a list" in parse_transcript(b'{"a": 1}', "f.json", max_bytes=100).errors[0].reason


def test_a_turn_longer_than_a_book_is_refused_and_the_rest_of_the_file_is_read() -> None:
    long_turn = {**TURNS[1], "text": "word " * 200_001}  # 1,000,004 characters once stripped
    lines = [json.dumps(TURNS[0]), json.dumps(long_turn), json.dumps(TURNS[2])]
    parsed = parse_transcript("\n".join(lines).encode(), "file:///x.jsonl", max_bytes=10_000_000)
    assert [r["turn_id"] for r in parsed.rows] == [TURNS[0]["turn_id"], TURNS[2]["turn_id"]]
    assert [e.reason for e in parsed.errors] == [
        "line 2: text: 1000004 characters, over the 1000000-character limit for one turn"]
