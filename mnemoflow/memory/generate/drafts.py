"""How the rule engine rewrites a clause into a draft memory: a corrected value put back into the
statement it corrects, an accepted invitation, a follow-up answer joined to its question, the subject
made explicit, "it" replaced by the thing named before, and how sure each rewrite was.

Separate from `rules` (which walks a turn's sentences and decides which of these to apply) and from
`judge` (which decides whether a draft is worth keeping and what kind it is)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from mnemoflow.memory.english.coref import (
    NOT_NAMES,
    Mention,
    Rewrite,
    possessive,
    rewrite_persons,
)
from mnemoflow.memory.english.lexicon import DEVICE_PHRASE, MONTHS, WEEKDAYS
from mnemoflow.memory.english.sentences import (
    split_clauses,
    split_sentences,
    strip_padding,
)
from mnemoflow.memory.english.smalltalk import is_small_talk
from mnemoflow.memory.english.verbs import PAST_FORMS, is_adverb
from mnemoflow.memory.generate.followup import FollowUp, is_clause
from mnemoflow.memory.generate.judge import (
    _DETERMINERS,
    _FINITE,
    _answers_or_tells,
    _has_verb,
    _is_assistant,
    _lower_first,
    _names_the_subject,
    _Turn,
)
from mnemoflow.memory.relate.claim_words import EXCLUSIVE_CLASSES, STOPWORDS


_POLAR_LEAD = re.compile(r"^(?:yes|no|yeah|nope)[,.!]*\s+", re.I)


_PLAN_GERUNDS = frozenset({"moving", "going", "starting", "planning", "heading", "flying", "leaving", "visiting",
                           "working", "studying", "learning", "training", "thinking", "trying", "looking", "getting",
                           "researching", "writing", "building", "applying", "preparing", "saving", "launching",
                           "joining", "quitting", "switching", "traveling", "travelling", "hoping", "coming"})

_GERUND_START = re.compile(r"^(?:(?P<adverb>just|finally|also|still|currently|now|really) )?"  # not "everything"
                           r"(?!(?:every|some|any|no)thing\b|morning\b|evening\b|thing\b)[a-z]+ing\b(?!'s)")

_PREFERENCE_START = re.compile(r"^(?:really |totally |absolutely )?(?:love|like|hate|enjoy|prefer|adore|need|want)\b",
                               re.I)

_STATE_WORDS = frozenset({"based", "located", "married", "engaged", "used", "supposed", "excited", "interested"})
# A value said on its own: "$135,000", "11:15", "10 mg", "8", "20%", "9am".
_AMOUNT = re.compile(r"(?<![\w$\u20ac\u00a3:.,/-])(?P<amount>[$\u20ac\u00a3]\s?\d[\d,]*(?:\.\d+)?k?|"
                     r"\d{1,2}:\d\d(?:\s?[ap]m)?|\d{1,2}\s?[ap]m|\d[\d,]*(?:\.\d+)?%?)(?![\w:/-]|[.,]\d)"
                     r"(?:\s+(?P<unit>[a-z]+)\b)?", re.I)
_NOT_UNITS = STOPWORDS | {"base", "though"}  # words after a number that are no unit of it
# "make that 10", "it's 10 mg", "no, it's 11:15 actually": a value that replaces the one said before.
_SET_VALUE = re.compile(r"^(?:make (?:that|it)|it'?s|it is|that'?s|that is|it should be|should be|it was)\s+"
                        r"(?:actually\s+|now\s+|more like\s+)?(?P<value>.+?)(?:\s+(?:now|actually|instead))?$", re.I)
# "The confirmation email says 11:15": another source for the same thing, with its own value.
_REPORT = re.compile(r"\b(?:says|said|shows|showed|lists|listed|states|stated|reads)\s+(?:that\s+)?", re.I)

# "my two children, Ella and Sam": who the speaker's people are, said in passing.
_KIN_NAMED = re.compile(r"\bmy\s+(?P<kin>(?:(?:two|three|four|\d|twin|older|younger|little|big|baby)\s+)?"
                        r"(?:kids|children|sons|daughters|sisters|brothers|twins|son|daughter|sister|brother|wife|"
                        r"husband|partner|fianc\u00e9e?|fiancee?))(?:,\s*|\s+)"
                        r"(?P<names>[A-Z][a-z]+(?:(?:,\s*|,?\s+and\s+)[A-Z][a-z]+)*)\b(?!')")
# "Double espresso, every morning": a habit.
_ROUTINE = re.compile(r"\b(?:every|each)\s+(?:morning|evening|night|day|weekday|week|month)\b|\b(?:daily|weekly)\b",
                      re.I)
# "Any good climbing gyms near me?": what the speaker is looking for.
_LOOKING_FOR = re.compile(r"^(?:and |so )?(?:any|are there any|do you know any|know any)\s+"
                          r"(?P<what>(?:good |nice |decent )?[a-z][\w -]*?)\s+"
                          r"(?P<where>near me|nearby|close by|around here|near (?:my|our) \w+)\?$", re.I)

_MONTH_BEFORE = re.compile(r"\b(?:" + "|".join(MONTHS) + r")\.?\s*$", re.I)

_FIRST_OR_SECOND = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|me|my|mine|we|we're|we've|us|our|you|you're|your)\b", re.I)


@dataclass(frozen=True)
class _Draft:
    """A statement on its way to a candidate: rewritten text and how sure each rewrite was."""

    content: str
    source: str  # the words it came from, for salience
    kind_text: str  # the words the kind is judged on (before dates are rewritten)
    confidence: float
    reasons: tuple[str, ...]
    turn_ids: tuple[str, ...]
    store: bool = True


@dataclass(frozen=True)
class _Value:
    """A value in a sentence: where its amount is, and what it measures."""

    start: int
    end: int  # the end of the amount; a unit after it stays as said
    amount: str
    kind: str  # "money", "time", "percent", the unit ("mg", "night"), or "" for a bare number


def _values(text: str) -> list[_Value]:
    """The values in `text`, not counting years or days of a month ("September 5")."""
    found = []
    for m in _AMOUNT.finditer(text):
        amount, unit = m["amount"], (m["unit"] or "").lower()
        unit = "" if unit in _NOT_UNITS or unit.capitalize() in MONTHS else unit
        if amount[0] in "$\u20ac\u00a3":
            kind = "money"
        elif ":" in amount or amount.lower().endswith(("am", "pm")):
            kind = "time"
        elif amount.endswith("%"):
            kind = "percent"
        elif (re.fullmatch(r"(?:19|20)\d\d", amount) and not unit) or _MONTH_BEFORE.search(text[:m.start()]):
            continue
        else:
            kind = unit.removesuffix("s")
        found.append(_Value(m.start("amount"), m.end("amount"), amount, kind))
    return found


def _same_kind(new: _Value, old: _Value) -> bool:
    """A bare number can stand for any count ("make that 10" after "we're 8"); anything else must match."""
    if new.kind == "":
        return old.kind not in {"money", "time", "percent"}
    return new.kind == old.kind


def _corrected(info: _Turn, body: str, before: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
    """A value said in place of one said just before, as the earlier statement with the new value, and the
    turns it comes from: "make that 10" after "We're 8 for Sunday lunch" is "We're 10 for Sunday lunch";
    "The email says 11:15" after "The app says my flight leaves at 10:40" is "The email says my flight
    leaves at 11:15". None when the value stands alone or no earlier statement has exactly one like it."""
    source = ""
    if said := _SET_VALUE.match(body):
        value_text = said["value"]
    else:
        reports = list(_REPORT.finditer(body))
        if not reports:
            return None
        source, value_text = body[:reports[-1].end()].strip(), body[reports[-1].end():]
    values = _values(value_text)
    if len(values) != 1 or not (whole := _AMOUNT.fullmatch(value_text.strip())):
        return None
    new = values[0]
    if whole["unit"] and new.kind == "" and whole["unit"].lower() not in _NOT_UNITS:
        return None  # "it's 5 September" is a date, not a count
    turn = info.context.turn
    earlier = [(clause, turn) for clause in reversed(before)]
    for previous in reversed(info.context.window):
        if not _is_assistant(previous):
            clauses = [c for sentence in split_sentences(previous.text) for c in split_clauses(sentence, is_clause)]
            earlier += [(clause, previous) for clause in reversed(clauses)]
    for clause, said_in in earlier:
        clause = strip_padding(clause, info.known).rstrip(".!;:,- ")
        if clause.endswith("?") or (said_in.speaker != turn.speaker and _FIRST_OR_SECOND.search(clause)):
            continue
        like = [v for v in _values(clause) if _same_kind(new, v)]
        if len(like) != 1:
            continue
        old = like[0]
        text = clause[:old.start] + new.amount + clause[old.end:]
        if source:  # the new source says what the old one said, with its own value
            verbs = [m for m in _REPORT.finditer(text) if m.end() <= old.start]
            text = f"{source} {text[verbs[-1].end():] if verbs else _lower_first(text)}"
        return text, tuple(dict.fromkeys((said_in.turn_id, turn.turn_id)))
    return None


def _reshaped(info: _Turn, body: str, content: str, rewrite: Rewrite, has_detail: bool) -> tuple[str, bool]:
    """The content in the shape a memory takes, and whether it is about a person."""
    personal = rewrite.first_person or rewrite.plural_first_person or rewrite.second_person or rewrite.third_person
    if not personal and not _has_verb(body) and (has_detail or _ROUTINE.search(body)) and _answers_or_tells(info):
        fragment = _lower_first(_POLAR_LEAD.sub("", body))
        # "Dentist on Thursday at 10", "Double espresso, every morning": something the speaker has
        has = _starts_with_a_noun(info, fragment) and not is_small_talk(fragment.split(",")[0])
        content = f"{info.speaker} has {fragment}" if has else f"{info.speaker}: {fragment}"
        personal = True  # "$500 a month into an S&P 500 index fund" answering "How will you invest it?"
    user = (info.context.turn.role or "") == "user"
    if not personal and has_detail and user and re.match(r"^(?:the|our|this)\s+\w+", body, re.I):
        content = f"{possessive(info.speaker)} {content.split(' ', 1)[1]}"  # a user's "the review" is theirs
    name = re.escape(info.speaker)  # "I'm Priya, a product manager" said by Priya
    content = re.sub(rf"^({name})(?: is|'s name is) {name}(?:,\s*|\s+and\s+|$)", r"\1 is ", content).strip()
    return content, personal


def _bridges(info: _Turn, clause: str, draft: _Draft) -> bool:
    """"I own the Q3 roadmap for Atlas; the review with leadership is July 18": a definite thing no one
    named before, right after another clause of the sentence, belongs to what that clause is about."""
    return bool(re.match(r"^the\s+[a-z]", strip_padding(clause, info.known))) \
        and draft.content.startswith(f"{possessive(info.speaker)} ")

# "what pressure for my Ridgeline Volt 3?": a named thing of the speaker's, said in passing
_NAMED_WORD = r"(?:[A-Za-z]*[A-Z][\w-]*|\d[\w.]*)"
_OWNED_NAMED = re.compile(rf"\bmy\s+(?P<name>{_NAMED_WORD}(?:\s+{_NAMED_WORD})*)"
                          r"(?=\s*(?:[?,.!]|$|\s+(?:for|to|in|on|at|with|from|and|or|if|when)\b))")


# "my galaxy s23", "my 2012 honda civic": a product line the speaker has, with its model number
_MY_DEVICE = re.compile(rf"\bmy\s+{DEVICE_PHRASE}", re.I)


def _told_in_asking(question: str) -> str | None:
    """What a question or request tells about the speaker, in their words: "Ideas for a rainy day with my
    two children, Ella and Sam?" -> "my two children are Ella and Sam"; "Any good climbing gyms near me?"
    -> "I'm looking for good climbing gyms near me"; "... on my Ridgeline Volt 3?" -> "I have a Ridgeline Volt 3";
    "how do I stop my galaxy s23 ...?" -> "I have a galaxy s23"."""
    if kin := _KIN_NAMED.search(question):
        return f"my {kin['kin']} {'are' if ' and ' in kin['names'] else 'is'} {kin['names']}"
    if looking := _LOOKING_FOR.match(question):
        return f"I'm looking for {looking['what']} {looking['where']}"
    owned = _OWNED_NAMED.search(question)
    if owned and owned["name"].split()[0].lower() not in (*WEEKDAYS, *(m.lower() for m in MONTHS)) and \
            not owned["name"].isupper():  # "my CV", "my GP": an abbreviation, no named thing
        name = owned["name"]
    elif device := _MY_DEVICE.search(question):  # "how do I stop my galaxy s23 auto-updating apps?"
        name = device["thing"]
    else:
        return None
    return f"I have {'an' if name[0].lower() in 'aeiou' else 'a'} {name}"


def _starts_with_a_noun(info: _Turn, fragment: str) -> bool:
    """Whether a verbless fragment opens with a common noun ("dentist on ...", "lessons with Marco"), not
    a name, an amount, an article or an adverb ("$500 a month into ...", "mostly jazz")."""
    first = fragment.split()[0] if fragment.split() else ""
    return (first.isalpha() and first.islower() and first not in NOT_NAMES and first not in _DETERMINERS
            and not is_adverb(first) and first.capitalize() not in info.seen)


def _joined(first: _Draft, second: _Draft) -> _Draft:
    return _Draft(f"{first.content.rstrip('.!')}; {second.content}", f"{first.source} {second.source}",
                  f"{first.kind_text}; {second.kind_text}", min(first.confidence, second.confidence),
                  first.reasons + second.reasons, tuple(dict.fromkeys(first.turn_ids + second.turn_ids)))


_CLASS_VALUES = frozenset().union(*EXCLUSIVE_CLASSES.values())
_WHAT_I_AM_NOW = re.compile(r"^(?:(?:officially|now|finally|properly|basically)\s+)?an?\s+(?!bit\b|lot\b|few\b|couple\b)"
                            r"[\w'-]+(?:\s+[\w'-]+){0,3}?\s+(?:now|again)\b")

# "dentist booked for a filling, thurs 12 dec", "ferry to Bilbao booked!!": a thing the speaker has booked
_BOOKED = re.compile(r"^(?P<thing>(?!(?:I|we|you|he|she|they|it|that|this|all|everything|nothing|something)\b)[\w'-]+"
                     r"(?:\s+(?!(?:is|are|was|were|has|have|had|been|got|all|now|just)\b)[\w'-]+){0,4}?)\s+"
                     r"(?P<done>booked|sorted|confirmed|arranged|reserved|scheduled)\b(?!\s+(?:me|us|him|her|them|it|the|a|an)\b)",
                     re.I)


_MODALS = frozenset({"can't", "cannot", "won't", "couldn't", "might", "should", "could", "would", "must"})
# "could be a cold", "must have taken a lot of work": what may be or have been, said of no one
_IMPERSONAL = re.compile(r"^\S+\s+(?:have\b|be\s+(?:a|an|the|some|that|this|nothing|something)\b)")


def _with_subject(body: str) -> tuple[str, bool]:
    """Chat drops the subject ("Moved to Lisbon in March"); put the speaker's "I" back."""
    first = body.split()[0].lower().rstrip(":") if body.split() else ""  # "Decided: the 10k" ("Noted," acknowledges)
    low = body[:1].lower() + body[1:]
    if (booked := _BOOKED.match(body)) and not re.fullmatch(r"[A-Z][a-z]+", booked["thing"]):
        thing = _lower_first(booked["thing"])
        the = "" if thing.split()[0].lower() in _DETERMINERS | {"my", "our", "his", "her", "their"} else "the "
        return f"I have {the}{thing} {booked['done']}{body[booked.end('done'):]}", True
    if first in {"gonna", "going"} and re.match(r"^(gonna|going to)\b", low):
        return "I'm going to " + low.split(" ", 1)[1] if first == "gonna" and " " in low else "I'm " + low, True
    if first == "been":
        return "I've " + low, True
    if re.match(r"^back (?:on|with)\s", low):  # "back on semi-skimmed": where the speaker is again
        return "I'm " + low, True
    modal = first in _MODALS or (first == "will" and body.startswith("will "))  # a capital "Will" may be a name
    if modal and not _IMPERSONAL.match(low):  # "can't do the 22nd anymore", "might drop to the 10k"
        return "I " + low, True
    if first in {"just", "finally", "recently", "also", "already", "currently", "now", "really", "still"}:
        first = body.split()[1].lower() if len(body.split()) > 1 else ""
    if first in _STATE_WORDS:
        return body, False
    if first in _CLASS_VALUES and len(body.split()) <= 3:  # "pescatarian now", "single again": what the speaker is
        return "I'm " + low, True
    if _WHAT_I_AM_NOW.match(low):  # "officially a Leith resident now": what the speaker has become
        return "I'm " + low, True
    if (first in PAST_FORMS and first not in {"been", "done"}) or (first.endswith("ed") and len(first) > 4):
        return "I " + low, True
    gerund = _GERUND_START.match(low)
    if gerund and not gerund["adverb"] and _names_the_subject(low.split()):
        return body, False  # "Billing moved to the new cluster": the -ing word is what the sentence is about
    named = re.search(r"\d|\s[A-Z]", body)  # "Creating gaming content for YouTube": something definite is done
    if gerund and not _FINITE.search(body) and (first in _PLAN_GERUNDS or gerund["adverb"] or named):
        return "I'm " + low, True  # "Currently reading Project Hail Mary": the adverb says it is going on
    if _PREFERENCE_START.match(body):
        return "I " + low, True
    return body, False


def _person_confidence(rewrite: Rewrite, confidence: float) -> tuple[float, tuple[str, ...]]:
    """Plain first-person statements are the surest; each heuristic resolution costs a little."""
    reasons = []
    for flag, cost, why in (("first_person", 0.0, "first person"), ("plural_first_person", 0.1, "we as speaker"),
                            ("second_person", 0.1, "you as addressee"), ("third_person", 0.15, "he/she resolved"),
                            ("unresolved", 0.25, "pronoun left")):
        if getattr(rewrite, flag):
            confidence -= cost
            reasons.append(why)
    if not reasons:
        confidence -= 0.05  # about someone named, no one speaking of themselves
    return confidence, tuple(reasons)


def _render_segments(follow: FollowUp, answerer: str, asker: str, antecedents: tuple[Mention, ...]) -> str:
    """Each part in its own speaker's perspective: the asker's "you" and the answerer's "I" are one person."""
    parts = []
    for segment in follow.segments:
        speaker, listener = (answerer, asker) if segment.by_answerer else (asker, answerer)
        parts.append(rewrite_persons(segment.text, speaker, listener, antecedents).text)
    return "".join(parts)


def _merge_clause(statement: str, answer: str) -> str | None:
    """"Alex is going to Japan" + "Alex is going next April" -> "Alex is going to Japan next April"."""
    said, heard = statement.split(), answer.rstrip(".!").split()
    common = 0
    while common < min(len(said), len(heard)) and said[common].lower() == heard[common].lower():
        common += 1
    if common < 2 or common == len(heard):
        return None
    return " ".join(said + heard[common:])
