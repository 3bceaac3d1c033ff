"""Pronouns to names: the speaker's "I", the listener's "you", and "he"/"she" only when one person fits."""

from __future__ import annotations

import pytest

from mnemoflow.memory.english.coref import Mention, find_mentions, rewrite_persons


@pytest.mark.parametrize(("text", "expected"), [
    ("I'd love to visit Japan", "Alex would love to visit Japan"),
    ("I'd been there before", "Alex had been there before"),
    ("Maya and I went hiking", "Maya and Alex went hiking"),
    ("We went hiking and I loved it", "Alex went hiking and Alex loved it"),
    ("We both love sushi", "Alex loves sushi"),
    ("I watch TV and I study", "Alex watches TV and Alex studies"),
    ("Thank you for helping me", "Thank Sam for helping Alex"),
    ("when you talk to me, you don't listen", "when Sam talks to Alex, Sam doesn't listen"),
    ("I heard your sister is in Oslo", "Alex heard Sam's sister is in Oslo"),
    ("I quit my job", "Alex quit their job"),
    ("I need to study for my exam", "Alex needs to study for their exam"),
    ("I treated myself to a new phone", "Alex treated themselves to a new phone"),
    ("We built the shed ourselves", "Alex built the shed themselves"),
])
def test_first_and_second_person(text: str, expected: str) -> None:
    assert rewrite_persons(text, "Alex", "Sam").text == expected


def test_you_is_left_alone_when_no_one_is_addressed() -> None:
    rewrite = rewrite_persons("I told you so", "Alex", None)
    assert rewrite.text == "Alex told you so" and rewrite.unresolved


def test_she_is_resolved_only_when_one_person_fits() -> None:
    sister = rewrite_persons("My sister Carmen is a nurse.", "Rosa", None)
    assert sister.mentions[0] == Mention("Carmen", "f", strong=True)
    assert rewrite_persons("She just had twins", "Rosa", None, sister.mentions).text == "Carmen just had twins"
    two = find_mentions("My sister Carmen and my mom visited.", "Rosa", None)
    ambiguous = rewrite_persons("She loved it", "Rosa", None, two)
    assert ambiguous.text == "She loved it" and ambiguous.unresolved


def test_his_is_possessive_and_him_is_an_object() -> None:
    brother = find_mentions("my brother Luca", "Nina", None)
    assert rewrite_persons("I went with his dog and met him there", "Nina", None, brother).text == (
        "Nina went with Luca's dog and met Luca there")


def test_it_names_a_thing_only_before_something_concrete() -> None:
    thing = find_mentions("Can you remind me about my dentist appointment?", "Maria", "the assistant")
    assert rewrite_persons("It's next Tuesday at 2:30pm", "Maria", None, thing).text == (
        "Maria's dentist appointment is next Tuesday at 2:30pm")
    assert rewrite_persons("It was so gratifying", "Maria", None, thing).text == "It was so gratifying"


def test_a_thing_named_before_a_verb_and_its_object_ends_at_the_verb() -> None:
    assert find_mentions("The doctor put me on 20 mg of lisinopril.", "Noah", None) == (
        Mention("The doctor", "n", strong=True),)


def test_a_relation_named_by_is_makes_he_the_name() -> None:
    """"My new manager is Tim": a later "he" is Tim, not "Grace's manager"."""
    first = rewrite_persons("My new manager is Tim.", "Grace", "the assistant")
    assert Mention("Tim", None, strong=True) in first.mentions
    assert rewrite_persons("He reports directly to Rosa, the CTO.", "Grace", "the assistant",
                           first.mentions).text == "Tim reports directly to Rosa, the CTO."
    assert find_mentions("My manager is Tim's brother.", "Grace", None)[0].name == "Grace's manager"


def test_it_names_a_possessed_thing_said_before() -> None:
    """"Vet bumped Pickle's dose up - it's 8 units now": "it" is Pickle's dose."""
    thing = find_mentions("Vet bumped Pickle's dose up after his bloodwork", "Noor", None)
    assert Mention("Pickle's dose", "n", strong=True) in thing
    assert rewrite_persons("it's 8 units morning and evening now", "Noor", None, thing).text == (
        "Pickle's dose is 8 units morning and evening now")


def test_a_named_relation_of_someone_else_says_who_she_is() -> None:
    """"Cressida is bringing her girlfriend Talia, and she's allergic": two women named, the relation
    makes Talia the "she"; "Omar's brother Idris" likewise for "he"."""
    said = "Cressida is bringing her girlfriend Talia, and she's allergic to sesame"
    assert rewrite_persons(said, "Bram", None).text == (
        "Cressida is bringing her girlfriend Talia, and Talia is allergic to sesame")
    assert Mention("Idris", "m", strong=True) in find_mentions("Omar's brother Idris starts at Kew", "Bram", None)


@pytest.mark.parametrize(("text", "rewritten"), [
    ("My band has a gig on Friday, we play at the Roundhouse", "Alex's band has a gig on Friday, Alex's band plays at the Roundhouse"),
    ("I went to Rome with my sister, we loved it", "Alex went to Rome with their sister, Alex loved it"),  # no group
    ("We moved to Leeds in May", "Alex moved to Leeds in May"),
])
def test_we_after_a_group_of_the_speakers_is_the_group(text: str, rewritten: str) -> None:
    assert rewrite_persons(text, "Alex", None).text == rewritten


def test_we_opening_the_next_sentence_is_the_group_just_named() -> None:
    first = rewrite_persons("I run a little book club", "Marisol", None)
    second = rewrite_persons("we meet at the Lantern Room on Hollis Avenue", "Marisol", None, first.mentions)
    assert second.text == "Marisol's little book club meets at the Lantern Room on Hollis Avenue"


def test_a_role_before_a_name_introduces_the_person_and_a_letter_names_no_one() -> None:
    said = find_mentions("new starter Gemma is in on Monday, can someone tell her we're at buzzer 3B?", "Farah", "Anouk")
    assert said == (Mention("Gemma", None, strong=True),)
    assert rewrite_persons("I'll send her the details", "Anouk", None, said).text == "Anouk will send Gemma the details"
