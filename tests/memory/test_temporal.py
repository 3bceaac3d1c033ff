"""Relative dates resolved against when they were said, with month and year wrap-around."""

from __future__ import annotations

from datetime import datetime

import pytest

from mnemoflow.memory.english.temporal import resolve_dates

WED = datetime(2024, 5, 8, 10, 0)  # a Wednesday
DEC_20 = datetime(2024, 12, 20, 9, 0)  # a Friday
JAN_31 = datetime(2024, 1, 31, 9, 0)  # a Wednesday, the last day of a month


@pytest.mark.parametrize(("now", "text", "rewritten", "start", "end"), [
    (WED, "we leave today", "we leave on May 8, 2024", "2024-05-08", "2024-05-09"),
    (WED, "we leave tomorrow morning", "we leave on the morning of May 9, 2024", "2024-05-09", "2024-05-10"),
    (WED, "it rained yesterday", "it rained on May 7, 2024", "2024-05-07", "2024-05-08"),
    (WED, "dinner tonight", "dinner on the night of May 8, 2024", "2024-05-08", "2024-05-09"),
    (WED, "due next week", "due in the week of May 13, 2024", "2024-05-13", "2024-05-20"),
    (WED, "busy last week", "busy in the week of April 29, 2024", "2024-04-29", "2024-05-06"),
    (WED, "moving next month", "moving in June 2024", "2024-06-01", "2024-07-01"),
    (WED, "hired last year", "hired in 2023", "2023-01-01", "2024-01-01"),
    (WED, "hiking this weekend", "hiking on the weekend of May 11-12, 2024", "2024-05-11", "2024-05-13"),
    (WED, "call me on Monday", "call me on May 13, 2024", "2024-05-13", "2024-05-14"),
    (WED, "we met on Monday", "we met on May 6, 2024", "2024-05-06", "2024-05-07"),
    (WED, "see you next Friday", "see you on May 17, 2024", "2024-05-17", "2024-05-18"),
    (WED, "see you this Friday", "see you on May 10, 2024", "2024-05-10", "2024-05-11"),
    (WED, "it broke last Thursday", "it broke on May 2, 2024", "2024-05-02", "2024-05-03"),
    (WED, "back in 3 days", "back in 3 days (May 11, 2024)", "2024-05-11", "2024-05-12"),
    (WED, "sold it two weeks ago", "sold it two weeks ago (April 24, 2024)", "2024-04-24", "2024-04-25"),
    (WED, "Japan next April", "Japan in April 2025", "2025-04-01", "2025-05-01"),
    (WED, "Japan in September", "Japan in September 2024", "2024-09-01", "2024-10-01"),
    (WED, "we moved in March", "we moved in March 2024", "2024-03-01", "2024-04-01"),
    (WED, "we moved in June", "we moved in June 2023", "2023-06-01", "2023-07-01"),
    (WED, "party on the 14th", "party on May 14, 2024", "2024-05-14", "2024-05-15"),
    (WED, "wedding on June 3rd", "wedding on June 3, 2024", "2024-06-03", "2024-06-04"),
    (WED, "moved to June 14", "moved to June 14, 2024", "2024-06-14", "2024-06-15"),
    (WED, "trip next summer", "trip in summer 2024", "2024-06-01", "2024-09-01"),
    (WED, "by the end of June", "by the end of June 2024", "2024-06-21", "2024-07-01"),
    (DEC_20, "starting next month", "starting in January 2025", "2025-01-01", "2025-02-01"),
    (DEC_20, "starting in three weeks", "starting in three weeks (January 10, 2025)", "2025-01-10", "2025-01-11"),
    (DEC_20, "due on the 14th", "due on January 14, 2025", "2025-01-14", "2025-01-15"),
    (DEC_20, "see you next Monday", "see you on December 23, 2024", "2024-12-23", "2024-12-24"),
    (DEC_20, "skiing next weekend", "skiing on the weekend of December 28-29, 2024", "2024-12-28", "2024-12-30"),
    (JAN_31, "visiting next month", "visiting in February 2024", "2024-02-01", "2024-03-01"),
    (JAN_31, "it was last month", "it was in December 2023", "2023-12-01", "2024-01-01"),
    (JAN_31, "in 1 month", "in 1 month (February 29, 2024)", "2024-02-29", "2024-03-01"),
    (JAN_31, "the 15th", "on February 15, 2024", "2024-02-15", "2024-02-16"),
])
def test_relative_dates_resolve(now: datetime, text: str, rewritten: str, start: str, end: str) -> None:
    resolved = resolve_dates(text, now)
    assert resolved.text == rewritten
    assert (resolved.start, resolved.end) == (datetime.fromisoformat(start), datetime.fromisoformat(end))


@pytest.mark.parametrize("text", [
    "I go every Monday", "I work from home on Fridays", "in the office Tuesday through Thursday",
    "her birthday is October 12", "May I ask something?", "we march on", "the next week was hard",
    "next year's budget", "the 3:41 finish on 5th Avenue", "nothing to see here",
])
def test_routines_and_look_alikes_are_not_dates(text: str) -> None:
    resolved = resolve_dates(text, WED)
    assert (resolved.text, resolved.times) == (text, ())


def test_absolute_dates_keep_their_words_and_still_give_an_event_time() -> None:
    for text, start in [("born on May 14, 1990", "1990-05-14"), ("due 2024-06-01", "2024-06-01"),
                        ("graduated in 2019", "2019-01-01")]:
        resolved = resolve_dates(text, WED)
        assert resolved.text == text and resolved.start == datetime.fromisoformat(start)


def test_several_phrases_give_one_span_and_each_phrase_is_kept() -> None:
    resolved = resolve_dates("the review moved from Thursday to next Friday", WED)
    assert resolved.text == "the review moved from May 9, 2024 to May 17, 2024"
    assert resolved.temporal_text == "Thursday; next Friday"
    assert (resolved.start, resolved.end) == (datetime(2024, 5, 9), datetime(2024, 5, 18))


MAR_10 = datetime(2024, 3, 10, 9, 0)


@pytest.mark.parametrize(("text", "rewritten"), [
    ("we decided to move in September", "we decided to move in September 2024"),
    ("I signed up for a course in September", "I signed up for a course in September 2024"),
    ("I told Sam we would visit in September", "I told Sam we would visit in September 2024"),
    ("I moved in September", "I moved in September 2023"),  # done, not planned
    ("last year we decided to move in September", "in 2023 we decided to move in September 2023"),
])
def test_a_plan_made_in_the_past_is_still_ahead(text: str, rewritten: str) -> None:
    assert resolve_dates(text, MAR_10).text == rewritten


def test_statements_joined_by_a_semicolon_keep_their_own_tense() -> None:
    said = "Lily ended up choosing Riverside; Lily starts in the fall"
    resolved = resolve_dates(said, datetime(2022, 3, 15))
    assert resolved.text == "Lily ended up choosing Riverside; Lily starts in fall 2022"


@pytest.mark.parametrize(("text", "rewritten"), [
    ("ordered a new bike, arrives friday", "ordered a new bike, arrives on May 10, 2024"),
    ("flew out monday, she lands thursday", "flew out on May 6, 2024, she lands on May 9, 2024"),
    ("it got stolen friday, the new one comes monday", "it got stolen on May 3, 2024, the new one comes on May 13, 2024"),
    ("we went hiking, and on saturday we had a picnic", "we went hiking, and on May 4, 2024 we had a picnic"),
    ("I visited mom on monday, and dad on tuesday", "I visited mom on May 6, 2024, and dad on May 7, 2024"),
    ("we bought two shirts, three boxes friday", "we bought two shirts, three boxes on May 3, 2024"),
])
def test_a_clause_with_a_present_verb_of_its_own_keeps_its_tense(text: str, rewritten: str) -> None:
    """A present verb in the date's own clause says what is scheduled; a clause without a verb of its own (or
    with only plural nouns) takes the tense of the statement it belongs to."""
    assert resolve_dates(text, WED).text == rewritten


@pytest.mark.parametrize(("text", "rewritten"), [
    ("grabbed coffee on the way in today", "grabbed coffee on the way in on May 8, 2024"),
    ("staying in tonight", "staying in on the night of May 8, 2024"),
    ("I'll read it in tomorrow's paper", "I'll read it in May 9, 2024's paper"),
    ("friday's game is at 6", "May 10, 2024's game is at 6"),
])
def test_in_before_a_day_is_not_the_days_and_a_day_owning_a_thing_takes_no_preposition(text: str,
                                                                                        rewritten: str) -> None:
    assert resolve_dates(text, WED).text == rewritten


def test_a_weekday_naming_a_kind_of_thing_is_not_a_date() -> None:
    sunday = datetime(2024, 4, 14, 9, 0)
    for text in ("I joined the club for the long Sunday runs", "I skip my Monday classes"):
        assert resolve_dates(text, sunday).times == ()
    assert resolve_dates("Our Sunday lunch is at noon", sunday).text == "Our April 21, 2024 lunch is at noon"


def test_a_birth_date_without_a_year_gets_no_year() -> None:
    resolved = resolve_dates("Aisha was born on March 12", WED)
    assert (resolved.text, resolved.times) == ("Aisha was born on March 12", ())
    assert resolve_dates("Aisha was born on March 12, 1990", WED).start == datetime(1990, 3, 12)
    assert resolve_dates("the party is on March 12", WED).times  # not a birth date: it is dated


@pytest.mark.parametrize(("text", "rewritten"), [
    ("we're pushing the launch to Thursday next week", "we're pushing the launch to June 6, 2024"),
    ("next week on Thursday works", "June 6, 2024 works"),
    ("on Thursday of next week", "on June 6, 2024"),
    ("it moved to Tuesday this week", "it moved to May 28, 2024"),
])
def test_a_weekday_of_next_or_this_week_is_one_date(text: str, rewritten: str) -> None:
    assert resolve_dates(text, datetime(2024, 5, 31, 10)).text == rewritten  # a Friday


@pytest.mark.parametrize("text", [
    "we meet at the Lantern Room, first Tuesday of every month", "same first Tuesday slot",
    "the last Friday of the month",
])
def test_a_weekday_of_each_month_is_not_a_date(text: str) -> None:
    assert resolve_dates(text, datetime(2024, 5, 31, 10)).times == ()


@pytest.mark.parametrize(("text", "said", "start"), [
    ("A product role at a charity called Brightwater, starting in November", "2023-10-06", "2023-11-01"),
    ("I started in November", "2023-10-06", "2022-11-01"),
    ("I've done Welsh on Duolingo every single day since January, 140-day streak!", "2024-05-22", "2024-01-01"),
])
def test_starting_is_ahead_and_since_says_when_a_routine_began(text: str, said: str, start: str) -> None:
    resolved = resolve_dates(text, datetime.fromisoformat(said))
    assert resolved.start == datetime.fromisoformat(start)


def test_a_date_named_as_not_working_is_not_when_it_happens() -> None:
    resolved = resolve_dates("party's on Sunday instead, half the guests can't do Saturday", datetime(2024, 3, 20, 9))
    assert resolved.text == "party's on March 24, 2024 instead, half the guests can't do March 23, 2024"
    assert resolved.start == datetime(2024, 3, 24)


@pytest.mark.parametrize(("now", "text", "rewritten"), [
    (datetime(2025, 1, 16, 9), "the auditors are in the monday after next", "the auditors are on January 27, 2025"),
    (WED, "the Saturday after next", "on May 18, 2024"),  # the coming Saturday is May 11
    (WED, "Ysolde flies in three weeks today", "Ysolde flies in on May 29, 2024"),
    (WED, "we fly a week tomorrow", "we fly on May 16, 2024"),
    (WED, "the MOT runs out a fortnight on Tuesday", "the MOT runs out on May 28, 2024"),  # the Tuesday coming, then two weeks
    (WED, "the party is a week on Saturday", "the party is on May 18, 2024"),
    (datetime(2022, 7, 17, 9), "camping the weekend after next", "camping on the weekend of July 30-31, 2022"),
    (WED, "the audit is the week after next", "the audit is in the week of May 20, 2024"),
])
def test_a_day_after_next_and_weeks_from_today_are_one_date(now: datetime, text: str, rewritten: str) -> None:
    assert resolve_dates(text, now).text == rewritten


@pytest.mark.parametrize(("now", "text", "rewritten"), [
    # a weekday with a day of the month is that day, in the first month where it falls on that weekday
    (datetime(2024, 10, 1, 9), "we're out of the studio on Friday 25th", "we're out of the studio on Friday October 25, 2024"),
    (datetime(2024, 10, 1, 9), "see you Tuesday 3rd", "see you Tuesday December 3, 2024"),
    # a month cut short after a preposition; alone, "Jan" may be a name
    (datetime(2024, 10, 15, 9), "he turns 8 in Jan", "he turns 8 in January 2025"),
    (datetime(2024, 10, 15, 9), "I met Jan at the gym", "I met Jan at the gym"),
])
def test_a_day_of_the_month_after_its_weekday_and_a_short_month_are_dates(now: datetime, text: str,
                                                                           rewritten: str) -> None:
    assert resolve_dates(text, now).text == rewritten


def test_a_day_something_is_moved_to_is_ahead_even_with_its_weekday() -> None:
    assert resolve_dates("they bumped me to Thursday June 6", datetime(2026, 11, 27, 9)).text == \
        "they bumped me to Thursday June 6, 2027"
