"""Chat as people type it: spellings without apostrophes, a topic or a heading before a dash or a colon, a
subject dropped after a dash, asides that are no statement. Each case is worded apart from the scenarios."""

from __future__ import annotations

from datetime import datetime

import pytest

from mnemoflow.memory.english.deltas import find_count_difference
from mnemoflow.memory.english.sentences import (
    is_padding,
    split_clauses,
    split_sentences,
    written_out,
)
from mnemoflow.memory.english.shifts import find_shift
from mnemoflow.memory.english.temporal import resolve_dates
from mnemoflow.memory.english.verbs import expand_is
from mnemoflow.memory.generate.followup import is_clause
from tests.memory.dialogue import say, stored

NOW = datetime(2024, 5, 8, 10, 0)  # a Wednesday


@pytest.mark.parametrize(("typed", "written"), [
    ("im off to Leeds tmrw", "I'm off to Leeds tomorrow"),
    ("Im allergic to kiwi", "I'm allergic to kiwi"),
    ("she couldnt make it, can u tell Jo pls", "she couldn't make it, can you tell Jo please"),
    ("its 2 sugars now", "it's 2 sugars now"),
    ("the dog wagged its tail", "the dog wagged its tail"),  # a possessive stays
    ("my bro's bday", "my brother's birthday"),
])
def test_chat_spellings_are_written_out(typed: str, written: str) -> None:
    assert written_out(typed) == written


@pytest.mark.parametrize("token", ["U-2", "IM me", "code u-77", "BRT-IM4", "dont/ive"])
def test_codes_and_capitals_keep_their_spelling(token: str) -> None:
    assert written_out(token) == token


def test_a_street_abbreviation_before_a_lowercase_word_ends_the_sentence() -> None:
    assert split_sentences("quiz night is at the Fox on Mill St. any tips?") == [
        "quiz night is at the Fox on Mill St.", "any tips?"]
    assert split_sentences("we met at St. Anne's church") == ["we met at St. Anne's church"]


def test_a_short_weekday_before_a_date_is_a_day_not_a_verb() -> None:
    resolved = resolve_dates(split_sentences("the party's on sat 12 april")[0], datetime(2025, 3, 20))
    assert "Saturday April 12, 2025" in resolved.text


def test_an_ordinal_birthday_is_one_day_a_birthday_alone_recurs() -> None:
    assert resolve_dates("Ella's 5th birthday is on 3 June", datetime(2025, 3, 20)).times
    assert not resolve_dates("my birthday is on 3 June", datetime(2025, 3, 20)).times


def test_the_day_named_after_instead_of_is_the_one_ruled_out() -> None:
    assert resolve_dates("it starts on the 9th instead of Monday", NOW).start == datetime(2024, 5, 9)


def test_an_ing_noun_after_a_possessive_is_no_progressive() -> None:
    assert expand_is("my cousin's christening in Cork") == "my cousin's christening in Cork"
    assert expand_is("my cousin's flying in on Friday") == "my cousin is flying in on Friday"


@pytest.mark.parametrize(("sentence", "units"), [
    ("my aunt lives in Sligo, what could I send her for Easter",
     ["my aunt lives in Sligo", "what could I send her for Easter"]),
    ("the gym got sold, so yoga has moved to the church hall",
     ["the gym got sold", "yoga has moved to the church hall"]),
    ("can you sort a meal plan, I'm training for a marathon",
     ["can you sort a meal plan", "I'm training for a marathon"]),
    ("I'm in Leeds, and Omar is in York", ["I'm in Leeds,", "Omar is in York"]),
    ("I got a raise, so we're at 60k now", ["I got a raise, so we're at 60k now"]),  # one change, one unit
    ("the boiler failed again so we've booked Heatfix for Monday",
     ["the boiler failed again", "we've booked Heatfix for Monday"]),
    ("the worktops are late so they've pushed the install back", [  # nothing named: it leans on the reason
        "the worktops are late so they've pushed the install back"]),
    ("my dog Rolo had his checkup last week, he's on 15mg of carprofen now",
     ["my dog Rolo had his checkup last week", "he's on 15mg of carprofen now"]),
    ("I met Ana at the gym, she's lovely", ["I met Ana at the gym, she's lovely"]),
])
def test_clauses_of_different_standing_are_split(sentence: str, units: list[str]) -> None:
    assert split_clauses(sentence, is_clause) == units


def test_discourse_words_alone_are_padding() -> None:
    assert is_padding("bit of news")
    assert is_padding("Plot twist!")
    assert not is_padding("bit of a cold")


def test_amounts_moved_by_a_difference_or_an_amount_of_time() -> None:
    assert find_count_difference("the vet's taking each dose up by 3 units") == (3.0, "units")
    assert find_count_difference("rent's up by £40") is None  # money: find_difference
    assert find_count_difference("up to 14 units") is None  # the new count itself
    assert find_shift("the opening got pulled in by three days").days == -3
    assert find_shift("pull in 2 weeks of data") is None


def test_a_topic_before_a_dash_goes_with_the_statement_after_it() -> None:
    [memory] = say("Ola", "ok Kim's leaving party - I've booked the Anchor for Friday at 6")
    assert memory.content == "Kim's leaving party: Ola has booked the Anchor for May 10, 2024 at 6"


def test_a_heading_before_a_colon_is_dropped_when_it_names_no_topic() -> None:
    [memory] = say("Bo", "small change from HR: Kemi now starts on the 20th instead of Monday")
    assert memory.content.startswith("Kemi now starts on May 20, 2024")
    assert memory.event_start_at == datetime(2024, 5, 20)


def test_an_emphatic_reflexive_after_a_name_is_dropped() -> None:
    lines = [("Mo", "planning lunch for my daughter Ava and her friends"),
             ("Assistant", "Any diets to plan around?", "assistant"), ("Mo", "Ava herself can't have gluten")]
    assert "Ava can't have gluten" in [c.content for c in stored(lines, NOW)]


def test_declining_more_help_is_small_talk() -> None:
    assert say("Mo", "nah I'm good for now", previous=("Assistant", "Want some more ideas?")) == []


def test_a_noun_written_like_a_request_verb_is_no_request() -> None:
    assert [c.content for c in say("Di", "take-home is about £2,100")] == ["Di's take-home is about £2,100"]
    assert [c.content for c in say("Di", "book club has moved to Thursdays")] == [
        "Di's book club has moved to Thursdays"]


def test_a_request_to_keep_before_a_colon_leaves_what_to_keep() -> None:
    assert [c.content for c in say("Oz", "can you keep this for me: the alarm code is 7731", role="user")] == [
        "Oz's alarm code is 7731"]


def test_a_thing_said_booked_with_no_subject_is_the_speakers() -> None:
    [memory] = say("Yan", "physio booked for my shoulder, fri 14 june at 8:20")
    assert memory.content == "Yan has the physio booked for their shoulder, Friday June 14, 2024 at 8:20"
    assert [c.content for c in say("Yan", "the venue is booked for June", role="user")] == [
        "Yan's venue is booked for June 2024"]


def test_a_second_fact_after_and_with_its_own_thing_is_its_own_memory() -> None:
    assert [c.content for c in say("Oz", "the printer's on firmware 2.4, and the scanner sits at 10.0.0.9",
                                         role="user")] == [
        "Oz's printer is on firmware 2.4", "Oz's scanner sits at 10.0.0.9"]
    assert [c.content for c in say("Oz", "take-home is about £2,100")] == ["Oz's take-home is about £2,100"]


def test_a_question_dismissed_leaves_the_news_after_it() -> None:
    assert is_padding("scrap that q")
    assert [c.content for c in say("Di", "forget the printer stuff, my phone's a Pixel 8 now", role="user")] == [
        "Di's phone is a Pixel 8 now"]


def test_may_after_a_day_number_is_the_month_and_so_without_a_comma_brings_a_result() -> None:
    assert split_sentences("race is sun 17 may, we 3 may come") == ["race is Sunday 17 May, we 3 may come"]
    assert split_clauses("the hall flooded so choir has moved to St Luke's", is_clause) == [
        "the hall flooded", "choir has moved to St Luke's"]
    assert split_clauses("I was so tired so we have cancelled it", is_clause) == [
        "I was so tired so we have cancelled it"]


def test_a_lone_noun_said_with_a_value_is_the_speakers_when_told_to_the_assistant() -> None:
    assert [c.content for c in say("Eli", "physio is thurs 16th may at 9:15")] == [
        "Eli's physio is Thursday May 16, 2024 at 9:15"]
    assert [c.content for c in say("Eli", "gym is Fitness Hub on Bell Road", role="user")] == [
        "Eli's gym is Fitness Hub on Bell Road"]
    assert [c.content for c in say("Eli", "council's only gone and raised the parking permit to £95")][0].startswith(
        "Eli's council has only gone")
    # no value, or said to the group: nobody's in particular
    assert say("Eli", "life is good") == []
    lines = [("Ana", "who's coming on Saturday?"), ("Eli", "picnic's on Sunday now, rain forecast")]
    assert not any(c.content.startswith("Eli's picnic") for c in stored(lines, NOW))


def test_a_lone_thing_that_met_its_end_is_the_speakers_when_told_to_the_assistant() -> None:
    assert [c.content for c in say("Eli", "kettle died on us, using the hob for now")][0].startswith(
        "Eli's kettle died")
    assert [c.content for c in say("Eli", "scooter got pinched from outside the library")] == [
        "Eli's scooter got pinched from outside the library"]
    lines = [("Ana", "how was the drive up?"), ("Eli", "van broke down near Carlisle, we're waiting for the AA")]
    assert not any(c.content.startswith("Eli's van") for c in stored(lines, NOW))  # the group's van, maybe


def test_an_answer_that_states_the_speakers_own_thing_stands_alone() -> None:
    assert [c.content for c in say("Eli", "mortgage's £1,020, that's the big one",
                                   previous=("Assistant", "What are your main monthly bills?"))] == [
        "Eli's mortgage is £1,020, that's the big one"]


def test_mine_after_a_question_about_a_product_line_is_the_speakers() -> None:
    contents = [c.content for c in say("Eli", "how often should a 2018 kia ceed get serviced? mine's on about 40k")]
    assert contents == ["Eli's 2018 kia ceed is on about 40k"]


def test_a_product_line_named_in_a_question_is_had() -> None:
    assert "Eli has a kobo clara 2e" in [c.content for c in say("Eli", "can my kobo clara 2e read epubs from dropbox?")]


def test_what_the_open_word_of_a_question_stood_for_goes_in_its_place() -> None:
    assert [c.content for c in say("Eli", "yes, the Bramble Inn by the canal",
                                   previous=("Assistant", "Have you found anywhere for the wake?"))] == [
        "Eli has found the Bramble Inn by the canal for the wake"]


def test_a_fortnight_and_a_weekday_said_with_a_are_read_as_such() -> None:
    assert resolve_dates("the inspection is in a fortnight", NOW).start == datetime(2024, 5, 22)
    assert resolve_dates("I was born on a Sunday", NOW).times == ()


def test_an_allergen_answered_to_a_question_about_allergies_says_who_is_allergic() -> None:
    asked = ("Assistant", "Great, any food allergies I should plan around?")
    assert [c.content for c in say("Ren", "just my husband - sesame", previous=asked)] == [
        "Ren's husband is allergic to sesame"]
    assert [c.content for c in say("Ren", "tree nuts sadly", previous=asked)] == ["Ren is allergic to tree nuts"]
    # a food answered to another question, or an allergen in a statement of its own, is read as said
    assert not any("allergic" in c.content for c in say("Ren", "pasta with prawns please",
                                                         previous=("Assistant", "What would you like for dinner?")))


def test_an_allergy_said_without_its_allergen_is_to_the_one_the_turn_named() -> None:
    assert "Ren is allergic to sesame seeds" in [c.content for c in say("Ren", "no sesame seeds on mine please, "
                                                                                "I'm allergic")]
    assert "Ren is allergic to walnuts" in [c.content for c in say("Ren", "skip the walnuts tho, im allergic")]
    assert "The cat sheds everywhere and Ren is allergic" in [
        c.content for c in say("Ren", "the cat sheds everywhere and I'm allergic")]  # no food named: as said


def test_a_count_answered_with_an_aside_keeps_the_count_in_its_place() -> None:
    assert [c.content for c in say("Ren", "9, if the twins make it",
                                   previous=("Assistant", "How many people are coming?"))] == [
        "9 people are coming, if the twins make it"]


def test_a_hedge_is_small_talk_and_a_modal_without_subject_is_the_speakers() -> None:
    said = say("Tomas", "might drop down to the 10k instead of the half, we'll see", role="user")
    assert [c.content for c in said] == ["Tomas might drop down to the 10k instead of the half"]
    assert [c.content for c in say("Tomas", "decided: doing the 10k, not the half", role="user")] == [
        "Tomas decided: doing the 10k, not the half"]
    assert say("Tomas", "could be a cold, could be covid", role="user") == []  # "it could be": no one's
    said = say("Maria", "Congrats on the promotion! Must have taken a lot of work.")
    assert not [c for c in said if "Maria must" in c.content]  # what may have been, not Maria's
    said = say("Tomas", "Noted, shifting my slides to match.", previous=("Priya", "The review slips to Friday."))
    assert not [c for c in said if "Tomas noted" in c.content]  # "Noted," acknowledges; "Decided:" announces
    assert say("Tomas", "fingers crossed, time will tell") == []


def test_a_thanks_said_as_ta_or_cheers_is_small_talk_and_padding() -> None:
    assert say("Raff", "ok will look, ta", previous=("Assistant", "The server is at 192.168.1.40")) == []
    assert [c.content for c in say("Raff", "my new number is 07700 900123, cheers", role="user")] == [
        "Raff's new number is 07700 900123"]
