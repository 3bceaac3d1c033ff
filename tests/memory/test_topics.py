"""Topic finding: HDBSCAN over real MiniLM vectors of memories written here, c-TF-IDF labels, names
masked, and topics that continue keeping their ids."""

from __future__ import annotations

import pytest

from mnemoflow.embedding.local import LocalEmbedder
from mnemoflow.memory.topics import continued, distinctive_terms, find_topics, without_people

THEMES = {
    "sailing": [
        "Noor sailed the dinghy across the bay on Saturday", "Noor is taking a sailing course at the marina",
        "The sailing club moved the regatta to June", "Noor capsized the boat in strong wind but stayed calm",
        "Noor wants to buy a second-hand sailboat", "Noor learned to tie a bowline knot for sailing",
        "Noor crewed a yacht race around the island", "Noor checks the wind forecast before every sail",
    ],
    "baking": [
        "Noor baked a sourdough loaf with a new starter", "Noor's croissants came out flaky this time",
        "Noor is perfecting a lemon tart recipe", "Noor bought a stand mixer for baking bread",
        "Noor's banana bread won the office bake-off", "Noor proofs the dough overnight in the fridge",
        "Noor burnt the first batch of cinnamon rolls", "Noor wants to open a small bakery stall at the market",
    ],
    "taxes": [
        "Noor filed the tax return two days before the deadline", "Noor's accountant found a missing deduction",
        "Noor owes extra income tax this year", "Noor keeps receipts in a folder for the tax office",
        "Noor set up quarterly tax payments for freelance work", "Noor got a letter from the tax authority",
        "Noor claimed home office expenses on the tax return", "Noor is worried about an audit of last year's taxes",
    ],
}
STRAYS = ["Noor's cousin lives in Montreal", "The printer ran out of toner", "Noor likes the colour teal",
          "Noor's phone screen cracked", "Noor watched a documentary about owls"]


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


def test_memories_fall_into_their_topics_with_readable_labels(embedder: LocalEmbedder) -> None:
    texts = [t for theme in THEMES.values() for t in theme] + STRAYS
    theme_of = {i: name for i, name in enumerate(n for n, theme in THEMES.items() for _ in theme)}
    masked = [without_people(t, ("Noor",)) for t in texts]
    found = find_topics(masked, embedder.embed(masked), min_size=4)
    assert len(found) >= 2
    for topic in found:
        themes = [theme_of.get(i) for i in topic.members]
        majority = max(set(themes), key=themes.count)
        assert majority is not None and themes.count(majority) / len(themes) >= 0.8, (topic.label, themes)
        assert 0 < min(topic.members.values()) <= max(topic.members.values()) <= 1
        assert "Noor" not in topic.terms and "someone" not in topic.terms
    labels = " ".join(t.label for t in found).lower()
    assert sum(word in labels for word in ("sail", "tax", "bak", "bread", "dough")) >= 2, labels


def test_too_few_memories_make_no_topics(embedder: LocalEmbedder) -> None:
    texts = THEMES["sailing"][:5]
    assert find_topics(texts, embedder.embed(texts), min_size=4) == []


def test_names_are_masked_with_their_possessives() -> None:
    assert without_people("Maya Lin met Maya's boss; Mayan ruins", ("Maya", "Maya Lin")) == (
        "someone met someone's boss; Mayan ruins")
    assert without_people("nothing to hide", ()) == "nothing to hide"


def test_terms_are_what_sets_a_class_apart_in_its_usual_casing() -> None:
    classes = [["We flew to Lisbon for the weekend", "Lisbon trams are old", "the weekend was sunny"],
               ["The sourdough needs a weekend to rise", "sourdough starter and flour", "flour prices rose"]]
    first, second = distinctive_terms(classes, 3)
    assert first[0] == "Lisbon" and set(second[:2]) == {"sourdough", "flour"}
    assert "weekend" not in first[:1] and "weekend" not in second[:1]  # said by both: not distinctive


def test_a_cluster_continues_the_topic_it_mostly_is() -> None:
    stored = {"top_a": {"m1", "m2", "m3", "m4"}, "top_b": {"m5", "m6", "m7"}}
    found = [{"m1", "m2", "m3", "m9"}, {"m5", "m8", "m10", "m11"}, {"m6", "m7", "m12"}]
    assert continued(found, stored) == ["top_a", None, "top_b"]  # m5 alone is not more than half of either
    assert continued([{"m1", "m2"}, {"m3", "m4"}], {"top_a": {"m1", "m2", "m3", "m4"}}) == ["top_a", None]
