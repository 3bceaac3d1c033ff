"""mem0's verbs over the real service: add that understands (events), update that keeps history,
delete_all per owner, filtered search, by-id calls for the tenant's holder, and AsyncMemory."""

from __future__ import annotations

import asyncio
import inspect
import json
import typing
from datetime import datetime
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from mnemoflow import AsyncMemory, Memory
from mnemoflow.errors import BadInputError, NotFoundError
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

CHANGES = {  # a fact, then what is true now: each leaves one current memory and the old one in history
    "a second move": ("Alex moved from Berlin to Porto in March 2026",
                      "Alex now lives in Lisbon, he moved again in October"),
    "a move": ("Priya lives in Hamburg", "Priya moved to Munich last week"),
    "a switch of tools": ("Alex uses VS Code for Python", "Alex switched from VS Code to Neovim"),
    "a new employer": ("Dana works at Globex as a data engineer", "Dana now works at Initech"),
    "a changed number": ("The Q3 marketing budget is $40,000", "The Q3 marketing budget was raised to $55,000"),
    "a changed count": ("The platform team has 5 engineers", "The platform team now has 8 engineers"),
    "a changed preference": ("Maya prefers tea in the morning", "Maya prefers coffee in the morning now"),
    "a new phone number": ("Sam's phone number is 555-1234", "Sam's new phone number is 555-9876"),
    "a new email address": ("Priya's email is priya@acme.io", "Priya's new email is p.shah@globex.com"),
    "a current address": ("Tom's address is 12 Elm Street", "Tom's current address is 40 Oak Road"),
    "a tool moved to, with a possessive between": ("We use Jira for tickets",
                                                   "We moved our tickets over to Linear last week"),
    "an hour said without minutes": ("Our standup is at 9:30", "Standup is now at 10"),
    "a number raised by someone else": ("My rent is 1,200 a month", "My landlord raised the rent to 1,350"),
    # no word names the slot twice: the old memory restated with the new value reads as the new one
    "a car named by driving it": ("My car is a Honda Civic", "I drive a Tesla Model 3 now"),
    "an employer named by a new job": ("I work at Google", "I started a new job at Stripe"),
    # no date named: the old one moved by the amount (the install rarely shares a word with the kitchen)
    "a date moved by an amount": ("The fitters are coming to put the new kitchen in on March 12, 2030",
                                  "bad news, the worktops are delayed so they've pushed the install back a week"),
    "a move into a dwelling": ("I'm in a tiny flat on Canal Row in Dunmore",
                               "We finally moved into a terraced house on Weaver Street in Kilbride"),
    # a new value with no subject of its own: the memory holding the one value of its kind, restated
    "a code said as mine": ("The gate code for my storage unit is 0392", "mine's 5518 now"),
    "a count said as where we are": ("Our wedding guest list is capped at 90", "we're at 120 now"),
    # leaving or ending what was named ends what was said of it
    "a service cancelled": ("We get Ladlebox boxes for dinners", "we cancelled Ladlebox, the portions kept shrinking"),
    "a phone given up on": ("My Pixel 6 keeps dropping wifi", "I gave up on the pixel"),
    # a value set to a new one by whoever sets it, whoever that is
    "a price hiked by the provider": ("Our broadband is £32 a month with Zapline",
                                      "Zapline are hiking it to £38 from December"),
    "a launch pulled in": ("We're launching the new checkout flow on October 15, 2030",
                           "Leadership wants the checkout launch pulled in to October 8, 2030"),
    "a diet said alone": ("I'm vegan", "so pescatarian now"),
    "a new number said with no owner": ("My phone number is 07700 900123", "new number's 07700 900456"),
    "an amount changed by a difference": ("My gym membership is £30 a month", "they've put the gym up by a fiver"),
    "a habit one used to have": ("I love running in the mornings", "I used to love running, I swim now"),
    "a taste one has gone off": ("I drink coffee every morning", "I've gone off coffee, it's green tea these days"),
    "a car written off": ("My car is a blue Golf", "the Golf got written off, I'm driving a Yaris now"),
    "an age turned": ("I'm 34", "turned 35 yesterday"),
    "a time told in words": ("The standup is at 9:15", "standup's moved to half nine"),
    "a taste one is not into anymore": ("My favourite band is Radiohead", "not really into Radiohead anymore"),
    "a thing named bare at a sentence's start": ("Our wedding is on June 7, 2030", "wedding's now on June 14, 2030"),
    "a person's appointment by their role": ("The dentist is at 2pm on Friday May 3, 2030", "dentist moved to 4:30"),
    "a correction that turns out": ("I'm allergic to penicillin",
                                    "turns out it's amoxicillin I react to, not penicillin"),
    "an appointment someone moved": ("My physio appointment is on Tuesday June 4, 2030 at 3pm",
                                     "they bumped me to Thursday June 6, 2030"),
    # the move names nothing of what moved: what is on the new day is the old memory, restated
    "an appointment moved by whoever rang": ("stick the dentist in for me, Tuesday June 4, 2030 at 10:40",
                                             "the surgery rang, they've bumped me to Thursday June 6, 2030"),
    "a thing said to be gone": ("My ThinkPad T480 is crawling", "the thinkpad's finally binned"),
    "an appointment moved, said after who called": ("pop the physio in the diary for Wednesday June 5, 2030 at 4",
                                                     "physio's office called, I'm now on Friday June 7, 2030"),
    "a thing nicked": ("I ride a Boardman road bike", "the Boardman got nicked, I'm on a Ribble now"),
    "a dose upped with nothing of the drug named": ("I take 10mg of citalopram", "they've upped my dose to 20mg"),
    "a salary said with no owner": ("My salary is 48k", "salary's gone up to 52k after the review"),
    "a plan put on another day instead": ("The team offsite is on Thursday September 18, 2030",
                                          "can't do the 18th now, so it's Friday September 19, 2030 instead"),
    "a club relocated to a new place": ("Our book club meets on Wednesdays at the Crown and Anchor",
                                        "book club has relocated to the upstairs room at Westfield Library"),
    "a rehearsal moved to a place told with another preposition": (
        "Our choir rehearses on Tuesdays at St Mary's hall",
        "the hall flooded so choir has moved to the library on Fore Street"),
    "a count raised by a difference": ("Our cat Mog gets 2 units of insulin twice a day",
                                       "the vet is putting each jab up by 1 unit from tonight"),
    "a launch pulled in by an amount": ("The website relaunch is on Tuesday October 15, 2030",
                                        "plot twist, the relaunch got pulled in by a week"),
    "a phone come by, named by its make": ("My phone is a OnePlus 9", "got a Pixel 8 on Saturday"),
    "a car one is in now": ("I drive a Ford Fiesta", "I'm driving a Kia Niro now"),
    "a booking moved to another place": ("I've booked Trattoria Roma for our anniversary dinner on Friday June 7, 2030",
                                         "Trattoria Roma can't do gluten free, so I've moved us to Bella Vista"),
    "a start moved, the old day ruled out": ("Marco takes over the on-call rota on Monday October 14, 2030",
                                             "small change: Marco now takes over on Wednesday October 16, 2030 "
                                             "instead of Monday"),
    "a car sold and one picked up, lowercase": ("my car's a 2016 mazda cx-5 on 90k miles",
                                                "sold the mazda last month, picked up a Skoda Enyaq"),
    "a tool given up on, the new one moved to": ("I plan my week in Trello",
                                                 "gave up on trello, moved all of it over to Asana"),
    "an appointment on a new day, said as it": ("The vet appointment is on Tuesday October 8, 2030 at 4pm",
                                                "the vet rang to move us, it's thursday the 10th now, same time"),
    "an amount put up, said as the new one": ("My council tax is £1,480 a year",
                                              "the council's put it up £1,560 from April"),
    "a phone given, the old one named going": ("My phone is a Pixel 7",
                                               "work gave me an iPhone 15, the pixel is going on ebay"),
    "a bike of another make come by, the word bike unsaid": ("My bike is a 2021 Cannondale Quick 4",
                                                             "picked up a secondhand Orbea at the weekend :)"),
    # the new value, then a clause of its own on the old one: the old one named is no detail of it
    "a new value, a word on the old one after it": ("I drive a silver Toyota Corolla",
                                                    "I drive a Kia Niro now, the Toyota was too thirsty"),
    "a phone replaced, the old one remarked on": ("My phone is a black Pixel 7",
                                                  "My phone is an iPhone 15 now, the Pixel was too slow"),
    "a bank switched, the old account remarked on": ("We bank with a Lloyds joint account",
                                                     "We bank with Monzo now, the Lloyds account was too pricey"),
}


LOOK_ALIKES = {  # what reads like a change and is not one: the first memory stays current
    "a comparison": ("The gym is £30 a month", "the pool is a tenner more than the gym"),
    "an age from before": ("I'm 31", "I turned 30 last year, that was a big party"),
    "another thing given up": ("I drink coffee every morning", "I've gone off tea, coffee all the way"),
    "another person's past": ("I'm vegan", "my partner used to be vegan"),
    "another appointment moved": ("My physio appointment is on Tuesday June 4, 2030 at 3pm",
                                  "they moved my dentist to Thursday June 6, 2030"),
    "a day off": ("Maya says Dan is great to work with", "Dan's off today"),
    "another person's wedding": ("Our wedding is on June 7, 2030", "my sister's wedding is on June 14, 2030"),
    "what the dentist said": ("The dentist is at 2pm on Friday May 3, 2030", "the dentist said I need to floss more"),
    "something else that turns out": ("I'm allergic to penicillin", "turns out the rash was from the new soap"),
    "another person's thing that died": ("My car is a blue Golf", "my brother's Golf died on the motorway"),
    "another's dose upped": ("I take 10mg of citalopram", "they've upped the dog's dose to 20mg"),
    "another person's plan instead": ("The team offsite is on Thursday September 18, 2030",
                                      "my sister's party is on Friday September 19, 2030 instead of Saturday"),
    "another thing of the same make binned": ("My laptop is a Dell XPS 13",
                                              "the old Dell monitor is in the bin, got a new LG"),
    "another plan on another day": ("The team offsite is on Thursday September 18, 2030",
                                    "we're going to the cinema on Friday September 19, 2030 instead"),
    "a thing moved in the past": ("Marco takes over the on-call rota on Monday October 14, 2030",
                                  "Marco moved it to the wiki last month"),
    "a phone one had long ago": ("My phone is a OnePlus 9", "I used a Nokia 3310 as a teenager"),
    "another person's car of another make": ("I drive a Ford Fiesta", "my sister drives a Toyota Yaris"),
    "a sport that is also a car's name": ("I drive a Ford Fiesta", "I play golf on Sundays now"),
    "music that is also a car's name": ("I drive a Honda Civic", "I'm into jazz these days"),
    "a phone bought for someone else": ("My phone is a OnePlus 9", "got my dad a Pixel 8 for Christmas"),
    "a second device beside the first": ("My e-reader is a Kindle", "I also picked up a Kobo for the bath"),
    "another count up by a difference": ("Our cat Mog gets 2 units of insulin twice a day",
                                         "Mog's weight is up by 2 kg since the spring"),
    "the same car named by its make": ("My car is a Volvo XC60", "I'm keeping the Volvo for the school run"),
    "a second car of another make": ("My car is a Volvo XC60", "we bought a second car, a little Fiat 500"),
}


@pytest.fixture
def memory(tmp_path: Path) -> typing.Iterator[Memory]:
    with Memory(home=tmp_path / "home", tenant_id="acme") as m:
        yield m


@pytest.mark.parametrize(("before", "after"), list(CHANGES.values()), ids=list(CHANGES))
def test_direct_adds_of_a_change_leave_one_current_memory(memory: Memory, before: str, after: str) -> None:
    first = memory.add(before, user_id="alex")
    assert [e.event for e in first.results] == ["ADD"]
    second = memory.add(after, user_id="alex")
    [event] = second.results
    assert event.event == "UPDATE" and event.previous_id == first.results[0].id
    assert event.previous_memory == first.results[0].memory
    [current] = memory.get_all(user_id="alex")
    assert current.id == event.id and current.is_latest
    history = memory.history(current.id)  # by id alone, as in mem0
    assert [(h["event"], h["memory_id"]) for h in history if h["event"]] == [
        ("ADD", first.results[0].id), ("UPDATE", current.id)]
    assert history[-1]["old_memory"] == first.results[0].memory and history[-1]["new_memory"] == current.content
    assert memory.get(first.results[0].id).id == current.id  # the past version's id names the memory as it is now


@pytest.mark.parametrize(("before", "after"), [
    ("I drink two espressos every morning", "I've switched to green tea in the mornings"),
    ("My laptop runs Windows 11", "I wiped the laptop and put Ubuntu on it"),
])
def test_a_change_the_rules_cannot_name_is_a_possible_update_both_current(memory: Memory, before: str,
                                                                          after: str) -> None:
    """The rules cannot tell a change from a second value (a slot no word names twice, a change of a thing
    they share), so the pair is a possible update (MAY_UPDATE, and an UPDATES for review), not a guess."""
    first = memory.add(before, user_id="alex").results[0]
    [second] = memory.add(after, user_id="alex").results
    assert (second.event, second.review) == ("ADD", [first.id])
    assert {first.id, second.id} <= {m.id for m in memory.get_all(user_id="alex")}
    service, scope = memory._service, Scope("acme", "alex")
    assert service.store.linked_memories(scope, [second.id], ("MAY_UPDATE",)) == [(second.id, first.id, "MAY_UPDATE")]


@pytest.mark.parametrize(("before", "after", "new"), [
    ("I use Evernote for all my notes", "binned Evernote, we've gone over to Notion", "Notion"),
    ("I back up my photos to Dropbox", "finally dumped dropbox, my photos all live in iCloud now", "iCloud"),
])
def test_what_takes_the_place_of_a_thing_ended_in_the_same_add_replaces_it_too(memory: Memory, before: str,
                                                                              after: str, new: str) -> None:
    notes = memory.add(before, user_id="alex")
    switched = memory.add(after, user_id="alex")
    # one statement (the ending and what came instead), one change of the old memory
    assert [(e.event, e.previous_id) for e in switched.results] == [("UPDATE", notes.results[0].id)]
    [replacing] = [e for e in switched.results if new in e.memory]
    assert replacing.id in {m.id for m in memory.get_all(user_id="alex")}


@pytest.mark.parametrize(("before", "after"), list(LOOK_ALIKES.values()), ids=list(LOOK_ALIKES))
def test_what_only_looks_like_a_change_leaves_the_first_memory_current(memory: Memory, before: str,
                                                                        after: str) -> None:
    first = memory.add(before, user_id="alex")
    second = memory.add(after, user_id="alex")
    assert all(e.event != "UPDATE" for e in second.results), second.results
    assert memory.get(first.results[0].id).is_latest


@pytest.mark.parametrize(("user_id", "named"), [("default", "User"), ("u_81f2", "User"), ("ana@example.com", "User"),
                                               ("ana", "Ana")])
def test_a_statement_names_its_user_only_by_an_id_that_reads_as_a_name(memory: Memory, user_id: str,
                                                                       named: str) -> None:
    [event] = memory.add("I take my tea with oat milk", user_id=user_id).results
    assert event.memory.startswith(f"{named} takes"), event.memory


def test_a_move_that_names_nothing_of_what_moved_restates_it(memory: Memory) -> None:
    memory.add("I have the dentist on Tuesday June 4, 2030 at 10:40", user_id="alex")
    [moved] = memory.add("the surgery rang, they've bumped me to Thursday June 6, 2030", user_id="alex").results
    assert moved.memory == "Alex has the dentist on June 6, 2030 at 10:40"


def test_an_amount_set_by_someone_who_names_nothing_of_it_restates_the_memory(memory: Memory) -> None:
    memory.add("I take 10mg of citalopram", user_id="alex")
    [upped] = memory.add("they've upped my dose to 20mg", user_id="alex").results
    assert upped.memory == "Alex takes 20mg of citalopram"


def test_what_comes_after_a_thing_said_gone_replaces_it_rather_than_a_detail_of_it(memory: Memory) -> None:
    laptop = memory.add("my thinkpad T480 is absolutely crawling", user_id="alex").results[0]
    memory.add("already got an SSD in it", user_id="alex")
    switched = memory.add("the thinkpad's finally binned. ended up going with a MacBook Air", user_id="alex")
    assert [(e.event, e.previous_id) for e in switched.results] == [("UPDATE", laptop.id)]
    assert "MacBook Air" in switched.results[0].memory


def test_a_plan_called_off_and_what_came_instead_replace_it(memory: Memory) -> None:
    trip = memory.add("We're going to Lisbon in June", user_id="alex")
    changed = memory.add("Lisbon's off, we're doing Porto instead", user_id="alex")
    assert [(e.event, e.previous_id) for e in changed.results] == [("UPDATE", trip.results[0].id)]
    assert "Porto" in changed.results[0].memory
    assert trip.results[0].id not in {m.id for m in memory.get_all(user_id="alex")}
    assert memory.get(trip.results[0].id).id in {e.id for e in changed.results}  # its id leads to what replaced it


def test_a_shift_said_of_another_thing_leaves_the_lone_event_where_it_was(memory: Memory) -> None:
    launch = memory.add("We're launching the new checkout flow on October 15, 2030", user_id="alex")
    comms = memory.add("All the comms shift a week earlier", user_id="alex")
    assert all(e.event != "UPDATE" for e in comms.results)
    assert memory.get(launch.results[0].id).is_latest
    moved = memory.add("they've pushed the launch back a week", user_id="alex")  # said of it: it moves
    assert [e.event for e in moved.results] == ["UPDATE"] and "October 22, 2030" in moved.results[0].memory


def test_a_bare_subject_is_said_as_the_memory_it_replaces_said_it(memory: Memory) -> None:
    memory.add("Our choir rehearses on Tuesdays at St Mary's hall", user_id="alex")
    [event] = memory.add("the hall flooded so choir has moved to the library on Fore Street", user_id="alex").results
    assert event.event == "UPDATE" and event.memory == "Alex's choir has moved to the library on Fore Street"


def test_a_provider_switched_to_is_no_new_place_for_the_device_swapped_with_it(memory: Memory) -> None:
    memory.add("Our router is a BT Smart Hub 2 in the hallway", user_id="alex")
    memory.add("switched broadband to Hyperoptic and they swapped the BT hub for a Deco mesh", user_id="alex")
    current = [m["memory"] for m in memory.get_all(user_id="alex")["results"]]
    assert not any("router is a Hyperoptic" in text for text in current)


def test_add_events_repeats_and_verbatim(memory: Memory) -> None:
    conversation = [{"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
                    {"role": "assistant", "content": "How about a thriller? They can be quite engaging."},
                    {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."}]
    added = memory.add(conversation, user_id="alice", metadata={"category": "movies"})
    assert added.created and {e.event for e in added.results} == {"ADD"}
    assert any("sci-fi" in e.memory for e in added.results)
    assert all("thriller? They" not in e.memory for e in added.results)  # the assistant's turn is context
    stored = memory.get(added.results[0].id, user_id="alice")
    assert stored["metadata"] == {"category": "movies"} and stored.metadata["source_turns"][0]["speaker"] == "alice"
    again = memory.add(conversation, user_id="alice")
    assert not again.created and {e.event for e in again.results} == {"NONE"}
    assert {e.id for e in again.results} <= {e.id for e in added.results}

    raw = memory.add([{"role": "user", "content": "  raw   line one"}, {"role": "system", "content": "ignored"},
                      {"role": "assistant", "content": "raw line two", "name": "helper"}],
                     user_id="alice", infer=False)
    assert [(e.event, e.memory) for e in raw.results] == [("ADD", "raw line one"), ("ADD", "raw line two")]
    assert memory.get(raw.results[1].id)["metadata"] == {}  # the caller gave none: nothing is written into it
    repeat = memory.add("raw line one", user_id="alice", infer=False)
    assert [(e.event, e.id) for e in repeat.results] == [("NONE", raw.results[0].id)]


def test_a_statement_told_later_is_read_at_the_time_it_was_said(memory: Memory) -> None:
    [event] = memory.add("My dentist appointment is tomorrow", user_id="alex", timestamp="2026-01-05T09:00:00Z").results
    stored = memory.get(event.id, user_id="alex")
    assert stored.observed_at == datetime(2026, 1, 5, 9) and stored.event_start_at == datetime(2026, 1, 6)
    [kept] = memory.add("Alex keeps bees", user_id="alex", infer=False, timestamp="2025-06-01").results
    assert memory.get(kept.id, user_id="alex").observed_at == datetime(2025, 6, 1)
    [own] = memory.add([{"role": "user", "content": "I sing in a choir", "timestamp": "2024-02-02T18:00:00Z"}],
                       user_id="alex", timestamp="2025-01-01").results  # a turn's own time wins
    assert memory.get(own.id, user_id="alex").observed_at == datetime(2024, 2, 2, 18)
    for bad, said in ((1767600000, "not a number"), ("soon", "timestamp: ")):
        with pytest.raises(BadInputError, match=said):
            memory.add("Alex rows on Saturdays", user_id="alex", timestamp=bad)  # type: ignore[arg-type]
    assert not memory.search("rowing on Saturdays", user_id="alex", threshold=0.5).results


def test_history_told_out_of_order_keeps_the_newer_value_current_and_first(memory: Memory) -> None:
    [lisbon] = memory.add("We moved to Lisbon last month", user_id="alex", timestamp="2026-06-01").results
    memory.add("I live in Porto", user_id="alex", timestamp="2025-01-01")  # said before the move, told after it
    assert memory.get(lisbon.id, user_id="alex").is_latest
    assert memory.recall("where does Alex live", user_id="alex").items[0].id == lisbon.id


def test_a_change_said_with_a_pronoun_keeps_the_name_it_is_about(memory: Memory) -> None:
    """"Ana quit the pharmacy, she teaches yoga now": a statement (the pronoun has its verb), never a fragment
    the speaker "has" or says ("Kim: ana quit ...")."""
    memory.add("My sister Ana works as a pharmacist", user_id="kim")
    events = memory.add("Ana quit the pharmacy, she teaches yoga now", user_id="kim").results
    assert [e.memory for e in events if "yoga" in e.memory] == ["Ana quit the pharmacy, she teaches yoga now"]


def test_small_talk_and_questions_added_as_statements_keep_nothing(memory: Memory) -> None:
    for said in ("cheers!", "morning", "Which train gets to Leeds first?"):
        assert memory.add(said, user_id="alex").results == []
    assert memory.get_all(user_id="alex").results == []
    [kept] = memory.add("cheers!", user_id="alex", infer=False).results  # as written, when asked to
    assert kept.memory == "cheers!"


def test_bad_messages_are_refused_and_nothing_is_written(memory: Memory) -> None:
    for bad in ([], "   ", [{"role": "user", "content": {"type": "image_url"}}], [{"role": "user"}]):
        with pytest.raises(BadInputError):
            memory.add(bad, user_id="alex")  # type: ignore[arg-type]
    with pytest.raises(BadInputError, match="user_id, agent_id or run_id"):
        memory.add("Alex keeps bees")
    assert len(memory.get_all(user_id="alex")) == 0


def test_update_writes_a_version_and_history_keeps_the_old(memory: Memory) -> None:
    [event] = memory.add("Alex drinks black coffee", user_id="alex", infer=False, metadata={"source": "chat"}).results
    updated = memory.update(event.id, data="Alex drinks decaf now")
    assert updated.event == "UPDATE" and updated.previous_id == event.id and updated.memory.content == \
        "Alex drinks decaf now"
    assert updated.memory.metadata == {"source": "chat"}  # the old version's metadata carries over
    again = memory.update(event.id, text="Alex drinks oat lattes")  # an old id: the current version is replaced
    assert again.previous_id == updated.id
    assert [m.content for m in memory.get_all(user_id="alex")] == ["Alex drinks oat lattes"]
    same = memory.update(again.id, text="Alex drinks oat lattes", metadata={"source": "call"})
    assert same.event == "NONE" and same.id == again.id and memory.get(again.id).metadata == {"source": "call"}
    events = [(h.event, h.old_memory, h.new_memory) for h in memory.history(again.id, user_id="alex") if h.event]
    assert events == [("ADD", None, "Alex drinks black coffee"),
                      ("UPDATE", "Alex drinks black coffee", "Alex drinks decaf now"),
                      ("UPDATE", "Alex drinks decaf now", "Alex drinks oat lattes"),
                      ("UPDATE", "Alex drinks oat lattes", "Alex drinks oat lattes")]
    found = memory.search("what does Alex drink?", user_id="alex")
    assert [m.id for m in found] == [again.id]  # recall answers with the current version
    with pytest.raises(BadInputError):
        memory.update(again.id)
    with pytest.raises(NotFoundError):
        memory.update(again.id, text="x", user_id="sam")


def test_delete_all_forgets_one_owner_only(memory: Memory) -> None:
    memory.add("Alex keeps bees", user_id="alex", infer=False)
    planner = memory.add("Alex wants aisle seats", user_id="alex", agent_id="planner", infer=False).results[0].id
    memory.add("The planner books trains before flights", agent_id="planner", infer=False)
    memory.add("Sam keeps goats", user_id="sam", infer=False)
    assert memory.delete_all(agent_id="planner").deleted != [planner]  # the agent's own, not Alex's
    assert {m.content for m in memory.get_all(user_id="alex")} == {"Alex keeps bees", "Alex wants aisle seats"}
    gone = memory.delete_all(filters={"user_id": "alex"})
    assert len(gone.deleted) == 2 and memory.get_all(user_id="alex").results == []
    assert [m.content for m in memory.get_all(user_id="sam")] == ["Sam keeps goats"]
    with pytest.raises(NotFoundError):  # deletion means gone, its history included
        memory.get(planner)
    with pytest.raises(NotFoundError):
        memory.history(planner)
    with pytest.raises(BadInputError):
        memory.delete_all()


def test_search_filters_on_metadata_time_kind_and_categories(memory: Memory) -> None:
    notes = {"Alex's standup is at 9:30 in room Atlas": {"team": "core", "priority": 7, "tags": ["Daily", "sync"]},
             "Alex's retro is on Fridays in room Orion": {"team": "core", "priority": 3, "tags": ["weekly"]},
             "Alex's 1:1 with Priya is on Tuesdays": {"team": "people", "priority": 5, "private": True},
             "Alex prefers morning meetings": {}}
    ids = {text: memory.add(text, user_id="alex", infer=False, metadata=meta).results[0].id
           for text, meta in notes.items()}

    def found(filters: dict, query: str = "when are Alex's meetings?") -> set[str]:
        return {m.content for m in memory.search(query, filters={"user_id": "alex", **filters}, limit=10)}

    assert found({"team": "core"}) == {t for t, m in notes.items() if m.get("team") == "core"}
    assert found({"team": {"ne": "core"}}) == {"Alex's 1:1 with Priya is on Tuesdays", "Alex prefers morning meetings"}
    assert found({"priority": {"gte": 5}}) == {"Alex's standup is at 9:30 in room Atlas",
                                               "Alex's 1:1 with Priya is on Tuesdays"}
    assert found({"team": {"in": ["people", "ops"]}}) == {"Alex's 1:1 with Priya is on Tuesdays"}
    assert found({"tags": {"contains": "weekly"}}) == {"Alex's retro is on Fridays in room Orion"}
    assert found({"tags": {"icontains": "daily"}}) == {"Alex's standup is at 9:30 in room Atlas"}
    assert found({"private": "*"}) == {"Alex's 1:1 with Priya is on Tuesdays"}
    assert found({"private": True}) == found({"private": "*"})
    assert found({"OR": [{"priority": {"lt": 4}}, {"team": "people"}]}) == {
        "Alex's retro is on Fridays in room Orion", "Alex's 1:1 with Priya is on Tuesdays"}
    assert found({"NOT": [{"team": "core"}], "kind": "preference"}) == {"Alex prefers morning meetings"}
    assert found({"memory": {"icontains": "ROOM"}}) == {"Alex's standup is at 9:30 in room Atlas",
                                                        "Alex's retro is on Fridays in room Orion"}
    assert found({"created_at": {"gte": "2000-01-01"}}) == set(notes)
    assert found({"created_at": {"lt": "2000-01-01T00:00:00Z"}}) == set()
    assert found({"agent_id": "planner"}) == set()  # a filter only narrows the scope
    assert {m.id for m in memory.get_all(user_id="alex", filters={"team": "core"})} == {
        ids["Alex's standup is at 9:30 in room Atlas"], ids["Alex's retro is on Fridays in room Orion"]}
    close = memory.search("standup room Atlas", user_id="alex", threshold=0.5)
    assert [m.content for m in close] == ["Alex's standup is at 9:30 in room Atlas"]
    for bad in ({"priority": {"between": [1, 2]}}, {"AND": {"team": "core"}}, {"created_at": {"gte": "soon"}},
                {"bad key!": 1}, {"tags": {"in": []}}):
        with pytest.raises(BadInputError):
            memory.search("meetings", user_id="alex", filters=bad)
    with pytest.raises(BadInputError):
        memory.search("meetings", user_id="alex", threshold=2)


def test_by_id_calls_act_for_the_owner_inside_the_tenant_only(tmp_path: Path) -> None:
    with Memory(home=tmp_path / "home", tenant_id="acme") as acme:
        [event] = acme.add("Alex keeps bees", user_id="alex", agent_id="garden", infer=False).results
        assert acme.get(event.id).agent_id == "garden"
        with pytest.raises(NotFoundError):
            acme.get(event.id, user_id="sam")
        with pytest.raises(BadInputError, match="filters say"):
            acme.search("bees", user_id="alex", filters={"user_id": "sam"})
    with Memory(home=tmp_path / "home", tenant_id="globex") as globex:
        for call in (globex.get, globex.history, globex.delete):
            with pytest.raises(NotFoundError):
                call(event.id)
        with pytest.raises(NotFoundError):
            globex.update(event.id, text="Alex keeps wasps")


def test_async_memory_runs_the_same_verbs(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with AsyncMemory(home=tmp_path / "home", tenant_id="acme") as m:
            added = await asyncio.gather(*(m.add(f"Note {n}: Alex's locker code is {n}{n}{n}", user_id="alex",
                                                 infer=False) for n in range(5)))
            assert all(a.created for a in added)
            found = await m.search("locker code", filters={"user_id": "alex"}, limit=3)
            assert len(found["results"]) == 3
            first = added[0].results[0].id
            assert (await m.update(first, text="Alex's locker code is 999")).event == "UPDATE"
            assert [h.event for h in await m.history(first) if h.event] == ["ADD", "UPDATE"]  # it was replaced
            assert len((await m.delete_all(user_id="alex")).deleted) == 6

    asyncio.run(scenario())
    assert inspect.iscoroutinefunction(AsyncMemory.add) and AsyncMemory.add.__doc__ == Memory.add.__doc__


VERBS = ("add_messages", "update", "delete", "delete_all", "search", "get_all", "get", "locate", "history")


@pytest.mark.parametrize("name", VERBS)
def test_service_verbs_take_and_return_what_pydantic_can_send(name: str) -> None:
    """The remote client sends service calls over HTTP: every argument and result has a TypeAdapter."""
    hints = typing.get_type_hints(getattr(MemoryService, name))
    for param, hint in hints.items():
        TypeAdapter(hint)  # raises for callbacks, open files, arrays


def test_results_round_trip_and_dump_to_mem0_json(memory: Memory) -> None:
    added = memory.add("Alex keeps bees", user_id="alex")
    hints = typing.get_type_hints(MemoryService.add_messages)
    adapter = TypeAdapter(hints["return"])
    assert adapter.validate_json(adapter.dump_json(added)) == added
    found = memory.search("bees", user_id="alex")
    assert json.loads(json.dumps(found.mem0()))["results"][0]["memory"] == "Alex keeps bees"
    assert found["results"][0]["memory"] == found[0].content == found.results[0].content == "Alex keeps bees"
    assert set(found[0].mem0()) >= {"id", "memory", "hash", "metadata", "created_at", "updated_at", "score",
                                    "user_id"}


def test_an_added_memory_is_found_by_meaning_as_add_returns(service: MemoryService) -> None:
    """Read after write without the embedding worker: a generated memory is written with the vector
    generation computed, a verbatim one is embedded as it is written, so no job waits and a query
    that shares no word with either finds it by vector."""
    scope = Scope("acme", "noor")
    cycles = service.add_messages(scope, "Noor cycles to work every day").results[0]
    cat = service.add_messages(scope, [{"role": "user", "content": "My cat Miso sleeps on the radiator"}],
                               infer=False).results[0]
    assert service.store.outbox_counts() == {}  # no embedding job was ever queued for them
    held = service.store.fetch_memories(scope, [cycles.id, cat.id])
    assert {m.embedding_status for m in held.values()} == {"done"}
    assert service.store.sql("SELECT DISTINCT embedding_model FROM memories")[1] == [(service.store.embedding_model,)]
    for query, wanted in (("how does Noor get to the office?", cycles.id), ("where does the kitten nap?", cat.id)):
        [hit] = service.recall(scope, query, k=1).items
        assert hit.id == wanted and "vector" in hit.scores
