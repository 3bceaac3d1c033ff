"""Relation triples and categories of a memory, by rule: the few verb patterns that state a relation
precisely ("Maya works at Stripe", "the API runs on Kubernetes") between the entities `entities`
typed, and the small, stable taxonomy a memory is filed under ("preference/food", "work", "schedule").

Separate from `entities` (what each name is): these read the whole sentence around the names."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from mnemoflow.memory.english.lexicon import WEEKDAYS
from mnemoflow.memory.relate.entities import _ADVERBS, PLACES, _gazetteer_key, _key
from mnemoflow.models import THIS_MEMORY, EntityRef

Triple = tuple[str, str, str, float]  # (subject id, predicate, object id or literal, confidence)

_VERBS: tuple[tuple[str, str, bool], ...] = (  # (pattern, predicate, literal object allowed)
    (r"(?:works|worked|is working|was working|has been working|work)\s+on", "works_on", True),
    (r"(?:works|worked|is working|has been working|work)\s+(?:at|for)|is employed (?:at|by)|joined|"
     r"is (?:a )?(?:member|part) of|belongs to", "belongs_to", False),
    (r"(?:uses|is using|has been using|has used|relies on)(?!\s+to\b)", "uses", True),
    (r"(?:prefers|preferred|likes|liked|loves|loved|enjoys|enjoyed|is (?:a )?(?:big |huge )?fan of|is into)",
     "prefers", True),
    (r"(?:lives|is living|is based|is located|resides)\s+in|(?:has )?moved to|relocated to", "located_at", False),
    (r"(?:runs|is running|is deployed|is hosted)\s+on|is deployed to", "runs_on", False),
    (r"(?:cites|cited|quotes|quoted|references|referenced)", "cites", False),
    (r"(?:conflicts|clashes) with|is incompatible with", "conflicts_with", False),
    (r"(?:is|was) (?:replaced|superseded) by", "superseded_by", False),
    (r"(?:replaces|replaced|supersedes|superseded)", "supersedes", False),
)
_OBJECT_TYPES = {"located_at": {"place", "organization"}, "belongs_to": {"organization", "project", "place"}}
_LITERAL_END = re.compile(r"\s+(?:and|but|because|when|while|since|so|if|than|over|rather than|instead of|which|"
                          r"who|whom|whose|though|although|unless|until|as well)\b|[,.;:!?()\"\n]|\s+-\s+")
_PRONOUNS = frozenset({"it", "them", "this", "that", "these", "those", "him", "her", "me", "you", "us", "one",
                       "something", "everything", "anything", "nothing", "it all", "all"})


# a verb of _VERBS after the subject, with adverbs between; group v<i> names which one matched
_VERB_AFTER_SUBJECT = re.compile(
    r"\s+(?:(?:" + _ADVERBS + r")\s+)*(?:" + "|".join(f"(?P<v{i}>{p})" for i, (p, _, _) in enumerate(_VERBS))
    + r")\s+", re.I)


def relation_triples(content: str, entities: Sequence[EntityRef]) -> list[Triple]:
    """(subject id, predicate, object id or literal, confidence) the content states.

    The memory (THIS_MEMORY) `mentions` each entity (1.0). A subject is an entity named right before
    one of a few verbs, adverbs allowed between ("Maya now lives in Lisbon"), not a negation ("Maya
    doesn't use Slack" states nothing) and not a possessive ("Maya's brother works at ..." is not
    about Maya); objects are entities (0.85, a list of them: "uses DuckDB and Prefect") or, for
    works_on / uses / prefers, a short literal (0.7: "prefers morning meetings"). A second verb
    joined by "and" keeps the subject ("lives in Lisbon and loves sushi")."""
    triples: list[Triple] = [(THIS_MEMORY, "mentions", e.entity_id, 1.0) for e in entities]
    surfaces: dict[str, EntityRef] = {}
    for e in entities:
        for form in (e.name, *e.aliases):
            if form and not form.endswith(("'s", "’s")):
                surfaces.setdefault(_key(form), e)
    if not surfaces:
        return _dedupe(triples)
    alternation = "|".join(re.escape(s) for s in sorted(surfaces, key=len, reverse=True))
    entity_at = re.compile(rf"(?:the\s+)?(?P<e>{alternation})(?![\w'’-])", re.I)
    for m in re.finditer(rf"(?<![\w'’-])(?:{alternation})(?![\w'’-])", content, re.I):
        subject = surfaces[_key(m.group())]
        rest = content[m.end():]
        while True:
            vm = _VERB_AFTER_SUBJECT.match(rest)
            if vm is None:
                break
            index = next(int(k[1:]) for k, v in vm.groupdict().items() if v is not None)
            _, predicate, literal_ok = _VERBS[index]
            objects, consumed = _objects(rest[vm.end():], entity_at, surfaces)
            if objects:
                for obj in objects:
                    if obj.entity_id != subject.entity_id and obj.type in _OBJECT_TYPES.get(predicate, {obj.type}):
                        triples.append((subject.entity_id, predicate, obj.entity_id, 0.85))
            elif literal_ok:
                literal, consumed = _literal(rest[vm.end():])
                if literal:
                    triples.append((subject.entity_id, predicate, literal, 0.7))
            rest = rest[vm.end() + consumed:]
            joined = re.match(r",?\s+and(?=\s)", rest)
            if joined is None:
                break
            rest = rest[joined.end():]
    return _dedupe(triples)


def _objects(text: str, entity_at: re.Pattern[str], surfaces: Mapping[str, EntityRef]) -> tuple[list[EntityRef], int]:
    found: list[EntityRef] = []
    m = entity_at.match(text)
    if m is None:
        return [], 0
    found.append(surfaces[_key(m.group("e"))])
    end = m.end()
    while True:
        sep = re.match(r"(?:,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+)", text[end:])
        nxt = entity_at.match(text, end + sep.end()) if sep else None
        if nxt is None:
            break
        found.append(surfaces[_key(nxt.group("e"))])
        end = nxt.end()
    return found, end


def _literal(text: str) -> tuple[str, int]:
    cut = _LITERAL_END.search(text)
    phrase = text[:cut.start()] if cut else text
    value = re.sub(r"^(?:(?:the|a|an|his|her|their|its|my|our|some|to)\s+)+", "", phrase.strip(), flags=re.I)
    value = value.strip(" '\"")
    if not value or len(value.split()) > 6 or value.lower() in _PRONOUNS or not re.search(r"[^\W\d_]", value):
        return "", 0
    return value, len(phrase)


def _dedupe(triples: list[Triple]) -> list[Triple]:
    best: dict[tuple[str, str, str], Triple] = {}
    for t in triples:
        key = (t[0], t[1], t[2].casefold() if not t[2].startswith("entity:") else t[2])
        if key not in best or best[key][3] < t[3]:
            best[key] = t
    return list(best.values())


# --------------------------------------------------------------------------------- categories

_TOPICS: dict[str, str] = {
    "food": r"food|foods|eat|eats|ate|eating|dinner|lunch|breakfast|brunch|meal|meals|snack|cook|cooks|cooked|"
            r"cooking|recipe|recipes|restaurant|restaurants|cuisine|vegetarian|vegan|pescatarian|gluten|dairy|"
            r"pizza|sushi|pasta|ramen|curry|tacos?|burgers?|salad|soup|bread|cheese|chocolate|dessert|cake|"
            r"coffee|espresso|latte|tea|wine|beer|cocktails?|peanuts?|nuts|seafood|fish|chicken|beef|pork|"
            r"meat|fruit|vegetables|spicy|bake|baking|baked|cookies|ice cream|steak|noodles|rice",
    "travel": r"travel|travels|travelled|traveled|traveling|travelling|trip|trips|flight|flights|fly|flying|flew|"
              r"vacation|holiday|holidays|hotel|hostel|airbnb|airport|abroad|passport|visa|itinerary|"
              r"journey|tour|touring|backpacking|cruise|road trip|sightseeing",
    "work": r"work|works|worked|working|job|jobs|office|colleague|colleagues|coworker|coworkers|boss|manager|"
            r"team|teams|project|projects|client|clients|customer|customers|career|promotion|promoted|hired|"
            r"interview|company|startup|employer|employee|shift|deadline|standup|stand-up|sprint|meeting|"
            r"meetings|quarterly|roadmap|launch|presentation|conference|internship|freelance|resign|resigned",
    "health": r"health|healthy|doctor|doctors|hospital|clinic|sick|ill|illness|allergy|allergies|allergic|"
              r"medication|medicine|meds|therapy|therapist|anxiety|depression|diet|exercise|gym|workout|"
              r"yoga|sleep|insomnia|injury|injured|surgery|pregnant|pregnancy|diabetes|asthma|dentist|"
              r"mental health|vaccine|blood pressure|migraine|headache|physio|physiotherapy|cancer|recovery",
    "family": r"family|families|mom|mum|mother|dad|father|parent|parents|sister|sisters|brother|brothers|"
              r"sibling|siblings|son|sons|daughter|daughters|kid|kids|child|children|wife|husband|spouse|"
              r"grandma|grandmother|grandpa|grandfather|grandparents|aunt|uncle|cousin|cousins|niece|nephew|"
              r"baby|married|marriage|wedding|in-laws|fiancée?|adopted|adoption",
    "schedule": r"schedule|scheduled|meeting|meetings|appointment|appointments|calendar|deadline|deadlines|"
                r"standup|stand-up|reminder|remind|weekly|daily|monthly|every (?:day|week|month|morning|evening|"
                + "|".join(WEEKDAYS) + ")|(?:" + "|".join(WEEKDAYS) + r")s|tomorrow|tonight|next week|o'clock|"
                r"\d{1,2}:\d{2}|\d{1,2}\s?(?:am|pm)",
    "tech": r"code|coding|programming|programmer|software|developer|database|databases|sql|api|apis|server|"
            r"servers|deploy|deployed|deployment|cloud|linux|laptop|computer|bug|bugs|git|github|library|"
            r"framework|backend|frontend|devops|kubernetes|docker|python|javascript|typescript|rust|golang|java|"
            r"postgres|postgresql|mysql|sqlite|duckdb|redis|react|machine learning|gpu|cpu|pipeline|repo|"
            r"repository|cli|app|apps|open source|open-source|script|scripts|compiler|terminal",
    "hobby": r"hobby|hobbies|painting|paints|painted|drawing|draws|sketching|music|guitar|piano|violin|drums|"
             r"sing|singing|reading|books?|novels?|hiking|hike|hikes|camping|fishing|photography|gaming|"
             r"video games|board games|chess|knitting|gardening|pottery|dance|dancing|running|marathon|cycling|"
             r"swimming|surfing|skiing|climbing|movies|films|concert|concerts|crafts|woodworking|volunteering",
    "finance": r"money|budget|budgeting|salary|rent|mortgage|loan|loans|invest|investing|investment|investments|"
               r"stocks|savings|save up|saving up|bank account|tax|taxes|expenses|bills|crypto|pension|"
               r"retirement fund|debt|insurance|paycheck",
    "education": r"school|university|college|class|classes|course|courses|degree|study|studies|studying|exam|"
                 r"exams|homework|teacher|student|students|graduate|graduated|graduation|thesis|lecture|"
                 r"phd|masters|bachelor|semester|tutor|scholarship|campus",
    "pets": r"pet|pets|dog|dogs|puppy|cat|cats|kitten|hamster|parrot|rabbit|vet",
}
_TOPIC_RES = {key: re.compile(rf"\b(?:{words})\b", re.I) for key, words in _TOPICS.items()}
_PREFERENCE = re.compile(r"\b(?:prefers?|preferred|likes|liked|loves|loved|enjoys?|enjoyed|hates?|hated|"
                         r"dislikes?|disliked|favou?rites?|can'?t stand|fan of|would rather|rather than|"
                         r"allergic to)\b", re.I)


def categories_of(content: str, kind: str) -> list[str]:
    """Category keys for a memory, from a small fixed taxonomy: topics (food, travel, work, health,
    family, schedule, tech, hobby, finance, education, pets) by keyword; a preference (the memory's
    kind, or a liking verb) is also filed as "preference" and "preference/<topic>" per topic."""
    topics = _topics(content)
    keys: list[str] = []
    liking = _PREFERENCE.search(content)
    if liking is not None:  # what is liked comes after the verb: "lives in Lisbon and loves sushi" is food
        keys += ["preference", *(f"preference/{t}" for t in _topics(content[liking.end():]))]
    elif kind == "preference":
        keys += ["preference", *(f"preference/{t}" for t in topics)]
    keys += topics
    return sorted(dict.fromkeys(keys))


def _topics(text: str) -> list[str]:
    return [key for key, pattern in _TOPIC_RES.items()
            if pattern.search(text) or (key == "travel" and _went_somewhere(text))]


def _went_somewhere(content: str) -> bool:
    """A visit or a move to a known place ("visited Japan", "moved to Lisbon") is travel."""
    for m in re.finditer(r"\b(?:visit(?:s|ed|ing)?|trip to|went to|going to|flew to|moved to|moving to|back from)"
                         r"\s+(?:the\s+)?([^\W\d_][\w-]*)(?:\s+([^\W\d_][\w-]*))?", content, re.I):
        one, two = m.group(1), m.group(2)
        if _gazetteer_key(one) in PLACES or (two and _gazetteer_key(f"{one} {two}") in PLACES):
            return True
    return False
