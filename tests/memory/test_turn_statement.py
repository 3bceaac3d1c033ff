"""A turn is one statement (`generate.turn`), a follow-up belongs to what the question asked about, a
possessive names its owner once, names keep every letter, and a sentence in another language makes no
memory. Wording of these tests' own."""

from __future__ import annotations

from datetime import datetime

import pytest

from mnemoflow.memory.english.language import is_english
from mnemoflow.memory.generate.rules import RuleEngine
from mnemoflow.memory.generate.turn import UNREAD
from tests.memory.dialogue import contexts, say, stored

NOW = datetime(2025, 3, 4, 9, 0)


def contents(candidates: list) -> list[str]:
    return [c.content for c in candidates]


def test_an_ended_value_and_the_new_one_in_one_turn_are_one_memory() -> None:
    said = contents(say("Bea", "I've moved from Trello to Linear for the team boards; I don't use Trello anymore."))
    assert said == ["Bea has moved from Trello to Linear for the team boards; Bea doesn't use Trello anymore"]
    [one] = say("Kofi", "My old Kindle died, I'm reading on a Kobo Clara now.")
    assert "Kindle died" in one.content and "Kobo Clara" in one.content


def test_a_clause_naming_what_no_memory_names_is_kept_beside_the_turns_memory() -> None:
    [memory] = say("Ilse", "I stopped drinking cola; it's sparkling water with lime for me now.")
    assert memory.content == "Ilse stopped drinking cola; it's sparkling water with lime for Ilse now"


def test_a_clause_with_nothing_to_be_kept_beside_is_recorded_as_unread() -> None:
    drafted = RuleEngine().generate(contexts([("Ilse", "Lovely spot. It's a bungalow by the canal.")], NOW)[0])
    assert not [c for c in drafted if c.should_store]
    assert [c.content for c in drafted if UNREAD in c.reasons] == ["It's a bungalow by the canal"]


def test_a_request_is_not_kept_for_naming_something() -> None:
    assert contents(say("Ren", "skip the prawns tho, im allergic")) == ["Ren is allergic to prawns"]


def test_a_follow_up_answer_belongs_to_what_the_question_asked_about() -> None:
    lines = [("Odile", "My son Remy has judo classes on Wednesdays", "user"),
             ("Assistant", "Nice! What time are the classes?", "assistant"), ("Odile", "6:15", "user")]
    engine, known = RuleEngine(), []
    from mnemoflow.memory.pipeline import turn_context  # the pipeline drafts each turn with the turns' memories
    turns = [c.turn for c in contexts(lines, NOW)]
    for n in range(len(turns)):
        known += [c.content for c in engine.generate(turn_context(turns, n, tuple(known))) if c.should_store]
    assert known[-1] == "Remy's judo classes are at 6:15"


def test_an_elliptic_what_time_takes_at() -> None:
    lines = [("Odile", "Remy has judo on Wednesdays", "user"), ("Assistant", "What time?", "assistant"),
             ("Odile", "6:15", "user")]
    assert contents(stored(lines, NOW))[-1] == "Remy has judo on Wednesdays at 6:15"


def test_padding_and_a_capital_are_left_out_of_a_follow_up_answer() -> None:
    lines = [("Assistant", "How far are you cycling these days?", "assistant"),
             ("Wen", "Oh hey, small update: Up to 60 km on Sundays now", "user")]
    assert contents(stored(lines, NOW)) == ["Wen is cycling up to 60 km on Sundays now"]


def test_a_possessive_after_its_owners_name_stays_a_pronoun() -> None:
    assert contents(say("Gus", "I cook all my meals on a cast-iron pan")) == ["Gus cooks all their meals on a cast-iron pan"]
    assert contents(say("Gus", "My brother fixed my bike")) == ["Gus's brother fixed their bike"]


@pytest.mark.parametrize(("text", "expected"), [
    ("Łukasz moved to Kraków; his office is on Floriańska 3", ["Łukasz moved to Kraków", "Łukasz's office is on Floriańska 3"]),
    ("Søren just started at Ørsted 🎉", ["Søren just started at Ørsted"]),
])
def test_names_keep_every_letter(text: str, expected: list[str]) -> None:
    assert contents(say("Ana", text)) == expected


@pytest.mark.parametrize("text", ["Wir ziehen im Mai nach Hamburg.", "Je travaille maintenant chez Airbus.",
                                  "我下个月搬到上海。", "来月から大阪で働きます。", "다음 주에 서울로 이사해요."])
def test_a_sentence_in_another_language_makes_no_memory(text: str) -> None:
    assert not is_english(text)
    assert say("Mia", text) == []


def test_the_english_sentence_of_a_mixed_turn_is_still_read() -> None:
    assert contents(say("Mia", "Wir ziehen im Mai nach Hamburg. My new office is near the harbour.")) == [
        "Mia's new office is near the harbour"]


@pytest.mark.parametrize("text", ["Perfect beer-garden weather!", "Will do.", "I live in Berlin, in Neukölln.",
                                  "ferry to Bilbao booked!!", "dentist thurs 10am"])
def test_short_english_chat_is_english(text: str) -> None:
    assert is_english(text)
