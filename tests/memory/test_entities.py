"""Typed entities, relation triples and categories, by rule, on sentences the way memories read."""

from __future__ import annotations

import re

import pytest

from mnemoflow.memory.relate.entities import entity_id, slug, typed_entities
from mnemoflow.memory.relate.triples import categories_of, relation_triples
from mnemoflow.memory.english.names import find_entities
from mnemoflow.models import THIS_MEMORY, entity_id_of


def types(content: str, names: tuple[str, ...] | None = None, **kw) -> dict[str, str]:
    """name -> type for what the content names (found as the rule engine finds them, unless given)."""
    found = typed_entities(content, find_entities(content) if names is None else names, **kw)
    return {e.name: e.type for e in found}


def triples(content: str, names: tuple[str, ...] | None = None, **kw) -> set[tuple[str, str, str]]:
    found = typed_entities(content, find_entities(content) if names is None else names, **kw)
    return {(s, p, o) for s, p, o, _ in relation_triples(content, found) if p != "mentions"}


# ------------------------------------------------------------------------------------------ ids

@pytest.mark.parametrize(("name", "expected"), [
    ("Maya", "maya"), ("Zoë Müller", "zoe-muller"), ("Søren Kierkegaard", "soren-kierkegaard"),
    ("Straße", "strasse"), ("São Paulo", "sao-paulo"), ("C++", "c-plus-plus"), ("C#", "c-sharp"),
    ("Node.js", "node-js"), ("  scikit_learn ", "scikit-learn"), ("O'Brien & Co.", "o-brien-co"),
])
def test_slugs_are_lowercase_ascii_with_dashes(name: str, expected: str) -> None:
    assert slug(name) == expected


def test_a_name_without_latin_letters_gets_a_stable_ascii_slug() -> None:
    assert slug("東京") == slug("東京") != slug("大阪")
    assert re.fullmatch(r"x-[0-9a-f]{12}", slug("東京"))


def test_entity_ids_name_a_type_and_a_digest_of_the_slug_never_the_name() -> None:
    assert entity_id("person", "Zoë") == entity_id("person", "zoe") == entity_id_of("person", slug("Zoë"))
    assert re.fullmatch(r"entity:place:[0-9a-f]{24}", entity_id("place", "München"))
    assert "munchen" not in entity_id("place", "München") and entity_id("place", "Zoë") != entity_id("person", "Zoë")
    with pytest.raises(ValueError, match="entity type"):
        entity_id("animal", "Rex")


# ------------------------------------------------------------------------------------- typing

def test_speakers_are_people_even_without_a_cue() -> None:
    content = "A birthday card for Caroline arrived"
    assert types(content, ("Caroline",), speakers=("caroline",)) == {"Caroline": "person"}
    assert types(content, ("Caroline",)) == {"Caroline": "concept"}
    # a speaker's full name too
    assert types("Caroline Baker won the award", ("Caroline Baker",), speakers=("Caroline",)) == {
        "Caroline Baker": "person"}


@pytest.mark.parametrize(("content", "name"), [
    ("Melanie had coffee with Dr. Chen", "Chen"),
    ("Lena's friend Élodie paints landscapes", "Élodie"),
    ("Tom's sister Zoë adopted a puppy", "Zoë"),
    ("Jordan said the launch slipped", "Jordan"),  # a country's name, but Jordan speaks
    ("Priya doesn't use Slack anymore", "Priya"),
    ("Kwame is a nurse in the night shift", "Kwame"),
    ("Aiko's birthday is on the 3rd", "Aiko"),
])
def test_people_by_title_family_what_they_are_or_what_they_say(content: str, name: str) -> None:
    assert types(content, (name,))[name] == "person"


@pytest.mark.parametrize(("content", "name"), [
    ("Maya works at Zentrix on the data team", "Zentrix"),
    ("Raj got an offer from Brightwave", "Brightwave"),
    ("Omar studied at the University of Lisbon", "University of Lisbon"),
    ("Lena joined Acme Corp in May", "Acme Corp"),
    ("Lena's partner works for Stripe", "Stripe"),
    ("Nomad, a small startup in Porto, hired Lena", "Nomad"),
])
def test_organisations_by_name_frame_or_well_known(content: str, name: str) -> None:
    assert types(content, (name,))[name] == "organization"


@pytest.mark.parametrize(("content", "name"), [
    ("Zoë moved to München last year", "München"),
    ("Lena visited Japan in April", "Japan"),
    ("Maya lives in Lisbon", "Lisbon"),
    ("Omar moved to Tuscaloosa for the new job", "Tuscaloosa"),  # not listed: the verb says it
    ("They camped at Lake Tahoe", "Lake Tahoe"),
    ("Lena's office is on Baker Street", "Baker Street"),
])
def test_places_by_gazetteer_name_or_where_people_go(content: str, name: str) -> None:
    assert types(content, (name,))[name] == "place"


def test_going_to_someones_party_is_not_a_place() -> None:
    assert types("Lena is going to Marek's party", ("Marek",))["Marek"] == "person"
    assert types("Lena is going to Marek next week", ("Marek",))["Marek"] == "concept"


def test_libraries_tools_and_projects() -> None:
    assert types("Lena installed the requests library and pip install httpx", ()) == {
        "requests": "library", "httpx": "library"}  # framed as packages, found even when not given
    assert types("Raj added `scikit-learn` to the notebook", ("scikit-learn",)) == {"scikit-learn": "library"}
    assert types("Maya prefers Pandas for quick analysis", ("Pandas",)) == {"Pandas": "library"}
    assert types("Lena keeps notes in the Obsidian app", ("Obsidian",)) == {"Obsidian": "tool"}
    assert types("The team switched to Zed last week", ("Zed",)) == {"Zed": "tool"}
    assert types("Raj upgraded the database to Postgres 16", ("Raj", "Postgres 16")) == {
        "Raj": "person", "Postgres 16": "tool"}
    assert types("Run make release before tagging", ("make release",)) == {"make release": "tool"}
    assert types("Maya is working on Hermes with Omar", ("Maya", "Hermes", "Omar"))["Hermes"] == "project"


def test_a_project_is_named_without_the_word_project() -> None:
    [melanie, atlas] = typed_entities("Melanie leads Project Atlas", ("Melanie", "Project Atlas"),
                                      speakers=("Melanie",))
    assert (atlas.entity_id, atlas.name, atlas.type, atlas.aliases) == (
        entity_id("project", "atlas"), "Atlas", "project", ("Project Atlas",))
    assert melanie.entity_id == entity_id("person", "melanie")


def test_acronyms_and_plain_words_are_concepts() -> None:
    assert types("Caroline went to the LGBTQ support group", ("Caroline", "LGBTQ"), speakers=("Caroline",)) == {
        "Caroline": "person", "LGBTQ": "concept"}


# ------------------------------------------------------------------------------------ aliases

def test_a_first_name_beside_the_full_name_is_one_person() -> None:
    found = typed_entities("Maya Lopez joined Acme Corp; Maya now works at Acme Corp in Berlin",
                           ("Maya Lopez", "Acme Corp", "Maya", "Berlin"))
    assert [(e.entity_id, e.aliases) for e in found] == [
        (entity_id("person", "maya-lopez"), ("Maya",)), (entity_id("organization", "acme-corp"), ()), (entity_id("place", "berlin"), ())]


def test_possessive_and_case_variants_become_aliases() -> None:
    [maya] = typed_entities("Maya's brother says MAYA cooks", ("Maya",))
    assert maya.entity_id == entity_id("person", "maya") and set(maya.aliases) == {"Maya's", "MAYA"}


def test_a_short_form_is_merged_only_when_given() -> None:
    content = "Melanie said Mel prefers morning meetings"
    apart = typed_entities(content, ("Melanie", "Mel"))
    assert [e.entity_id for e in apart] == [entity_id("person", "melanie"), entity_id("person", "mel")]
    [merged] = typed_entities(content, ("Melanie", "Mel"), aliases={"Melanie": ["Mel"]})
    assert merged.entity_id == entity_id("person", "melanie") and merged.aliases == ("Mel",)


# ---------------------------------------------------------------------------------- relations

def test_every_entity_is_mentioned_by_the_memory() -> None:
    found = typed_entities("Maya lives in Lisbon", ("Maya", "Lisbon"))
    assert [t for t in relation_triples("Maya lives in Lisbon", found) if t[1] == "mentions"] == [
        (THIS_MEMORY, "mentions", entity_id("person", "maya"), 1.0), (THIS_MEMORY, "mentions", entity_id("place", "lisbon"), 1.0)]


def test_verb_patterns_state_relations() -> None:
    assert triples("Maya works at Zentrix", ("Maya", "Zentrix")) == {
        (entity_id("person", "maya"), "belongs_to", entity_id("organization", "zentrix"))}
    assert triples("Maya is working on Hermes", ("Maya", "Hermes")) == {
        (entity_id("person", "maya"), "works_on", entity_id("project", "hermes"))}
    assert triples("Melanie uses DuckDB and Prefect for the pipeline", ("Melanie", "DuckDB", "Prefect"),
                   speakers=("Melanie",)) == {
        (entity_id("person", "melanie"), "uses", entity_id("tool", "duckdb")),
        (entity_id("person", "melanie"), "uses", entity_id("library", "prefect"))}
    assert triples("The billing API runs on Kubernetes", ("API", "Kubernetes")) == {
        (entity_id("concept", "api"), "runs_on", entity_id("tool", "kubernetes"))}
    assert triples("Zoë now lives in München", ("Zoë", "München")) == {
        (entity_id("person", "zoe"), "located_at", entity_id("place", "munchen"))}


def test_a_literal_object_is_short_and_cut_at_the_clause() -> None:
    assert triples("Melanie prefers pandas over polars for quick analysis", ("Melanie",)) == {
        (entity_id("person", "melanie"), "prefers", "pandas")}
    assert triples("Maya really loves spicy ramen, especially in winter", ("Maya",)) == {
        (entity_id("person", "maya"), "prefers", "spicy ramen")}
    # located_at needs a place, not a literal
    assert triples("Maya lives in a small flat", ("Maya",)) == set()


def test_a_second_verb_joined_by_and_keeps_the_subject() -> None:
    content = "Melanie's sister Maya lives in Lisbon and loves sushi"
    assert triples(content, ("Melanie", "Maya", "Lisbon"), speakers=("Melanie",)) == {
        (entity_id("person", "maya"), "located_at", entity_id("place", "lisbon")), (entity_id("person", "maya"), "prefers", "sushi")}


def test_negations_and_possessives_state_nothing() -> None:
    assert triples("Priya doesn't use Slack anymore", ("Priya", "Slack")) == set()
    assert triples("Maya's brother works at Google", ("Maya", "Google")) == set()
    assert triples("Maya used to live in Lisbon", ("Maya", "Lisbon")) == set()


# --------------------------------------------------------------------------------- categories

def test_categories_from_a_small_taxonomy() -> None:
    assert categories_of("Maya loves spicy ramen", "preference") == ["food", "preference", "preference/food"]
    assert categories_of("Lena works at Stripe on the payments team", "fact") == ["work"]
    assert categories_of("Lena's standup is every Monday at 9:30", "fact") == ["schedule", "work"]
    assert categories_of("Omar is allergic to peanuts", "fact") == [
        "food", "health", "preference", "preference/food"]
    assert categories_of("Lena visited Japan in April", "episode") == ["travel"]
    assert categories_of("Raj deployed the API to Kubernetes", "fact") == ["tech"]
    assert categories_of("Maya's sister got married in June", "episode") == ["family"]
    assert categories_of("The sky was clear", "fact") == []


def test_what_is_liked_decides_the_preference_subcategory() -> None:
    # family is mentioned, but what Maya loves is food
    assert categories_of("Lena's sister Maya lives in Lisbon and loves sushi", "preference") == [
        "family", "food", "preference", "preference/food"]
