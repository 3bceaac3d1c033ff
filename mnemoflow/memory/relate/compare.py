"""Two claims side by side: do they share a subject or slot, which typed values disagree, does one add
content, negate, or name another person or thing than the other.

Each predicate answers one question about a (candidate, old) pair of `Claim`s and decides nothing:
`relations` combines them, in its rule order, into a duplicate / UPDATES / EXTENDS / CONFLICTS_WITH
`Decision`. Kept apart so the rule order reads on one page there."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from mnemoflow.memory.english.lexicon import DEVICE_CLASSES, SEASONS, WEEKDAYS
from mnemoflow.memory.english.temporal import RULED_OUT
from mnemoflow.memory.english.verbs import is_past
from mnemoflow.memory.relate.changes import (
    _ENDED_SUBJECT,
    _ends_what_it_said,
    _puts_a_value,
)
from mnemoflow.memory.relate.claim_values import AGE, Value
from mnemoflow.memory.relate.claim_words import (
    ANTONYMS,
    ENDED,
    FUNCTIONAL,
    PERSON_NOUNS,
    QUALIFIERS,
    RESIDENCE,
    TIME_UNITS,
    among,
    overlap,
    same_stem,
    stem,
)
from mnemoflow.memory.relate.claims import Claim

_STATUSES = frozenset({"diet", "relationship status", *DEVICE_CLASSES})  # one holds at a time, wherever it is said

_QUALIFIER_STEMS = frozenset(stem(q) for q in QUALIFIERS) | QUALIFIERS


def _normalised(text: str) -> str:
    return " ".join(re.findall(r"[\w$€£%:.,]+", text.lower())).rstrip(".")


def _entity_keys(entities: Sequence[str]) -> frozenset[str]:
    keys = set()
    for entity in entities:
        text = entity.split(":", 2)[-1] if entity.startswith("entity:") else entity
        keys.add(text.replace("-", " ").replace("_", " ").strip().lower())
    return frozenset(k for k in keys if k)


def _subject_link(cand: Claim, old: Claim, cand_entities: frozenset[str], old_entities: frozenset[str]) -> bool:
    cand_pool = cand.anchors_with_source | cand_entities
    old_pool = old.anchors_with_source | old_entities
    return bool(cand.subject and among(cand.subject, old_pool) or old.subject and among(old.subject, cand_pool)
                or _changed_thing(cand, old))


def _changed_thing(cand: Claim, old: Claim) -> str | None:
    """A change said of a thing ("we switched the frontend to Solid") is about the thing, whoever made
    it: its attribute is the one another statement about the same thing gave ("Omar builds the
    frontend in React"), when that statement names a value the change does not keep. The same holds
    for an amount or a date changed to a new one by whoever sets it ("the landlord's bumping the rent
    to £1,240", "Zapline are hiking it to £38", "leadership wants the launch pulled in to October 8")."""
    if cand.change != "strong":
        return None
    if any(v.type == "name" and v.lead in ("to", "for") for v in cand.values):
        things = _shared(cand.predicate_anchors - cand.names, old.predicate_anchors - old.names)
        replaced = [v for v in old.values if v.type == "name" and v.key != old.subject
                    and not among(v.key, cand.names)]
        return ", ".join(sorted(things)) if things and replaced else None
    return _reset_value(cand, old)


_RESET_TYPES = ("money", "percent", "quantity", "date", "time")
_TO_A_DAY = rf"\bto (?:(?:{'|'.join(WEEKDAYS)}),? )?"  # "to £38", "to Thursday June 6"


def _set_to(value: Value, cand: Claim) -> bool:
    """A strong change sets this value: "hiking it to £38", "pulled in to October 8"."""
    return cand.change == "strong" and value.type in _RESET_TYPES and \
        bool(re.search(_TO_A_DAY + re.escape(value.text.split()[0]), cand.body, re.I))


def _reset_value(cand: Claim, old: Claim) -> str | None:
    """The thing whose amount, date or time the candidate changes "to" a new value: a topic the two share
    that is not who speaks, and a value of the same type in the old statement that the new one drops."""
    reset = [v for v in cand.values if _set_to(v, cand)]
    replaced = [w for w in old.values if any(w.type == v.type and not w.compatible(v) for v in reset)
                and not any(w.type == c.type and w.compatible(c) for c in cand.all_values)]
    if not replaced:
        return None
    people = {cand.subject, old.subject}
    things = {x for x in _shared(cand.anchors - people, old.anchors - people) if x not in _QUALIFIER_STEMS}
    if not things and all(v.type in ("date", "time") for v in reset) and _moves_the_person(cand, old):
        return f"when {old.subject}'s {old.subject_head or 'appointment'} is"
    return ", ".join(sorted(things)) or None


def _moves_the_person(cand: Claim, old: Claim) -> bool:
    """"They bumped me to Thursday June 6": the person moved is the one whose appointment it is (not "they
    moved my dentist to June 6", which names another thing of the person's)."""
    return bool(old.subject and old.subject != cand.subject and old.subject in cand.anchors
                and not re.search(r"'s\s+[a-z]", cand.body))


def _sources(cand: Claim, old: Claim) -> str:
    if cand.source == old.source:
        return "same"
    if cand.source and old.source:
        return "different"
    return "mixed"


@dataclass(frozen=True)
class _Diff:
    old: Value
    new: Value
    tight: bool


def _covers_predicate(cand: Claim, old: Claim, diffs: list[_Diff]) -> bool:
    replaced = {str(d.old.key) for d in diffs} | {d.old.noun for d in diffs if d.old.noun}  # "room" of "room Orion"
    rest = {a for a in old.predicate_anchors if a not in replaced and a not in _QUALIFIER_STEMS}
    return all(among(a, cand.predicate_anchors) for a in rest)


def _disagreements(cand: Claim, old: Claim, *, same_voice: bool = True, now: datetime | None = None,
                   ruled_out: Sequence[Value] = ()) -> list[_Diff]:
    """Values of `old` that `cand` replaces in the same slot. A name fills the same slot only after the
    same preposition when one voice speaks ("at Shopify" -> "at Stripe"); two sources are compared
    on the topic alone ("dinner is at Osteria Lupo" / "booked Bar Centrale for dinner")."""
    out: list[_Diff] = []
    shared = _shared(cand.anchors_with_source, old.anchors_with_source)
    single_valued = old.copula or bool(overlap(set(old.main_stems), FUNCTIONAL))
    # "dinner on November 10" said by both: a shared value is a shared topic too
    topic = len(shared) + sum(1 for v in old.all_values if v.type not in ("name", "version")
                              and any(w.type == v.type and w.compatible(v) for w in cand.all_values))
    one_thing = _same_thing(cand, old)
    for value in old.values:
        if value.type == "name":
            if value.key not in old.predicate_anchors or among(str(value.key), cand.main_names):
                continue
            if same_voice and not single_valued and not cand.change:
                continue  # "learns Spanish" and "learns Japanese" can both hold
            pool = [v for v in cand.values if v.type == "name" and v.key in cand.predicate_anchors
                    and not among(str(v.key), old.names)]
        else:
            pool = [v for v in cand.values if v.type == value.type]
            if not pool and (value.type in _STATUSES or cand.change == "strong" and value.type in ("date", "time")):
                # "..., so Hana is pescatarian now", "extended the deadline by two weeks, it's June 13 now"
                pool = [v for v in cand.all_values if v.type == value.type]
        pool = [v for v in pool if v not in ruled_out]
        if not pool or any(v.compatible(value) for v in pool):
            continue
        if any(v.compatible(value) for v in ruled_out):
            out.append(_Diff(value, pool[0], True))  # "on June 16, not on June 14": a correction
            continue
        same_type_old = [v for v in old.values if v.type == value.type]
        for new in pool:
            if value.type == "name" and same_voice and new.lead != value.lead:
                continue
            if value.type == "date" and now is not None and _another_time(new, value, cand, now):
                continue
            tight = _aligned(new, value, cand, old)
            loose = tight is None and value.type in ("date", "time", "money", "percent", "quantity") and \
                len(pool) == 1 and len(same_type_old) == 1 and _roles_agree(new, value) and (
                    len(shared) >= 2 or one_thing and value.type in ("date", "time") or
                    _set_to(new, cand) and bool(shared - {old.subject} or _moves_the_person(cand, old)))
            if tight is None and value.type == "name" and not same_voice:
                loose = len(pool) == 1 and topic >= 2  # two people naming different places for one dinner
            if tight or loose:
                out.append(_Diff(value, new, bool(tight)))
                break
    out.extend(_antonyms(cand, old))
    return out


def _negated_values(claim: Claim) -> list[Value]:
    """Values the claim rules out ("..., not on June 14", "not the 4th", "half the guests can't do Saturday"):
    they are the old value, not a new one."""
    ruled_out = []
    for v in claim.values:
        written = re.escape(re.sub(r"\s+(?=[,.])", "", v.text))
        if v.type != "name" and re.search(rf"{RULED_OUT}(?:(?:on|at|in|for|to|from|by|the)\s+)?{written}",
                                          claim.text, re.I):
            ruled_out.append(v)
    return ruled_out


def _same_thing(cand: Claim, old: Claim) -> bool:
    """Both claims are about one thing, not a person: "standup is at 9:00" / "Standup moves to 9:30",
    "Mei's dentist ..." / "Mei's dentist ...", "Standup is now at 10" / "Sam's standup is at 9:30" (in one
    scope, a thing named bare is the one named with its owner). A thing's single time or date is its slot."""
    for bare, owned in ((cand, old), (old, cand)):
        if bare.subject and bare.subject_head is None and owned.subject_head and \
                same_stem(bare.subject, owned.subject_head):
            return True
    if not cand.subject or cand.subject != old.subject:
        return False
    if cand.subject_head or old.subject_head:
        return cand.subject_head == old.subject_head
    return cand.subject in cand.stems or cand.subject in old.stems


def _roles_agree(a: Value, b: Value) -> bool:
    return not (a.role and b.role and a.role != b.role)


# a device come by, so now had ("got", "bought", "gave me"), and one had beside another ("also", "a spare")
_ACQUIRED = re.compile(r"\b(?:got|bought|gave|given|picked up|ordered|upgraded|switched|traded|replaced|swapped|"
                       r"treated|splashed out)\b", re.I)
_ADDED = re.compile(r"\b(?:also|too|as well|another|second|spare|extra|backup)\b", re.I)
# "got his mom a Pixel", "a Kindle for my sister": a device come by for someone else
_OWNER = r"(?:his|her|their|my|our|[A-Z][\w-]*'s)"
_PERSON_STEMS = frozenset(stem(p) for p in PERSON_NOUNS)
_FOR_ANOTHER = re.compile(rf"\b(?i:got|bought|ordered|gave)\s+{_OWNER}\s+(?P<who>\w+)\s+(?:an?|the)\b|"
                          rf"\b(?i:for)\s+{_OWNER}\s+(?P<for>\w+)")


def _names_word(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.I) is not None


def _aligned(new: Value, old_value: Value, cand: Claim, old: Claim) -> bool | None:
    """True: the two values fill the same slot; False: they cannot; None: no evidence either way."""
    kind = old_value.type
    if kind == "version":
        return new.key[0] == old_value.key[0]  # type: ignore[index]
    if kind in ("diet", "relationship status"):
        return cand.subject == old.subject and cand.subject_head == old.subject_head
    if kind in DEVICE_CLASSES:  # "work gave Lucia an iPhone 15" / "Lucia's phone is a Pixel 6a": her phone
        if _names_word(old.text, str(new.key)):  # (the old one named beside a new one is what it replaces)
            return False  # "keeping the Volvo" / "the car is a Volvo V60": the same car, by its make
        held = bool(_ACQUIRED.search(cand.main)) or not any(  # "used an iPhone at uni": had, no more
            is_past(w) for w in re.findall(r"[a-z]+", cand.main.lower()))
        other = any(stem((m["who"] or m["for"]).lower()) in _PERSON_STEMS for m in _FOR_ANOTHER.finditer(cand.text))
        return held and not other and not _ADDED.search(cand.text) and old.subject is not None and (
            cand.subject == old.subject or old.subject in cand.names)
    if kind == "quantity" and new.unit == old_value.unit == AGE:  # "is 34" / "turned 35"; never younger
        return cand.subject == old.subject and cand.subject_head == old.subject_head and new.key > old_value.key
    if kind == "quantity" and new.unit and old_value.unit:
        if not same_stem(new.unit, old_value.unit):
            return None
        rest_new = set(new.context) - {new.unit} - _QUALIFIER_STEMS
        rest_old = set(old_value.context) - {old_value.unit} - _QUALIFIER_STEMS
        # "runs 20 km" / "runs 35 km": yes; "swims 2 km" / "runs 20 km": no
        return True if (not rest_new and not rest_old) or overlap(rest_new, rest_old) else False
    if kind == "money":
        if new.key[0] != old_value.key[0] or not _roles_agree(new, old_value):  # type: ignore[index]
            return False
    if kind == "name" and _title(new.text) and _title(new.text) == _title(old_value.text) and \
            overlap(set(old.main_stems), FUNCTIONAL):
        return True  # "Pepper's vet is Dr. Alvarez" / "Pepper sees Dr. Chen": one doctor's place
    new_context = set(new.context) - _QUALIFIER_STEMS
    old_context = set(old_value.context) - _QUALIFIER_STEMS
    if cand.copula and old.copula and kind == "name":
        # "The design review is in Vega" / "The design review ... is in room Orion": the subject is the slot
        new_context |= cand.subject_stems
        old_context |= old.subject_stems
    if not old.copula:
        # "The server has 32 GB of RAM": the owner is not the slot; in "Priya's flight is on ..." it is
        new_context -= cand.subject_stems
        old_context -= old.subject_stems
    return True if overlap(new_context, old_context) else None


_PROFESSIONAL_TITLES = frozenset({"dr", "prof", "professor"})


def _title(name: str) -> str | None:
    """"Dr." of "Dr. Chen": a professional title names the role the person fills."""
    first = name.split()[0].lower().rstrip(".") if name.split() else ""
    return first if first in _PROFESSIONAL_TITLES and len(name.split()) > 1 else None


def _antonyms(cand: Claim, old: Claim) -> list[_Diff]:
    """'the old cluster' against 'the new cluster': an antonym before the same noun."""
    found = []
    for a, b in ANTONYMS:
        for x, y in ((a, b), (b, a)):
            nx = re.search(rf"\b{x}\s+(\w+)", cand.main, re.I)
            ny = re.search(rf"\b{y}\s+(\w+)", old.main, re.I)
            if nx and ny and same_stem(stem(nx.group(1)), stem(ny.group(1))) and \
                    not re.search(rf"\b{y}\b", cand.main, re.I) and not re.search(rf"\b{x}\b", old.main, re.I):
                found.append(_Diff(Value("antonym", y, f"{y} {ny.group(1)}"),
                                   Value("antonym", x, f"{x} {nx.group(1)}"), True))
    return found


def _modality_clash(cand: Claim, old: Claim) -> bool:
    return {cand.modality, old.modality} == {"past", "plan"}


def _shared(a: frozenset[str], b: frozenset[str]) -> set[str]:
    """Words of `a` that `b` has too, but for units of time and qualifiers."""
    return {x for x in a if x not in TIME_UNITS and x not in _QUALIFIER_STEMS and among(x, b)}


_AMOUNTS = frozenset({"quantity", "money", "percent"})


def _adds_content(cand: Claim, old: Claim) -> bool:
    new_names = {n for n in cand.main_names if not among(n, old.names)}
    new_stems = {s for s in cand.main_stems if s not in _QUALIFIER_STEMS and not among(s, old.stems)}
    # "is up to 10 km now" against "runs 5 km": a new amount is new content
    new_amounts = [v for v in cand.values if v.type in _AMOUNTS
                   and not any(w.type == v.type and w.compatible(v) for w in old.values)]
    return bool(new_names or new_stems or new_amounts)


def _slot_link(cand: Claim, old: Claim, *, strong: bool) -> str | None:
    subject = {cand.subject, old.subject}
    if overlap(set(cand.main_stems), RESIDENCE) and overlap(set(old.main_stems), RESIDENCE):
        return "where they live"
    shared_stems = _shared(cand.main_stems, old.main_stems) - subject
    if shared_stems and (_puts_a_value(cand, old) or _ends_what_it_said(cand, old)):
        return ", ".join(sorted(shared_stems))
    if cand.copula and overlap(set(old.stems), RESIDENCE) and _same_preposition(cand, old, subject, lead="in"):
        return "where they live"  # "I'm in Leeds now" / "the flat in Sheffield is freezing"
    if strong:
        shared_names = {n for n in cand.main_names if n not in subject and among(n, old.main_names)}
        if shared_names and (_puts_a_value(cand, old) or _ends_what_it_said(cand, old)):
            return ", ".join(sorted(shared_names))
        if cand.subject in cand.names and cand.subject != old.subject and among(cand.subject, old.main_names) and \
                _ENDED_SUBJECT.search(cand.change_text or ""):
            return cand.subject  # "the Slate's retired", "the Fitbit is dead": the thing itself ended
        return _same_preposition(cand, old, subject)
    return None


# the subject itself is what ended: "the thinkpad's finally binned", "the old hub is in the bin", "the Fitbit died"
_SUBJECT_GONE = re.compile(rf"^[^,;]*?\b(?:(?:is|are|was|were|got|been|'s)\s+(?:\w+ly\s+)?(?:{ENDED})|died|retired)\b")


def _thing_ended(cand: Claim, old: Claim) -> bool:
    """The candidate says its subject is gone, and the old statement is about that thing: whatever it said of
    the thing ("Kofi's ThinkPad T480 is crawling") holds no more."""
    return bool(cand.subject and _SUBJECT_GONE.search(cand.main) and
                any(cand.subject in anchor.split() for anchor in old.subject_anchors | {old.subject or ""}))


_PLACE_LEADS = frozenset({"at", "in", "on", "to"})
_MOVED_TO = re.compile(r"\b(?:mov|relocat|transferr|decamp)\w*\s+(?:\w+\s+)?to\s+(?P<where>.+)$", re.I)


def _same_preposition(cand: Claim, old: Claim, subject: set[str | None], lead: str | None = None) -> str | None:
    """"went with Fibrely instead" / "broadband is with Skylark": a new name after the preposition the old
    one had, the old one not said again, nothing else named ("went to the gig with Ana instead" is about
    the gig): the slot is what that preposition relates the subject to."""
    said = {stem(w) for w in re.findall(r"[a-z]+", (cand.change_text or "").lower())} | {cand.verb_stem}
    if cand.subject in cand.names:  # "after the spike Anneliese went with ...": words said before the subject
        said |= cand.subject_stems
    if moved := _MOVED_TO.search(cand.main):  # "chess has relocated to the upstairs room at Eastgate Library"
        said |= {stem(w) for w in re.findall(r"[a-z]+", moved["where"].lower())}  # all of it is the new place
    if any(not among(x, old.stems) for x in cand.main_stems - said - subject):
        return None
    for new in (v for v in cand.values if v.type == "name" and v.lead and v.key not in subject
                and lead in (None, v.lead)):
        # moved "on Fore Street" from "at St Mary's hall": any place, whatever its preposition
        leads = _PLACE_LEADS if moved and new.lead in _PLACE_LEADS else {new.lead}
        for was in (v for v in old.values if v.type == "name" and v.lead in leads and v.key not in subject):
            if was.key != new.key and not among(str(was.key), cand.names) and not among(str(new.key), old.names):
                return f"what is {new.lead}: {was.text} -> {new.text}"
    return None


def _value_keys(claim: Claim) -> set[tuple[str, str]]:
    return {(v.type, repr(v.key)) for v in claim.all_values if v.type != "name"}


def _completed_compound(cand: Claim, old_stems: set[str]) -> set[str]:
    """The last word of the candidate's main clause when it only completes a compound whose first
    word the neighbour said alone: "prefers window" / "wants a window seat", "on Pacific time" /
    "in the Pacific time zone". A word before one the neighbour said ("green tea") adds detail."""
    words = re.findall(r"[a-z]+", cand.main.lower())
    if len(words) < 2 or stem(words[-2]) not in old_stems:
        return set()
    last = stem(words[-1])
    return {last} if last not in old_stems else set()


def _other_person(cand: Claim, old: Claim) -> bool:
    """"Grace's sister" against "Grace": a person noun heads one subject and the other never mentions it."""
    if cand.subject_head == old.subject_head:
        return False
    for head, other in ((cand.subject_head, old), (old.subject_head, cand)):
        if head in PERSON_NOUNS and not among(head, other.stems | other.names):  # "Dentist moved to 4:30"
            return True
    # "Ana's brother's Golf died" against "Ana's car is a blue Golf": the brother's, not Ana's
    return any(w in PERSON_NOUNS and not among(w, old.stems | old.names) for w in cand.subject_stems - {cand.subject_head})


def _span(value: Value) -> tuple[date, date] | None:
    d = value.key
    if getattr(d, "year", None) is None:
        return None
    if d.month and d.day:
        try:
            day = date(d.year, d.month, d.day)
        except ValueError:
            return None
        return day, day
    if d.month:
        return date(d.year, d.month, 1), date(d.year, d.month, 28)
    if d.season:
        months = SEASONS[d.season]
        return date(d.year, min(months), 1), date(d.year, max(months), 28)
    return date(d.year, 1, 1), date(d.year, 12, 31)


def _another_time(new: Value, old: Value, cand: Claim, now: datetime) -> bool:
    """Two dates that are two times, not one moved: a trip that happened and one that is coming (nothing ahead
    moves into the past); and a date that is over is not moved without a word that says so."""
    if _past_and_future(new, old, now):
        return not cand.change or _past_and_future(old, new, now, into_past=True)
    return not cand.change and _over(old, now)


def _over(value: Value, now: datetime) -> bool:
    """Whether the whole of a date (a day, a week, a month) is before the day `now` falls on."""
    span = _span(value)
    return span is not None and span[1] < now.date()


def _past_and_future(a: Value, b: Value, now: datetime, into_past: bool = False) -> bool:
    """One of the dates is over and the other still ahead; with `into_past`, `a` ahead and `b` over."""
    spans = [_span(a), _span(b)]
    if None in spans:
        return False
    today = now.date()
    past = [s[1] < today for s in spans]  # type: ignore[index]
    future = [s[0] > today for s in spans]  # type: ignore[index]
    return (future[0] and past[1]) if into_past else (past[0] and future[1]) or (past[1] and future[0])


def _other_thing(cand: Claim, old: Claim) -> bool:
    """Both subjects are possessive phrases and the candidate's carries a modifier the other claim never
    mentions ("Chen's return flight" is not "Chen's flight"). A shorter name for the older one's subject
    refers back to it ("Wren's newsletter" after "Wren's foraging newsletter")."""
    if cand.subject_head is None or old.subject_head is None or cand.subject != old.subject:
        return False
    # "Ayesha's favourite show these days": a time said inside the subject is not a modifier of it
    extra_here = {x for x in cand.subject_stems if not among(x, old.stems) and x not in TIME_UNITS}
    extra_there = {x for x in old.subject_stems if not among(x, cand.stems) and x not in TIME_UNITS}
    if not (extra_here & _QUALIFIER_STEMS and extra_there & _QUALIFIER_STEMS):
        # "Tom's daily standup" is "Tom's standup"; "the daily standup" is not "the weekly standup"
        extra_here = extra_here - _QUALIFIER_STEMS
    return bool(extra_here)


def _changes_its_head(cand: Claim, old: Claim) -> bool:
    """"Sam's landlord raised the rent to 1,350" changes "Sam's rent": the thing a strong change acts on
    is the other statement's subject, whoever the change's own subject is."""
    return cand.change == "strong" and old.subject_head is not None and old.subject_head != cand.subject_head \
        and among(old.subject_head, cand.main_stems)


def _same_subject_phrase(cand: Claim, old: Claim) -> bool:
    """"Marek's car ..." and "Marek's car ...", "The release ..." and "The release ...": one thing."""
    if not cand.subject or cand.subject != old.subject:
        return False
    if cand.subject_head is not None:
        return cand.subject_head == old.subject_head
    return old.subject_head is None and cand.subject not in cand.names
