"""Slot similarity by restatement: does a new statement say the old one again with another value?

"Sam's car is a Honda Civic" and "Sam drives a Tesla Model 3 now" share no attribute word, so no
rule can tell that "drives" and "car" name one slot. The embedding model can: restated with the
new value, the old statement ("Sam's car is a Tesla Model 3") is near the new one (0.89), much
nearer than the old statement itself (0.68). A new value that takes the old one's place in the
old statement's own words fills the same slot, whatever verb either uses: the manager one
"reports to", the gym one "goes to", the dentist one "sees", the band one "listens to".

The restatement swaps values of one type (names, times, dates, amounts): "Sven goes to bed at
11 pm" restated as "... at 9:30" is what "Sven turns in around 9:30 these days" says.
`restated_similarity` embeds the restatements of the neighbours `worth_restating`; the pipeline passes the
best similarity on as `Neighbour.restated_similarity`, and `relations.classify` decides with it. Only a statement that
announces a change ("now", "switched", "a new job", "took a job at") and asserts it (not "might", not
"previously") is restated, so that a conversation's other statements cost no model call; and only
where the slot holds one value (`single_valued`): the new statement names the change outright
("switched", "moved to"), or the old one is single-valued by its form ("Li's bank is HSBC", a thing
of its owner's; a time, a date or an amount that differs) or its words ("works at", "lives in":
`FUNCTIONAL`). Nothing said alongside ("also", "another") may add it to the old one: a language
learnt as well is not a language replaced.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from mnemoflow.embedding import Embedder
from mnemoflow.embedding.base import normalize
from mnemoflow.memory.english.lexicon import DEVICE_CLASSES
from mnemoflow.memory.english.smalltalk import INTENSIFIERS
from mnemoflow.memory.relate.claim_values import Value
from mnemoflow.memory.relate.claim_words import (
    FUNCTIONAL,
    PERSON_NOUNS,
    QUALIFIERS,
    STOPWORDS,
    TIME_UNITS,
    stem,
)
from mnemoflow.memory.relate.claims import Claim, parse_claim
from mnemoflow.memory.relate.compare import _subject_link

# the restated old statement must be as near the new one as a paraphrase is to what it paraphrases
# (the vector level the value rule trusts a positional slot at), and nearer than the old statement
# by a clear step: swapping the value, not the shared words, is what made them near
RESTATED_AT = 0.75
RESTATED_GAIN = 0.1
# from here the restatement applies by itself; below, it goes to review
RESTATED_APPLY = 0.8
SWAPS_PER_PAIR = 4
# below this, the two statements share too little for a swapped value to make them paraphrases (no
# change pair written for the bench came from further than 0.44 to RESTATED_AT): no model call
RESTATE_FROM = 0.4

# "also", "too", "as well", "another", "a second": the new value joins the old one
ADDITIVE = re.compile(r"\b(?:also|too|as well|another|additional|a second|in addition|besides|alongside|"
                      r"both|as a second|on top of)\b", re.IGNORECASE)
# "might", "is considering", "previously": not asserted as the case now
NOT_ASSERTED = re.compile(r"\b(?:(?-i:may)|might|could|considering|thinking (?:about|of)|previously|formerly|"
                          r"used to)\b", re.IGNORECASE)
# ... nor is what is said of next year, for a change no word announces
LATER = re.compile(r"\bnext (?:week|month|year)\b", re.IGNORECASE)
# "started a new job at Stripe", "got a new phone": a new thing of the kind takes the old one's place
NEW_THING = re.compile(r"\b(?:a|an|my|our|his|her|their|the|\w+'s) (?:brand[- ])?new\b", re.IGNORECASE)
# "took a job at Shopify", "joined PureGym", "registered with Dr. Moreno": a past event that starts a state
STARTS = re.compile(r"\b(?:start(?:ed|s)|join(?:ed|s)|took (?:a|an|up)|signed (?:up )?(?:with|for|to)|"
                    r"enrolled|registered)\b", re.IGNORECASE)
_PERSON_STEMS = frozenset(stem(w) for w in PERSON_NOUNS)
# value types a thing has one of at a time: its time, its date, its amount
_ONE_AT_A_TIME = frozenset({"time", "date", "money", "quantity", "percent"})


def adds_alongside(claim: Claim) -> bool:
    """The statement adds to what it may seem to replace ("also", "too", "another")."""
    return bool(ADDITIVE.search(claim.text))


def asserted(claim: Claim) -> bool:
    """Said as the case, not as a maybe or a thing of the past ("is considering moving", "previously
    lived in Accra"): only such a statement can replace another."""
    return not NOT_ASSERTED.search(claim.text)


def may_replace(claim: Claim) -> bool:
    """The statement asserts something now and adds nothing alongside: not "also" or "another", not a
    plan or a maybe ("may apply for the director role next year")."""
    return claim.modality != "plan" and asserted(claim) and not adds_alongside(claim) and \
        not LATER.search(claim.text)


def announces_change(claim: Claim) -> bool:
    """A change marker ("now", "switched"), a new thing ("a new job") or a start ("took a job at")."""
    return bool(claim.change or NEW_THING.search(claim.text) or STARTS.search(claim.text))


def single_valued(new: Claim, old: Claim) -> bool:
    """The slot the two statements share holds one value at a time: a strong change marker says so
    outright; otherwise the old statement's form ("Li's bank is HSBC"; a time or an amount that
    differs) or a single-valued word of either ("works at", "new job", "lives in")."""
    if new.change == "strong":
        return True
    if old.subject_head and old.subject_head not in PERSON_NOUNS:  # "Li's bank is HSBC": a thing of its owner's
        return True
    if any(v.type in _ONE_AT_A_TIME and v.type == w.type and not v.compatible(w)
           for v in old.values for w in new.values):
        return True
    words = old.main_stems | old.subject_stems | new.main_stems | new.subject_stems
    return bool(words & FUNCTIONAL or {stem(w) for w in words} & FUNCTIONAL)


def worth_restating(new: Claim, old: Claim, similarity: float) -> bool:
    """Cheap tests first, so that only pairs the restatement could relate cost a model call: near
    enough already (`RESTATE_FROM`), a change announced and nothing added alongside, a single-valued
    slot, a shared subject."""
    if similarity < RESTATE_FROM or not announces_change(new) or not may_replace(new) or \
            not single_valued(new, old):
        return False
    if {stem(w) for w in new.subject_stems} & _PERSON_STEMS - {stem(w) for w in old.subject_stems}:
        return False  # "Zoltan's parents live in Debrecen" says where they live, not Zoltan
    return _subject_link(new, old, frozenset(), frozenset())


def restatements(candidate: str, neighbour: str) -> tuple[str, ...]:
    """The neighbour's text with each value the candidate lacks replaced by each value of the same type
    the candidate adds (names by names, times by times, amounts by amounts; the subjects of both
    kept), at most `SWAPS_PER_PAIR`. A comment joined to the neighbour's statement ("..., and it always feels
    so rushed") is left out: it is not what the candidate restates."""
    if tail := _COMMENT.search(neighbour):
        neighbour = neighbour[:tail.start()]
    new, old = parse_claim(candidate), parse_claim(neighbour)
    keep = {new.subject, old.subject} - {None}
    old_values = [v for v in _whole(old.all_values) if str(v.key) not in keep]
    new_values = [v for v in _whole(new.all_values) if str(v.key) not in keep]
    dropped = [v for v in old_values if not any(v.compatible(w) for w in new_values)]
    added = list({w.text: w for w in new_values if not any(w.compatible(v) for v in old_values)}.values())
    swapped = [_swap(neighbour, [(a, b)]) for a in dropped for b in added if a.type == b.type]
    for kind in dict.fromkeys(a.type for a in dropped):  # "Canal Row in Dunmore" -> "Weaver Street in Kilbride"
        olds = sorted((a for a in dropped if a.type == kind), key=lambda v: neighbour.find(v.text))
        news = sorted((b for b in added if b.type == kind), key=lambda v: candidate.find(v.text))
        if len(olds) == len(news) > 1:
            swapped.insert(0, _swap(neighbour, list(zip(olds, news))))
    swapped += _complement_swaps(candidate, neighbour, old)
    return tuple(dict.fromkeys(s for s in swapped if s != neighbour))[:SWAPS_PER_PAIR]


def _whole(values: Sequence[Value]) -> list[Value]:
    """The values to swap whole: a product line inside a name ("Ford" of "Ford Focus") goes with the name."""
    names = [v.text for v in values if v.type == "name"]
    return [v for v in values if v.type not in DEVICE_CLASSES or not any(v.text in name for name in names)]


# "... and it always feels so rushed", "... and the battery is dead by lunch": a second clause about something else
_COMMENT = re.compile(r"(?<=\w),?\s+and\s+(?=(?:it|the|this|that|they|there)\s+\w+)", re.IGNORECASE)


def _swap(text: str, pairs: list[tuple[Value, Value]]) -> str:
    for a, b in pairs:
        text = re.sub(rf"(?<!\w){re.escape(a.text)}(?!\w)", lambda _, b=b: b.text, text)
    return text


# "Aisha's usual coffee order is a flat white": what the copula says its subject is, before any
# prepositional phrase ("a software engineer" at Nubank)
_COMPLEMENT = re.compile(r"\b(?:is|are|was|were)\s+(?:(?:a|an|the|now)\s+)*(?P<value>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,3}?)"
                         r"(?=\s+(?:at|in|for|with|on|from|every|each|since|by)\b|\W*$)")
_WORD = re.compile(r"[A-Za-z][\w'-]*")


def _complement_swaps(candidate: str, neighbour: str, old: Claim) -> list[str]:
    """A copula's common-noun value ("a flat white", "sushi") replaced by each run of the candidate's
    content words the neighbour lacks ("oat latte", "ramen"): the values no type names. Read in the first
    statement of each (a memory's later ones, after ";", are other facts or comments: "It was rich and
    creamy"), and never a quality an intensifier marks ("is so important") or what a person is doing ("Nate
    is hoping for the best"): no value of a slot."""
    neighbour_said, candidate_said = neighbour.split(";")[0], candidate.split(";")[0]
    match = _COMPLEMENT.search(neighbour_said)
    if not match or any(v.text in match.group("value") for v in old.all_values) or _no_value(match):
        return []  # a typed value or a name is swapped as such; a quality or an activity is none
    runs, run = [], []
    for word in [*_WORD.findall(candidate_said), "."]:
        low = word.lower()
        content = word[0].islower() and low not in STOPWORDS and low not in QUALIFIERS and \
            stem(low) not in TIME_UNITS and stem(low) not in old.stems
        if content:
            run.append(word)
        elif run:
            runs.append(" ".join(run))
            run = []
    start, end = match.span("value")
    return [neighbour[:start] + phrase + neighbour[end:] for phrase in runs]


def _no_value(complement: re.Match[str]) -> bool:
    """An intensifier before the complement ("so", "really", "such a blessing"), or an -ing form after a person
    named or a personal pronoun: a quality or an activity ("Melanie is thinking about ...", "they were crossing")."""
    value, before = complement.group("value"), complement.string[:complement.start()].split()[-1:]
    person = bool(before) and (before[0][0].isupper() or before[0].lower() in _PERSONAL)
    return re.match(INTENSIFIERS + r"(?:such\b)?", value, re.IGNORECASE).end() > 0 or \
        (person and value.split()[0].endswith("ing"))


_PERSONAL = frozenset({"i", "you", "he", "she", "we", "they"})


def restated_similarity(embedder: Embedder, candidate: str, vector: np.ndarray,
                        neighbours: dict[str, tuple[str, float]]) -> dict[str, float]:
    """How near the candidate (its normalised `vector`) is to each neighbour (content, similarity) restated
    with its values, by neighbour id, for the neighbours worth it; one model call for all the
    restatements, none without any."""
    claim = parse_claim(candidate)
    texts = {mid: restatements(candidate, content) for mid, (content, sim) in neighbours.items()
             if worth_restating(claim, parse_claim(content), sim)}
    flat = [(mid, text) for mid, said in texts.items() for text in said]
    if not flat:
        return {}
    sims = normalize(np.asarray(embedder.embed([text for _, text in flat]), dtype=np.float32)) @ vector
    best: dict[str, float] = {}
    for (mid, _), sim in zip(flat, sims, strict=True):
        best[mid] = max(best.get(mid, -1.0), float(sim))
    return best
