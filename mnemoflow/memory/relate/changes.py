"""What a newer statement does to the slot it shares with a held memory: puts a value there the held memory
does not hold, or ends what the held memory says. A word two statements share is the slot a change marker
("now", "changed", "turns out") changes only then: "Now Jon's relationships feel more genuine" shares "feel"
with "the group made Jon feel accepted" and changes nothing."""

from __future__ import annotations

import itertools
import re

from mnemoflow.memory.relate.claim_words import (
    ENDED,
    ENDING_CHANGE,
    STOPWORDS,
    among,
    stem,
)
from mnemoflow.memory.relate.claims import Claim

_ENDED_SUBJECT = re.compile(rf"\b(?:{ENDED})\b")


def _puts_a_value(cand: Claim, old: Claim) -> bool:
    """A word both share is a slot the candidate changes only when it puts a value there the held memory
    does not hold: a date, number, amount, ... a name it does not say, or another word beside a word both say
    ("black tea" for "green tea", "in the shed" for "in the garage"). "Now Jon's relationships feel more
    genuine" shares "feel" with "the group made Jon feel accepted" and changes nothing."""
    for v in cand.all_values:
        if v.type != "name":
            if not any(v.compatible(w) for w in old.all_values):
                return True
        elif v.key != old.subject and not among(str(v.key), old.names) and not _opening_word(v.text, cand.text):
            return True
    for shared in (cand.main_stems & old.main_stems) - {cand.subject, old.subject}:
        verb = shared == cand.verb_stem == old.verb_stem  # "prefers coffee" / "prefers tea": its object
        new, was = _next_to(cand.main, shared, verb), _next_to(old.text, shared, verb)
        if any(new[at] and was[at] and not new[at] & was[at] for at in new.keys() & was.keys()):
            return True
    return False


def _opening_word(name: str, text: str) -> bool:
    """Any word opens a sentence with a capital: "Instead of ...", "Seeing how ...", "They've been ...",
    "Now Jon is ..." are no names ("Dr Sand is ..." is)."""
    first = name.split()[0]
    return bool(re.search(rf"(?:^|[.!?;:]\s+){re.escape(first)}\b", text)) and \
        (first.lower() in STOPWORDS or first.lower().endswith("ing") or "'" in first)


def _next_to(text: str, word_stem: str, verb: bool = False) -> dict[str, set[str]]:
    """The stems of the lower-case content words beside `word_stem` in `text`, by where they stand: right
    before it, after the same content word or any function word ("green" in "drinks green tea", at "after
    drink"), and first after it past the function words between ("garage" in "trains at the garage", at "at
    the"), or right after it when it is the main verb of both (its object: "coffee" in "prefers coffee")."""
    words = re.findall(r"[A-Za-z']+", text)
    found: dict[str, set[str]] = {}
    for i, word in enumerate(words):
        if stem(word.lower()) != word_stem:
            continue
        if i > 1 and words[i - 1][0].islower() and words[i - 1].lower() not in STOPWORDS:
            before = words[i - 2].lower()
            at = "after " + ("" if before in STOPWORDS else stem(before))
            found.setdefault(at, set()).add(stem(words[i - 1].lower()))
        gap = list(itertools.takewhile(lambda w: w.lower() in STOPWORDS, words[i + 1:]))
        if (gap or verb) and i + 1 + len(gap) < len(words) and words[i + 1 + len(gap)][0].islower():
            found.setdefault(" ".join(gap).lower(), set()).add(stem(words[i + 1 + len(gap)].lower()))
    return found


def _held_value(item: str, old: Claim) -> bool:
    """`item` (a name key or a stem) is one of the held memory's names or values, or the last word of what it
    states ("Penicillin", "the Pixel", "allergic to ibuprofen"), not a word of how it was said."""
    last = [stem(w) for w in re.findall(r"[a-z]+", old.main.lower()) if w not in STOPWORDS][-1:]
    return among(item, old.names | frozenset(last)) or \
        any(among(item, frozenset(stem(w) for w in re.findall(r"[a-z]+", v.text.lower()))) for v in old.all_values)


_ENDING = re.compile(rf"(?:{'|'.join(ENDING_CHANGE)})\b")


def _ends_what_it_said(cand: Claim, old: Claim) -> bool:
    """What the held memory states, denied ("isn't scared of dogs anymore"), said to be gone ("the old hub is in
    the bin"), or ended by an ending marker (`ended_by_marker`)."""
    if any(among(x, old.positive) for x in cand.negated):
        return True
    if cand.change_text and _ENDED_SUBJECT.search(cand.change_text):  # "the BT hub is in the bin": the subject ended
        return any(among(x, old.anchors) for x in cand.subject_stems | cand.subject_anchors)
    return _ended_by_marker(cand, old)


def _ended_by_marker(cand: Claim, old: Claim) -> bool:
    """An ending marker acting on what the held memory states: a word of it in the marker or among the two
    content words after it, the marker's object ("stopped using tesco", "traded the Octavia in", "ditched the
    car for the school run"), or one of its values said again ("can't do October 22 anymore")."""
    if not cand.change_text or not _ENDING.match(cand.change_text):
        return False
    at = cand.body.lower().find(cand.change_text) + len(cand.change_text)
    after = [w for w in re.findall(r"[a-z]+", cand.body[at:].lower()) if w not in STOPWORDS][:2]
    return any(among(stem(w), old.anchors) for w in re.findall(r"[a-z]+", cand.change_text)[1:] + after) or \
        any(v.compatible(w) for v in cand.all_values if v.type != "name" for w in old.all_values)
