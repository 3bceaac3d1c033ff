"""A question turned into the statement it asks about: "When are you going to Japan?" -> (you, are going
to Japan, slot: when). `parse_question` finds the wh-word, the auxiliary, the subject and the predicate
(also of an embedded question: "Do you know where ..."); `statement` writes it back as a declarative,
with the polarity an answer gives it.

Separate from `followup`, which reads the answer and fills the slot."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mnemoflow.memory.english.verbs import (
    AUXILIARIES,
    PAST_FORMS,
    is_adverb,
    is_past,
    looks_like_base_verb,
    past,
    third_person,
)

_CONTRACTIONS = {
    "what's": "what is", "where's": "where is", "when's": "when is", "who's": "who is", "how's": "how is",
    "you're": "you are", "you've": "you have", "you'll": "you will", "you'd": "you would", "it's": "it is",
    "he's": "he is", "she's": "she is", "they're": "they are", "that's": "that is", "what're": "what are",
    "where'd": "where did", "how'd": "how did", "what'd": "what did", "who'd": "who did",
    "where're": "where are", "how're": "how are", "who're": "who are", "when're": "when are",
}
_PERFECT = re.compile(r"\b(what|where|who|how|when)'s\s+(\w+)\s+(been|done|gone|got|had|\w+ed)\b", re.I)
_CONTRACTION = re.compile(r"\b(" + "|".join(re.escape(c) for c in _CONTRACTIONS) + r")\b", re.I)
_SMALL_TALK = re.compile(
    r"^(how are you|how are things|how is it going|how have you been|how is life|what is up|what is new|"
    r"how was your (day|weekend|week|morning|evening|night|trip)|how do you do|are you ok|are you okay|you ok|"
    r"anything new|how about you|and you|you$|what about you|how did it go|how was it|how is everything|"
    r"what happened|how come|really|seriously|right|did you (?:sleep|rest) well|"
    r"did you have (?:a )?(?:fun|good|great|nice)|"
    r"are you (?:feeling|ok|okay|alright|all right|good|well|tired|hungry|busy|awake|there|around|still there)|"
    r"do you feel|did you enjoy|having fun|you good|what (?:did|do) you think|how (?:did|do) you like)\b",
    re.I)  # how someone is, or what they thought of something just shown, is not worth keeping
_OFFER = re.compile(
    r"^(would you like|do you want (me )?to|want (me )?to|wanna|can you|could you|will you|would you|shall|"
    r"should (i|we)|can i|could i|may i|do you need|need any|any (questions|thoughts|ideas)|"
    r"what do you think|why not|how about|what about|did you know|have you heard|guess)\b", re.I)

_WH = re.compile(r"^(how long|how many|how much|how old|how often|how far|what time|what kind of|what sort of|"
                 r"what type of|with whom|with who|who with|since when|where to|which|what|when|where|whom|who|"
                 r"why|how)\b", re.I)
_TAG = re.compile(r",\s*(right|yeah|correct|no|huh|eh|or not|yes)$|,?\s*\b(is not it|isn't it|aren't you|don't you|"
                  r"didn't you|aren't they|don't you think|wasn't it|isn't that|right)$", re.I)
_PRONOUNS = {"you": "you", "u": "you", "he": "he", "she": "she", "they": "they", "it": "it", "we": "we", "i": "I"}
_DETERMINERS = frozenset({"your", "my", "his", "her", "their", "our", "the", "this", "that", "these", "those"})
_NOUN_ADJ = frozenset({"new", "old", "next", "last", "first", "current", "little", "big", "older", "younger",
                       "best", "favorite", "favourite", "main", "home", "own", "dream", "usual"})
_BE = frozenset({"am", "is", "are", "was", "were"})
_DO = frozenset({"do", "does", "did"})
_ENDING_PREPS = ("with", "to", "from", "at", "in", "for", "about", "on", "by")


@dataclass(frozen=True)
class Question:
    """A question taken apart: wh-word (None for yes/no), the noun it asks about, aux, subject, rest."""

    wh: str | None
    noun: str | None
    aux: str | None
    subject: str  # "you", "your sister", "Maya"; "" when the wh-word is itself the subject
    rest: str  # what follows the subject: "going to Japan"


_PURPOSE = re.compile(r",\s*(?:just\s+)?so (?:that )?(?:I|we) (?:can|could|know|have)\b.*$", re.I)


def parse_question(sentence: str) -> Question | None:
    """Take a question apart, or None for small talk, offers and shapes it does not know."""
    q = sentence.strip().rstrip("?!. ").strip()
    q = re.sub(r"^(?:and|so|but|also|ok(?:ay)?|oh|well)\b,?\s+", "", q, flags=re.I)  # "And what do you drive?"
    if not q or _SMALL_TALK.match(q) or _OFFER.match(q):
        return None
    q = _PERFECT.sub(r"\1 has \2 \3", q)  # "what's it done": 's is "has" before a participle
    q = re.sub(r"\b(who|what)'s\s+(?=(?:got|been|gone|had)\b)", r"\1 has ", q, flags=re.I)  # "who's got the van"
    q = _CONTRACTION.sub(lambda m: _CONTRACTIONS[m.group().lower()], q)
    if _WH.match(q):  # "Which ankle, left or right?": the choices offered are what the answer picks from
        q = re.sub(r",\s*(?:the\s+)?[\w-]+\s+or\s+(?:the\s+)?[\w-]+$", "", q)
    q = _TAG.sub("", q).strip()
    q = _PURPOSE.sub("", q)  # "what's his name, so I can personalise the worksheets": why it is asked
    q = re.sub(r"(,?\s+(again|exactly|then|though|now|originally|currently|nowadays|these days|right now|by the way|btw|"
               r"at the moment))+$", "", q, flags=re.I)
    wh_match = _WH.match(q)
    if wh_match:
        wh = wh_match.group().lower()
        tokens = q[wh_match.end():].split()
        if all(t.lower() in {"and", "or", "when", "where", "who", "how", "why", "exactly"} for t in tokens):
            return Question(wh, None, None, "", "")  # elliptic: "When?", "Where and when?"
        if wh == "who" and _who_is_subject(tokens):  # "Who has the keys?", "who's got the van?", "Who booked it?"
            return Question(wh, None, None, "", " ".join(tokens))
        noun_words: list[str] = []
        while tokens and tokens[0].lower() not in AUXILIARIES and len(noun_words) < 3 and wh in {
                "what", "which", "how many", "how much", "what kind of", "what sort of", "what type of"}:
            noun_words.append(tokens.pop(0))
        if not tokens or tokens[0].lower() not in AUXILIARIES:
            nominal = noun_words and not any(w.lower() in _PRONOUNS or is_past(w) for w in noun_words)
            return Question(wh, " ".join(noun_words), None, "", "") if nominal and not tokens else None
        aux = tokens.pop(0).lower()
        subject, rest = _subject(tokens)
        if subject is None:
            return None
        if aux in _BE and rest and (not _predicate_start(rest[0]) or (
                wh in {"who", "whom", "what", "which"} and rest[0].lower() in {"in", "of", "at", "on", "from", "for"})):
            subject, rest = " ".join([subject, *rest]), []  # "How long was the interview process?"
        return Question(wh, " ".join(noun_words) or None, aux, subject, " ".join(rest))
    tokens = q.split()
    if tokens[0].lower() in AUXILIARIES and len(tokens) > 1:
        subject, rest = _subject(tokens[1:])
        return Question(None, None, tokens[0].lower(), subject, " ".join(rest)) if subject else None
    if tokens[0].lower() == "still":
        return Question(None, None, "are", "you", q)
    if re.search(r"\w or \w", q) and tokens[0].lower() not in _PRONOUNS:  # "Aisle or window for the Madrid flight?"
        return Question(None, None, None, "you", "prefer " + q[:1].lower() + q[1:])
    if tokens[0].lower() == "any" and len(tokens) > 1:
        return Question(None, None, "do", "you", "have " + q[:1].lower() + q[1:])
    subject, rest = _subject(tokens)
    if subject in {"it", "that", "this"}:
        return None  # "It's really cool when ..., isn't it?": an opinion asking for agreement
    if subject and rest and (rest[0].lower() in AUXILIARIES or (subject == "you" and (
            looks_like_base_verb(rest[0]) or is_past(rest[0])))):
        # "You're moving to Berlin?"; in "you do drinks too?" the "do" is the verb itself
        done = rest[0].lower() in ("do", "does", "did") and len(rest) > 1 and (
            rest[1].lower() in _DETERMINERS or re.fullmatch(r"[a-z]+[^s]s", rest[1].lower()) is not None)
        aux = rest.pop(0).lower() if rest[0].lower() in AUXILIARIES and not done else None
        return Question(None, None, aux, subject, " ".join(rest))
    return None


def _who_is_subject(tokens: list[str]) -> bool:
    """"who" is the subject and what follows its verb: a "has" of possession or of a participle, or a verb
    in the past or the third person ("Who wants to drive?")."""
    first = [t.lower() for t in tokens[:2]]
    if first[:1] in (["has"], ["have"], ["had"]) and len(first) > 1:
        return first[1] in _DETERMINERS | {"got", "a", "an"} or is_past(first[1])
    return bool(first) and first[0] not in AUXILIARIES and (is_past(first[0]) or re.fullmatch(r"[a-z]+[^s]s", first[0]) is not None)


# "Did the surgeon say how long recovery takes?": a yes/no question about what someone said or knows
# asks, in effect, its embedded wh-question ("how long does recovery take"); a bare answer answers that.
_EMBEDDED = re.compile(
    r"^(?:did|does|do|has|have|had)\s+(?:(?:the|your|my|his|her|their)\s+)?[\w']+\s+"
    r"(?:say|said|mention|mentioned|tell you|told you|know|explain|explained)\s+"
    r"(?P<wh>how long|how much|how many|what time|when|where)\s+(?P<clause>.+?)\??$", re.I)


def _embedded_question(sentence: str) -> Question | None:
    """The embedded wh-question of "Did X say how long Y takes?", in statement order already: the
    subject is the words before its verb (an auxiliary or a third-person/past form); a bare noun
    subject gets "the" ("recovery" -> "the recovery"), so the caller can give it an owner."""
    m = _EMBEDDED.match(sentence.strip().rstrip("?!. "))
    if not m:
        return None
    words = m.group("clause").split()
    for i, word in enumerate(words[:4]):
        low = word.lower()
        if i and (low in AUXILIARIES or is_past(low) or (low.endswith("s") and not low.endswith("ss"))):
            subject = " ".join(words[:i])
            if subject.lower() in _DETERMINERS:
                continue  # "the results": the verb comes later
            if subject.lower() in _PRONOUNS or subject.split()[0].lower() in _DETERMINERS:
                pass
            elif subject.islower():
                subject = "the " + subject
            else:
                return None
            return Question(m.group("wh").lower(), None, None, subject, " ".join(words[i:]))
    return None


def _predicate_start(word: str) -> bool:
    """Whether a word after "is <subject>" starts its predicate ("going", "still", "in") or the subject goes on."""
    low = word.lower()
    return (low.endswith(("ing", "ed")) or low in PAST_FORMS or low in _ENDING_PREPS or is_adverb(low)
            or low in {"not", "a", "an", "the", "into", "out", "up", "over", "back", "off", "there", "here"})


def _subject(tokens: list[str]) -> tuple[str | None, list[str]]:
    """Split tokens after the aux into subject and rest: "your new job start" -> "your new job", ["start"]."""
    if not tokens:
        return None, []
    first = tokens[0].lower()
    if first in _PRONOUNS:
        joined = len(tokens) > 2 and tokens[1].lower() == "and"
        if joined and (tokens[2][:1].isupper() or tokens[2].lower() in _PRONOUNS):
            return " ".join(tokens[:3]), tokens[3:]  # "you and Sam"
        return _PRONOUNS[first], tokens[1:]
    pointing = first in {"this", "that", "these", "those"}
    if pointing and (len(tokens) <= 2 or tokens[1].lower() in _DETERMINERS | {"a", "an"}):
        return first, tokens[1:]  # "is this your painting": a pronoun, not "this your"
    if first in _DETERMINERS and len(tokens) > 1:
        j = 1
        while j < len(tokens) - 1 and tokens[j].lower() in _NOUN_ADJ:
            j += 1
        j += 1
        while j < len(tokens) and tokens[j - 1].lower().endswith("'s"):
            j += 1
        return " ".join(tokens[:j]), tokens[j:]
    if tokens[0][:1].isupper():
        j = 1
        while j < len(tokens) and (tokens[j][:1].isupper() or tokens[j - 1].endswith("'s")):
            j += 1
        return " ".join(tokens[:j]), tokens[j:]
    if first.endswith(("ing", "ed")) or first in _ENDING_PREPS or first in {"there", "here"}:
        return "", tokens  # the wh-word is the subject: "Who is coming?"
    return None, []


# adverbs that stand between "did"/"does" and the verb
_BEFORE_VERB = frozenset({"last", "first", "just", "really", "already", "actually", "ever", "usually", "still",
                          "also", "originally", "finally"})


def statement(q: Question, negate: bool = False, no_longer: bool = False) -> str:
    """The question as a statement in the asker's words: "are you going" -> "you are going"."""
    rest = re.sub(r"\bever\s+|\s+yet$", "", q.rest)  # "have you ever been", "have you booked yet"
    if (no_longer or negate) and re.search(r"\bstill\b", rest, re.I):
        rest, no_longer, negate = re.sub(r"\bstill\b", "no longer", rest, count=1, flags=re.I), False, False
    words = rest.split()
    if q.aux in _DO or (q.aux is None and words):
        if negate or no_longer:
            middle = "no longer" if no_longer else f"{q.aux or 'do'} not"
            return _join(q.subject, middle, rest)
        verb = 1 if len(words) > 1 and words[0].lower() in _BEFORE_VERB else 0  # "did it last have one"
        if q.aux == "did" and words:
            words[verb] = past(words[verb].lower())
        elif q.aux == "does" and words:
            words[verb] = third_person(words[verb].lower())
        return _join(q.subject, " ".join(words))
    if no_longer:
        return _join(q.subject, q.aux or "", "no longer", rest)
    return _join(q.subject, q.aux or "", "not" if negate else "", rest)


def _join(*parts: str) -> str:
    return " ".join(p for p in parts if p)
