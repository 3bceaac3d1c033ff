"""English verb forms that pronoun and question rewriting need.

"I go" said by Alex becomes "Alex goes", and "did you go" becomes "you went". A closed table of
irregular verbs plus the regular spelling rules covers everyday conversation; a word that is not
clearly a present-tense verb is left as written, because a wrong inflection is worse than none.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mnemoflow.memory.english.lexicon import table, words

# base -> (past, past participle)
IRREGULAR: dict[str, tuple[str, str]] = {k: tuple(w) for k, w in table("verbs.irregular").items()}
# Present and past look alike ("I quit my job"): narration is usually past, so they stay as written.
SAME_IN_PAST = words("verbs.same_in_past")
PAST_FORMS = frozenset({p for p, _ in IRREGULAR.values()} | {pp for _, pp in IRREGULAR.values()}) - {"come", "run"}

# After a first- or second-person subject these change as well ("I am" -> "Alex is").
_AUX_THIRD_PERSON = table("verbs.aux_third_person")
AUXILIARIES = words("verbs.auxiliaries")
# (a contraction such as "didn't" is not alphabetic, so `looks_like_base_verb` turns it down first)
_UNCHANGED = AUXILIARIES | frozenset({"ought", "used", "cannot", "gotta", "gonna", "wanna"})
# Words that can sit between a subject and its verb without changing it ("I really love").
_ADVERBS = words("verbs.adverbs")
_NOT_LY_ADVERBS = words("verbs.not_ly_adverbs")
_ED_BASES = words("verbs.ed_bases")
_ING_BASES = words("verbs.ing_bases")
# Function words that never follow a subject as its verb.
NOT_VERBS = words("verbs.not_verbs")


def is_adverb(word: str) -> bool:
    low = word.lower()
    return low in _ADVERBS or (low.endswith("ly") and len(low) > 4 and low not in _NOT_LY_ADVERBS)


def third_person(verb: str) -> str:
    """The -s form of a base verb: go -> goes, study -> studies, have -> has."""
    special = {"be": "is", "have": "has", "do": "does", "go": "goes"}
    if verb in special:
        return special[verb]
    if re.search(r"(s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def past(verb: str) -> str:
    """The simple past of a base verb: go -> went, plan -> planned, move -> moved."""
    if verb in IRREGULAR:
        return IRREGULAR[verb][0]
    if verb in SAME_IN_PAST:
        return verb
    if verb.endswith("e"):
        return verb + "d"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ied"
    if re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", verb):
        return verb + verb[-1] + "ed"
    return verb + "ed"


_PREFIXES = ("re", "un", "over", "under", "out", "mis", "fore", "with")


def is_past(word: str) -> bool:
    """A simple past or participle: "went", "moved", "rewrote" (a prefix before a past form); not "need"."""
    low = word.lower()
    return low in PAST_FORMS or (low.endswith("ed") and len(low) > 3 and low not in _ED_BASES) or \
        any(low.startswith(p) and low[len(p):] in PAST_FORMS for p in _PREFIXES)


def looks_like_base_verb(word: str) -> bool:
    """True for a word that can be a present-tense verb right after "I"/"you"/"we"."""
    low = word.lower()
    if not low.isalpha() or low in NOT_VERBS or low in _UNCHANGED or low in SAME_IN_PAST:
        return False
    if is_past(low) and not low.endswith("ed"):
        return False  # "went", "rewrote", "overslept"
    if low.endswith("ed") and low not in _ED_BASES:
        return False
    if any(low.endswith(v) for v in SAME_IN_PAST):  # "misread", "reset", "upset": past as often as not
        return False
    return not (low.endswith("ing") and low not in _ING_BASES)


def agree(word: str) -> str | None:
    """The form `word` takes after a third-person singular subject, or None to leave it as is.

    Used for the verb right after a subject that was "I", "we" or "you": "am" -> "is",
    "don't" -> "doesn't", "love" -> "loves"; "went", "can", "moving" stay."""
    low = word.lower()
    if low in _AUX_THIRD_PERSON:
        return _AUX_THIRD_PERSON[low]
    if not looks_like_base_verb(low):
        return None
    return third_person(low)


# "my phone's a Vireo", "rent's going up", "Amara's coming", "Dev's got a van": the 's of a noun that is
# followed by what only a verb takes (a determiner, a preposition, a progressive, "been"/"got") is "is" or
# "has", not a possessive ("Maya's running shoes" keeps its 's: a noun follows the -ing word).
_NOT_A_NOUN = r"(?:let|it|that|what|who|where|how|there|here|he|she|one|everyone|everything|nothing|mine|yours|ours|theirs)"
_PROGRESSIVE_NEXT = (r"(?=\s+(?:a|an|the|to|up|down|out|in|on|at|for|from|with|back|over|off|home|his|her|their|my|"
                     r"our|this|that|[$€£\d])\b|\s*[,.!?;]|\s*$)")
# -ing words that are nouns, not progressives: "my sister's wedding in Porto", "Jo's meeting at 3"
_ING_NOUNS = (r"(?:wedding|meeting|building|morning|evening|ceiling|thing|ring|king|spring|string|clothing|booking|"
              r"housing|parking|training|funding|setting|painting|feeling|sibling|outing|pudding|icing|earring|"
              r"dumpling|wing|swing|bedding|filling|recording|reading|hearing|christening|screening|tasting|viewing)")
# ... unless the clause's verb comes a word or two later: "Biscuit's back leg is stiff" is a possessive
_IS_AFTER = re.compile(r"\b(?!" + _NOT_A_NOUN + r"'s\b)([A-Za-z][\w-]*)'s\s+(?=(?:a|an|the|on|in|at|now|still|just|"
                       r"not|due|from|every|always|never|back|up|down|off|over|about|around|finally|officially|already|definitely|"
                       r"probably|totally|completely|properly|[\w-]*[\d_][\w-]*(?=[#]?\s*(?:[,.;!?]|$|now\b|and\b))|(?!" + _ING_NOUNS
                       + r"\b)\w+ing" + _PROGRESSIVE_NEXT
                       + r")\b)(?![\w-]+(?:\s+[\w-]+)?\s+(?:is|are|was|were|has|had)\b)", re.I)
_HAS_AFTER = re.compile(r"\b(?!" + _NOT_A_NOUN + r"'s\b)([A-Za-z][\w-]*)'s\s+(?=(?:been|got)\b)", re.I)
# "he's pushed me back a week", "she's moved it": a pronoun's "has" before a participle and its object
_PRONOUN_HAS = re.compile(r"\b(he|she|it|who|that)'s\s+(?=(?:\w+ly\s+)?\w+ed\s+(?:me|us|him|her|them|it|the|my|our|a|an)\b)",
                          re.I)


# "going to my gran's in Kestlebury", "at Lavinia's on Friday": a place named by whose it is
_PLACE_BEFORE = re.compile(r"\b(?:to|at|from|near|round|around|by|past|towards?)\s+(?:(?:my|our|your|his|her|their|the)\s+)?$",
                           re.I)


def expand_is(text: str) -> str:
    """A noun's contracted "is"/"has" written out, so the sentence has its verb."""
    def written(verb: str) -> Callable[[re.Match[str]], str]:
        return lambda m: m.group() if _PLACE_BEFORE.search(m.string[:m.start()]) else f"{m[1]} {verb} "
    text = _PRONOUN_HAS.sub(lambda m: f"{m[1]} has ", text)
    return _IS_AFTER.sub(written("is"), _HAS_AFTER.sub(written("has"), text))
