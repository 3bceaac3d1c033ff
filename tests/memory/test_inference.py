"""DERIVES (`mnemoflow.memory.generate.inference.families.derive`) over the sentence shapes the rule engine writes.

tests/memory/test_relations.py covers each family's canonical wording; these cover the other shapes
(possessives, a period given by an adjective, a speaker's fragment, a lead-in) and, for each, a
near miss that must derive nothing.
"""

from __future__ import annotations

from mnemoflow.memory.generate.inference.common import Derived
from mnemoflow.memory.generate.inference.families import derive
from tests.memory.test_relations import M, only


def run(*contents: str) -> list[Derived]:
    return derive([M(f"m{i}", text) for i, text in enumerate(contents, start=1)])


# reporting line


def test_skip_level_from_the_managers_role_needs_the_manager_named() -> None:
    assert run("Grace's manager reports directly to Rosa", "Grace likes the new office") == []
    assert run("Grace's manager is Tim", "Ivan's manager reports to Rosa") == []


# budget


def test_budget_for_a_possessive_target_and_a_travel_cost() -> None:
    d = only(run("The total budget for Nadia's Iceland trip is €3,000", "Flights were €1,200 for both of Nadia"))
    assert d.content == "Nadia has €1,800 left in the Iceland trip budget after flights"
    assert set(d.supporting_ids) == {"m1", "m2"}
    d = only(run("Nadia's budget for the Iceland trip is €3,000", "Nadia spent €400 on accommodation"))
    assert d.content == "Nadia has €2,600 left in the Iceland trip budget after accommodation"


def test_budget_an_unnamed_target_needs_one_trip_budget_and_a_travel_cost() -> None:
    assert run("The total budget for Nadia's Iceland trip is €3,000", "Flights were $1,200 for Nadia") == []
    assert run("The total budget for Nadia's Iceland trip is €3,000", "Nadia spent €300 on a new phone") == []
    assert run("Nadia's budget for the Iceland trip is €3,000", "Nadia's budget for the Rome trip is €2,000",
               "Nadia spent €1,200 on flights") == []
    assert run("Nadia's budget for the kitchen is €3,000", "Nadia spent €1,200 on flights") == []
    assert run("The total budget for Nadia's Iceland trip is €3,000", "Flights were €1,200 for Omar") == []


# share of income


def test_share_of_income_with_an_adjective_period_and_a_home() -> None:
    d = only(run("Carlos's monthly take-home pay is $6,000 after tax",
                 "Carlos pays $1,800 a month for the flat in Queens"))
    assert d.content == "The flat in Queens takes 30% of Carlos's take-home pay"
    assert set(d.supporting_ids) == {"m1", "m2"} and d.rule == "share-of-income"
    spoken = only(run("Carlos's monthly take-home pay is $6,000 after tax",
                      "Carlos: $1,800 a month for the flat in Queens"))
    assert spoken.content == d.content
    rent = only(run("Uma's monthly salary is $5,000", "Uma pays $1,000 a month in rent"))
    assert rent.content == "Rent takes 20% of Uma's income"


def test_share_of_income_needs_one_period_and_a_known_expense() -> None:
    assert run("Carlos's salary is $6,000", "Carlos pays $1,800 a month in rent") == []  # no period
    assert run("Carlos's annual salary is $72,000", "Carlos pays $1,800 a month in rent") == []
    assert run("Carlos's monthly income is $6,000 a year", "Carlos pays $1,800 a month in rent") == []
    assert run("Carlos's monthly income is $600 higher than last year", "Carlos pays $180 a month in rent") == []
    assert run("Carlos's monthly take-home pay is $6,000", "Carlos: $1,800 a month for the gym") == []


# end of life


def test_end_of_life_not_after_a_doubt_or_another_version() -> None:
    eol = "Python 3.8 reaches end of life in October 2024"
    assert run("Helen is not sure whether billing-api still runs on Python 3.8", eol) == []
    assert run("Helen says billing-api still runs on Python 3.11", eol) == []
    assert run("Helen says the billing service still runs on Python 3.8", eol) == []  # not an identifier


# allergen


def test_allergen_not_for_a_safe_dish() -> None:
    assert run("Elena is allergic to tree nuts, so careful with dessert ideas",
               "Marco's wedding cake is going to be a lemon cake") == []
    assert run("Elena is allergic to tree nuts, but not almonds", "Marco's wedding cake is an almond cake") == []


# diet


def test_diet_near_misses() -> None:
    assert run("Ravi is vegetarian", "The main course is a cheese pie") == []  # cheese is not meat
    assert run("Ravi is vegetarian", "Omar is coming to the team dinner") == []  # someone else attends
    assert run("Ravi is vegetarian", "Ravi is coming to the team offsite") == []  # not a meal
    assert run("Liam is organizing the team dinner on November 8, 2024", "Fatima is vegan") == []  # attends?
    assert run("Ravi is mostly vegetarian", "The main course is a chicken curry") == []


# work permit


def test_work_permit_for_a_job_in_another_country() -> None:
    d = only(run("Kenji is a Japanese citizen, born and raised in Sapporo",
                 "Kenji accepted a job in Vancouver starting in January 2025"))
    assert d.content == "Kenji will likely need a Canadian work permit for the job in Vancouver"
    assert set(d.supporting_ids) == {"m1", "m2"} and d.rule == "work-permit"
    us = only(run("Ana is a citizen of Brazil", "Ana's new job is in the United States"))
    assert us.content == "Ana will likely need an American work permit for the job in the United States"


def test_work_permit_not_at_home_in_a_free_movement_area_or_once_mentioned() -> None:
    assert run("Kenji is a Japanese citizen", "Kenji accepted a job in Osaka") == []
    assert run("Lena is a German citizen", "Lena accepted a job in Lisbon") == []  # EU
    assert run("Mia is an Australian citizen", "Mia got a new job in Auckland") == []  # Trans-Tasman
    assert run("Kenji is a Japanese citizen", "Kenji has Canadian citizenship", "Kenji accepted a job in Toronto") == []
    assert run("Kenji is a Japanese citizen", "Kenji already has a Canadian work permit",
               "Kenji accepted a job in Toronto") == []
    assert run("Kenji is a Japanese citizen", "Kenji accepted a job in Springfield") == []  # unknown city
    assert run("Kenji is a Japanese citizen", "Aiko accepted a job in Toronto") == []  # someone else
    assert run("Kenji is a citizen of Osaka", "Kenji accepted a job in Toronto") == []  # a city, not a country


def test_new_shapes_are_idempotent_over_their_output() -> None:
    memories = [M("a", "Kenji is a Japanese citizen"), M("b", "Kenji accepted a job in Vancouver"),
                M("e", "Carlos's monthly take-home pay is $6,000 after tax"),
                M("f", "Carlos pays $1,800 a month for the flat in Queens"),
                M("g", "The total budget for Nadia's Iceland trip is €3,000"),
                M("h", "Flights were €1,200 for both of Nadia")]
    first = derive(memories)
    assert len(first) == 3
    assert derive([*memories, *(M(f"d{i}", d.content) for i, d in enumerate(first))]) == []


# rules added for recoveries that name no event


def test_a_recovery_naming_no_event_is_from_the_one_dated_procedure() -> None:
    d = only(run("Marta's knee surgery is scheduled for February 10, 2025", "Marta's recovery takes about six weeks"))
    assert d.content == "Marta should be recovered from the knee surgery around late March 2025"
    assert set(d.supporting_ids) == {"m1", "m2"}
    assert run("Marta's knee surgery is on February 10, 2025", "Marta's hip operation is on March 3, 2025",
               "Marta's recovery takes about six weeks") == []  # which one?
    assert run("Marta's birthday party is on February 10, 2025", "Marta's recovery takes about six weeks") == []


