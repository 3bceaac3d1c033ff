"""English verb forms that pronoun and question rewriting need.

"I go" said by Alex becomes "Alex goes", and "did you go" becomes "you went". A closed table of
irregular verbs plus the regular spelling rules covers everyday conversation; a word that is not
clearly a present-tense verb is left as written, because a wrong inflection is worse than none.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# base -> (past, past participle)
IRREGULAR: dict[str, tuple[str, str]] = {
    "be": ("was", "been"), "become": ("became", "become"), "begin": ("began", "begun"),
    "bite": ("bit", "bitten"), "break": ("broke", "broken"), "bring": ("brought", "brought"),
    "build": ("built", "built"), "buy": ("bought", "bought"), "catch": ("caught", "caught"),
    "choose": ("chose", "chosen"), "come": ("came", "come"), "do": ("did", "done"),
    "draw": ("drew", "drawn"), "drink": ("drank", "drunk"), "drive": ("drove", "driven"),
    "eat": ("ate", "eaten"), "fall": ("fell", "fallen"), "feed": ("fed", "fed"), "feel": ("felt", "felt"),
    "fight": ("fought", "fought"), "find": ("found", "found"), "fly": ("flew", "flown"),
    "forget": ("forgot", "forgotten"), "get": ("got", "gotten"), "give": ("gave", "given"),
    "go": ("went", "gone"), "grow": ("grew", "grown"), "hang": ("hung", "hung"), "have": ("had", "had"),
    "hear": ("heard", "heard"), "hide": ("hid", "hidden"), "hold": ("held", "held"), "keep": ("kept", "kept"),
    "know": ("knew", "known"), "lead": ("led", "led"), "leave": ("left", "left"), "lend": ("lent", "lent"),
    "lose": ("lost", "lost"), "make": ("made", "made"), "mean": ("meant", "meant"), "meet": ("met", "met"),
    "pay": ("paid", "paid"), "ride": ("rode", "ridden"), "ring": ("rang", "rung"), "rise": ("rose", "risen"),
    "run": ("ran", "run"), "say": ("said", "said"), "see": ("saw", "seen"), "sell": ("sold", "sold"),
    "send": ("sent", "sent"), "shoot": ("shot", "shot"), "sing": ("sang", "sung"), "sit": ("sat", "sat"),
    "sleep": ("slept", "slept"), "speak": ("spoke", "spoken"), "spend": ("spent", "spent"),
    "stand": ("stood", "stood"), "steal": ("stole", "stolen"), "stick": ("stuck", "stuck"),
    "swim": ("swam", "swum"), "take": ("took", "taken"), "teach": ("taught", "taught"),
    "tear": ("tore", "torn"), "tell": ("told", "told"), "think": ("thought", "thought"),
    "throw": ("threw", "thrown"), "understand": ("understood", "understood"), "wake": ("woke", "woken"),
    "wear": ("wore", "worn"), "win": ("won", "won"), "write": ("wrote", "written"),
}
# Present and past look alike ("I quit my job"): narration is usually past, so they stay as written.
SAME_IN_PAST = frozenset({"bet", "cost", "cut", "hit", "hurt", "let", "put", "quit", "read", "set", "shut", "spread"})
PAST_FORMS = frozenset({p for p, _ in IRREGULAR.values()} | {pp for _, pp in IRREGULAR.values()}) - {"come", "run"}

# After a first- or second-person subject these change as well ("I am" -> "Alex is").
_AUX_THIRD_PERSON = {
    "am": "is", "are": "is", "were": "was", "have": "has", "do": "does", "don't": "doesn't",
    "aren't": "isn't", "weren't": "wasn't", "haven't": "hasn't", "ain't": "isn't", "wanna": "wants to",
    "gotta": "has to",
}
AUXILIARIES = frozenset({
    "am", "is", "are", "was", "were", "be", "been", "do", "does", "did", "have", "has", "had",
    "will", "would", "can", "could", "shall", "should", "may", "might", "must",
})
# (a contraction such as "didn't" is not alphabetic, so `looks_like_base_verb` turns it down first)
_UNCHANGED = AUXILIARIES | frozenset({"ought", "used", "cannot", "gotta", "gonna", "wanna"})
# Words that can sit between a subject and its verb without changing it ("I really love").
_ADVERBS = frozenset({
    "really", "also", "still", "just", "always", "never", "usually", "often", "sometimes", "actually",
    "definitely", "absolutely", "totally", "only", "mostly", "generally", "already", "finally",
    "probably", "even", "rarely", "seldom", "normally", "typically", "now", "currently", "literally",
    "kinda", "sorta", "no", "longer", "recently", "basically", "seriously", "truly", "certainly",
    "both", "all", "occasionally", "mainly", "barely", "hardly", "constantly", "regularly", "personally",
    "honestly", "sometime", "once", "twice", "ever", "almost", "nearly", "soon", "then", "last", "first",
})
_NOT_LY_ADVERBS = frozenset({"apply", "reply", "rely", "supply", "multiply", "comply", "imply", "fly", "ally"})
_ED_BASES = frozenset({"need", "feed", "bleed", "breed", "speed", "succeed", "proceed", "exceed", "embed",
                       "heed", "plead", "seed", "weed", "shred"})
_ING_BASES = frozenset({"bring", "sing", "ring", "sting", "swing", "cling", "fling", "string", "spring", "wring"})
# Function words that never follow a subject as its verb.
NOT_VERBS = frozenset({
    "a", "an", "the", "and", "or", "but", "to", "of", "in", "on", "at", "for", "with", "from", "by",
    "too", "as", "if", "so", "not", "that", "this", "who", "which", "myself", "yourself", "ourselves",
    "guys", "all", "both", "alone", "together", "there", "here", "again", "either", "neither",
})


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
