"""The vocabulary a claim is read with: stopwords, qualifiers, units, number words,
closed value classes, antonyms, change markers, and the light stemmer that makes "moved" and "moving"
one word.

Kept apart from the reading itself (`claims`, `claim_values`) because the relationship step
(`relations`, `compare`) uses the same lists and stems to compare two claims."""

from __future__ import annotations

from functools import lru_cache

from mnemoflow.memory.english import lexicon, verbs
from mnemoflow.memory.english.lexicon import listed, table, words

STOPWORDS = words("claim_words.stopwords")
# Words that only qualify how often or how strongly: a paraphrase may add or drop them.
QUALIFIERS = words("claim_words.qualifiers")
# Units of time: "a month" is not what a statement is about.
TIME_UNITS = words("claim_words.time_units")
WEEKDAYS = frozenset(lexicon.WEEKDAYS)
ORDINALS = table("claim_words.ordinals")
NUMBER_WORDS = lexicon.NUMBERS_TO_TWELVE | {"fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
                                          "hundred": 100, "dozen": 12}
# Capitalised words that start sentences but name nothing.
NOT_NAMES = words("claim_words.not_names")
TITLES = words("claim_words.titles")
AUXILIARIES = verbs.AUXILIARIES | frozenset("""
isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't wouldn't can't couldn't
shouldn't
""".split())
# the irregular past forms the verb table knows, and "quit" (the same in the past: "quit smoking")
IRREGULAR_PAST = verbs.PAST_FORMS | {"quit"}
IRREGULAR_STEMS = {
    **{form: base for base, forms in verbs.IRREGULAR.items() for form in forms if form != base},  # went -> go
    "children": "child", "kids": "child", "kid": "child", "people": "person", "men": "man",
    "women": "woman", "born": "birth", "birthday": "birth",
    "flies": "fly", "flight": "fly", "flights": "fly",
    "wedding": "marri", "weddings": "marri", "married": "marri", "marry": "marri", "marries": "marri",
    "wants": "prefer", "want": "prefer", "wanted": "prefer", "prefers": "prefer", "preferred": "prefer",
    "favourite": "favorite", "mum": "mother", "mom": "mother", "dad": "father",
}
# Closed classes whose members cannot hold together for one subject (a value, not a topic).
EXCLUSIVE_CLASSES: dict[str, frozenset[str]] = {k: frozenset(w) for k, w in table("claim_words.exclusive_classes").items()}
# The role an amount plays; amounts with different roles are different slots ("budget" vs "spent").
AMOUNT_ROLES: dict[str, str] = table("claim_words.amount_roles")
ANTONYMS: tuple[tuple[str, str], ...] = tuple(tuple(pair) for pair in listed("claim_words.antonyms"))
# Head nouns that name another person: "Grace's sister" is not Grace.
PERSON_NOUNS = words("claim_words.person_nouns")
# Units of measure: sharing "km" says nothing about sharing a topic.
MEASURE_UNITS = words("claim_words.measure_units")
# Stems that mark a single-valued slot: one value replaces the other.
FUNCTIONAL = words("claim_words.functional")
# where someone lives: the verbs, and the dwellings one is "in" ("I'm in a tiny flat on Canal Row")
RESIDENCE = words("claim_words.residence")

# change markers announced by the newer statement; "strong" ones name a change outright
STRONG_CHANGE = tuple(listed("claim_words.strong_change"))
WEAK_CHANGE = tuple(listed("claim_words.weak_change"))
# those of them that end what was held ("stopped using Tesco", "can't do the 22nd anymore")
ENDING_CHANGE = tuple(listed("claim_words.ending_change"))
# what a thing that ended is said to be ("the Fitbit died", "the Slate's retired", "the bike was stolen")
ENDED = r"died|retired|dead|broken|gone|stolen|nicked|pinched|written off|totall?ed|called off|off|binned|scrapped|in the bin|chucked"


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A light, deterministic stem: 'savings'/'saves' -> 'sav', 'running'/'runs' -> 'run'."""
    w = word.lower().strip("`'’")
    if w.endswith(("'s", "’s")):
        w = w[:-2]
    if w in IRREGULAR_STEMS:
        return IRREGULAR_STEMS[w]
    if len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("ings") and len(w) > 6:
        w = w[:-4]
    elif w.endswith("ing") and len(w) > 5:
        w = w[:-3]
    elif w.endswith("ied") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("ed") and len(w) > 4:
        w = w[:-2]
    elif w.endswith(("sses", "xes", "zes", "ches", "shes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]  # runn -> run, plann -> plan
    if len(w) >= 3 and w.endswith("e"):
        w = w[:-1]
    return IRREGULAR_STEMS.get(w, w)


def same_stem(a: str, b: str) -> bool:
    """Equal stems, or one a long common prefix of the other ('physio' ~ 'physiotherapy'); a word and a stem
    of it are the same ('wedding' ~ 'marri', as a name key at a sentence's start meets the stem)."""
    if a == b or stem(a) == b or a == stem(b):
        return True
    shorter = min(len(a), len(b))
    if shorter < 5:
        return False
    prefix = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        prefix += 1
    return prefix >= max(5, 0.75 * shorter)


def overlap(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> set[str]:
    """Stems of `a` that have a match in `b`."""
    return {x for x in a if any(same_stem(x, y) for y in b)}


def among(item: str, pool: frozenset[str] | set[str]) -> bool:
    """`item` is in `pool`: itself, a phrase of the pool that holds it or that it holds, or a word of the same stem."""
    if item in pool:
        return True
    if " " in item or any(" " in p for p in pool):
        words = set(item.split())
        if any(words & set(p.split()) and (len(words) > 1 or len(p.split()) > 1) and
               (words <= set(p.split()) or set(p.split()) <= words) for p in pool):
            return True
    return any(same_stem(item, p) for p in pool)


CLEARED = words("claim_words.cleared")
