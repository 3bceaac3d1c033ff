"""The work-permit family: a citizen of one country taking a job in another, outside a free-movement
area, will likely need a work permit."""

from __future__ import annotations

import re
from collections.abc import Sequence

from mnemoflow.memory.generate.inference.common import _NAME, Derived, _first_match, _states

# country: (the citizens' adjective, a few major cities); a city names its country only here
_COUNTRIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "Canada": ("Canadian", ("Toronto", "Vancouver", "Montreal", "Calgary", "Ottawa")),
    "the United States": ("American", ("New York", "San Francisco", "Seattle", "Boston", "Chicago", "Los Angeles",
                                       "Austin")),
    "Mexico": ("Mexican", ("Mexico City", "Guadalajara")),
    "Brazil": ("Brazilian", ("São Paulo", "Rio de Janeiro")),
    "the United Kingdom": ("British", ("London", "Manchester", "Edinburgh", "Glasgow")),
    "Ireland": ("Irish", ("Dublin", "Cork")),
    "Germany": ("German", ("Berlin", "Munich", "Hamburg", "Frankfurt")),
    "France": ("French", ("Paris", "Lyon")),
    "Spain": ("Spanish", ("Madrid", "Barcelona")),
    "Italy": ("Italian", ("Rome", "Milan")),
    "the Netherlands": ("Dutch", ("Amsterdam", "Rotterdam")),
    "Portugal": ("Portuguese", ("Lisbon", "Porto")),
    "Sweden": ("Swedish", ("Stockholm",)),
    "Poland": ("Polish", ("Warsaw", "Krakow")),
    "Switzerland": ("Swiss", ("Zurich", "Geneva")),
    "Japan": ("Japanese", ("Tokyo", "Osaka", "Kyoto", "Sapporo", "Yokohama")),
    "China": ("Chinese", ("Beijing", "Shanghai", "Shenzhen")),
    "South Korea": ("South Korean", ("Seoul", "Busan")),
    "India": ("Indian", ("Mumbai", "Delhi", "Bangalore", "Bengaluru", "Hyderabad")),
    "Singapore": ("Singaporean", ("Singapore",)),
    "Australia": ("Australian", ("Sydney", "Melbourne", "Brisbane")),
    "New Zealand": ("New Zealand", ("Auckland", "Wellington")),
    "the United Arab Emirates": ("Emirati", ("Dubai", "Abu Dhabi")),
}
# citizens of one country of a group may work in the others without a permit
_FREE_MOVEMENT = (
    frozenset({"Ireland", "Germany", "France", "Spain", "Italy", "the Netherlands", "Portugal", "Sweden", "Poland",
               "Switzerland"}),  # EU / EEA and Switzerland
    frozenset({"the United Kingdom", "Ireland"}),  # Common Travel Area
    frozenset({"Australia", "New Zealand"}),  # Trans-Tasman arrangement
)
_COUNTRY_OF_ADJ = {adj: country for country, (adj, _) in _COUNTRIES.items()}
_COUNTRY_OF_PLACE = {**{city: country for country, (_, cities) in _COUNTRIES.items() for city in cities},
                     **{country.removeprefix("the "): country for country in _COUNTRIES}}
_ADJ = "|".join(sorted(map(re.escape, _COUNTRY_OF_ADJ), key=len, reverse=True))
_PLACE = "|".join(sorted(map(re.escape, _COUNTRY_OF_PLACE), key=len, reverse=True))
_COUNTRY = "|".join(sorted((re.escape(c.removeprefix("the ")) for c in _COUNTRIES), key=len, reverse=True))
_CITIZEN = (
    re.compile(rf"^(?P<o>{_NAME}) is an? (?P<adj>{_ADJ}) (?:citizen|national)\b"),
    re.compile(rf"^(?P<o>{_NAME}) has (?P<adj>{_ADJ}) citizenship\b"),
    re.compile(rf"^(?P<o>{_NAME}) is a citizen of (?:the )?(?P<place>{_COUNTRY})\b"),
)
_JOB = (
    re.compile(rf"^(?P<o>{_NAME}) (?:accepted|took|got|landed|has|starts|is starting|will start|started) "
               rf"(?:a|an|the|her|his|their) (?:new )?job(?: offer)?(?: at [^,]+?)? in (?:the )?(?P<place>{_PLACE})\b"),
    re.compile(rf"^(?P<o>{_NAME})'s new job is in (?:the )?(?P<place>{_PLACE})\b"),
    re.compile(rf"^(?P<o>{_NAME}) is moving to (?:the )?(?P<place>{_PLACE}) for (?:a|an|her|his|their) (?:new )?job\b"),
)


def work_permit(items: Sequence[tuple[str, str]]) -> list[Derived]:
    """A citizen of one country taking a job in another, outside any free-movement group the two
    share, will likely need a work permit there; not derived once a memory mentions a permit or visa."""
    citizen: dict[str, list[tuple[str, str]]] = {}
    for mid, text in items:
        if m := _first_match(_CITIZEN, text):
            adj = m.groupdict().get("adj")
            country = _COUNTRY_OF_ADJ[adj] if adj else _COUNTRY_OF_PLACE[m.group("place")]
            citizen.setdefault(m.group("o"), []).append((country, mid))
    out = []
    for jid, text in items:
        m = _first_match(_JOB, text)
        if not m or m.group("o") not in citizen:
            continue
        owner, place = m.group("o"), m.group("place")
        country = _COUNTRY_OF_PLACE[place]
        countries = [c for c, _ in citizen[owner]]
        free = any(country in g and c in g for g in _FREE_MOVEMENT for c in countries)
        if country in countries or free or any(_states(items, owner, w) for w in ("permit", "visa", "resident")):
            continue
        adj = _COUNTRIES[country][0]
        article = "an" if adj[0] in "AEIOU" else "a"
        where = country if place == country.removeprefix("the ") else place
        home, cid = citizen[owner][0]
        out.append(Derived(f"{owner} will likely need {article} {adj} work permit for the job in {where}", "fact",
                           0.85, (cid, jid), "work-permit",
                           f"{owner} is a {_COUNTRIES[home][0]} citizen and the job is in {country}"))
    return out
