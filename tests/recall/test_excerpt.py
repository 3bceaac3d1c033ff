"""Long chunks under a small budget: shown as the sentences the query is about, so the short turn
that answers still fits; the excerpt cites its turn, and the baselines show chunks whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoflow.recall import RecallConfig
from mnemoflow.recall.config import preset
from mnemoflow.recall.excerpt import GAP, excerpt, terms
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.conftest import turn, write_transcript

SCOPE = Scope("acme", "maya")
LEXICAL = RecallConfig(name="lexical", signals={"bm25": 1.0}, graph=False)
FILLER = [f"Option {n} is a cosy guesthouse with a garden, a quiet street and breakfast on request." for n in range(24)]
ANSWER = "For a late arrival the Hotel Lindner keeps its front desk open all night."


def test_the_sentences_with_the_query_words_are_kept_in_their_order() -> None:
    text = "assistant: " + " ".join(FILLER[:12] + [ANSWER] + FILLER[12:])
    cut = excerpt(text, terms("Which hotel keeps its front desk open for a late arrival?"), 400)
    assert cut is not None
    shown, kept, total = cut
    assert len(shown) <= 400 and total == 25 and 1 <= kept < total
    assert shown.startswith("assistant: " + GAP.strip()) and ANSWER in shown
    # neighbours of the best sentence fill the room, in the passage's order
    assert shown.index("Option 11") < shown.index(ANSWER) < shown.index("Option 12")


def test_a_passage_that_fits_or_matches_nothing_is_handled() -> None:
    assert excerpt("Short turn.", {"hotel"}, 400) is None
    shown, kept, _ = excerpt(" ".join(FILLER), terms("marathon training plan"), 300)  # type: ignore[misc]
    assert shown.startswith("Option 0 ") and shown.endswith(GAP.strip()) and kept >= 1  # no match: its start
    one_long = "word " * 400
    shown, kept, total = excerpt(one_long, {"word"}, 200)  # type: ignore[misc]
    assert len(shown) <= 200 and (kept, total) == (1, 1)


def _cited(items: list) -> set[str]:
    return {c.turn_id for i in items if i.kind == "chunk" for c in i.citations if c.turn_id}


@pytest.fixture
def long_reply(service: MemoryService, tmp_path: Path) -> None:
    write_transcript(tmp_path / "chat.jsonl", [
        turn("s1", "0", "Maya", "2024-05-01T10:00:00Z", "I land in Vienna at 1 am, which hotel should I pick?"),
        turn("s1", "1", "assistant", "2024-05-01T10:01:00Z", " ".join(FILLER[:5] + [ANSWER] + FILLER[5:10])),
        turn("s1", "2", "Maya", "2024-05-01T10:02:00Z", "Booked the hotel for the late arrival, thanks."),
    ])
    service.ingest(SCOPE, [tmp_path / "chat.jsonl"])
    service.drain()


def test_a_long_reply_leaves_room_for_the_short_turns(service: MemoryService, long_reply: None) -> None:
    query = "which hotel for the late arrival?"
    result = service.recall(SCOPE, query, token_budget=240, config=LEXICAL)  # the reply alone is ~225 tokens
    assert {"0", "1", "2"} <= _cited(result.items) and result.tokens <= 240
    reply = next(i for i in result.items if i.kind == "chunk" and any(c.turn_id == "1" for c in i.citations))
    assert ANSWER in reply.text and "sentences, those nearest the query" in reply.why and reply.tokens <= 60

    whole = LEXICAL.model_copy(update={"excerpt_share": 1.0})  # off: the reply crowds a turn out
    shown = service.recall(SCOPE, query, token_budget=240, config=whole)
    assert all(GAP not in i.text for i in shown.items)
    assert not {"0", "1", "2"} <= _cited(shown.items)
    assert preset("rrf").excerpt_share == preset("bm25").excerpt_share == 1.0  # baselines show chunks whole
