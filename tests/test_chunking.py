from datetime import datetime

from hypothesis import given, strategies as st

from mnemoflow.chunking import (
    chunk_markdown,
    chunk_plain_text,
    chunk_session,
    split_lines_to_cap,
    split_to_cap,
    token_count,
)
from mnemoflow.models import TurnRecord

MARKDOWN = """# Runbook

Intro line.

## Deploy

Deploy on Tuesdays.

```bash
# not a heading inside a fence
prefect deploy
```

### Rollback

Roll back first, debug later.

## On-call

Weekly rotation.
"""


def test_markdown_sections_carry_heading_paths() -> None:
    chunks = chunk_markdown("doc", MARKDOWN, 256)
    paths = [c.locator["heading_path"] for c in chunks]
    assert paths == [["Runbook"], ["Runbook", "Deploy"], ["Runbook", "Deploy", "Rollback"], ["Runbook", "On-call"]]
    assert "# not a heading inside a fence" in chunks[1].text
    assert chunks[2].context == "Runbook > Deploy > Rollback"


def test_headings_that_skip_a_level_nest_by_level_not_by_position() -> None:
    text = "#### Arrays\n\nA.\n\n#### Unions\n\nU.\n\n# Types\n\nT.\n\n### Enums\n\nE.\n\n## Sizes\n\nS.\n"
    paths = [c.locator["heading_path"] for c in chunk_markdown("doc", text, 256)]
    assert paths == [["Arrays"], ["Unions"], ["Types"], ["Types", "Enums"], ["Types", "Sizes"]]


def test_chunk_ids_are_deterministic_and_content_addressed() -> None:
    first = chunk_markdown("doc", MARKDOWN, 256)
    assert [c.chunk_id for c in first] == [c.chunk_id for c in chunk_markdown("doc", MARKDOWN, 256)]
    changed = chunk_markdown("doc", MARKDOWN.replace("Weekly", "Daily"), 256)
    assert [c.chunk_id for c in changed][:3] == [c.chunk_id for c in first][:3]
    assert changed[3].chunk_id != first[3].chunk_id
    assert chunk_markdown("other-doc", MARKDOWN, 256)[0].chunk_id != first[0].chunk_id


@given(st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=5000), st.integers(16, 300))
def test_split_to_cap_never_exceeds_the_cap(text: str, cap: int) -> None:
    for piece in split_to_cap(text, cap):
        assert token_count(piece) <= cap
        assert piece.strip()


def test_long_paragraphs_split_on_sentences() -> None:
    sentence = "The quick brown fox jumps over the lazy dog. "
    chunks = chunk_plain_text("doc", sentence * 100, 64)
    assert len(chunks) > 1
    assert all(c.token_count <= 64 for c in chunks)
    assert all(c.text.endswith(".") for c in chunks[:-1])


def _turn(n: int, speaker: str, text: str, **metadata: str) -> TurnRecord:
    return TurnRecord(f"k{n}", "d", "s", str(n), n, None, speaker, datetime(2024, 1, 1, 10, n), text,
                      metadata or None, "file:///x")


def test_session_chunks_are_turns_with_date_and_neighbours_as_context() -> None:
    turns = [_turn(0, "Ana", "Where should we eat?"), _turn(1, "Ben", "The ramen place.", image_caption="a bowl"),
             _turn(2, "Ana", "Booked for eight.")]
    chunks = chunk_session("d", list(reversed(turns)), 256)
    assert [c.text for c in chunks] == ["Ana: Where should we eat?", "Ben: The ramen place. [image: a bowl]",
                                        "Ana: Booked for eight."]
    assert chunks[1].context == "[1 January 2024]\nAna: Where should we eat?\nAna: Booked for eight."
    assert chunks[0].context == "[1 January 2024]\nBen: The ramen place. [image: a bowl]"
    assert chunks[1].locator["turns"] == [{"turn_id": "1", "ts": "2024-01-01T10:01:00", "speaker": "Ben",
                                          "role": None}]
    bare = chunk_session("d", turns, 256, context="none", captions=False)
    assert bare[1].text == "Ben: The ramen place." and bare[1].context is None
    assert chunk_session("d", turns, 256, context="previous")[0].context == "[1 January 2024]"


def test_a_chunk_keeps_its_id_when_only_its_context_changes() -> None:
    first = chunk_session("d", [_turn(0, "Ana", "Hi")], 256)
    grown = chunk_session("d", [_turn(0, "Ana", "Hi"), _turn(1, "Ben", "Hello")], 256)
    assert grown[0].chunk_id == first[0].chunk_id and grown[0].context != first[0].context


def test_a_line_without_spaces_is_cut_into_whole_pieces() -> None:
    line = "".join(chr(97 + i % 26) for i in range(10_001))

    assert split_to_cap(f"{line} tail", 16) == [line[i : i + 64] for i in range(0, 9984, 64)] + [line[9984:] + " tail"]
    assert split_lines_to_cap(f"head\n{line}\nend", 16) == [
        (0, "head"), *[(1, line[i : i + 64]) for i in range(0, 9984, 64)], (1, line[9984:] + "\nend")]
