"""Whether a clause speaks of the past or of what is ahead: the words that mark each, and past verbs told
apart from states said with an -ed word. `temporal` reads them to decide which way a bare date points."""

from __future__ import annotations

import re

from mnemoflow.memory.english.lexicon import NUMBERS_TO_TWELVE
from mnemoflow.memory.english.verbs import (
    NOT_VERBS,
    PAST_FORMS,
    is_adverb,
    is_past,
    looks_like_base_verb,
    third_person,
)

FUTURE = re.compile(r"\b(will|'ll|would|going to|gonna|plan(s|ning)?|next|tomorrow|upcoming|soon|hope to|want to|"
                    r"starting|beginning|"
                    r"(is|are|am|'s|'re|'m)\s+\w+ing|is|are)\b", re.I)  # "heard the offsite is ..." is ahead
PAST = re.compile(r"\b(was|were|did|didn't|had|ago|yesterday|last|used to)\b", re.I)
# A plan made in the past is still ahead: "we decided to move in September", "I signed up for a course in May".
PLANNED = re.compile(r"\b(?:decided|planned|agreed|promised|arranged|hoped|wanted|chose|intended|expected|offered)"
                     r"\s+to\s+\w+|\b(?:signed up|registered|enrolled|booked|reserved|(?:got|bought) tickets)\s+for\b",
                     re.I)
PAST_TIME = re.compile(r"\b(?:ago|yesterday|last|used to)\b", re.I)
_WORD = re.compile(r"[a-z']+")
# "-ed" words that describe a state, not a past event ("I'm excited", "the flight is booked").
STATE_ED = frozenset({"excited", "interested", "tired", "bored", "scared", "worried", "stressed", "pleased",
                       "surprised", "supposed", "married", "engaged", "retired", "obsessed", "booked", "scheduled",
                       "planned", "based", "related", "located", "allowed", "required", "involved", "thrilled",
                       "delighted", "overwhelmed", "exhausted", "motivated", "inspired", "amazed", "disappointed",
                       "annoyed", "concerned", "prepared", "dedicated", "committed", "need", "used",
                       "called", "named"})  # "a charity called Brightwater" names it
_BE_LIKE = frozenset({"be", "is", "am", "are", "was", "were", "been", "being", "get", "got", "feel", "so", "very",
                      "really", "'m", "'re", "i'm", "we're", "you're", "it's", "he's", "she's", "they're"})


def has_past_verb(text: str) -> bool:
    """A verb in the past ("went", "booked"), not a state said with an -ed word ("is booked", "excited")."""
    words = _WORD.findall(text.lower())
    for i, word in enumerate(words):
        if (word in PAST_FORMS or is_past(word) and not word.endswith("ed")) and word not in STATE_ED:  # "rewrote"
            return True
        after_be = i > 0 and words[i - 1] in _BE_LIKE  # "is booked" is a state, "booked" an act
        if len(word) > 4 and word.endswith("ed") and word not in STATE_ED and not after_be:
            return True
    return False


# Words after which an -s word is a plural noun, not a verb ("two boxes", "of tiles", "my shifts"; but "the new
# one comes").
_NOUN_AFTER = NOT_VERBS | (NUMBERS_TO_TWELVE.keys() - {"one"}) | {
    "my", "your", "our", "his", "her", "their", "its", "some", "many", "few", "these", "those", "more", "no"}


def has_present_verb(text: str) -> bool:
    """A verb in the present said of someone or something ("arrives", "she lands", "school starts"). Said with
    a date it tells what is scheduled, so that clause keeps its own tense ("ordered a bike, arrives friday")."""
    words = _WORD.findall(text.lower())
    for i, word in enumerate(words):
        if len(word) < 4 or word.endswith(("ss", "us", "is", "'s")) or is_adverb(word):
            continue
        if i and (words[i - 1] in _NOUN_AFTER or words[i - 1].isdigit()):
            continue
        bases = (word[:-1], word[:-2], word[:-3] + "y")
        if any(third_person(base) == word and looks_like_base_verb(base) for base in bases):
            return True
    return False
