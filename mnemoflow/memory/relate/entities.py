"""Typed entities, relation triples and categories of a memory, by rule: no model, no storage.

`typed_entities` decides what each name a memory mentions is (person, organization, place,
library, tool, project or concept) from the name itself, the words around it and small lists of
well-known names; `triples.relation_triples` reads the few verb patterns that state a relation precisely
("Maya works at Stripe", "the API runs on Kubernetes"); `triples.categories_of` files the memory under a
small, stable taxonomy ("preference/food", "work", "schedule"). The store keeps all three, in the
same commit as the memory.

Entity ids are `entity:<type>:<digest of the slug>`, tenant-wide: the same name of the same type is one
entity however many memories name it, and no id spells its name (commits keep ids after a purge).
Identifiers and numbers (a passport number, a PIN, a code) are not entities at all.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from mnemoflow.memory.english.lexicon import words
from mnemoflow.models import ENTITY_TYPES, EntityRef, EntityType, entity_id_of

_TRANSLIT = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "đ": "d", "ł": "l", "þ": "th", "ð": "d", "ı": "i",
                           "ħ": "h", "ŋ": "n"})


def slug(name: str) -> str:
    """Lowercase ASCII, every run of other characters one '-': "Zoë Müller" -> "zoe-muller",
    "C++" -> "c-plus-plus". A name with no Latin letters at all gets a stable hash ("x-1f2e...")."""
    text = unicodedata.normalize("NFKC", name).casefold().translate(_TRANSLIT)  # casefold: "ß" -> "ss"
    text = text.replace("+", " plus ").replace("#", " sharp ")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^a-z0-9]+", "-", text).strip("-")
    if text:
        return text
    folded = unicodedata.normalize("NFKC", " ".join(name.split())).casefold()
    return "x-" + hashlib.sha256(folded.encode()).hexdigest()[:12]


def entity_id(type: str, name: str) -> str:  # noqa: A002 - the column is called type
    """`entity:<type>:<digest>` (`models.entity_id_of`); ValueError for a type outside the seven."""
    if type not in ENTITY_TYPES:
        raise ValueError(f"entity type must be one of {', '.join(ENTITY_TYPES)}; got {type!r}")
    return entity_id_of(type, slug(name))


def is_identifier(name: str) -> bool:
    """A code rather than a name: one token made mostly of digits, or holding three or more ("K7741902",
    "4417", "AB12C9"), unless it is a known product ("S3", "EC2")."""
    if " " in name.strip() or not any(c.isdigit() for c in name):
        return False
    digits = sum(c.isdigit() for c in name)
    known = _gazetteer_key(name) in KNOWN_TOOLS | KNOWN_LIBRARIES | KNOWN_ORGS
    return not known and (digits >= 3 or 2 * digits >= sum(c.isalnum() for c in name))


# ----------------------------------------------------------------------------------- word lists

_ORG_LAST = words("entities.org_last")
_ORG_FIRST = words("entities.org_first")
_PLACE_LAST = words("entities.place_last")
_PLACE_FIRST = words("entities.place_first")
_HONORIFICS = r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Professor|Sir|Dame|Lady|Lord|Aunt|Auntie|Uncle|Grandma|Grandpa|" \
              r"Granny|Coach|Officer|Pastor|Rabbi|Imam|Nurse|Captain|Judge)\.?"
_RELATIONS = (r"friend|best friend|boyfriend|girlfriend|partner|wife|husband|spouse|fianc[ée]e?|sister|brother|"
              r"sibling|mom|mum|mother|dad|father|son|daughter|kid|child|baby|grandson|granddaughter|"
              r"grandmother|grandfather|grandma|grandpa|aunt|uncle|cousin|niece|nephew|colleague|coworker|"
              r"co-worker|boss|manager|mentor|teacher|student|classmate|roommate|flatmate|neighbou?r|therapist|"
              r"doctor|dentist|coach|client|landlord|tenant|teammate|buddy|pal|ex|in-law|stepmom|stepdad|"
              r"stepson|stepdaughter|godmother|godfather")
_PROFESSIONS = (r"friend|person|woman|man|girl|boy|kid|child|student|teacher|doctor|nurse|engineer|developer|"
                r"designer|artist|writer|painter|musician|singer|lawyer|manager|researcher|scientist|chef|"
                r"mother|father|mom|dad|parent|volunteer|counsel?or|therapist|photographer|athlete|runner|"
                r"programmer|founder|ceo|cto|intern|analyst|architect|pilot|veteran|activist|member")
_HUMAN_VERBS = (r"said|says|told|tells|asked|asks|thinks|thought|feels|felt|believes|believed|wants|wanted|"
                r"hopes|hoped|wishes|married|is married|got married|was born|is pregnant|adopted|graduated|"
                r"studies|studied|remembers|remembered|loves|loved|hates|hated|prefers|preferred|likes|liked|"
                r"enjoys|enjoyed|lives|lived|grew up|moved|is moving|works|worked|is working|is allergic|"
                r"celebrated|celebrates|paints|painted|cooks|cooked|plays|played|is feeling|was feeling|smiled|"
                r"laughed|cried|went|is going|visited|met|is learning|learned|learnt|joined|started|retired|"
                r"bought|wrote|read|watched|won|received|got|had|needs|needed|tried|decided|plans|planned|is planning|"
                r"signed up|took|gave|made|upgraded|switched|installed|fixed|deployed|migrated|"
                r"(?:doesn't|does not|didn't|did not|never|no longer|won't|will not|can't|cannot|wouldn't|would)\s+"
                r"(?:say|tell|ask|think|feel|want|like|love|hate|prefer|enjoy|live|work|go|need|know|remember|"
                r"use|eat|drink|travel|fly|drive|mind|care)")
_ADVERBS = (r"now|still|also|currently|really|mostly|usually|always|often|actually|mainly|primarily|just|even|"
            r"already|recently|absolutely|definitely|totally|generally|typically|only|happily|officially|finally")

KNOWN_LIBRARIES = words("entities.known_libraries")
KNOWN_TOOLS = words("entities.known_tools")
KNOWN_ORGS = words("entities.known_orgs")
PLACES = words("entities.places")

_STOPWORDS = words("entities.stopwords")

# ------------------------------------------------------------------------------------ helpers



def _clean(name: str) -> str:
    text = " ".join(name.replace("`", " ").split()).strip(" \"“”.,;:!?()[]")
    for suffix in ("'s", "’s"):
        if text.endswith(suffix) and len(text) > 2:
            text = text[:-2]
    return text.rstrip("'’")


def _key(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold()


def _name_re(name: str) -> str:
    """`name` as a whole word, any case (a possessive may follow it)."""
    return rf"(?<![\w@/.-]){re.escape(name)}(?![\w-])"


def _base(name: str) -> str:
    """The name without a trailing version: "Postgres 16" -> "Postgres", "Python 3.12" -> "Python"."""
    return re.sub(r"\s+v?\d+(?:\.\d+)*[a-z]?$", "", name)


def _gazetteer_key(name: str) -> str:
    return re.sub(r"\s+", "-", _key(_base(name)))


_COORD = r"(?:(?:the\s+)?[\w.+#-]+(?:\s+\d[\w.]*)?(?:,\s*|,?\s+and\s+|,?\s+or\s+)){0,3}(?:the\s+)?"


_N = "\ue000"  # stands for the name being typed: it is marked in the content once, the rules are compiled once

_ORG_AFTER = (r"\b(?:(?:works?|worked|working|is working|employed|job|jobs|internship|intern|interning|hired|"
              r"position|role|shift)\s+(?:at|for)|employed by|hired by|(?:job|internship|interview|interviewed|"
              r"interviewing|contract)\s+with|offer from)")
_PLACE_AFTER = (r"moved to|move to|moving to|relocat\w+ to|lives in|live in|living in|lived in|based in|located in|"
                r"resides in|trip to|flight to|flights to|flew to|fly to|flying to|travel(?:l)?(?:ed|ing|s)? to|"
                r"vacation in|holiday in|holidays in|born in|grew up in|"
                r"arrived in|back from|stay(?:ed|ing)? in|headed to|heading to|"
                r"hometown of|city of|country of|region of|road trip to|weekend in|summer in|winter in")
_TOOL_AFTER = (r"uses|use|using|used|switched to|switched from|switching to|migrat\w+ to|migrat\w+ from|"
               r"runs on|run on|running on|deployed on|deployed to|hosted on|installed|install|written in|"
               r"built with|built on|coding in|programs in|programming in|set up|upgraded to|upgraded|"
               r"relies on|depends on")
_PROJECT_AFTER = (r"works on|work on|working on|worked on|building|builds|maintains|maintaining|maintain|"
                  r"contribut\w+ to|launched|launching|shipped|shipping")


def _after(verbs: str) -> str:
    """The name right after one of `verbs`, possibly as a later member of a list ("uses DuckDB and Prefect"),
    not as a possessive ("went to Maya's party")."""
    return rf"\b(?:{verbs})\s+{_COORD}{_N}(?!['’]s)"


def _rules(*patterns: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), flags)


_LIBRARY_CUES = _rules(
    rf"{_N}\s+(?:library|package|module|crate|gem|sdk|bindings)\b",
    rf"\b(?:pip3?|uv|poetry|conda|npm|yarn|pnpm|cargo|gem|go)\s+(?:install|add|get)\s+(?:-\S+\s+)*{_COORD}{_N}",
    rf"\b(?:import|require\(['\"]?)\s*{_N}", rf"\bfrom\s+{_N}\s+import\b", flags=re.I)
_TOOL_CUES = _rules(rf"{_N}\s+(?:tool|cli|app|application|editor|ide|extension|plugin|command|platform|database|"
                    rf"dashboard|bot|browser|service|software|framework|language)\b", flags=re.I)
_PROJECT_CUES = _rules(rf"\bproject\s+(?:called\s+|named\s+)?{_N}", rf"{_N}\s+project\b", flags=re.I)
_ORG_CUES = _rules(
    rf"{_N},?\s+(?:(?:is|was)\s+)?(?:a|an|the)\s+(?:\w+\s+)?(?:company|startup|firm|organi[sz]ation|non-?profit|"
    rf"charity|agency|brand|bank|airline|employer|corporation|university|school|band|team)\b",
    rf"\b(?:company|startup|firm|employer|organi[sz]ation|non-?profit|charity|agency|brand|band)\s+"
    rf"(?:called\s+|named\s+)?{_N}", flags=re.I)
_PERSON_CUES = _rules(
    rf"\b{_HONORIFICS}\s+{_N}",
    rf"\b(?i:{_RELATIONS})(?:,)?\s+(?i:named\s+|called\s+)?{_N}",
    rf"{_N},\s+(?i:my|his|her|their|our|a)\s+(?i:{_RELATIONS})\b",
    rf"{_N}['’]s\s+(?i:{_RELATIONS}|birthday|wedding|family|parents|kids|children|husband|wife|hobby|hobbies|"
    rf"favou?rite|name|phone|email|house|home|room|job|office|career|party|mom|dad|mother|father|sister|brother|"
    rf"friends?)\b",
    rf"{_N}\s+(?:and|&)\s+(?:I|me|my)\b",
    rf"\b(?i:met|meet|meeting with|met with|talked to|talked with|spoke to|spoke with|texted|emailed|hugged|married|"
    rf"dating|dated|thanked|visited by)\s+{_N}",
    rf"(?:^|[.!?]\s+){_N}:",
    rf"{_N}\s+(?i:is|was)\s+(?i:a|an|my|our|his|her)\s+(?:\w+\s+)?(?i:{_PROFESSIONS})\b")
_AGE_CUE = re.compile(rf"{_N}\s+(?:is|was|turns|turned)\s+\d+\b")  # "Maya is 30"; not "the PIN is 4417"
_PERSON_VERB = re.compile(rf"{_N}\s+(?:(?:{_ADVERBS})\s+)?(?:{_HUMAN_VERBS})\b")  # not for acronyms: "API uses"
_ORG_FRAME = re.compile(rf"{_ORG_AFTER}\s+{_COORD}{_N}(?!['’]s)", re.I)
_PLACE_FRAME = re.compile(_after(_PLACE_AFTER), re.I)
_PROJECT_FRAME = re.compile(_after(_PROJECT_AFTER), re.I)
_TOOL_FRAME = re.compile(_after(_TOOL_AFTER), re.I)
_PACKAGE_SHAPE = re.compile(r"@?[a-z0-9][a-z0-9]*(?:[._-][a-z0-9]+)+(?:/[a-z0-9._-]+)?|@[a-z0-9-]+/[a-z0-9._-]+")
_COMMAND_SHAPE = re.compile(r"[a-z][\w.-]*(?:\s+[\w./-]+)+")
_VERSIONED = re.compile(r"\sv?\d+(?:\.\d+)+$")


# ------------------------------------------------------------------------------------ typing


@dataclass
class _Found:
    name: str
    type: EntityType
    aliases: list[str]


def _type_of(name: str, content: str, speakers: set[str]) -> EntityType:
    """The first rule that fires decides (see the module docstring)."""
    key = _key(name)
    words = key.split()
    # 1. the people talking
    if key in speakers or (len(words) > 1 and words[0] in speakers and words[-1] not in _ORG_LAST):
        return "person"
    # 2. the name says it
    if len(words) > 1 and (words[-1] in _ORG_LAST or (words[0] in _ORG_FIRST and "of" in words)):
        return "organization"
    if words[0] == "project" or words[-1] == "project":
        return "project"
    if len(words) > 1 and (words[-1] in _PLACE_LAST or words[0] in _PLACE_FIRST):
        return "place"
    # 3. words naming the kind of thing
    marked = re.sub(_name_re(name), _N, content, flags=re.I)
    gkey = _gazetteer_key(name)
    if _LIBRARY_CUES.search(marked):
        return "library"
    if _TOOL_CUES.search(marked):
        return "library" if gkey in KNOWN_LIBRARIES else "tool"
    if _PROJECT_CUES.search(marked):
        return "project"
    if _ORG_CUES.search(marked):
        return "organization"
    # 4. well-known technology and organisations
    if gkey in KNOWN_LIBRARIES:
        return "library"
    if gkey in KNOWN_TOOLS:
        return "tool"
    if gkey in KNOWN_ORGS:
        return "organization"
    # 5. a person by title, family or friendship, what they are, or what they say, feel and do
    if _PERSON_CUES.search(marked) or (not name.isupper() and (_PERSON_VERB.search(marked)
                                                               or _AGE_CUE.search(marked))):
        return "person"
    # 6. places by name, then by what is done there
    if gkey in PLACES:
        return "place"
    if _ORG_FRAME.search(marked):
        return "organization"
    if not name.isupper() and _PLACE_FRAME.search(marked):
        return "place"
    if _PROJECT_FRAME.search(marked):
        return "project"
    if _TOOL_FRAME.search(marked):
        return "tool"
    # 7. what the name looks like
    if _PACKAGE_SHAPE.fullmatch(name):
        return "library"  # "scikit-learn", "python-dateutil", "@types/node"
    if _COMMAND_SHAPE.fullmatch(name):
        return "tool"  # a command: "make release", "git rebase"
    if _VERSIONED.search(name):
        return "tool"  # a versioned product: "Acme Studio 2.1"
    return "concept"


def _canonical(name: str, type_: EntityType) -> str:
    if type_ == "project":
        stripped = re.sub(r"(?i)^project\s+|\s+project$", "", name).strip()
        return stripped or name
    return name


def typed_entities(
    content: str, names: Iterable[str], *, speakers: Sequence[str] = (),
    aliases: Mapping[str, Iterable[str]] | None = None,
) -> list[EntityRef]:
    """Each of `names` (as found in `content`, e.g. `Candidate.entities`) typed and given its id, in
    order, one per entity.

    `speakers` (the people in the conversation) are persons. A person's first name given beside
    their full name ("Maya" and "Maya Lopez") is an alias of the full name; the possessive and other
    case forms the content uses are aliases too. A short form ("Mel" for "Melanie") is merged only
    when `aliases` says so ({"Melanie": ["Mel"]}). Names the content frames as packages ("the
    requests library", "pip install httpx") are added even when not given."""
    speaker_keys = {_key(s.strip()) for s in speakers if s and s.strip()}
    cleaned = [c for c in (_clean(n) for n in names) if c and not is_identifier(c)]
    given_forms: dict[str, list[str]] = {}
    for raw in names:
        c = _clean(raw)
        stripped = raw.strip().strip("`")
        if c and stripped != c:
            given_forms.setdefault(_key(c), []).append(stripped)
    for found in _framed_packages(content):
        if all(_key(found) != _key(c) for c in cleaned):
            cleaned.append(found)
    short_forms: dict[str, str] = {}  # short form key -> long name
    for long, shorts in (aliases or {}).items():
        for short in shorts:
            if short and _key(short) != _key(long):
                short_forms[_key(short)] = long
    by_key = {_key(c): c for c in cleaned}
    result: dict[str, _Found] = {}
    order: list[str] = []
    typed = [(c, _type_of(c, content, speaker_keys)) for c in cleaned]
    firsts = {_key(c) for c, t in typed if t == "person" and len(c.split()) == 1}
    fulls = {_key(c.split()[0]) for c, t in typed if t == "person" and len(c.split()) > 1}
    typed = [(c, "person" if t == "concept" and ((len(c.split()) > 1 and _key(c.split()[0]) in firsts)
                                                 or (len(c.split()) == 1 and _key(c) in fulls)) else t)
             for c, t in typed]  # "Maya Lopez" and "Maya": one of them is known to be a person, so both are
    full_names = [c for c, t in typed if t == "person" and len(c.split()) > 1]
    type_by_name = dict(typed)
    for name, type_ in typed:
        key = _key(name)
        target = name
        if key in short_forms and _key(short_forms[key]) in by_key:
            target = by_key[_key(short_forms[key])]  # "Mel" is "Melanie" when the caller says so
        elif type_ == "person" and len(name.split()) == 1:
            longer = [f for f in full_names if _key(f.split()[0]) == key]
            if len(longer) == 1:  # "Maya" beside "Maya Lopez"; not when two Mayas are named
                target = longer[0]
        type_ = type_by_name[target]
        canonical = _canonical(target, type_)
        eid = entity_id(type_, canonical)
        forms = [name, *given_forms.get(key, ())]
        if eid not in result:
            result[eid] = _Found(canonical, type_, [])
            order.append(eid)
        found = result[eid]
        for form in forms:
            if form != found.name and form not in found.aliases:
                found.aliases.append(form)
    for eid in order:
        found = result[eid]
        for form in _surface_forms(content, [found.name, *found.aliases]):
            if form != found.name and form not in found.aliases:
                found.aliases.append(form)
    return [EntityRef(eid, result[eid].name, result[eid].type, tuple(result[eid].aliases)) for eid in order]


def _surface_forms(content: str, names: Sequence[str]) -> list[str]:
    """How the content writes each name: other capitalisations and possessives ("MAYA", "Maya's")."""
    forms: list[str] = []
    for name in names:
        if name.endswith(("'s", "’s")):
            continue
        for m in re.finditer(rf"(?<![\w]){re.escape(name)}(?:['’]s)?(?![\w])", content, re.I):
            if m.group() not in forms:
                forms.append(m.group())
    return forms


def _framed_packages(content: str) -> list[str]:
    """Lowercase package names the content introduces as such ("the requests library")."""
    found: list[str] = []
    for m in re.finditer(r"\bthe\s+([a-z][a-z0-9._-]*)\s+(?:library|package|module|crate|gem)\b", content):
        found.append(m.group(1))
    for m in re.finditer(r"\b(?:pip3?|uv|poetry|conda|npm|yarn|pnpm|cargo)\s+(?:install|add)\s+((?:-\S+\s+)*)"
                         r"([@a-z][\w./@-]*)", content):
        found.append(m.group(2))
    return [f.rstrip(".") for f in found if f not in _STOPWORDS]
