"""Bad input lands in ingest_errors with a reason; the rest of the run goes on."""

import os
from pathlib import Path

from mnemoflow.config import load_settings
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.conftest import turn, write_transcript

SCOPE = Scope("acme", "alex")


def test_every_bad_input_is_recorded_and_the_good_ones_land(service: MemoryService, tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    write_transcript(inbox / "good.jsonl", [
        turn("s", "1", "Alex", "2024-01-01T10:00:00Z", "The staging database moved to eu-west-1."),
        turn("s", "2", "Sam", "2024-01-01T10:01:00Z", "Thanks, I'll update the runbook."),
    ])
    (inbox / "mixed.jsonl").write_text(
        '{"session_id": "m", "turn_id": "1", "speaker": "Sam", "ts": "2024-01-02T08:00:00Z", "text": "Ship it Monday."}\n'
        "this line is not json\n"
    )
    (inbox / "guide.md").write_text("# Guide\n\n## Setup\n\nRun the installer twice on Windows.\n")
    (inbox / "latin1.txt").write_bytes("caf\xe9 au lait".encode("latin-1"))
    (inbox / "empty.md").write_text("")
    (inbox / "empty.jsonl").write_text("")
    os.symlink(tmp_path / "does-not-exist.md", inbox / "unreadable.md")
    (inbox / "photo.png").write_bytes(b"\x89PNG\r\n")

    outcome = service.ingest(SCOPE, [inbox, tmp_path / "missing.txt"])

    recorded = {(Path(e.uri.removeprefix("file://")).name, e.reason) for e in service.store.ingest_errors(SCOPE)}
    reasons = dict(recorded)
    assert reasons["mixed.jsonl"] == "line 2: invalid JSON (Expecting value)"
    assert reasons["latin1.txt"].startswith("not UTF-8 text: byte 0xe9")
    assert reasons["empty.md"].startswith("empty file")
    assert reasons["empty.jsonl"].startswith("empty file")
    assert reasons["unreadable.md"] == "broken symbolic link"
    assert reasons["photo.png"].startswith("not a readable image")  # a PNG signature cut short
    assert reasons["missing.txt"] == "no such file or directory"
    assert len(outcome.report.errors) == 7

    counts = service.store.counts(SCOPE)
    assert counts["turns"] == 3  # two good turns and the good line of mixed.jsonl
    assert counts["documents"] == 3  # two sessions and the guide
    assert counts["pending_embeddings"] == 0
    hit = service.recall(SCOPE, "how do I set up on Windows?", k=1).items[0]
    assert "installer" in hit.text
    assert hit.citations[0].locator["heading_path"] == ["Guide", "Setup"]


def test_what_once_ended_a_run_is_recorded_or_landed(service: MemoryService, tmp_path: Path) -> None:
    """Found by the bad-input corpus: each of these used to end the whole run in a traceback."""
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    same = [turn("s", "1", "Alex", "2024-01-01T10:00:00Z", "The beta ships on the ninth.")]
    write_transcript(inbox / "copy-a.jsonl", same)  # the same turn in two files of one run
    write_transcript(inbox / "copy-b.jsonl", same)
    (inbox / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (inbox / "deep.jsonl").write_text('{"session_id": "d", "turn_id": "1", "metadata": ' + "[" * 100_000
                                      + "]" * 100_000 + "}\n")
    undecodable = os.fsdecode(b"caf\xe9 notes.md")
    (inbox / undecodable).write_text("# Caf\n\nThe espresso machine is descaled on Fridays.\n")
    (inbox / os.fsdecode(b"bad\xff.txt")).write_bytes(b"\xff\xfe not text")

    outcome = service.ingest(SCOPE, [inbox])

    assert outcome.report.turns_added == 1
    reasons = {e.uri.rsplit("/", 1)[-1]: e.reason for e in service.store.ingest_errors(SCOPE)}
    assert reasons["deep.json"] == "invalid JSON: nested too deeply to read"
    assert reasons["deep.jsonl"] == "line 1: invalid JSON (nested too deeply to read)"
    assert reasons["bad%FF.txt"].startswith("not UTF-8 text")  # the error names the file exactly
    hit = service.recall(SCOPE, "when is the espresso machine descaled?", k=1).items[0]
    assert "Fridays" in hit.text


def test_an_input_of_more_chunks_than_the_limit_is_recorded(tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path / "home", max_chunks_per_document=3)
    long = tmp_path / "long.md"
    long.write_text("".join(f"# Part {n}\n\nThe part {n} of the handbook.\n\n" for n in range(4)))
    short = tmp_path / "short.md"
    short.write_text("# Part 1\n\nThe only part.\n")

    with MemoryService(settings) as service:
        report = service.ingest(SCOPE, [long, short]).report

    assert [(Path(e.uri).name, e.reason) for e in report.errors] == [
        ("long.md", "4 chunks, over the max_chunks_per_document limit of 3: split the input or raise the limit")]
    assert report.chunks_added == 1
