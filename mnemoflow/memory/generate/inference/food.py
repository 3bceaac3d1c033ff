"""Food families: a dish someone's allergy rules out, a dish or a meal someone's diet rules out."""

from __future__ import annotations

import re
from collections.abc import Sequence

from mnemoflow.memory.english.lexicon import ALLERGEN_ALIASES, ALLERGENS
from mnemoflow.memory.generate.inference.common import _NAME, Derived, _first_match, _states

# every food class a rule may exclude: the allergens, and what diets leave out besides
_FOODS: dict[str, frozenset[str]] = {
    **ALLERGENS,
    "meat": frozenset({"beef", "pork", "chicken", "lamb", "bacon", "ham", "sausage", "steak", "turkey", "duck",
                       "veal", "chorizo", "salami", "prosciutto", "meatball", "venison"}),
    "honey": frozenset({"honey"}),
}
# a trailing clause ("..., so careful with desserts") may follow, unless it carves out an exception
_ASIDE = r"(?:, (?!.*\b(?:except|but|not|apart from|other than|unless|only)\b).*)?$"
_ALLERGIC = (
    re.compile(rf"^(?P<o>{_NAME}) is allergic to (?P<what>[a-z ]+?){_ASIDE}"),
    re.compile(rf"^(?P<o>{_NAME}) has an? (?P<what>[a-z ]+?) allergy{_ASIDE}"),
)
# ", apparently": where the speaker heard it; it does not change what is served
_HEARSAY = r",? (?:apparently|I think|I hear|I heard|they say|it seems)"
_SERVED_AS = r"(?:is going to be|are going to be|will be|is|are)"
_DISH = (
    re.compile(rf"^(?P<thing>.+?) {_SERVED_AS} (?:an? )?(?P<food>[a-z]+) "
               r"(?P<noun>cake|pie|tart|dessert|dish|sauce|soup|salad|bread|cookies|biscuits|curry|pasta|pudding|"
               r"cookie|stew|burger|burgers|sandwiches|sandwich|pizza|roast)(?P<hedge>" + _HEARSAY + ")?$"),
    re.compile(r"^(?P<thing>.+?) (?:contains|is made with|is made from|has) (?P<food>[a-z]+)$"),
)


def _dishes(items: Sequence[tuple[str, str]]) -> list[tuple[str, str, str, str]]:
    """(memory id, the thing served as the sentence names it, its food word, "(an almond cake)" or "")."""
    out = []
    for mid, text in items:
        if m := _first_match(_DISH, text):
            thing = m.group("thing")
            thing = thing if thing[:1].isupper() and not thing.startswith("The ") else thing[:1].lower() + thing[1:]
            detail = ""
            if m.groupdict().get("noun"):
                said = m.group(0)[len(m.group("thing")) + 1:m.start("hedge") if m.group("hedge") else None]
                detail = " (" + re.sub(rf"^{_SERVED_AS} ", "", said) + ")"
            out.append((mid, thing, m.group("food"), detail))
    return out


def _is_a(food: str, cls: str) -> bool:
    return food in _FOODS[cls] or food.rstrip("s") in _FOODS[cls]


def allergen(items: Sequence[tuple[str, str]]) -> list[Derived]:
    allergies = []
    for mid, text in items:
        if m := _first_match(_ALLERGIC, text):
            what = m.group("what").strip()
            cls = ALLERGEN_ALIASES.get(what) or (what if what in ALLERGENS else None)
            if cls:
                allergies.append((m.group("o"), cls, mid))
    out = []
    for mid, thing, food, detail in _dishes(items):
        for owner, cls, aid in allergies:
            if not _is_a(food, cls) or owner in thing or _states(items, owner, "cannot eat", food):
                continue
            out.append(Derived(f"{owner} cannot eat {thing}{detail} because of {owner}'s {cls} allergy", "fact",
                               0.85, (aid, mid), "allergen", f"{food} is a {cls} food"))
    return out


# ---------------------------------------------------------------------------------------------
# diets

_DIET_EXCLUDES: dict[str, tuple[str, ...]] = {
    "vegan": ("meat", "fish", "shellfish", "milk", "egg", "honey"),
    "vegetarian": ("meat", "fish", "shellfish"),
    "pescatarian": ("meat",),
}
_DIET = re.compile(rf"^(?P<o>{_NAME}) (?:is (?:an? )?|eats (?:an? )?|follows an? )"
                   r"(?P<diet>vegan|vegetarian|pescatarian)(?: diet)?$")
_MEAL_WORDS = r"(?:dinner|lunch|breakfast|brunch|barbecue|bbq|picnic|potluck|banquet)"
_ATTENDS = re.compile(
    rf"^(?P<o>{_NAME}) (?:is coming to|is attending|is joining|will attend|will join|is going to|will come to) "
    rf"(?P<event>(?:the|a|an|our) (?:[\w,-]+ )*?{_MEAL_WORDS}\b.*)$")

# "Liam is organizing the team dinner on November 8": the plan of a meal, which a guest's diet bears on
_HOSTS = re.compile(
    rf"^(?P<o>{_NAME}) (?:is organi[sz]ing|is hosting|is planning|is throwing|organi[sz]es|hosts|will host) "
    rf"(?P<event>(?:the|a|an|our) (?:[\w,-]+ )*?{_MEAL_WORDS}\b.*)$")


def diet(items: Sequence[tuple[str, str]]) -> list[Derived]:
    """A diet excludes food classes: a dish of an excluded class is out for that person, and a meal
    the person attends needs options for the diet (the host's plan of that meal supports it too)."""
    diets = [(m.group("o"), m.group("diet"), mid) for mid, text in items if (m := _DIET.match(text))]
    hosts: dict[str, list[str]] = {}  # the memories saying who hosts a meal: the plan the options are for
    for mid, text in items:
        if host := _HOSTS.match(text):
            hosts.setdefault(_the(host.group("event")), []).append(mid)
    out = []
    for mid, thing, food, detail in _dishes(items):
        for owner, diet, did in diets:
            excluded = [cls for cls in _DIET_EXCLUDES[diet] if _is_a(food, cls)]
            if not excluded or owner in thing or _states(items, owner, "cannot eat", food):
                continue
            out.append(Derived(f"{owner} cannot eat {thing}{detail} because {owner} is {diet}", "fact", 0.85,
                               (did, mid), "diet", f"{food} is {excluded[0]}, which a {diet} diet excludes"))
    for mid, text in items:
        m = _ATTENDS.match(text)
        if not m:
            continue
        event = m.group("event")
        for owner, diet, did in diets:
            if owner != m.group("o") or _states(items, f"{diet} options", owner):
                continue
            out.append(Derived(f"{event[:1].upper() + event[1:]} needs {diet} options for {owner}", "fact", 0.85,
                               (did, mid, *hosts.get(_the(event), ())), "diet",
                               f"{owner} is {diet} and is coming to {event}"))
    return out


def _the(event: str) -> str:
    """A meal as a key: "a team dinner" and "our team dinner" are the same as "the team dinner"."""
    return re.sub(r"^(?:a|an|our) ", "the ", event.lower())
