"""The vocabulary a claim is read with: stopwords, qualifiers, units, number words,
closed value classes, antonyms, change markers, and the light stemmer that makes "moved" and "moving"
one word.

Kept apart from the reading itself (`claims`, `claim_values`) because the relationship step
(`relations`, `compare`) uses the same lists and stems to compare two claims."""

from __future__ import annotations

from functools import lru_cache

from mnemoflow.memory.english import lexicon, verbs

STOPWORDS = frozenset("""
a an the this that these those some any each all both either neither own such same other another
and or nor but if then than so as of in on at to from by for with without about into onto over under
after before during since until till upon within via per near across through between among around
i me my mine we us our ours you your yours he him his she her hers it its they them their theirs
who whom whose which what where when why how there here
is am are was were be been being has have had having do does did doing done
will would can could should shall may might must ought
get gets got getting gotten go goes going gone went
not no never n't also just really very quite too only even still already yet again
now actually currently anymore longer instead likely probably named called
up down out off away back
says said say tells told
one ones
""".split())
# Words that only qualify how often or how strongly: a paraphrase may add or drop them.
QUALIFIERS = frozenset("""
always usually often generally typically mostly most mainly normally regularly daily weekly monthly
every each morning evening night usual main favourite favorite currently
new current latest updated
""".split())
# Units of time: "a month" is not what a statement is about.
TIME_UNITS = frozenset({"second", "minute", "hour", "day", "week", "month", "year", "weekend", "time"})
WEEKDAYS = frozenset(lexicon.WEEKDAYS)
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
            "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "last": -1}
NUMBER_WORDS = lexicon.NUMBERS_TO_TWELVE | {"fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
                                          "hundred": 100, "dozen": 12}
# Capitalised words that start sentences but name nothing.
NOT_NAMES = frozenset("""
the a an every each all some any my our your his her their its this that these those when if after
before in on at for to from with and but or so because since while also i it we they he she you
there here what which who how why no not yes please according
""".split())
TITLES = frozenset({"dr", "mr", "mrs", "ms", "prof", "professor", "aunt", "uncle", "grandma", "grandpa",
                    "grandmother", "grandfather", "saint", "st", "sir", "dame"})
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
EXCLUSIVE_CLASSES: dict[str, frozenset[str]] = {
    "diet": frozenset({"vegetarian", "vegan", "pescatarian", "omnivore", "omnivorous", "carnivore",
                       "flexitarian", "keto", "paleo"}),
    "relationship status": frozenset({"single", "engaged", "married", "divorced", "widowed", "separated"}),
}
# The role an amount plays; amounts with different roles are different slots ("budget" vs "spent").
AMOUNT_ROLES: dict[str, str] = {
    "budget": "budget", "limit": "budget", "cap": "budget", "allowance": "budget",
    "spend": "spend", "spent": "spend", "cost": "spend", "costs": "spend", "price": "spend", "paid": "spend",
    "pay": "spend", "pays": "spend", "bill": "spend", "fee": "spend",
    "left": "remaining", "remaining": "remaining", "remain": "remaining", "owe": "remaining", "owes": "remaining",
    "loan": "debt", "debt": "debt", "mortgage": "debt",
    "salary": "income", "income": "income", "earn": "income", "earns": "income", "base": "income",
    "offer": "income", "home": "income", "wage": "income", "raise": "income",
    "rent": "rent",
    "save": "saving", "saves": "saving", "saving": "saving", "savings": "saving",
}
ANTONYMS: tuple[tuple[str, str], ...] = (
    ("new", "old"), ("open", "closed"), ("early", "late"), ("true", "false"), ("paid", "unpaid"),
    ("public", "private"), ("remote", "office"), ("available", "unavailable"), ("allowed", "forbidden"),
)
# Head nouns that name another person: "Grace's sister" is not Grace.
PERSON_NOUNS = frozenset("""
sister brother sibling son daughter child kid mother mom mum father dad parent wife husband spouse partner
boyfriend girlfriend fiance fiancee friend boss manager colleague coworker roommate flatmate neighbour neighbor
aunt uncle niece nephew cousin grandparent grandmother grandfather grandma grandpa grandson granddaughter teacher doctor
dentist lawyer
""".split())
# Units of measure: sharing "km" says nothing about sharing a topic.
MEASURE_UNITS = frozenset({"km", "kilometer", "kilometr", "mile", "mi", "meter", "metr", "kg", "kilo", "lb",
                           "pound", "gram", "mg", "ml", "liter", "litr", "cm", "mm", "inch", "foot", "feet",
                           "mph", "kmh", "percent", "degre", "step", "rep", "set"})
# Stems that mark a single-valued slot: one value replaces the other.
FUNCTIONAL = frozenset({"prefer", "favorit", "favorite", "main", "usual", "primary", "liv", "live", "based",
                        "employ", "job", "role", "titl", "manager", "boss", "doctor", "dentist", "vet", "address",
                        "email", "phon", "number", "go-to", "default"})
# where someone lives: the verbs, and the dwellings one is "in" ("I'm in a tiny flat on Canal Row")
RESIDENCE = frozenset({"live", "liv", "mov", "reloc", "relocat", "based", "resid", "reside", "flat", "apartment",
                       "hous", "condo", "bungalow", "dorm"})

# change markers announced by the newer statement; "strong" ones name a change outright
STRONG_CHANGE = (
    r"no longer", r"any ?more", r"mov(?:ed|es|ing) (?:[\w']+ ){0,3}?(?:to|into|onto|in|from|up|back)", r"dropped", r"dumped", r"left(?= (?-i:[A-Z]))", r"relocated", r"switched", r"changed",
    r"instead", r"rescheduled", r"postponed", r"push(?:ed|es|ing)? (?:[\w']+ ){0,3}?(?:back|to)", r"delayed", r"slipped",
    r"(?:brought|pulled) (?:in to|(?:[\w']+ ){0,3}?forward)\b", r"stopped", r"gave up", r"bump(?:ed|s|ing)? (?:[\w']+ ){0,3}?(?:to|back|up)\b", r"(?:gone|went|going) over to",
    r"ended up (?:going )?with", r"quit", r"not .{1,40} after all", r"corrected",
    r"has been moved", r"was moved", r"was changed", r"updated to", r"sold(?! out\b)", r"got rid of", r"gave away",
    r"extended(?= (?:the|my|our|its|their|his|her|it)\b)", r"retired(?=\s*(?:[.,;!]|$|\s+(?:now|from|last|in|this|after|so|and|early)\b))", r"(?:is|'s|was|got|been) (?:\w+ly )?(?:dead|broken|gone|written off|totall?ed|called off|in the bin|chucked)", r"(?<!\bbe )(?<!\bget )(?<!\bgot )(?<!\bam )(?<!'m )(?<!\bis )(?<!\bare )(?<!'re )used to\b(?! (?:it|that|this|the)\b)",
    r"gone off", r"turn(?:s|ed) out\b(?! to\b)", r"turned(?= \d{1,3}\b)", r"(?:is|'s) off\b(?! (?:to|for|on|at|in|work|sick)\b)", r"escaped", r"offloaded", r"closed(?= (?:the |my |our )?(?-i:[A-Z]))", r"cancell?ed", r"scrapped", r"binned", r"ditched", r"abandoned", r"replaced", r"traded (?:[\w']+ ){0,3}?in", r"died", r"(?:was|got|been) (?:stolen|nicked|pinched)", r"swapped", r"transferred", r"migrated", r"ported", r"broke up", r"promoted", r"demoted", r"became", r"renamed", r"upgraded", r"downgraded",
    # a number raised or cut to a new one ("raised the rent to 1,350", "is up to 10 km", "went down to 6")
    (r"(?:raised|raises|increased|increases|lowered|lowers|reduced|reduces|cut|cuts|bump(?:ed|s|ing)|hik(?:ed|es|ing)|up(?:ped|s|ping)|"
     r"(?:went|goes|gone|going|is|are|was|were|'s|'re) (?:up|down)) (?:[\w',]+ ){0,3}?to(?= [$€£¥]?\d| (?:a |an )?(?:"
     + "|".join(NUMBER_WORDS) + r")\b)"),
    r"put(?:s|ting)? (?:[\w']+ ){0,3}?(?:up|down)(?: to| by)?(?= [$€£¥]\d)",  # "put the rent up £1,240 from July"
)
WEAK_CHANGE = (r"now", r"actually", r"these days", r"nowadays")
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


CLEARED = frozenset({"fine", "ok", "okay", "safe"})  # "X is fine": X is ruled out, not asserted
