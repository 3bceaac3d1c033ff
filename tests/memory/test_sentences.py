"""Chat turns into sentences, without the padding around them."""

from __future__ import annotations

import pytest

from mnemoflow.memory.english.names import find_entities
from mnemoflow.memory.english.sentences import (
    split_clauses,
    split_sentences,
    strip_padding,
)
from mnemoflow.memory.generate.followup import is_clause


def test_sentences_split_but_not_on_abbreviations_versions_or_list_numbers() -> None:
    assert split_sentences("Hey Sam! I met Dr. Smith at 3 p.m. today... We upgraded to v2.1 yesterday.") == [
        "Hey Sam!", "I met Dr. Smith at 3 p.m. today...", "We upgraded to v2.1 yesterday."]
    assert split_sentences("Steps:\n1. bump version\n2. run make publish") == [
        "Steps:", "1. bump version", "2. run make publish"]


def test_padding_and_vocatives_go_names_in_content_stay() -> None:
    names = ["Melanie", "Caroline"]
    assert strip_padding("Wow, Caroline, you're doing great", names) == "you're doing great"
    assert strip_padding("That charity race sounds great, Mel!", names) == "That charity race sounds great!"
    assert strip_padding("Hey Jordan, I moved", names) == "I moved"
    assert strip_padding("So I moved to Berlin, Germany", names) == "I moved to Berlin, Germany"
    assert strip_padding("Melanie is cool", names) == "Melanie is cool"


def test_entities_are_names_versions_and_code_not_sentence_words() -> None:
    assert find_entities("Raj is migrating from Postgres 12 to Postgres 16 in April 2025 with `make db`",
                         known=("duckdb",)) == ("Raj", "Postgres 12", "Postgres 16", "make db")
    assert find_entities("The team at Bank of America uses duckdb and PyTorch", known=("DuckDB",)) == (
        "Bank of America", "PyTorch", "DuckDB")
    assert find_entities(":\rA\u2600`") == ()  # a lone backtick quotes nothing (found by hypothesis)


def test_two_facts_joined_by_and_each_with_its_subject_are_two_clauses() -> None:
    assert split_clauses("I live in Hamburg and I work at Zalando.", is_clause) == [
        "I live in Hamburg", "I work at Zalando."]
    assert split_clauses("I'm vegan, and my wife works at Stripe.", is_clause) == [
        "I'm vegan", "my wife works at Stripe."]
    # the second subject a thing of the speaker's, or a date named in it
    assert split_clauses("router admin page is 192.168.8.1 and the guest wifi is called Brambleberry_Guest",
                         is_clause) == ["router admin page is 192.168.8.1", "the guest wifi is called Brambleberry_Guest"]
    assert split_clauses("I started running in March and my first race is the Saturday after next", is_clause) == [
        "I started running in March", "my first race is the Saturday after next"]
    assert split_clauses("I'm launching the site in June and I need a comms plan", is_clause) == [
        "I'm launching the site in June and I need a comms plan"]  # the plan is for the launch


@pytest.mark.parametrize("sentence", [
    "My wife and I are moving to Lisbon.",  # one subject
    "I got an offer from Datadog, and I'm deciding by Friday.",  # the second leans on the first
    "I'm so excited and I can't sleep.",  # nothing named: one feeling
])
def test_and_without_two_full_facts_does_not_split(sentence: str) -> None:
    assert split_clauses(sentence, is_clause) == [sentence]


def test_a_clause_pointing_back_stays_with_the_one_before() -> None:
    said = "No, billing still runs on the old cluster, I deployed it there last week."
    assert split_clauses(said, is_clause) == [said]
    assert split_clauses("Not anymore, I sold it last year.", is_clause) == ["Not anymore", "I sold it last year."]


def test_a_topic_before_a_discourse_marker_and_a_reminder_that_are_padding() -> None:
    assert strip_padding("For the party planning, just so you know: Aisha was born on March 12.") \
        == "Aisha was born on March 12."
    assert strip_padding("Reminder that I'm in the Pacific time zone") == "I'm in the Pacific time zone"
    assert strip_padding("As usual Bruno wants a window seat") == "Bruno wants a window seat"
    assert strip_padding("For dinner, I want pasta") == "For dinner, I want pasta"  # no marker: content


def test_a_greeting_and_a_for_reference_are_padding() -> None:
    assert strip_padding("Hello there, for reference my commuter bike is a Boardman") == "my commuter bike is a Boardman"
    assert strip_padding("hiya! for future reference the alarm code is 90210") == "the alarm code is 90210"
    assert strip_padding("For reference books, I use the library") == "For reference books, I use the library"


@pytest.mark.parametrize(("sentence", "clauses"), [
    ("I'm catering again next week, remember I eat vegan", ["I'm catering again next week", "remember I eat vegan"]),
    ("Catering again next week, remember I eat vegan", ["remember I eat vegan"]),  # the fragment is the occasion
    ("Dinner on May 3, remember I eat vegan", ["Dinner on May 3", "remember I eat vegan"]),  # a dated one stays
    ("I'm vegan, keep that in mind for catering", ["I'm vegan", "keep that in mind for catering"]),
    ("Python's my main language, so examples in Python please", ["Python's my main language",
                                                                 "examples in Python please"]),
    ("My birthday is on March 12, remind my husband a week before", ["My birthday is on March 12",
                                                                     "remind my husband a week before"]),
])
def test_a_request_or_a_reminder_after_a_statement_is_its_own_clause(sentence: str, clauses: list[str]) -> None:
    assert split_clauses(sentence, is_clause) == clauses


@pytest.mark.parametrize("sentence", [
    "I'm flying Friday, remember to book the hotel",  # a to-do, not a statement of its own
    "If it rains, keep the windows closed",
    "I keep bees in the garden",
])
def test_no_request_tail_no_split(sentence: str) -> None:
    assert split_clauses(sentence, is_clause) == [sentence]


def test_an_emoji_between_words_ends_a_sentence_and_an_aside_does_not() -> None:
    assert split_sentences("Letter from the landlord today \U0001F643 rent's going up to \u00a31,240 a month") == [
        "Letter from the landlord today", "rent's going up to \u00a31,240 a month"]
    assert split_sentences("I'm in a flat above a bakery \U0001F605") == ["I'm in a flat above a bakery"]
    assert split_sentences("Ember & Oak (my candle shop!) goes live on June 3. Can you help?") == [
        "Ember & Oak (my candle shop!) goes live on June 3.", "Can you help?"]


def test_a_face_typed_in_ascii_is_read_like_an_emoji() -> None:
    assert split_sentences("lost my wallet on the bus :( had to cancel both cards") == [
        "lost my wallet on the bus", "had to cancel both cards"]
    assert split_sentences("the new flat has a balcony :D") == ["the new flat has a balcony"]
    assert split_sentences("love the sofa <3 delivery is on Friday") == ["love the sofa", "delivery is on Friday"]
    for kept in ("the score was 3:2 at half time", "pick option 8) from the menu", "see http://x.org/a for it"):
        assert split_sentences(kept) == [kept]


def test_chat_fillers_that_end_a_clause_are_padding() -> None:
    assert strip_padding("the bike lock code is 5190* btw") == "the bike lock code is 5190*"
    assert strip_padding("my shift moved to nights lol, starting Sunday") == "my shift moved to nights, starting Sunday"
    assert strip_padding("we're in, haha") == "we're in"
    assert strip_padding("the lol cats calendar is on the fridge") == "the lol cats calendar is on the fridge"


def test_asides_that_qualify_the_telling_are_padding() -> None:
    assert strip_padding("I'm with Northgate Savings if that matters") == "I'm with Northgate Savings"
    assert strip_padding("Change of plan, the launch is on Friday") == "the launch is on Friday"
    assert strip_padding("Right, house party this Saturday") == "house party this Saturday"
    assert strip_padding("Right after lunch I go to the gym") == "Right after lunch I go to the gym"
    assert strip_padding("ok random update, Claybird moved to Marlow Street") == "Claybird moved to Marlow Street"
    assert strip_padding("The update broke my laptop") == "The update broke my laptop"


def test_a_range_of_short_weekdays_is_written_out() -> None:
    assert split_sentences("we get Ladlebox boxes mon-thu") == ["we get Ladlebox boxes Monday to Thursday"]
    assert split_sentences("open Tue \u2013 Sat") == ["open Tuesday to Saturday"]
    assert split_sentences("the sun came out") == ["the sun came out"]


@pytest.mark.parametrize(("sentence", "clauses"), [
    ("We've got a Kia Niro EV now, so how do I find rapid chargers on long trips?",
     ["We've got a Kia Niro EV now", "how do I find rapid chargers on long trips?"]),
    ("I moved to Leeds last month, any tips for finding a dentist?",
     ["I moved to Leeds last month", "any tips for finding a dentist?"]),
    ("My sister, who lives in York, is visiting on Friday.", ["My sister, who lives in York, is visiting on Friday."]),
])
def test_a_question_after_a_statement_is_its_own_clause(sentence: str, clauses: list[str]) -> None:
    assert split_clauses(sentence, is_clause) == clauses


def test_weekdays_written_short_are_written_out() -> None:
    assert split_sentences("tues and fri, straight after school") == ["Tuesday and Friday, straight after school"]
    assert split_sentences("Brownies on weds at 6") == ["Brownies on Wednesday at 6"]
    assert split_sentences("I sat in the sun") == ["I sat in the sun"]  # no other word is touched


def test_a_time_of_day_in_words_is_written_as_a_clock_shows_it() -> None:
    assert split_sentences("standup's moved to half nine. see you at quarter past ten") == [
        "standup's moved to 9:30.", "see you at 10:15"]
    assert split_sentences("it took half an hour") == ["it took half an hour"]
    assert split_sentences("it's all Fontaines D.C. now") == ["it's all Fontaines D.C. now"]
