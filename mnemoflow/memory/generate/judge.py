"""What the rule engine judges a clause by: who says it (`_Turn`, display names, the assistant), whether
it is worth keeping (small talk, questions, requests and vague fragments are not), whether it carries
a detail, and the kind of memory it is; plus the patterns these judgements share with `drafts`.

The bottom layer of the engine: `drafts` and `rules` import it, it imports neither."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from mnemoflow.memory.english.names import find_entities
from mnemoflow.memory.english.shifts import find_shift
from mnemoflow.memory.english.smalltalk import is_feeling, is_small_talk
from mnemoflow.memory.english.temporal import Resolution, resolve_dates
from mnemoflow.memory.english.verbs import PAST_FORMS, is_adverb, is_past
from mnemoflow.memory.generate.candidates import GenerationContext, TurnView
from mnemoflow.memory.generate.direct import PREFERENCE_VERB, classify_kind
from mnemoflow.memory.relate.replaces import ends_a_thing
from mnemoflow.models import MemoryKind

_ASSISTANT_NAMES = frozenset({"assistant", "ai", "bot", "agent", "system", "chatbot"})

_RULE_START = re.compile(
    r"^(?:please\s+)?(?:always|never|don't|do not|don't ever|do not ever|make sure|be sure|from now on|avoid|"
    r"no more|stop)\b", re.I)

_PRESCRIPTIVE = re.compile(r"'s rule:|\b(?:must|should|have to|has to|not allowed|policy|don't|do not)\b", re.I)
_STANDING_RULE = re.compile(r"(?:^|[:;]\s*)(?:every|all|each|no)\s+[\w-]+(?:\s+[\w-]+)?\s+"
                            r"(?:needs?|must|has to|have to|requires?|gets?)\b", re.I)
_PREFERENCE_WORDS = re.compile(r"\b(?:vegetarian|vegan|pescatarian|kosher|halal|gluten-free|lactose|teetotal|"
                               r"favou?rite|usual (?:order|drink|coffee)|main (?:programming )?language|"
                               r"would (?:like|love)|wants?|fan of|into)\b", re.I)


_OBLIGATION = re.compile(r"\b(must|must not|needs? to|has to|have to|not allowed)\b", re.I)

_VAGUE = re.compile(r"\b(it|that|this|those|them|there|one|these|stuff|things?)\b", re.I)

_PRONOUN_START = re.compile(r"^(it|that|this|they|he|she|there|those|these|their|its|his|her|them)\b", re.I)
_LISTENER_START = re.compile(r"^(you|you're|you've|you'll|you'd|your|yours)\b", re.I)

_GERUND_SUBJECT = re.compile(r"^[a-z]+ing\b(?:'s|[^,.;]*?\b(?:is|are|was|were|isn't|aren't|looks|sounds|seems|"
                             r"makes|keeps|helps|gives|takes|feels|brings|can|will|has|means)\b)", re.I)

_FINITE = re.compile(r"\b(?:is|are|was|were|has|have|had|will|would|can|could|does|do|did|must|should|shall|may|"
                     r"might)(?:n't)?\b(?!-)", re.I)  # not "a must-see"

_DETERMINERS = frozenset({"a", "an", "the", "my", "your", "our", "his", "her", "their", "its", "this", "that", "some",
                          "many", "few", "all", "these", "those"})

# "Marco's wedding cake is ...": a capitalised word owning the subject noun, a verb after it, is a name even at
# the start of a sentence (a common noun would take "the"; "Work's been crazy" is "is", not a possessive).
_POSSESSOR_SUBJECT = re.compile(r"^[A-Z][a-z]+'s (?:[a-z]+ ){1,3}(?:is|are|was|were|will|has|had)\b")


@dataclass(frozen=True)
class _Turn:
    """What every sentence of one turn is judged with."""

    context: GenerationContext
    speaker: str
    addressee: str | None
    known: tuple[str, ...]  # names the scope or the conversation already has
    seen: frozenset[str] = frozenset()  # words written capitalised mid-sentence nearby: names, not sentence starts

    @property
    def to_assistant(self) -> bool:
        """Told to the assistant (or to no one yet), not to others in a group."""
        return self.addressee in (None, "the assistant")


def _not_worth_keeping(info: _Turn, body: str, content: str, personal: bool, has_detail: bool) -> str | None:
    """Why a statement is not a memory (a feeling, praise, a generic truth, a vague or half-resolved
    sentence), or None when it is one."""
    words = len(content.split())
    if is_feeling(body) and not has_detail:
        return "feeling"
    if _LISTENER_START.match(body) and not has_detail:
        return "about the listener"  # "You're so brave", "you're a star": praise, not a fact
    if _GERUND_SUBJECT.match(body) and not has_detail:
        return "generic"  # "Taking care of ourselves is vital"
    definite = re.match(r"^(?:the|our|this)\s+\w+", body, re.I)
    prescriptive = _has_verb(body) and _OBLIGATION.search(body)
    values = re.sub(r"\b(?:19|20)\d\d\b", "", body)  # "standup is at 10:00" has a value; "in 2019" is just when
    stated = _has_verb(body) and (_has_detail(info, values) or (definite and has_detail))
    ended = definite and ends_a_thing(body)  # "the thinkpad's finally binned": what the speaker had is gone
    if not (personal or prescriptive or stated or ended or _dated_event(info, body) or find_shift(body)):
        return "no one in it"  # "Last time was in 2019": a number alone is about no one
    if content in {info.speaker, f"{info.speaker} is"}:
        return "introduction"
    if not has_detail and (words <= 2 or (_VAGUE.search(body) and words <= 8)):
        return "vague"
    if _PRONOUN_START.match(content) and not has_detail:
        return "unresolved subject"
    if re.match(r"^(?:you|your|you're|you've)\b", content, re.I):
        return "unresolved listener"  # no one was addressed, so "you" cannot become a name
    if re.search(r"\b(will|would|can|could|do|does|did|am|is|are|have|has)$", content) and not has_detail:
        return "elliptical"  # "I definitely will"
    return None


def _kind(text: str, resolved: Resolution, now: datetime) -> MemoryKind:
    """`classify_kind`, with what it cannot see: a fact dated to a day (or one that is over) is an episode,
    a diet or a standing want is a preference, "every PR needs ..." is a rule."""
    kind = classify_kind(text)
    if kind == "rule" and PREFERENCE_VERB.search(text) and not _PRESCRIPTIVE.search(text):
        return "preference"  # "Ottilie always prefers places near mountains": a habit of liking, not an order
    if kind == "fact" and (_STANDING_RULE.search(text) or re.match(r"^(?:no|never)\s", text, re.I)):
        return "rule"
    if kind == "fact" and re.search(r":\s*\w.*,\s*then\b", text):
        return "procedure"  # "whenever it hangs: vpnctl reset, then sign in again"
    if kind == "fact" and _PREFERENCE_WORDS.search(text):
        return "preference"
    if kind == "fact" and resolved.start is not None and resolved.end is not None and (
            resolved.end - resolved.start <= timedelta(days=3) or resolved.end <= now):
        return "episode"
    return kind


def display_name(speaker: str) -> str:
    """The speaker as a memory names them: "user" -> "User"."""
    name = " ".join(speaker.split()) or "User"
    return name[:1].upper() + name[1:] if name.islower() else name


def _is_assistant(turn: TurnView) -> bool:
    if turn.role:
        return turn.role.lower() == "assistant"
    return turn.speaker.strip().lower() in _ASSISTANT_NAMES


def _names_the_subject(words: Sequence[str]) -> bool:
    """Whether an -ing word opening a sentence is its subject: a verb follows it ("Billing moved",
    "billing still runs"), where a plan would go on with its object ("Moving boxes all day")."""
    after = words[1] if len(words) > 1 else ""
    then = words[2] if len(words) > 2 else ""
    return is_past(after) or (is_adverb(after) and (is_past(then) or then.endswith("s")))


def _has_detail(info: _Turn, rewritten: str, numbers: bool = True) -> bool:
    """Whether a sentence names something beyond the two people talking: a name, or a number.

    A capitalised first word counts only when it is written capitalised mid-sentence nearby too:
    "Maya" is a name, "Family" at the start of "Family is everything" is not."""
    if numbers and re.search(r"\d", rewritten):
        return True
    own = {info.speaker, info.addressee, "the assistant"}
    lead = rewritten.split()[0].strip(",.!:;'").removesuffix("'s") if rewritten.split() else ""
    for name in find_entities(rewritten, info.known):
        if name in own or name.lower() == "the assistant":
            continue
        first = name.split()[0]
        if first == lead and rewritten.startswith(lead) and first.removesuffix("'s") not in info.seen \
                and not _POSSESSOR_SUBJECT.match(rewritten):
            continue
        return True
    return numbers and bool(resolve_dates(rewritten, info.context.now).times)  # "My exam is next Tuesday": a date


def _answers_or_tells(info: _Turn) -> bool:
    """A user telling the assistant, or anyone answering a question: a verbless reply still says something."""
    previous = info.context.previous
    return (info.context.turn.role or "").lower() == "user" or bool(previous and previous.text.rstrip().endswith("?"))


def _names_someone(info: _Turn, content: str, asker: str) -> bool:
    people = {info.speaker, asker, *info.known}
    return any(re.search(rf"\b{re.escape(p)}\b", content) for p in people if p and p != "the assistant")


def _has_verb(text: str) -> bool:
    """A statement has a verb; "A suspenseful thriller set in a small Midwestern town" is a caption. A subject
    pronoun is followed by one ("she teaches chemistry now")."""
    words = re.findall(r"[a-z']+", text.lower())
    return bool(_FINITE.search(text) or re.search(r"\w'(?:s|re|m|ll|ve)\b", text)
                or re.search(r"\b(?:I|[Hh]e|[Ss]he|[Ww]e|[Tt]hey)\s+(?!and\b|or\b)[a-z]", text)) \
        or any(w in PAST_FORMS or (w.endswith("ed") and len(w) > 4) for w in words) \
        or any(w.endswith("s") and i and words[i - 1] not in _DETERMINERS | {"no", "yes", "and", "or"}
               for i, w in enumerate(words[:4]))


def _dated_event(info: _Turn, body: str) -> bool:
    """"The design review moved to Friday at 11", "Billing moved to the new cluster in 2022": a definite
    thing with a date of its own is worth keeping though no one is named; "The weather is nice today" is
    not (today is not a date anyone will ask about)."""
    gerund = re.match(r"^(?!\w*thing\b)\w+ing\b", body, re.I) and _names_the_subject(body.lower().split())
    if not (re.match(r"^the\s+\w+", body, re.I) or gerund) or is_small_talk(body):
        return False
    times = resolve_dates(body, info.context.now).times
    return any(t.phrase.lower() not in {"today", "tonight"} for t in times)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def _finish(text: str) -> str:
    """Tidy spacing and end punctuation; start with a capital unless the first word is "iPhone"-like."""
    text = re.sub(r"\s+([,;:])", r"\1", " ".join(text.split())).strip().rstrip(".!;:,-").strip()
    first = text.split()[0] if text else ""
    if first[:1].islower() and first[1:] == first[1:].lower():
        text = text[:1].upper() + text[1:]
    return text
