"""A memory's content read as a claim, without a model: who says it, what it is about, which typed
values it asserts, what it negates, and whether it announces a change.

`relations.classify` compares two claims with these parts. Everything here is deterministic string
work over one sentence-sized text (memory contents are short, self-contained and written in the
third person, see eval/scenarios/README.md):

- attribution: "Kofi says ...", "The airline app says ...", "According to Ana, ..." -> `source`
- the main clause: the text before "because", "which", ", so", ", including", ... -> `main`
- names (capitalised, CamelCase, ALLCAPS, `package.json`), with an optional version ("React 18.2")
- typed values: dates ("June 14, 2024", "fall 2022", "end of 2025"), clock times, money, percents,
  quantities with their unit ("20 mg", "two children"), versions, and closed-class values whose
  members exclude each other (diet, relationship status)
- content stems: lowercased, lightly stemmed, stopwords and light verbs removed
- negation scope ("not", "n't", "never", "no", "no longer": the words up to the next comma or "and")
- change markers ("now", "moved to", "switched to", "no longer", "instead", "anymore", ...)
- modality: a completed past event, a plan or goal, or neither
- the main verb, which splits the subject from the predicate
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from mnemoflow.memory.english import temporal, verbs

# ---------------------------------------------------------------------------------------------
# word lists

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
always usually often generally typically mostly mainly normally mostly regularly daily weekly monthly
every each morning evening night usual main favourite favorite currently
new current latest updated
""".split())
# Units of time: "a month" is not what a statement is about.
TIME_UNITS = frozenset({"second", "minute", "hour", "day", "week", "month", "year", "weekend", "time"})
MONTHS = {m.lower(): i + 1 for i, m in enumerate(temporal.MONTHS)}
MONTH_ABBREV = temporal.MONTH_ABBREVIATIONS
SEASONS = {"spring": (3, 4, 5), "summer": (6, 7, 8), "fall": (9, 10, 11), "autumn": (9, 10, 11),
           "winter": (12, 1, 2)}
WEEKDAYS = frozenset(temporal.WEEKDAYS)
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
            "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "last": -1}
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
                "thirty": 30, "forty": 40, "fifty": 50, "hundred": 100, "dozen": 12}
# Capitalised words that start sentences but name nothing.
NOT_NAMES = frozenset("""
the a an every each all some any my our your his her their its this that these those when if after
before in on at for to from with and but or so because since while also i it we they he she you
there here what which who how why no not yes please according
""".split())
TITLES = frozenset({"dr", "mr", "mrs", "ms", "prof", "professor", "aunt", "uncle", "grandma", "grandpa",
                    "grandmother", "grandfather", "saint", "st", "sir", "dame"})
NAME_CONNECTORS = frozenset({"du", "de", "da", "del", "van", "von", "der", "la", "le", "of", "&"})
AUXILIARIES = verbs.AUXILIARIES | frozenset("""
isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't wouldn't can't couldn't
shouldn't
""".split())
IRREGULAR_PAST = frozenset("""
was were had did went gone came made took taken gave given got bought brought thought taught caught
sold told said found left felt kept held met paid ran began begun became won lost sent spent built
flew flown drove driven wrote written ate eaten saw seen knew known grew grown chose chosen broke
broken spoke spoken rode wore fell led lent stood understood quit
""".split())
IRREGULAR_STEMS = {
    "children": "child", "kids": "child", "kid": "child", "people": "person", "men": "man",
    "women": "woman", "ran": "run", "went": "go", "gone": "go", "born": "birth", "birthday": "birth",
    "flew": "fly", "flown": "fly", "flies": "fly", "flight": "fly", "flights": "fly", "bought": "buy",
    "took": "take", "taken": "take", "gave": "give", "given": "give", "made": "make", "paid": "pay",
    "spent": "spend", "sold": "sell", "left": "leave", "kept": "keep", "met": "meet", "led": "lead",
    "wrote": "write", "written": "write", "ate": "eat", "eaten": "eat", "drove": "drive", "chose": "choose",
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
aunt uncle niece nephew cousin grandmother grandfather grandma grandpa grandson granddaughter teacher doctor
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
RESIDENCE = frozenset({"live", "liv", "mov", "reloc", "relocat", "based", "resid", "reside"})

# change markers announced by the newer statement; "strong" ones name a change outright
STRONG_CHANGE = (
    r"no longer", r"any ?more", r"mov(?:ed|es|ing) (?:\w+ ){0,3}?(?:to|from|up|back)", r"dropped", r"left(?= (?-i:[A-Z]))", r"relocated", r"switched", r"changed",
    r"instead", r"rescheduled", r"postponed", r"pushed (?:back|to)", r"delayed", r"slipped",
    r"brought forward", r"stopped", r"gave up", r"quit", r"not .{1,40} after all", r"corrected",
    r"has been moved", r"was moved", r"was changed", r"updated to", r"sold", r"got rid of", r"gave away",
    r"replaced", r"broke up", r"promoted", r"demoted", r"became", r"renamed", r"upgraded", r"downgraded",
)
WEAK_CHANGE = (r"now", r"actually", r"these days", r"nowadays")
_STRONG_RE = re.compile(r"\b(?:" + "|".join(STRONG_CHANGE) + r")\b", re.I)
_WEAK_RE = re.compile(r"\b(?:" + "|".join(WEAK_CHANGE) + r")\b", re.I)
_PLAN_RE = re.compile(
    r"\b(?:plans? to|planning to|planned|intends? to|aims?(?: for| to)?|aiming|hopes? to|wants? to|"
    r"would like|will|going to|goal|target|scheduled|upcoming)\b", re.I)
_ATTRIBUTION_VERBS = (r"says|said|say|claims|claimed|thinks|thought|believes|believed|reports|reported|"
                      r"lists|listed|mentions|mentioned|states|stated|insists|insisted|confirms|confirmed|"
                      r"told \w+")
_ATTRIBUTION_RE = re.compile(
    r"^(?P<src>(?:[\w.&'\-]+\s+){0,5}?[\w.&'\-]+)\s+(?:" + _ATTRIBUTION_VERBS + r")(?:\s+that)?\s+(?P<body>.+)$",
    re.S)
_ARRIVED_AND_SAYS_RE = re.compile(
    r"^(?P<src>(?:[\w.&'\-]+\s+){0,4}?[\w.&'\-]+)\s+(?:\w+\s+){0,3}?(?:and|,)\s+(?:it|they)\s+"
    r"(?:" + _ATTRIBUTION_VERBS + r")(?:\s+that)?\s+(?P<body>.+)$", re.S)
_ACCORDING_RE = re.compile(r"^according to (?P<src>[^,]+),\s*(?P<body>.+)$", re.I | re.S)
_CLAUSE_CUT_RE = re.compile(
    r"(?:,?\s+because\b|,?\s+since\b|,\s*so\b|\s+so that\b|,?\s+which\b|,\s*who\b|,?\s+although\b|"
    r",?\s+though\b|,?\s+but\b|,?\s+whereas\b|,\s*including\b|;|:\s|"
    r"\s+so (?=the|that|we|they|he|she|it|i|you|his|her|their)\b|"
    r",\s+(?=(?:it|he|she|they|we)(?:'s|'re| is| are| was| were)\b)|"
    r",\s+(?=(?-i:[A-Z])\w+ (?:is|are|was|were)\b))", re.I)
_VERB_FOLLOWERS = frozenset({"on", "at", "in", "to", "for", "from", "with", "a", "an", "the", "its", "his",
                             "her", "their", "every", "about", "into", "up", "out", "by"})
_ADVERBS = frozenset({"still", "also", "now", "just", "only", "always", "usually", "often", "mostly",
                      "never", "rarely", "currently", "actually", "sometimes", "mainly"})
_PREPOSITIONS = frozenset({"in", "at", "to", "from", "with", "by", "for", "on", "near", "of", "into", "via"})
_MODALS = frozenset({"will", "would", "can", "could", "should", "shall", "may", "might", "must"})
_NEGATORS = frozenset({"not", "never", "no", "nor", "cannot"})
# verbs that end what their object names: "dropped VS Code", "quit smoking", "left Shopify"
_LEAVING = frozenset({"dropped", "quit", "ditched", "abandoned"})

_TOKEN_RE = re.compile(
    r"(?P<money>[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn|million|billion|thousand)\b)?)"
    r"|(?P<percent>\d+(?:\.\d+)?\s?%)"
    r"|(?P<time>\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?|\d{1,2}\s?[ap]\.?m\.?(?![a-z]))"
    r"|(?P<isodate>\d{4}-\d{2}-\d{2})"
    r"|(?P<yearrange>(?:19|20)\d\d-(?:19|20)\d\d)"
    r"|(?P<ident>[\w.+-]+@[\w-]+(?:\.[\w-]+)+|https?://[^\s,;]+[^\s,;.!?)]|\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?(?!\.?\d)"
    r"|\d+(?:-[\dA-Z]+)+)"
    r"|(?P<number>\d+(?:[.,]\d+)*(?:st|nd|rd|th)?(?:-[a-z]+)*)"
    r"|(?P<word>`[^`]+`|[A-Za-z][A-Za-z0-9&_+#]*(?:[.'\-][A-Za-z0-9&_+#]+)*(?:'s|’s|')?\.?)"
    r"|(?P<punct>[^\sA-Za-z0-9])",
    re.U)
_ABBREVIATIONS = frozenset({"dr.", "mr.", "mrs.", "ms.", "prof.", "st.", "jr.", "sr.", "vs."})


# ---------------------------------------------------------------------------------------------
# stems


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
    """Equal stems, or one a long common prefix of the other ('physio' ~ 'physiotherapy')."""
    if a == b:
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


# ---------------------------------------------------------------------------------------------
# values


@dataclass(frozen=True)
class DateValue:
    year: int | None = None
    month: int | None = None
    day: int | None = None
    season: str | None = None
    part: str | None = None  # early / mid / late / end

    def compatible(self, other: DateValue) -> bool:
        """One refines the other: 'PyCon 2023' and 'April 22, 2023'; 'fall 2022' and 'October 2022'."""
        for a, b in ((self.year, other.year), (self.month, other.month), (self.day, other.day)):
            if a is not None and b is not None and a != b:
                return False
        if self.season and other.season and self.season != other.season:
            return SEASONS.get(self.season) == SEASONS.get(other.season)
        for season, month in ((self.season, other.month), (other.season, self.month)):
            if season and month and month not in SEASONS[season]:
                return False
        return True


@dataclass(frozen=True)
class Value:
    """A typed value in a claim. `key` compares exactly; `unit` (quantities) and `role` (amounts)
    say which slot it fills; `context` are the content stems around it in its clause."""

    type: str  # date, time, money, percent, quantity, version, name, <exclusive class>
    key: object
    text: str
    unit: str | None = None
    role: str | None = None
    context: frozenset[str] = frozenset()
    lead: str = ""  # names: the preposition right before ("at" Stripe, "in" Denver), else ""
    noun: str = ""  # names: the common noun between that preposition and the name ("in room Orion")

    def compatible(self, other: Value) -> bool:
        if self.type != other.type:
            return False
        if self.type == "date":
            return self.key.compatible(other.key)  # type: ignore[union-attr]
        if self.type == "version":
            a, b = str(self.key[1]), str(other.key[1])  # type: ignore[index]
            return a == b or a.startswith(b + ".") or b.startswith(a + ".")
        if self.type == "name":
            a, b = str(self.key), str(other.key)
            return a == b or a in b.split() or b in a.split()
        return self.key == other.key


# ---------------------------------------------------------------------------------------------
# tokens


@dataclass
class Token:
    text: str
    kind: str  # word, number, money, percent, time, isodate, punct
    lower: str = ""
    possessive: bool = False
    role: str = ""  # name, date, value, or "" for ordinary words
    group: int = -1  # index of the name or value this token belongs to

    def __post_init__(self) -> None:
        text = self.text
        if self.kind == "word" and text.endswith(".") and text.lower() not in _ABBREVIATIONS:
            text = text[:-1]
        if self.kind == "word" and text.endswith(("'s", "’s")):
            self.possessive, text = True, text[:-2]
        elif self.kind == "word" and text.endswith("'") and text[:-1].endswith("s"):
            self.possessive, text = True, text[:-1]
        self.text = text.strip("`")
        self.lower = self.text.lower()


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    for match in _TOKEN_RE.finditer(text):
        kind = match.lastgroup or "punct"
        tokens.append(Token(match.group(), "number" if kind == "yearrange" else kind))
    return tokens


def _is_name_like(token: Token, first: bool) -> bool:
    if token.kind != "word" or not token.text:
        return False
    t = token.text
    low = token.lower.rstrip(".")
    if low in WEEKDAYS or low in MONTHS or (low.rstrip("s") in WEEKDAYS):
        return False
    if t[0].isupper():
        if first and low in NOT_NAMES:
            return False
        return low not in NOT_NAMES or len(t) > 1 and t.isupper()
    if any(c.isupper() for c in t[1:]):  # iPhone
        return True
    if any(c.isdigit() for c in t) and any(c.isalpha() for c in t):  # tulip99, gr20: identifiers
        return True
    return bool(re.fullmatch(r"[a-z][a-z0-9_-]*\.[a-z0-9]+", t))  # package.json


def _name_key(parts: list[str]) -> str:
    words = [p.lower().rstrip(".") for p in parts]
    while len(words) > 1 and words[0] in TITLES:
        words = words[1:]
    key = " ".join(words)
    if len(parts) == 1 and len(parts[0]) > 2 and parts[0][:-1].isupper() and parts[0].endswith("s"):
        key = key[:-1]  # PRs -> pr
    return key


# ---------------------------------------------------------------------------------------------
# the claim


@dataclass(frozen=True)
class Claim:
    text: str
    source: str | None
    body: str
    main: str
    names: frozenset[str]  # name keys in the whole body (and the source)
    main_names: frozenset[str]
    stems: frozenset[str]  # content stems of the body (no stopwords, no names, no values)
    main_stems: frozenset[str]
    values: tuple[Value, ...]  # values of the main clause
    all_values: tuple[Value, ...]  # values of the whole text
    subject: str | None  # the first name of the subject span, else its first content stem
    subject_head: str | None  # "flight" in "Priya's flight"
    subject_anchors: frozenset[str]
    predicate_anchors: frozenset[str]  # names and stems after the main verb (main clause)
    negated: frozenset[str]  # names and stems under a negator
    positive: frozenset[str]
    change: str | None  # "strong" or "weak"
    change_text: str | None
    modality: str  # past, plan, present
    copula: bool  # the main verb is "is/are/was" with a nominal or prepositional predicate
    verb_stem: str | None  # the main verb's stem, unless it is an auxiliary
    subject_stems: frozenset[str]  # content stems of the subject span ("return", "fly")
    sequence: tuple[str, ...]  # the main clause's content stems and name keys, in order
    source_stems: frozenset[str] = field(default=frozenset())
    source_names: frozenset[str] = field(default=frozenset())

    @property
    def anchors(self) -> frozenset[str]:
        """What the claim is about: names and content stems, without units of time."""
        return self.names | frozenset(s for s in self.stems if s not in TIME_UNITS and s not in MEASURE_UNITS)

    @property
    def anchors_with_source(self) -> frozenset[str]:
        return self.anchors | self.source_names | frozenset(s for s in self.source_stems if s not in TIME_UNITS)


def _split_attribution(text: str) -> tuple[str | None, str, str]:
    """(normalised source or None, the attributed statement, the attribution prefix)."""
    stripped = text.strip().rstrip(".")
    match = _ACCORDING_RE.match(stripped)
    if match:
        return _norm_source(match.group("src")), match.group("body"), stripped[: match.start("body")]
    match = _ARRIVED_AND_SAYS_RE.match(stripped)
    if match:  # "Lin's offer letter just arrived and it says $135,000": the letter is the source
        return _norm_source(match.group("src")), match.group("body"), stripped[: match.start("body")]
    match = _ATTRIBUTION_RE.match(stripped)
    if match:
        src_words = match.group("src").lower().split()
        body = match.group("body")
        # "Tim reports to Rosa" is a reporting line, not an attribution; a source is a noun phrase
        if body.lower().startswith(("to ", "on ", "in ", "for ", "about ")) or any(
                w in AUXILIARIES or w in ("and", "or", "who", "which") for w in src_words):
            return None, stripped, ""
        return _norm_source(match.group("src")), body, stripped[: match.start("body")]
    return None, stripped, ""


def _norm_source(src: str) -> str:
    words = [w for w in re.findall(r"[\w.&'\-]+", src.lower()) if w not in ("the", "a", "an")]
    return " ".join(words)


def main_clause(body: str) -> str:
    match = _CLAUSE_CUT_RE.search(body)
    return body[: match.start()].strip() if match and match.start() > 0 else body.strip()


def _mark_dates(tokens: list[Token], values: list[Value]) -> None:
    """Find dates and tag their tokens (role 'date')."""
    n = len(tokens)
    i = 0
    while i < n:
        tok = tokens[i]
        start = i
        low = tok.lower
        part = None
        if low in ("early", "mid", "late") and i + 1 < n:
            part, i = low, i + 1
        elif low == "end" and i + 2 < n and tokens[i + 1].lower == "of":
            part, i = "end", i + 2
        elif low == "the" and i + 3 < n and tokens[i + 1].lower in ("end", "start", "beginning") \
                and tokens[i + 2].lower == "of":
            part, i = tokens[i + 1].lower, i + 3
        t = tokens[i]
        date: DateValue | None = None
        end = i
        if t.kind == "isodate":
            y, m, d = (int(x) for x in t.text.split("-"))
            date, end = DateValue(y, m, d, part=part), i
        elif t.kind == "word" and (
                t.lower in MONTHS and t.text[0].isupper()
                or t.lower.rstrip(".") in MONTH_ABBREV and i + 1 < n and tokens[i + 1].kind == "number"):
            month = MONTHS.get(t.lower) or MONTH_ABBREV[t.lower.rstrip(".")]
            day = year = None
            end = i
            if i + 1 < n and tokens[i + 1].kind == "number":
                num = int(re.match(r"\d+", tokens[i + 1].text).group())
                if 1 <= num <= 31 and not re.fullmatch(r"\d{4}", tokens[i + 1].text):
                    day, end = num, i + 1
                elif re.fullmatch(r"(19|20)\d\d", tokens[i + 1].text):
                    year, end = num, i + 1
            if day is not None:
                j = end + 1
                if j < n and tokens[j].text == ",":
                    j += 1
                if j < n and re.fullmatch(r"(19|20)\d\d", tokens[j].text):
                    year, end = int(tokens[j].text), j
            if t.lower == "may" and day is None and year is None and part is None:
                date = None  # the modal verb
            else:
                date = DateValue(year, month, day, part=part)
        elif t.kind == "number" and re.fullmatch(r"\d{1,2}(st|nd|rd|th)?", t.text) and i + 1 < n and \
                tokens[i + 1].lower in MONTHS and tokens[i + 1].text[0].isupper():
            day = int(re.match(r"\d+", t.text).group())
            end, year = i + 1, None
            if end + 1 < n and re.fullmatch(r"(19|20)\d\d", tokens[end + 1].text):
                year, end = int(tokens[end + 1].text), end + 1
            date = DateValue(year, MONTHS[tokens[i + 1].lower], day, part=part)
        elif t.kind == "word" and t.lower in SEASONS:
            j = i + 1
            if j < n and tokens[j].lower == "of":
                j += 1
            if j < n and re.match(r"(19|20)\d\d", tokens[j].text):
                year = int(tokens[j].text[:4])
                date, end = DateValue(year, season=t.lower, part=part), j
        elif t.kind == "number" and re.fullmatch(r"(19|20)\d\d(?:-(?:19|20)\d\d)?", t.text):
            prev = tokens[i - 1].lower if i > 0 else ""
            if part or prev in ("in", "since", "by", "until", "from", "before", "after", "during", "of",
                                "through", "to", "till") or i == 0:
                date, end = DateValue(int(t.text[:4]), part=part), i
        if date is None:
            i = start + 1
            continue
        group = len(values)
        for k in range(start, end + 1):
            tokens[k].role, tokens[k].group = "date", group
        values.append(Value("date", date, " ".join(x.text for x in tokens[start:end + 1])))
        i = end + 1


def _money_key(text: str) -> tuple[str, float]:
    currency = text[0]
    amount = text[1:].strip().lower()
    mult = 1.0
    for suffix, m in (("million", 1e6), ("billion", 1e9), ("thousand", 1e3), ("bn", 1e9), ("k", 1e3), ("m", 1e6)):
        if amount.endswith(suffix):
            amount, mult = amount[: -len(suffix)].strip(), m
            break
    return currency, round(float(amount.replace(",", "")) * mult, 2)


def _time_key(text: str) -> int:
    low = text.lower().replace(".", "").replace(" ", "")
    pm, am = low.endswith("pm"), low.endswith("am")
    low = low.rstrip("apm")
    hours, _, minutes = low.partition(":")
    h, m = int(hours), int(minutes or 0)
    if pm and h < 12:
        h += 12
    if am and h == 12:
        h = 0
    return h * 60 + m


def _is_content_word(tok: Token) -> bool:
    return tok.kind == "word" and not tok.role and tok.lower not in STOPWORDS and tok.lower not in NOT_NAMES \
        and not tok.lower.endswith(("n't", "n’t")) and tok.lower != "cannot" \
        and stem(tok.lower) not in STOPWORDS and len(tok.lower) > 1


def _mark_values(tokens: list[Token], values: list[Value]) -> None:
    n = len(tokens)
    for i, tok in enumerate(tokens):
        if tok.role:
            continue
        if tok.kind == "ident":  # 555-0132, 22-CV-1043
            tok.role, tok.group = "value", len(values)
            values.append(Value("identifier", tok.text.upper(), tok.text))
        elif tok.kind == "money":
            tok.role, tok.group = "value", len(values)
            values.append(Value("money", _money_key(tok.text.replace(" ", "")), tok.text))
        elif tok.kind == "percent":
            tok.role, tok.group = "value", len(values)
            values.append(Value("percent", float(tok.text.rstrip("% ")), tok.text))
        elif tok.kind == "time":
            tok.role, tok.group = "value", len(values)
            values.append(Value("time", _time_key(tok.text), tok.text))
        elif tok.kind == "word" and tok.lower in ORDINALS and i + 1 < n and _is_content_word(tokens[i + 1]) \
                and not _is_name_like(tokens[i + 1], False):
            tok.role, tok.group = "value", len(values)
            values.append(Value("ordinal", ORDINALS[tok.lower], tok.text, unit=stem(tokens[i + 1].lower)))
        elif tok.kind == "number" and re.fullmatch(r"\d+(?:\.\d+)+", tok.text) and i > 0 and \
                tokens[i - 1].kind == "word" and not tokens[i - 1].role and tokens[i - 1].lower not in STOPWORDS and \
                not (i + 1 < n and _is_content_word(tokens[i + 1])):
            # "lists react 18.2": a dotted version after a lower-case name, as package files write it
            tok.role, tok.group = "value", len(values)
            values.append(Value("version", (tokens[i - 1].lower, tok.text), f"{tokens[i - 1].text} {tok.text}"))
        elif tok.kind == "number" or tok.kind == "word" and tok.lower.split("-")[0] in NUMBER_WORDS:
            head, *rest = tok.lower.split("-")
            if tok.kind == "word":
                number = float(NUMBER_WORDS[head])
                if not rest and not (i + 1 < n and _is_content_word(tokens[i + 1])):
                    continue  # "one of the two", "turned one": not a quantity
            else:
                digits = re.match(r"\d+(?:[.,]\d+)*", head)
                if not digits or not re.fullmatch(r"\d{1,3}(?:,\d{3})*(?:\.\d+)?|\d+(?:\.\d+)?", digits.group()):
                    continue  # an address, a dotted code or a version ("192.168.1.47"): a token, not a quantity
                number = float(digits.group().replace(",", ""))
            unit = None
            if rest:
                unit = stem(rest[0])
            elif i + 1 < n and _is_content_word(tokens[i + 1]) and not _is_name_like(tokens[i + 1], False):
                unit = stem(tokens[i + 1].lower)
            tok.role, tok.group = "value", len(values)
            values.append(Value("quantity", number, tok.text, unit=unit))


def _mark_names(tokens: list[Token], values: list[Value]) -> list[tuple[str, int, int]]:
    """Names as (key, first token, last token); a version number right after a name is kept with it."""
    names: list[tuple[str, int, int]] = []
    n = len(tokens)
    i = 0
    sentence_start = True
    while i < n:
        tok = tokens[i]
        if tok.role or not _is_name_like(tok, sentence_start):
            sentence_start = tok.kind == "punct" and tok.text in ".!?"
            i += 1
            continue
        sentence_start = False
        parts, j = [tok.text], i + 1
        while j < n and not tokens[j - 1].possessive and not tokens[j].role:
            nxt = tokens[j]
            if _is_name_like(nxt, False) and nxt.kind == "word":
                parts.append(nxt.text)
                j += 1
            elif nxt.lower in NAME_CONNECTORS and j + 1 < n and _is_name_like(tokens[j + 1], False) and \
                    tokens[j + 1].text[0].isupper():
                parts.append(nxt.text)
                j += 1
            else:
                break
        last = j - 1
        key = _name_key(parts)
        version = None
        if j < n and tokens[j].kind == "number" and not tokens[j].role and not tokens[last].possessive and \
                re.fullmatch(r"v?\d+(?:\.\d+)*", tokens[j].text):
            version, last = tokens[j].text, j
        group = len(names)
        for k in range(i, last + 1):
            tokens[k].role, tokens[k].group = "name", group
        if version is not None:
            values.append(Value("version", (key, version), f"{' '.join(parts)} {version}"))
        names.append((key, i, last))
        i = last + 1
    return names


def _context(tokens: list[Token], lo: int, hi: int, width: int = 3) -> frozenset[str]:
    """Content stems and name keys within `width` content words either side of tokens[lo:hi+1],
    without crossing a comma."""
    found: list[str] = []
    for direction, start in ((-1, lo - 1), (1, hi + 1)):
        k, taken = start, 0
        while 0 <= k < len(tokens) and taken < width:
            t = tokens[k]
            if t.kind == "punct" and t.text in ",;:" and not _inside_date(tokens, k):
                break
            if _is_content_word(t) and stem(t.lower) not in TIME_UNITS:
                found.append(stem(t.lower))
                taken += 1
            k += direction
    return frozenset(found)


def _inside_date(tokens: list[Token], k: int) -> bool:
    """The comma of "December 17, 2023": both sides belong to one date."""
    return 0 < k < len(tokens) - 1 and tokens[k - 1].role == "date" and tokens[k + 1].role == "date" and \
        tokens[k - 1].group == tokens[k + 1].group


def _role_of(tokens: list[Token], lo: int, hi: int) -> str | None:
    """The role word nearest to an amount ("budget", "spent", "rent", ...)."""
    best: tuple[int, str] | None = None
    for k, t in enumerate(tokens):
        if t.kind != "word" or t.role:
            continue
        role = AMOUNT_ROLES.get(t.lower) or AMOUNT_ROLES.get(stem(t.lower))
        if role is None:
            continue
        dist = lo - k if k < lo else k - hi
        if best is None or dist < best[0]:
            best = (dist, role)
    return best[1] if best else None


@dataclass
class _Parsed:
    tokens: list[Token]
    values: list[Value]
    names: list[tuple[str, int, int]]


def _parse(text: str) -> _Parsed:
    tokens = tokenize(text)
    values: list[Value] = []
    _mark_dates(tokens, values)
    names = _mark_names(tokens, values)
    _mark_values(tokens, values)
    # contexts, roles, exclusive classes
    spans: dict[int, list[int]] = {}
    for idx, value in enumerate(values):
        positions = [k for k, t in enumerate(tokens) if t.role in ("date", "value") and t.group == idx]
        if value.type == "version":
            key = value.key[0]  # type: ignore[index]
            positions = [k for (nk, a, b) in names if nk == key for k in range(a, b + 1)]
        if positions:
            spans[idx] = positions
    out: list[Value] = []
    for idx, value in enumerate(values):
        pos = spans.get(idx)
        if not pos:
            out.append(value)
            continue
        lo, hi = min(pos), max(pos)
        ctx = _context(tokens, lo, hi)
        role = _role_of(tokens, lo, hi) if value.type == "money" else None
        out.append(Value(value.type, value.key, value.text, value.unit, role, ctx))
    for key, a, b in names:
        lead = noun = ""
        if a > 0 and tokens[a - 1].lower in _PREPOSITIONS:
            lead = tokens[a - 1].lower
        elif a > 1 and _is_content_word(tokens[a - 1]) and tokens[a - 2].lower in _PREPOSITIONS:
            lead, noun = tokens[a - 2].lower, stem(tokens[a - 1].lower)  # "in room Orion"
        out.append(Value("name", key, " ".join(t.text for t in tokens[a:b + 1]), context=_context(tokens, a, b),
                         lead=lead, noun=noun))
    for k, t in enumerate(tokens):
        day = t.lower[:-1] if t.lower.endswith("s") else t.lower
        if t.kind == "word" and not t.role and day in WEEKDAYS and t.text[0].isupper():
            out.append(Value("weekday", day, t.text, context=_context(tokens, k, k)))
    for k, t in enumerate(tokens):
        if t.kind == "word" and not t.role:
            for cls, members in EXCLUSIVE_CLASSES.items():
                if t.lower in members:
                    out.append(Value(cls, t.lower, t.text, context=_context(tokens, k, k)))
    return _Parsed(tokens, out, names)


def _ends_what_follows(tokens: list[Token], i: int) -> bool:
    """"dropped VS Code", "left Shopify" (not "left knee", "left for Lisbon")."""
    low = tokens[i].lower
    if low in _LEAVING:
        return True
    return low == "left" and i + 1 < len(tokens) and tokens[i + 1].role == "name"


def _negation_split(tokens: list[Token]) -> tuple[set[str], set[str]]:
    negated: set[str] = set()
    positive: set[str] = set()
    in_scope = False
    for i, t in enumerate(tokens):
        if t.kind == "punct" and t.text in ",;:.":
            in_scope = False
            continue
        low = t.lower
        if low in ("and", "but", "or", "while", "whereas", "because", "so"):
            in_scope = False
            continue
        if low in _NEGATORS or low.endswith("n't") or low in ("longer",) and in_scope or _ends_what_follows(tokens, i):
            in_scope = True
            continue
        item = _item(t)
        if item is None:
            continue
        (negated if in_scope else positive).add(item)
    return negated, positive


def _item(t: Token) -> str | None:
    if t.role == "name":
        return None  # names are added per group by the caller
    if _is_content_word(t):
        return stem(t.lower)
    return None


def _main_verb(tokens: list[Token]) -> int | None:
    """Index of the main verb: the first auxiliary, past form, or '-s' verb right after a name."""
    for k, t in enumerate(tokens):
        if k > 12:
            break
        if t.kind != "word" or t.role in ("date", "value"):
            continue
        low = t.lower
        if low in AUXILIARIES or low in IRREGULAR_PAST:
            return k
        if t.role == "name" or t.possessive:
            continue
        if low.endswith("ed") and len(low) > 4 and k > 0:
            return k
        if low.endswith("s") and not low.endswith(("ss", "is", "us", "ous", "ics")) and k > 0:
            back = k - 1
            while back > 0 and tokens[back].lower in _ADVERBS:
                back -= 1
            prev = tokens[back]
            nxt = tokens[k + 1] if k + 1 < len(tokens) else None
            if prev.role == "name" and not prev.possessive:
                return k
            if _is_content_word(prev) and back > 0 and tokens[back - 1].role == "name" and tokens[back - 1].possessive:
                return k  # "Marek's car needs ..."
            if _is_content_word(prev) and nxt is not None and (
                    nxt.lower in _VERB_FOLLOWERS or nxt.role in ("date", "value", "name")):
                return k
        if _PLAN_RE.fullmatch(low) and k > 0:
            return k
    return None


def parse_claim(text: str) -> Claim:
    """Read one memory's content. Pure and cached per text."""
    return _parse_claim_cached(text)


# "Tariq's rule: don't suggest peanuts": how the rule engine writes a rule; the claim is after the colon
_RULE_PREFIX_RE = re.compile(r"^[\w.\-]+(?: [\w.\-]+)?'s rule:\s+(?=\S)")


_LABEL_RE = re.compile(r"^(?P<label>[^:,.!?]{1,40}(?:, [^:,.!?]{1,30})?):\s+(?P<rest>\S.*)$", re.S)


def _without_label(text: str) -> str:
    """"New quarter, new time: standup is at 10:00" -> the statement after the label; "Mei: dentist on
    May 2" (a note without a verb) -> "Mei's dentist on May 2". A prefix with its own verb ("Hassan
    has drug allergies: penicillin") is no label."""
    match = _LABEL_RE.match(text)
    if not match:
        return text
    label, rest = match.group("label"), match.group("rest")
    label_tokens = tokenize(label)
    if len(label_tokens) > 6 or _main_verb(label_tokens) is not None:
        return text
    if _main_verb(tokenize(rest)) is not None:
        return rest
    names = _mark_names(label_tokens, [])
    if len(names) == 1 and names[0][1] == 0 and names[0][2] == len(label_tokens) - 1:
        return f"{label}'s {rest}"
    return text


@lru_cache(maxsize=4096)
def _parse_claim_cached(text: str) -> Claim:
    text = _without_label(_RULE_PREFIX_RE.sub("", text))
    source, body, prefix = _split_attribution(text)
    main = main_clause(body)
    whole = _parse(body)
    head = _parse(main)
    source_parsed = _parse(prefix) if source else None

    def names_of(p: _Parsed) -> frozenset[str]:
        return frozenset(k for k, _, _ in p.names)

    def stems_of(p: _Parsed) -> frozenset[str]:
        return frozenset(stem(t.lower) for t in p.tokens if _is_content_word(t))

    names = names_of(whole)
    stems = stems_of(whole)
    # values: the main clause; when the body is only a value ("... letter says $135,000"), use the
    # whole text so that the value's context includes the source's words
    full = _parse(text)
    main_values = tuple(head.values)
    if source and len([t for t in head.tokens if _is_content_word(t) or t.role == "name"]) == 0:
        main_values = tuple(v for v in full.values if v.type != "name" or v.key not in (
            names_of(source_parsed) if source_parsed else frozenset()))
    # subject and predicate, on the main clause
    verb = _main_verb(head.tokens)
    subject_tokens = head.tokens[:verb] if verb is not None else head.tokens[:3]
    subject = subject_head = None
    subject_names = [head.names[t.group][0] for t in subject_tokens if t.role == "name"]
    subject_stems = [stem(t.lower) for t in subject_tokens if _is_content_word(t)]
    if subject_names:
        subject = subject_names[-1] if _appositive(subject_tokens) else subject_names[0]
        subject_head = None if _appositive(subject_tokens) else _possessed_head(subject_tokens)
    elif subject_stems:
        subject = subject_stems[-1] if verb is not None else subject_stems[0]
    subject_anchors = frozenset(subject_names) | frozenset(subject_stems)
    predicate_anchors: frozenset[str] = frozenset()
    if verb is not None:
        start = verb + 1
        if start < len(head.tokens) and head.tokens[start].kind == "word" and (
                head.tokens[verb].lower in AUXILIARIES and head.tokens[start].lower.endswith(("ing", "ed"))
                or head.tokens[verb].lower in _MODALS and not head.tokens[start].role):
            start += 1  # "is running the Berlin Marathon", "will start at Riverside"
        after = head.tokens[start:]
        predicate_anchors = frozenset(
            {head.names[t.group][0] for t in after if t.role == "name"}
            | {stem(t.lower) for t in after if _is_content_word(t) and stem(t.lower) not in TIME_UNITS})
    negated, positive = _negation_split(whole.tokens)
    for key, a, _ in whole.names:
        if _name_negated(whole.tokens, a):
            negated.add(key)
        else:
            positive.add(key)
    change_text = None
    change = None
    match = _STRONG_RE.search(body)
    if match:
        change, change_text = "strong", match.group().lower()
    else:
        match = _WEAK_RE.search(body)
        if match:
            change, change_text = "weak", match.group().lower()
    return Claim(
        text=text, source=source, body=body, main=main, names=names, main_names=names_of(head),
        stems=stems, main_stems=stems_of(head), values=main_values, all_values=tuple(full.values),
        subject=subject, subject_head=subject_head, subject_anchors=subject_anchors,
        predicate_anchors=predicate_anchors, negated=frozenset(negated), positive=frozenset(positive),
        change=change, change_text=change_text, modality=_modality(head.tokens, verb),
        copula=_copula(head.tokens, verb), sequence=_sequence(head),
        verb_stem=(stem(head.tokens[verb].lower) if verb is not None and head.tokens[verb].lower not in AUXILIARIES
                   else None),
        subject_stems=frozenset(subject_stems),
        source_stems=stems_of(source_parsed) if source_parsed else frozenset(),
        source_names=names_of(source_parsed) if source_parsed else frozenset(),
    )


def _possessed_head(subject_tokens: list[Token]) -> str | None:
    """"Victor's favourite color" -> "color", "Marta's recovery from knee surgery" -> "recovery"."""
    start = next((k for k, t in enumerate(subject_tokens) if t.role == "name" and t.possessive), None)
    if start is None:
        return None
    head = None
    for t in subject_tokens[start + 1:]:
        if _is_content_word(t):
            head = stem(t.lower)
        elif t.role in ("name", "value") and head is None:
            continue
        else:
            break
    return head


def _copula(tokens: list[Token], verb: int | None) -> bool:
    if verb is None or tokens[verb].lower not in ("is", "are", "was", "were"):
        return False
    nxt = tokens[verb + 1] if verb + 1 < len(tokens) else None
    return nxt is None or not (nxt.kind == "word" and not nxt.role and nxt.lower.endswith(("ing", "ed")))


def _sequence(parsed: _Parsed) -> tuple[str, ...]:
    out: list[str] = []
    for t in parsed.tokens:
        if t.role == "name":
            key = parsed.names[t.group][0]
            if not out or out[-1] != key:
                out.append(key)
        elif _is_content_word(t):
            out.append(stem(t.lower))
    return tuple(out)


def _appositive(subject_tokens: list[Token]) -> bool:
    """"Ana's sister Carla": the subject is the last name, after a possessive and a noun."""
    seq = "".join("N" if t.role == "name" and not t.possessive else "P" if t.role == "name" else
                  "w" if _is_content_word(t) else "s" for t in subject_tokens)
    return bool(re.search(r"Pw+N+$", seq.replace("NN", "N")))


CLEARED = frozenset({"fine", "ok", "okay", "safe"})  # "X is fine": X is ruled out, not asserted


def _name_negated(tokens: list[Token], index: int) -> bool:
    """Under a negator, or cleared by what follows it: "Penicillin is fine, it's sulfa I react to"."""
    after = [t.lower for t in tokens[index:index + 6] if t.role != "name"][:2]
    if len(after) == 2 and after[0] in ("is", "'s", "are") and after[1] in CLEARED:
        return True
    in_scope = False
    for i, t in enumerate(tokens[:index]):
        if t.kind == "punct" and t.text in ",;:.":
            in_scope = False
        elif t.lower in ("and", "but", "or", "while", "whereas", "because", "so"):
            in_scope = False
        elif t.lower in _NEGATORS or t.lower.endswith("n't") or _ends_what_follows(tokens, i):
            in_scope = True
    return in_scope


def _modality(tokens: list[Token], verb: int | None) -> str:
    text = " ".join(t.lower for t in tokens)
    if _PLAN_RE.search(text):
        return "plan"
    if verb is not None:
        low = tokens[verb].lower
        if low in ("was", "were", "did") or low in IRREGULAR_PAST and low not in ("had",) or \
                low.endswith("ed") and low not in AUXILIARIES:
            return "past"
    return "present"
