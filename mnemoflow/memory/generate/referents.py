"""What a chat sentence leaves to its listener and a memory has to say: whose thing it names ("rent's £950
now", "mum wants ...", "new number's ...": the speaker's), and what its "it", "they", "mine" and "that's where"
point back to in the sentences before it, what a heading or a topic before a dash says, and who "she" may be.
`rules` applies these to each clause it drafts."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from mnemoflow.memory.english.coref import (
    Mention,
    find_mentions,
    possessive,
    rewrite_persons,
)
from mnemoflow.memory.english.lexicon import (
    ADDRESSED_KIN,
    DEVICE_PHRASE,
    MONTHS,
    WEEKDAYS,
)
from mnemoflow.memory.english.sentences import strip_padding, written_out
from mnemoflow.memory.english.smalltalk import is_small_talk
from mnemoflow.memory.english.verbs import expand_is, is_past
from mnemoflow.memory.generate.candidates import GenerationContext, TurnView
from mnemoflow.memory.generate.judge import _DETERMINERS, _has_verb, display_name


_DAY_WORDS = frozenset(w.lower() for w in (*WEEKDAYS, *MONTHS, "today", "tonight", "tomorrow", "yesterday"))
_NOT_NOUN_AFTER = frozenset({"and", "or", "also", "just", "still", "now", "never", "always", "finally", "really",
                             "too", "then", "who", "which", "what", "that", "this", "these", "those", "it", "there",
                             "here", "said", "says", "thinks", "everyone", "everything", "someone", "something",
                             "nothing", "nobody", "all", "each", "every", "some", "any", "both", "turns", "turned",
                             "seems", "looks"})  # "turns out the rash was ...": no thing of the speaker's


# "what's the latest firmware for the Tessel AX router? mine's on 3.2.7", "how often should a 2016 Skoda Octavia
# estate get serviced? mine's on about 92k miles": the named thing the question was about
_MINE = re.compile(r"^mine(?='s\b| is\b)", re.I)
_THE_NAMED = re.compile(r"\b(?:the|an?)\s+(?P<thing>(?:(?:19|20)\d\d\s+)?(?:[A-Z][\w-]*\s+)+[a-z]+)\b(?=[^?]*\?$)")
# "when's a 2012 honda civic due a timing belt?": a product line, with the words before it and its model number
_THE_DEVICE = re.compile(rf"\b(?:the|an?|my)\s+{DEVICE_PHRASE}", re.I)


def _mine_named_before(body: str, before: Sequence[str]) -> str:
    """"mine's on 3.2.7" right after a question about "the Tessel AX router": the speaker's Tessel AX router.
    Only a named thing (capitalised words and its noun, or a product line) of a question just before; anything
    else is left."""
    if not before or not _MINE.match(body) or not before[-1].endswith("?"):
        return body
    named = list(_THE_NAMED.finditer(before[-1])) or list(_THE_DEVICE.finditer(before[-1]))
    return f"my {named[-1]['thing']}{body[4:]}" if named else body


_PLURAL_THING = re.compile(r"\b(?:the|my|our)\s+(?P<noun>[a-z]{3,}s)\b(?!')")


def they_asked_about(context: GenerationContext, question: TurnView) -> str | None:
    """What "they" in a question asked of the speaker points back to: the one plural thing the speaker's
    turn before the question named ("I keep forgetting the bins" / "Which day are they collected?")."""
    speaker = context.turn.speaker
    before = [t for t in context.window if t.turn_id != question.turn_id and t.speaker == speaker]
    found = {m["noun"].lower() for m in _PLURAL_THING.finditer(before[-1].text)} if before else set()
    return f"the {found.pop()}" if len(found) == 1 else None


# "Budget for the bathroom reno is 9,000", "Ferry booking ref is KX7-44QPL": a noun phrase with no determiner
# (a name is followed by its verb, not by more lowercase words)
_BARE_SUBJECT = re.compile(r"^(?P<noun>[A-Za-z][a-z]+)(?P<rest>(?:\s+[a-z][\w-]*){1,4}?)\s+(?:is|are|was|were|has)\b"
                           r"|^(?P<compound>[A-Za-z][a-z]+-[a-z]+)\s+(?:is|are|was|were|has)\b")  # "take-home is about £2,900"


# "new number's 07700 900456", "New place is in Braga": a new thing said with no owner is the speaker's
_NEW_THING = re.compile(r"^new\s+(?P<noun>[a-z]+(?:\s+[a-z]+)?)(?P<verb>'s|\s+is|\s+are)\s", re.I)
# family said the way one addresses them, with no "my": "mum wants ...", "Dad's retiring in May"
_BARE_KIN = re.compile(rf"^(?P<kin>{'|'.join(sorted(ADDRESSED_KIN, key=len, reverse=True))})(?=\s+[a-z]|'s\s+[a-z]+ing\b)",
                       re.I)
_PRONOUNS = frozenset({"it", "that", "this", "what", "who", "where", "there", "here", "he", "she", "one", "everyone",
                       "everything", "nothing", "let", "mine", "yours", "ours", "theirs", "hers", "his"})
# "password's greenowl91 now", "rent's £950 now": a thing's new value, said with no owner, is the speaker's
_THING_NOW = re.compile(r"^(?P<noun>[a-z]{3,})'s\s+(?=\S+(?:\s+\S+){0,3}\s+now$)", re.I)
# "salary's gone up to 52k", "rent's just gone up": said lowercase, not a name
_THING_MOVED = re.compile(r"^(?P<noun>[a-z]{3,})'s\s+(?=(?:gone|going|been|got|up|down|just|finally|[a-z]+ed)\b)")
# "dentist is tues 4th march at 10:40", "office is Harbour Exchange", "rent's £1,150": one lowercase noun said with
# a value (a number, a name) and no owner
_THING_VALUED = re.compile(r"^(?P<noun>[a-z]{3,})(?P<verb>'s|\s+is|\s+was)\s+(?=[^,;]*?(?:\d|\b[A-Z][a-z]))")
# "laptop died on me", "trek got nicked outside the gym", "car's been written off": a lowercase thing that met
# its end, said with no owner
_THING_ENDED = re.compile(r"^(?P<noun>[a-z]{3,})(?='s\s|\s)(?:'s)?\s*(?:(?:got|has|had|was|is|been|just|finally)\s+){0,2}"
                          r"(?:died|broke(?:n| down)?|stolen|nicked|pinched|written off|totall?ed|packed (?:in|up))\b")


def _owned_by_speaker(body: str, speaker: str, known: Iterable[str], to_assistant: bool = True) -> str:
    """A chat sentence drops the "my" before its subject ("Rent on the two-bed is £1,300"): the thing is the
    speaker's, and the memory says so. Not for a known name, nor when the words after it read as a verb; a
    lone noun with a value ("dentist is tues 4th march") or that met its end ("laptop died") only when told to
    the assistant (in a group "party's on Sunday" is the group's)."""
    if new := _NEW_THING.match(body):
        after = body[new.end('verb'):].split()[:1]
        verb = new["verb"] if new["verb"] != "'s" else " has" if after and is_past(after[0]) else " is"  # "'s arrived"
        return f"{possessive(speaker)} new {new['noun'].lower()}{verb}{body[new.end('verb'):]}"
    if kin := _BARE_KIN.match(body):  # "mum wants to go over to giffgaff": the speaker's mum
        return f"my {kin['kin'].lower()}{body[kin.end():]}"
    no_thing = _DETERMINERS | _DAY_WORDS | _PRONOUNS | {k.lower() for k in known}  # words no thing of the speaker's is
    if (ended := _THING_ENDED.match(body) if to_assistant else None) and ended["noun"] not in no_thing:
        return f"my {body}"
    now = _THING_NOW.match(body) or _THING_MOVED.match(body) or (_THING_VALUED.match(body) if to_assistant else None)
    if now and now["noun"].lower() not in no_thing:
        rest = body[now.end():]
        said = rest.split()[:2]  # "salary's gone up", "landlord's only gone and put the rent up": has
        verb = "has" if said and (is_past(said[0]) or said[0] in ("just", "finally") or len(said) == 2 and
                                  said[0] in ("only", "already", "also", "now") and is_past(said[1])) else "is"
        return f"my {now['noun'].lower()} {verb} {rest}"
    bare = _BARE_SUBJECT.match(body)
    if bare is not None and bare["compound"]:
        return f"{possessive(speaker)} {bare['compound'].lower()}{body[bare.end('compound'):]}"
    if bare is None or bare["noun"] in known or bare["noun"].lower() in _DETERMINERS | _NOT_NOUN_AFTER | _DAY_WORDS:
        return body  # "Sunday lunch is at Mum's": a day, not a thing of the speaker's
    after = bare["rest"].split()
    if after[0].endswith(("ly", "ed")) or any(w in _NOT_NOUN_AFTER for w in after):
        return body  # "Marek really is", "Anna and Tom are"
    return f"{possessive(speaker)} {bare['noun'].lower()}{body[bare.end('noun'):]}"


def dash_topic(sentences: Sequence[str], i: int, known: Iterable[str], speaker: str, addressee: str | None,
               turn_text: str) -> str | None:
    """Sentence `i` as the topic of the next when it is a few words with no verb and a dash joins them in the
    turn ("mum's 60th dinner - I've booked ..."), in the memory's words ("Mum's 60th dinner"); else None."""
    if i + 1 >= len(sentences):
        return None
    head = strip_padding(sentences[i], known).rstrip(".!,;:- ")
    # "mum's 60th dinner" has no verb, "she's not in Spain anymore" has
    owned = head if expand_is(head) != head else re.sub(r"\b(?!(?:he|she|it|that|there|what|who|here)'s)(\w+)'s\b", r"\1",
                                                        head, flags=re.I)
    if not head or len(head.split()) > 6 or head.endswith("?") or _has_verb(owned) or is_small_talk(head):
        return None
    if not re.search(re.escape(head[-15:]) + r"\s+[-\u2013\u2014]+\s+" + re.escape(sentences[i + 1][:15]),
                     written_out(turn_text), re.I):
        return None
    said = rewrite_persons(head, speaker, addressee).text
    return said[:1].upper() + said[1:]


# "small change from leadership: Marco now takes over ...", "update: ...": a heading before the statement; one
# that says what it is about ("change of plan on the dashboard:") is kept
_HEADING = re.compile(r"^(?P<head>[A-Za-z][A-Za-z ]{0,40}):\s+(?=\S)")
_TOPIC_IN = re.compile(r"\b(?:on|about|re|regarding|for|with)\s+\w+", re.I)


def without_heading(body: str) -> str:
    """`body` without a heading of a few verbless words before a colon that names no topic."""
    heading = _HEADING.match(body)
    if heading is None or _has_verb(heading["head"]) or _TOPIC_IN.search(heading["head"]):
        return body
    rest = body[heading.end():]
    return rest if _has_verb(rest) and len(rest.split()) >= 3 else body


def recent_mentions(context: GenerationContext, speaker: str) -> tuple[Mention, ...]:
    """People named in the last four turns, newest first: who "she" may be."""
    found: list[Mention] = []
    for turn in list(reversed(context.window))[:4]:
        found += find_mentions(turn.text, display_name(turn.speaker),
                               speaker if display_name(turn.speaker) != speaker else None)
    return tuple(found)


_THE_NOUN = re.compile(r"^the\s+(?P<noun>[a-z][a-z-]+)\b", re.I)


def the_thing_asked(content: str, memories: Sequence[str]) -> str | None:
    """A follow-up answer about "the <noun>" ("What time are the lessons?" / "17:30") is about the thing the
    question's noun names in what was said before it, the newest memory that names it: "the lessons" after
    "Sam's daughter Ida starts violin lessons" are Ida's violin lessons. The words before the noun there come
    along; the owner is who owns it there ("Ida's ...") or that memory's subject. None when no memory names it."""
    the = _THE_NOUN.match(content)
    if the is None:
        return None
    noun = the["noun"].lower()
    stem_ = noun[:-1] if noun.endswith("s") and len(noun) > 3 else noun
    for memory in reversed(memories):
        named = re.search(rf"(?:(?P<owner>[^\W\d_][\w-]*)'s\s+)?(?P<mods>(?:[a-z][\w-]*\s+){{0,2}}?){re.escape(stem_)}s?\b",
                          memory)
        if named is None:
            continue
        owner = named["owner"] or _subject_name(memory)
        if owner is None:
            return None
        mods = " ".join(w for w in named["mods"].split() if w not in _DETERMINERS and not is_past(w)
                        and not w.endswith("s"))  # "starts violin lessons": the verb is no modifier
        return f"{possessive(owner)} {mods + ' ' if mods else ''}{content[the.end('noun') - len(the['noun']):]}"
    return None


def _subject_name(memory: str) -> str | None:
    """The name a memory is about: the last name before its first verb ("Sam's daughter Ida starts ..." -> Ida)."""
    names = re.findall(r"\b([^\W\d_a-z][\w-]*)(?:'s)?\s+(?=[a-z])", memory.split(" is ")[0])
    return names[-1] if names else None
