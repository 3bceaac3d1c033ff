"""The rule engine end to end: what it stores, how it words it, and the fields it fills."""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnemoflow.memory.generate.candidates import GenerationEngine
from mnemoflow.memory.generate.rules import RuleEngine
from tests.memory.dialogue import contexts, say, stored

NOW = datetime(2024, 5, 8, 10, 0)  # a Wednesday


def contents(candidates: list) -> list[str]:
    return [c.content for c in candidates]


def test_the_engine_is_a_generation_engine() -> None:
    engine: GenerationEngine = RuleEngine()
    assert engine.name == "rules"


def test_a_short_answer_is_read_with_the_question_it_answers() -> None:
    lines = [("Sam", "Oh nice! When are you going to Japan?"), ("Alex", "Next April.")]
    [memory] = stored(lines, NOW)
    assert memory.content == "Alex is going to Japan in April 2025"
    assert memory.temporal_text == "next April"
    assert (memory.event_start_at, memory.event_end_at) == (datetime(2025, 4, 1), datetime(2025, 5, 1))
    assert memory.observed_at == datetime(2024, 5, 8, 10, 1)  # when it was said: lifecycle time is not set here
    assert memory.source_turn_ids == ("t1", "t2")
    assert {"Alex", "Japan"} <= set(memory.entities)
    assert memory.should_store and memory.kind == "fact"


def test_a_resolved_follow_up_is_less_certain_than_a_plain_statement() -> None:
    [answer] = stored([("Sam", "When are you going to Japan?"), ("Alex", "Next April.")], NOW)
    [plain] = say("Alex", "I'm going to Japan next April.")
    assert plain.content == answer.content
    assert answer.confidence < plain.confidence


def test_an_elliptic_question_takes_its_topic_from_the_turn_before() -> None:
    lines = [("Will", "I'm starting a pottery class."), ("Kate", "Fun! When?"), ("Will", "This Saturday.")]
    assert contents(stored(lines, NOW)) == ["Will is starting a pottery class",
                                            "Will is starting a pottery class on May 11, 2024"]


@pytest.mark.parametrize(("question", "answer", "expected"), [
    ("Are you still vegetarian?", "Yes!", "Dana is still vegetarian"),
    ("Are you still vegetarian?", "No, not anymore.", "Dana is no longer vegetarian"),
    ("Do you eat fish?", "No.", "Dana does not eat fish"),
    ("Do you still work at Google?", "Nope.", "Dana no longer works at Google"),
    ("Have you been to Iceland?", "Never.", "Dana has never been to Iceland"),
    ("Did you go to the concert?", "Yes, with Maya.", "Dana went to the concert with Maya"),
    ("You're moving to Berlin, right?", "Yep.", "Dana is moving to Berlin"),
    ("Any kids?", "Yes, two.", "Dana has two kids"),
    ("Do you prefer tea or coffee?", "Coffee.", "Dana prefers coffee"),
])
def test_yes_no_questions_set_the_polarity_of_the_statement(question: str, answer: str, expected: str) -> None:
    assert contents(say("Dana", answer, ("Chris", question))) == [expected]


@pytest.mark.parametrize(("question", "answer", "expected"), [
    ("Where do you live?", "Berlin.", "Dana lives in Berlin"),
    ("Where are you from?", "Lisbon.", "Dana is from Lisbon"),
    ("Who are you going with?", "My brother Luca.", "Dana is going with Dana's brother Luca"),
    ("How long have you been learning Spanish?", "About two years.",
     "Dana has been learning Spanish for about two years"),
    ("How many kids do you have?", "Three.", "Dana has three kids"),
    ("What's your favorite food?", "Sushi.", "Dana's favorite food is Sushi"),
    ("What are you doing this weekend?", "Hiking in the Alps.",
     "Dana is hiking in the Alps on the weekend of May 11-12, 2024"),
    ("When did you move to Berlin?", "Last year.", "Dana moved to Berlin in 2023"),
])
def test_wh_answers_fill_the_slot_the_question_left(question: str, answer: str, expected: str) -> None:
    assert contents(say("Dana", answer, ("Chris", question))) == [expected]


@pytest.mark.parametrize(("said", "expected"), [
    ("I am a nurse at St. Mary's.", "Alex is a nurse at St. Mary's"),
    ("I'm allergic to penicillin.", "Alex is allergic to penicillin"),
    ("I have two cats, Miso and Tofu.", "Alex has two cats, Miso and Tofu"),
    ("I was born in Porto.", "Alex was born in Porto"),
    ("I don't eat pork.", "Alex doesn't eat pork"),
    ("I go to the gym every Monday.", "Alex goes to the gym every Monday"),
    ("I study Korean at night school.", "Alex studies Korean at night school"),
    ("I really love Thai food.", "Alex really loves Thai food"),
    ("I've lived in Oslo since 2019.", "Alex has lived in Oslo since 2019"),
    ("I'll start at Google in June.", "Alex will start at Google in June 2024"),
    ("We need a bigger apartment in Lyon.", "Alex needs a bigger apartment in Lyon"),
    ("My wife and I are moving to Lisbon.", "Alex's wife and Alex are moving to Lisbon"),
    ("i work at Stripe as a data engineer", "Alex works at Stripe as a data engineer"),
])
def test_first_person_becomes_the_speaker_with_the_verb_agreeing(said: str, expected: str) -> None:
    assert contents(say("Alex", said)) == [expected]


def test_my_x_becomes_the_speakers_x_and_she_follows_it() -> None:
    said = "My sister Maya is a pediatric nurse in Seattle. She just had twins!"
    assert contents(say("Rosa", said)) == ["Rosa's sister Maya is a pediatric nurse in Seattle", "Maya just had twins"]


def test_you_is_the_previous_speaker() -> None:
    assert contents(say("Tara", "I heard you're moving to Denver next week.", ("Ben", "Hey Tara, got a minute?"))) == [
        "Tara heard Ben is moving to Denver in the week of May 13, 2024"]


def test_you_addressed_to_the_assistant_is_the_assistant() -> None:
    lines = [("assistant", "How can I help?", "assistant"),
             ("Jordan", "Always use metric units when you talk to me.", "user")]
    assert contents(stored(lines, NOW)) == ["Jordan's rule: always use metric units when the assistant talks to Jordan"]


@pytest.mark.parametrize(("now", "said", "expected"), [
    (NOW, "My flight leaves tomorrow at 6am.", "Alex's flight leaves on May 9, 2024 at 6am"),
    (NOW, "I met Maya yesterday.", "Alex met Maya on May 7, 2024"),
    (NOW, "I'm seeing Maya next Friday.", "Alex is seeing Maya on May 17, 2024"),
    (NOW, "I'm seeing Maya on Friday.", "Alex is seeing Maya on May 10, 2024"),
    (NOW, "I saw Maya on Monday.", "Alex saw Maya on May 6, 2024"),
    (NOW, "I moved to Lyon last month.", "Alex moved to Lyon in April 2024"),
    (NOW, "I start at Shopify in 3 weeks.", "Alex starts at Shopify in 3 weeks (May 29, 2024)"),
    (NOW, "I sold my car 2 days ago.", "Alex sold their car 2 days ago (May 6, 2024)"),
    (datetime(2024, 1, 31, 9), "My talk is on the 15th.", "Alex's talk is on February 15, 2024"),
    (datetime(2024, 1, 31, 9), "My sister visits next month.", "Alex's sister visits in February 2024"),
    (datetime(2024, 12, 20, 9), "I start at Shopify in three weeks.",
     "Alex starts at Shopify in three weeks (January 10, 2025)"),
    (datetime(2024, 12, 20, 9), "I'm flying to Oslo next month.", "Alex is flying to Oslo in January 2025"),
    (datetime(2024, 12, 31, 9), "I'm flying to Oslo tomorrow.", "Alex is flying to Oslo on January 1, 2025"),
])
def test_relative_dates_become_absolute_against_when_they_were_said(now: datetime, said: str, expected: str) -> None:
    [memory] = say("Alex", said, now=now)
    assert memory.content == expected
    assert memory.event_start_at is not None and memory.event_end_at is not None
    assert memory.event_start_at < memory.event_end_at
    assert memory.temporal_text and memory.temporal_text.lower() in said.lower()


def test_routines_and_birthdays_keep_their_words_and_get_no_event_time() -> None:
    [gym] = say("Sam", "I go to the gym every Monday and Thursday before work.")
    [birthday] = say("Sam", "My wife's birthday is October 12.")
    assert gym.content == "Sam goes to the gym every Monday and Thursday before work"
    assert birthday.content == "Sam's wife's birthday is October 12"
    assert gym.event_start_at is None and birthday.event_start_at is None


@pytest.mark.parametrize("said", [
    "Hey Sam! Long time no see.", "Thanks so much for the help yesterday!", "You're the best.", "Good morning!",
    "Haha that's hilarious", "Sounds good, see you then!", "Ok cool", "No problem at all, happy to help.",
    "What time is it in Tokyo?", "How do I convert yen to euros?", "Did you watch the game?",
    "That sounds amazing!", "I'm so happy for you!", "Can you book me a table for two?", "You should totally go!",
])
def test_greetings_thanks_questions_and_requests_are_not_stored(said: str) -> None:
    assert say("Alex", said, ("Sam", "I just got back from Lisbon.")) == []


@pytest.mark.parametrize(("said", "expected"), [
    ("Budget for the bathroom reno is \u20ac9,000 including tiles", "Catalina's budget for the bathroom reno is \u20ac9,000 "
                                                                  "including tiles"),
    ("Rent on the two-bed is \u00a31,300 a month", "Catalina's rent on the two-bed is \u00a31,300 a month"),
    ("can you keep hold of this for me: ferry booking ref is KX7-44QPL",
     "Catalina's ferry booking ref is KX7-44QPL"),
    # a name, a verb after the first word, a day: left as said
    ("Marek booked the flights to Split", "Marek booked the flights to Split"),
    ("Anna and Tom are moving to Leeds", "Anna and Tom are moving to Leeds"),
])
def test_a_subject_said_without_my_is_the_speakers(said: str, expected: str) -> None:
    lines = [("assistant", "Noted!", "assistant"), ("Catalina", said, "user")]
    assert contents(stored(lines, NOW)) == [expected]


@pytest.mark.parametrize("said", ["you're a star", "You're a lifesaver, honestly"])
def test_praise_for_the_assistant_is_not_stored(said: str) -> None:
    lines = [("assistant", "Noted!", "assistant"), ("Delia", said, "user")]
    assert contents(stored(lines, NOW)) == []


def test_assistant_turns_are_not_stored() -> None:
    candidates = RuleEngine().generate(contexts([("assistant", "Sure! I'd be happy to help you plan your trip.",
                                                  "assistant")], NOW)[0])
    assert [c.should_store for c in candidates] == [False]


def test_names_numbers_and_rare_terms_survive_verbatim() -> None:
    [memory] = say("Raj", "We're migrating from Postgres 12 to Postgres 16 with pgvector 0.7.0 in europe-west1, "
                          "budget $48,500.")
    for kept in ("Postgres 12", "Postgres 16", "pgvector 0.7.0", "europe-west1", "$48,500"):
        assert kept in memory.content
    assert memory.content.startswith("Raj is migrating")
    assert {"Raj", "Postgres 12", "Postgres 16"} <= set(memory.entities)


@pytest.mark.parametrize(("said", "kind"), [
    ("I prefer aisle seats on long flights.", "preference"),
    ("Never book me on a red-eye flight.", "rule"),
    ("To deploy, run make release and then tag the commit.", "procedure"),
    ("I visited my grandma in Porto last weekend.", "episode"),
    ("I work at Stripe as a data engineer.", "fact"),
])
def test_each_kind_of_memory_is_recognised(said: str, kind: str) -> None:
    [memory] = say("Alex", said, role="user")
    assert memory.kind == kind


def test_rules_and_procedures_name_whose_they_are() -> None:
    [rule] = say("Jordan", "Never book me on a flight before 9am.", role="user")
    [procedure] = say("Kim", "To release, first bump the version in pyproject.toml, then run make publish.",
                      role="user")
    assert rule.content == "Jordan's rule: never book Jordan on a flight before 9am"
    assert procedure.content == ("Kim's procedure: to release, first bump the version in pyproject.toml, "
                                 "then run make publish")


def test_an_explicit_request_to_remember_raises_salience() -> None:
    [asked] = say("Jordan", "Please remember that I'm allergic to peanuts.", role="user")
    [told] = say("Jordan", "I'm allergic to peanuts.", role="user")
    assert asked.content == told.content == "Jordan is allergic to peanuts"
    assert asked.salience > told.salience
    assert all(0.0 <= c.salience <= 1.0 and 0.0 <= c.confidence <= 1.0 for c in (asked, told))


def test_the_same_turn_gives_the_same_candidates() -> None:
    ctx = contexts([("Sam", "When are you going to Japan?"), ("Alex", "Next April, with my sister Maya.")], NOW)[-1]
    assert RuleEngine().generate(ctx) == RuleEngine().generate(ctx)


_PEOPLE = st.sampled_from(["Maya", "Luca", "Priya", "Tom"])
_PLACES = st.sampled_from(["Lisbon", "Denver", "Osaka", "Nairobi"])
_NUMBERS = st.integers(min_value=0, max_value=99_999).map(str) | st.sampled_from(["3.12", "$2,400", "24.04", "9am"])


@st.composite
def first_and_second_person(draw: st.DrawFn) -> tuple[str, str]:
    """A statement in the first or second person carrying a number and a name: (speaker, sentence)."""
    number, person, place = draw(_NUMBERS), draw(_PEOPLE), draw(_PLACES)
    template = draw(st.sampled_from([
        "I have {n} books about {p}.", "i have {n} books about {p}.", "I'm paying {n} for the flat in {pl}.",
        "My sister {p} lives in {pl} and has {n} cats.", "my rent in {pl} is {n} a month.",
        "We moved to {pl} with {p} in {n}.", "I've worked with {p} for {n} weeks.", "I don't earn {n} in {pl}.",
        "You owe {p} {n} for the trip to {pl}.", "you're meeting {p} in {pl} at {n}.",
        "Your flight to {pl} costs {n}.", "I always tip {n} in {pl}.", "We're {n} people going to {pl} with {p}.",
    ]))
    return draw(st.sampled_from(["Alex", "sam", "Jo"])), template.format(n=number, p=person, pl=place)


@settings(max_examples=300, deadline=None)
@given(first_and_second_person())
def test_first_and_second_person_never_lead_and_digits_never_drop(case: tuple[str, str]) -> None:
    speaker, said = case
    memories = say(speaker, said, ("Kim", "So what's new?"))
    assert memories, said
    for memory in memories:
        assert not memory.content.startswith(("i ", "my ", "you ", "I ", "My ", "You ", "We ", "we ")), memory.content
        for digits in re.findall(r"\d+", said):
            assert digits in memory.content, (said, memory.content)


_CHAT_WORDS = st.sampled_from([
    "I", "i", "my", "you", "we", "she", "it's", "Maya", "next", "April", "May", "the", "15th", "on", "Monday", "?",
    "!", ",", ".", "yes", "no", "when", "are", "do", "going", "to", "and", "but", "1.", "\n", "don't", "never",
    "remember", "ago", "3", "weeks", "a", "dog", "her", "Any", "how", "long", "which", "or", "Dr.", "v2.1", "$5",
])
_CHAT = st.lists(_CHAT_WORDS, max_size=20).map(" ".join) | st.text(max_size=60)


@settings(max_examples=300, deadline=None)
@given(_CHAT, _CHAT, st.sampled_from([None, "user", "assistant"]))
def test_any_turn_gives_well_formed_candidates(question: str, answer: str, role: str | None) -> None:
    """Whatever is said, generation does not fail, and every candidate's fields are in range."""
    now = datetime(2024, 2, 29, 23, 59)  # a leap day at midnight's edge
    lines = [("Sam", question), ("Alex", answer, role)] if role else [("Sam", question), ("Alex", answer)]
    for candidate in RuleEngine().generate(contexts(lines, now)[-1]):
        assert 0.0 <= candidate.confidence <= 1.0 and 0.0 <= candidate.salience <= 1.0
        assert candidate.kind in {"fact", "preference", "episode", "procedure", "rule"}
        assert (candidate.event_start_at is None) == (candidate.event_end_at is None)
        if candidate.event_start_at is not None and candidate.event_end_at is not None:
            assert candidate.event_start_at < candidate.event_end_at
        assert candidate.source_turn_ids and candidate.observed_at is not None


def test_a_value_said_in_place_of_an_earlier_one_corrects_that_statement() -> None:
    dose = [("Noah", "The doctor put me on 20 mg of lisinopril.", "user"), ("assistant", "Once a day?", "assistant"),
            ("Noah", "Oh, correction, it's 10 mg, I misread the label.", "user")]
    corrected = stored(dose, NOW)[-1]
    assert corrected.content == "The doctor put Noah on 10 mg of lisinopril; Noah misread the label"
    assert corrected.source_turn_ids == ("t1", "t3") and "correction" in corrected.reasons
    guests = [("Rosa", "We're 8 for dinner, can you scale the recipe?", "user"), ("assistant", "Sure.", "assistant"),
              ("Rosa", "Sorry, make that 10.", "user")]
    assert contents(stored(guests, NOW))[-1] == "Rosa is 10 for dinner"


def test_another_source_giving_a_bare_value_says_the_same_thing_with_its_own() -> None:
    lines = [("Ahmed", "The airline app says my flight leaves at 10:40."),
             ("Ahmed", "The confirmation email says 11:15 though.")]
    assert contents(stored(lines, NOW)) == ["The airline app says Ahmed's flight leaves at 10:40",
                                            "The confirmation email says Ahmed's flight leaves at 11:15"]


@pytest.mark.parametrize(("before", "after"), [
    ("My flight leaves at 10:40.", "It's $40."),  # a price is not a time
    ("We're 8 adults and 3 kids.", "Make that 10."),  # which of the two?
    ("I'm 8 minutes away.", "Make that 10 mg."),  # other units
])
def test_a_value_that_replaces_nothing_said_corrects_nothing(before: str, after: str) -> None:
    lines = [("Rosa", before), ("Sam", "Cool."), ("Rosa", after)]
    assert all("correction" not in c.reasons for c in stored(lines, NOW))


def test_going_without_a_place_takes_the_place_said_before() -> None:
    lines = [("Maya", "When are you going to Japan?"), ("Alex", "Next April."), ("Maya", "Are you going alone?"),
             ("Alex", "No, Ben is coming with me.")]
    assert contents(stored(lines, NOW)) == ["Alex is going to Japan in April 2025",
                                            "Alex is not going alone",  # a denial keeps its own words
                                            "Ben is coming to Japan with Alex"]
    trip = [("Alex", "I'm planning a trip to Japan."), ("Sam", "When are you going?"), ("Alex", "Next April.")]
    assert contents(stored(trip, NOW))[-1] == "Alex is going to Japan in April 2025"
    assert contents(stored(trip[1:], NOW)) == ["Alex is going in April 2025"]  # nowhere was said


def test_a_definite_thing_a_user_names_is_theirs() -> None:
    lines = [("Marek", "But the school newsletter says Year 2 starts on September 5.", "user")]
    assert contents(stored(lines, datetime(2024, 8, 26))) == [
        "Marek's school newsletter says Year 2 starts on September 5, 2024"]


@pytest.mark.parametrize(("said", "expected"), [
    ("Ideas for a rainy day with my two children, Ella and Sam?", ["Ruth's two children are Ella and Sam"]),
    ("Can you book a table for me and my wife Anna?", ["Ruth's wife is Anna"]),
    ("Any good climbing gyms near me?", ["Ruth is looking for good climbing gyms near Ruth"]),
    ("Any plans tonight?", []),
    ("Can you find a ryokan in Hakone?", []),
    ("What tyre pressure should I run on my Ridgeline Volt 3?", ["Ruth has a Ridgeline Volt 3"]),
    ("How do I reset my iPhone 15?", ["Ruth has an iPhone 15"]),
    ("Can you check my CV?", []),
    ("What should I wear to my Monday meeting?", []),
])
def test_what_a_question_tells_about_the_speaker_is_kept(said: str, expected: list[str]) -> None:
    assert contents(say("Ruth", said, role="user")) == expected


@pytest.mark.parametrize(("lines", "expected"), [
    ([("Mei", "Dentist on Thursday at 10, please block my calendar.", "user")], "Mei has dentist on May 9, 2024 at 10"),
    ([("Lia", "Double espresso, every morning.", "user")], "Lia has double espresso, every morning"),
    ([("assistant", "How will you invest it?", "assistant"), ("Kei", "$500 a month into an index fund.", "user")],
     "Kei: $500 a month into an index fund"),  # an amount is not something one has
])
def test_a_verbless_note_from_the_user_is_something_they_have(lines: list, expected: str) -> None:
    assert contents(stored(lines, NOW)) == [expected]


def test_an_ing_word_before_a_verb_is_what_the_sentence_is_about() -> None:
    lines = [("Kofi", "Billing moved to the new cluster back in 2022."),
             ("Ana", "No, billing still runs on the old cluster, I deployed it there last week.")]
    assert contents(stored(lines, datetime(2023, 3, 14))) == [
        "Billing moved to the new cluster back in 2022",
        "Billing still runs on the old cluster, Ana deployed it there in the week of March 6, 2023"]
    assert contents(say("Alex", "Currently reading Project Hail Mary.")) == [
        "Alex is currently reading Project Hail Mary"]


def test_two_facts_in_one_sentence_are_two_memories() -> None:
    assert contents(say("Lena", "I live in Hamburg and I work at Zalando.")) == ["Lena lives in Hamburg",
                                                                                 "Lena works at Zalando"]
    assert contents(say("Lena", "For the records: my blood type is O negative.", role="user")) == [
        "Lena's blood type is O negative"]


@pytest.mark.parametrize(("text", "expected"), [
    ("For the party planning, just so you know: I was born on March 12.", ["Aisha was born on March 12"]),
    ("My birthday is on March 12, remind my husband a week before.", ["Aisha's birthday is on March 12"]),
    ("I'm lactose intolerant, keep dairy out of the plan.", ["Aisha is lactose intolerant"]),
    ("Python is my main language, so examples in Python please.", ["Python is Aisha's main language"]),
    ("I'm catering again next week, remember I eat vegan.", ["Aisha is catering again in the week of May 13, 2024",
                                                         "Aisha eats vegan"]),
    ("Catering again next week, remember I eat vegan.", ["Aisha eats vegan"]),
])
def test_requests_to_the_assistant_and_padding_stay_out_of_the_fact(text: str, expected: list[str]) -> None:
    assert contents(say("Aisha", text, role="user")) == expected


def test_a_request_tail_with_a_rule_word_is_still_a_rule_and_when_you_in_a_rule_stays() -> None:
    assert contents(say("Aisha", "Always use metric units when you write recipes.", role="user")) \
        == ["Aisha's rule: always use metric units when you write recipes"]
    # said to another person, "when you ..." is theirs and stays
    assert contents(say("Aisha", "I'm home when you come over.", ("Ben", "Are you around?"))) \
        == ["Aisha is home when Ben comes over"]


def test_a_name_owning_the_subject_is_a_name_at_the_start_of_a_sentence() -> None:
    assert contents(say("Elena", "Marco's wedding cake is going to be an almond cake, apparently.")) == [
        "Marco's wedding cake is going to be an almond cake, apparently"]


@pytest.mark.parametrize(("said", "expected"), [
    ("Add that the key safe code is 4471", ["Ruth's key safe code is 4471"]),
    ("Add that Fenwick Library opens at 9 on Saturdays", ["Fenwick Library opens at 9 on Saturdays"]),
    ("Add milk to the list", []),  # a request, not a statement
])
def test_what_is_to_be_added_to_a_note_is_a_statement(said: str, expected: list[str]) -> None:
    assert contents(say("Ruth", said, role="user")) == expected


def test_which_one_answered_goes_before_the_noun_the_statement_named() -> None:
    lines = [("Bogdan", "I twisted my ankle playing five-a-side on Saturday.", "user"),
             ("assistant", "Sorry to hear that. Which ankle, left or right?", "assistant"), ("Bogdan", "Left.", "user")]
    assert contents(stored(lines, NOW))[-1] == "Bogdan twisted their left ankle playing five-a-side on May 4, 2024"


@pytest.mark.parametrize(("said", "expected"), [
    ("what's the latest firmware for the Tessel AX router? mine's on 3.2.7", ["Ruth's Tessel AX router is on 3.2.7"]),
    ("how often should a 2016 Skoda Octavia estate get serviced? mine's on about 92k miles",
     ["Ruth's 2016 Skoda Octavia estate is on about 92k miles"]),
    ("is the new Kestrel any good? mine is the old one", []),  # no thing of its name and noun in the question
])
def test_mine_after_a_question_about_a_named_thing_is_the_speakers(said: str, expected: list[str]) -> None:
    assert contents(say("Ruth", said, role="user")) == expected


@pytest.mark.parametrize(("said", "expected"), [
    # a clause before the speaker's own needs no comma to be only the occasion
    ("ok so after the whole breach mess I finally dumped LastPass", "After the whole breach mess Ruth finally dumped LastPass"),
    # "everything" ends in -ing and is no verb: the sentence has its subject
    ("everything lives in Bitwarden now", "Everything lives in Bitwarden now"),
    # a diet or status said alone is what the speaker is
    ("so pescatarian now", "Ruth is pescatarian now"),
    # "pls remember this for me:" asks to keep what follows
    ("pls remember this for me: router admin page is 192.168.8.1", "Ruth's router admin page is 192.168.8.1"),
    # a thing to keep and its value, or a label and its token
    ("can you note the gate code, it's 4471#", "Ruth's gate code is 4471#"),
    ("note to self: the bins go out on Thursdays", "Ruth: the bins go out on Thursdays"),
    ("could you remember that I'm vegan", "Ruth is vegan"),
    # a request to keep something, asked with a question mark, is still one; "remember when ...?" is a question
    ("Could you note that the bike lock code is 3308?", "Ruth's bike lock code is 3308"),
    ("remember when we camped at Loch Ness?", None),
    # a thing's new value, family said as one addresses them, what one has become: all the speaker's
    ("network's CF_Home_5G now", "Ruth's network is CF_Home_5G now"),
    ("salary's gone up to 52k", "Ruth's salary has gone up to 52k"),
    ("mum wants to go over to giffgaff", "Ruth's mum wants to go over to giffgaff"),
    ("officially a Leith resident now", "Ruth is officially a Leith resident now"),
    ("right so got the keys yesterday", "Ruth got the keys on May 7, 2024"),
    # a thing said to be gone is kept, with its verb written out
    ("the thinkpad's finally binned", "The thinkpad is finally binned"),
    # a request of any verb is no fact
    ("can you nag me", None),
    # a question without its mark, the weather, and what the speaker will do in the chat itself are no memories
    ("what do they actually check on an MOT anyway", None),
    ("it's raining AGAIN", None),
    ("hmm I'll have a think and come back to you", None),
])
def test_what_chat_leaves_out_is_supplied_and_what_it_adds_is_dropped(said: str, expected: str | None) -> None:
    assert contents(say("Ruth", said, role="user")) == ([expected] if expected else [])


def test_they_in_a_question_is_the_one_plural_thing_the_answerer_named_before() -> None:
    lines = [("Hana", "I keep forgetting the bins"), ("Assistant", "Which day are they collected?"),
             ("Hana", "wednesday mornings")]
    assert "Hana's bins are collected wednesday mornings" in [c.content for c in stored(lines, NOW)]


def test_who_asked_to_a_group_is_answered_by_whoever_says_they_do() -> None:
    keys = stored([("Priya", "who's got the keys to the van for Saturday?"), ("Luis", "I do, picking them up Friday night")],
                  NOW)
    assert any(c.content.startswith("Luis has got the keys to the van") for c in keys)
    booked = stored([("Dee", "Jon can you book the table at the Crown?"), ("Jon", "done, 7:30")], NOW)
    assert [c.content for c in booked] == ["Jon booked the table at the Crown, 7:30"]


def test_how_old_and_how_long_keep_the_question_verb_once() -> None:
    lines = [("Nadia", "I need a present for my nephew"), ("Assistant", "How old is he turning?"),
             ("Nadia", "seven on the 14th")]
    assert "Nadia's nephew is turning seven on May 14, 2024" in [c.content for c in stored(lines, NOW)]
    stay = stored([("Assistant", "How long is she staying for?"), ("Theo", "ten days")], NOW)
    assert [c.content for c in stay] == ["She is staying for ten days"]


def test_a_subordinate_clause_alone_is_still_no_statement() -> None:
    assert contents(say("Ruth", "after the whole thing ended", role="user")) == []


@pytest.mark.parametrize(("question", "answer", "expected"), [
    # why the question is asked is no part of what the answer says
    ("And what's his name, so I can personalise the worksheets?", "Arman", "His name is Arman"),
    # the alternatives are the phrases around "or", not the words next to it
    ("Does he get on better with screen games or paper ones?", "paper", "He gets on better with paper ones"),
    ("Do you want the red one or the blue one?", "the red one", "Reza wants the red one"),
    # each listed thing answered on its own
    ("Do you want a starter and a dessert as well?", "dessert yes, starter no",
     "Reza wants a dessert; Reza does not want a starter"),
    # an aside at the question's end is no part of it
    ("Which day is your bin collection, by the way?", "tuesdays", "Reza's bin collection is tuesdays"),
])
def test_an_answer_is_read_in_the_shape_of_its_question(question: str, answer: str, expected: str) -> None:
    [memory] = stored([("Assistant", question), ("Reza", answer)], NOW)
    assert memory.content == expected


def test_an_adverb_between_did_and_the_verb_stays_an_adverb() -> None:
    [memory] = stored([("Assistant", "When did it last have one?"), ("Reza", "in March")], NOW)
    assert memory.content.startswith("It last had one in March")


def test_a_new_thing_said_with_no_owner_is_the_speakers() -> None:
    assert contents(say("Ruth", "new number's 07700 900456", role="user")) == ["Ruth's new number is 07700 900456"]


def test_a_group_chat_answer_is_read_with_the_question_put_to_its_speaker() -> None:
    tent = [c.content for c in stored([("Ana", "who's bringing the tent?"), ("Ben", "me, it's the big green one")], NOW)]
    assert tent[0].startswith("Ben is bringing the tent")  # what the answer's own clause says of it is kept beside it
    jobs = stored([("Cara", "I'll do the food, Ben you do drinks too?"), ("Ben", "yep")], NOW)
    assert [c.content for c in jobs] == ["Cara will do the food", "Ben does drinks too"]
