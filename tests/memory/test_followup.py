"""Questions taken apart and short answers merged with them."""

from __future__ import annotations

import pytest

from mnemoflow.memory.generate.destination import destination, is_going_without_place, with_destination
from mnemoflow.memory.generate.followup import is_clause, merge
from mnemoflow.memory.generate.questions import parse_question


@pytest.mark.parametrize(("question", "wh", "aux", "subject", "rest"), [
    ("When are you going to Japan?", "when", "are", "you", "going to Japan"),
    ("How long was the interview process?", "how long", "was", "the interview process", ""),
    ("When does your new job start?", "when", "does", "your new job", "start"),
    ("Who's the lawyer in your family?", "who", "is", "the lawyer in your family", ""),
    ("Are you and Sam still coming on Saturday?", None, "are", "you and Sam", "still coming on Saturday"),
    ("Is this your painting?", None, "is", "this", "your painting"),
    ("You're moving to Berlin, right?", None, "are", "you", "moving to Berlin"),
    ("So what do you commute on these days?", "what", "do", "you", "commute on"),  # a conjunction opens it
])
def test_questions_are_taken_apart(question: str, wh: str | None, aux: str, subject: str, rest: str) -> None:
    q = parse_question(question)
    assert q is not None
    assert (q.wh, q.aux, q.subject, q.rest) == (wh, aux, subject, rest)


@pytest.mark.parametrize("question", ["How are you?", "What's up?", "Would you like some tea?",
                                      "Can you send me the file?", "How was your weekend?"])
def test_small_talk_and_offers_are_not_questions_to_merge(question: str) -> None:
    assert parse_question(question) is None


def test_each_part_keeps_the_perspective_of_who_said_it() -> None:
    follow = merge("Who are you going with?", "With my brother Luca.")
    assert follow is not None
    assert [(s.text, s.by_answerer) for s in follow.segments] == [("you are going with", False),
                                                                   (" my brother Luca", True)]


def test_a_clause_after_yes_or_no_is_a_statement_of_its_own() -> None:
    follow = merge("Do you still work at Google?", "Not anymore, I joined Anthropic in January.")
    assert follow is not None and follow.mode == "no"
    assert follow.segments[0].text == "you no longer work at Google"
    assert follow.leftover == "I joined Anthropic in January"


def test_a_fragment_answer_then_a_clause_of_its_own_fills_the_slot_and_keeps_the_clause() -> None:
    follow = merge("What do you commute on?", "An e-bike mostly, the old scooter was stolen")
    assert follow is not None and follow.mode == "wh"
    assert [(s.text, s.by_answerer) for s in follow.segments] == [("you commute on", False),
                                                                   (" an e-bike mostly", True)]
    assert follow.leftover == "the old scooter was stolen"


@pytest.mark.parametrize(("question", "answer", "statement", "tail"), [
    ("Are you bringing your own rod or hiring one up there?", "my own, 9ft 7-weight",
     "you are bringing your own rod", ", 9ft 7-weight"),
    ("Are you driving or getting the train?", "train, the 8:04", "you are getting the train", ", the 8:04"),
    ("Is it a day trip or are you staying over?", "staying over, two nights", "you are staying over", ", two nights"),
])
def test_an_answer_in_the_words_of_one_alternative_chooses_it(question: str, answer: str, statement: str,
                                                               tail: str) -> None:
    follow = merge(question, answer)
    assert follow is not None and follow.mode == "choice"
    assert [s.text for s in follow.segments] == [statement, tail]
    assert merge("Are you driving or getting the train?", "the bus actually") is None


@pytest.mark.parametrize(("question", "answer"), [
    ("When are you going?", "Not sure yet."), ("Where do you live?", "Yes."), ("How was the concert?", "Amazing!"),
])
def test_answers_that_fill_nothing_are_not_merged(question: str, answer: str) -> None:
    assert merge(question, answer) is None


def test_a_verb_that_looks_the_same_in_the_past_makes_a_clause() -> None:
    assert is_clause("The doctor put me on 20 mg of lisinopril.")
    assert not is_clause("A doctor's note for the put option")


def test_how_many_nights_is_for_how_long() -> None:
    follow = merge("How many nights?", "Two nights.")
    assert follow is not None and follow.mode == "topic"
    assert [s.text for s in follow.segments] == [" for two nights"]
    people = merge("How many people?", "Four.")
    assert people is not None and [s.text for s in people.segments] == [" (people: four)"]


def test_where_someone_is_going_comes_from_what_was_said_before() -> None:
    assert destination(["No, Ben is coming with me.", "When are you going to Japan?"], ["Ben"]) == "Japan"
    assert destination(["I'm planning a trip to Japan with Maya."]) == "Japan"
    assert destination(["I'm going to Maya's for dinner."], ["Maya"]) is None  # a person is not a place
    assert destination(["I'm going to start running."]) is None


@pytest.mark.parametrize(("text", "expected"), [
    ("Ben is coming with Alex", "Ben is coming to Japan with Alex"),
    ("Alex is going next April", "Alex is going to Japan next April"),
])
def test_going_without_a_place_takes_it(text: str, expected: str) -> None:
    assert is_going_without_place(text)
    assert with_destination(text, "Japan") == expected


@pytest.mark.parametrize("text", ["Alex will go to Kyoto", "Alex is going home", "Alex is going to start Monday",
                                  "Alex lives in Berlin", "Alex is going in Osaka first"])
def test_going_somewhere_already_or_not_going_at_all(text: str) -> None:
    assert not is_going_without_place(text)


def test_a_question_about_what_someone_said_asks_its_embedded_question() -> None:
    follow = merge("Did the surgeon say how long recovery takes?", "About six weeks.")
    assert follow is not None and follow.mode == "wh"
    assert "".join(s.text for s in follow.segments) == "the recovery takes about six weeks"  # no "takes for"
    lands = merge("Did she mention when her flight lands?", "Around 6pm.")
    assert lands is not None and "".join(s.text for s in lands.segments) == "her flight lands around 6pm"
    assert merge("Did the surgeon say how long recovery takes?", "Not sure.") is None


def test_a_named_person_with_a_title_answers_who() -> None:
    """"Mrs." is not a verb: "my neighbour Mrs. Abernathy" is a fragment that fills the "who"."""
    assert not is_clause("my neighbour Mrs. Abernathy, number 9")
    merged = merge("Who's looking after your cat while you're gone?", "my neighbour Mrs. Abernathy, number 9")
    assert merged is not None and merged.mode == "wh"
    assert [s.text.strip() for s in merged.segments] == [
        "my neighbour Mrs. Abernathy, number 9", "is looking after your cat while you are gone"]
