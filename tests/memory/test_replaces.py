"""A turn that ends a thing and names what came instead: which statements end a thing, and which can
take its place."""

from __future__ import annotations

import pytest

from mnemoflow.memory.relate.claims import parse_claim
from mnemoflow.memory.relate.replaces import ends_a_thing, takes_its_place


@pytest.mark.parametrize(("text", "ends"), [
    ("Lucinda: the Fitbit finally died", True), ("Fergus traded the Octavia in", True),
    ("Tobiah finally offloaded the Ridgeline, battery was toast", True), ("Beatrix cancelled Ladlebox", True),
    ("Lucinda is wearing a Garmin Venu 2 now", False), ("Fergus has got a Kia Niro EV now", False),
])
def test_what_ends_a_thing(text: str, ends: bool) -> None:
    assert ends_a_thing(text) is ends


@pytest.mark.parametrize(("text", "kind", "takes"), [
    ("Lucinda is wearing a Garmin Venu 2 now", "fact", True),
    ("Tobiah picked up a secondhand Kestrel cargo bike on September 14, 2024", "episode", True),  # acquired
    ("Fergus is also getting an e-bike now", "fact", False),  # alongside, not instead
    ("Fergus might get a Kia Niro next year", "fact", False),  # a maybe, not the case now
    ("Fergus went to the beach on Saturday", "episode", False),  # an event that replaces nothing
    ("Fergus's rule: never book diesel hire cars now", "rule", False),  # another kind
])
def test_what_can_take_the_place_of_an_ended_fact(text: str, kind: str, takes: bool) -> None:
    assert takes_its_place(parse_claim(text), kind, "fact") is takes
