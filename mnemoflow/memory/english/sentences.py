"""Chat text into sentences, and the conversational padding around what a sentence says.

A turn carries several statements ("Hey Sam! I moved to Berlin. My sister lives there too."), and
each is judged on its own. Leading discourse words ("Oh,", "So", "Btw") and a name said to the
listener ("..., Caroline!") carry nothing to remember and would stop a sentence from starting with
its subject, so they are removed; the words that matter are never touched.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from mnemoflow.memory.english.lexicon import (
    ABBREVIATIONS,
    CHAT_SPELLINGS,
    CONTRACTIONS_UNMARKED,
    MONTHS,
    WEEKDAYS,
)
from mnemoflow.memory.english.names import find_entities
from mnemoflow.memory.english.verbs import expand_is

_BOUNDARY = re.compile(r"(?:[.!?]+|\u2026)[\"')\]]*\s+|\s+[-\u2013\u2014]+\s+|\n+")
# An emoji, or a face typed as one ":(", ";)", ":D", ":-P", "<3" (a token of its own): read alike
_EMOJI = re.compile("(?:[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F\u200D]+"
                    r"|(?<!\S)(?:[:;=][-'^]?[()\[\]DPpO/\\|*3]+|<3+)(?!\S))")
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
_DISCOURSE = re.compile(
    r"^(?:(?:oh+|ooh+|ah+|aw+|well|so|yeah|yea|yes|yep|ok|okay|alright|(?:hey|hi|hello|hiya|howdy)(?: there)?|"
    r"hm+|um+|uh+|haha+|hah|lol|lmao|wow|"
    r"omg|btw|by the way|actually|honestly|anyway|anyways|also|plus|and|but|oh well|fun fact|guess what|great|"
    r"cool|nice|awesome|sure|totally|true|indeed|seriously|fyi|just so you know|for the records?|you know what|"
    r"for (?:future )?reference(?=\s*[,:;!.-]|\s+(?:my|our|the|his|her|their|i|we)\b)|"
    r"to be honest|tbh|oh man|man|dude|ugh|phew|yay|hooray|wait|whoa|woah|yikes|gosh|geez|jeez|aha|heads up|"
    r"(?:big|good|great|bad|exciting|some) news|(?:a )?(?:bit|piece) of (?:good |bad )?news|"
    r"(?:quick |small |little )?(?:life |work |personal )?update|[a-z]+ update(?=\s*[,:;!.-])|correction|"
    r"sorry|change of plans?|plot twist|will do|"
    r"(?:forget|ignore|scrap|scratch) (?:about )?(?:that|this|it|the \w+ (?:stuff|thing|bit))(?: q| question)?|"
    r"right(?=\s*,|\s+so\b)|(?:all|everyone|guys|folks|team)(?=\s*,)|done(?=\s*[,!])|"
    r"(?:quick |friendly |small )?reminder(?:\s+that)?|"
    r"it's official|plan of record|as usual|as always|(?:some )?background|quick one|ps|p\.s\.)"
    r"(?![\w'])[,!.:;\s-]*)+",
    re.I,
)
# "For the party planning, just so you know: ...": a short topic said before a discourse marker.
_LEAD_IN = re.compile(r"^(?:for|about|re|regarding|as for|speaking of)\s+[^,:;.!?]{1,40}?,\s*"
                      r"(?=(?:just so you know|fyi|heads up|for the records?|by the way|btw)\b)", re.I)
_TRAILING_FILLER = re.compile(r"[,;]?\s+(?:though|ha|ugh|obvs|obvi|if (?:that|it) (?:matters|helps|makes "
                              r"(?:any )?(?:sense|a difference)))\s*([.!?]*)$", re.I)
# Chat fillers and thanks that end a clause wherever it ends: "the code is 4471# btw, remember that", "..., ta"
_CLAUSE_FILLER = re.compile(r"[,;]?\s+(?:lol|lmao|rofl|haha+|hehe+|btw|tbh|fwiw|ngl|ta|thx|cheers)"
                             r"(?=\s*(?:[,;:.!?]|$))", re.I)
# A request to the listener after a statement: "..., keep dairy out of the plan", "..., remind my husband",
# "..., so examples in Python please". "remember/don't forget (that)" brings in a statement of its own.
_ASK = (r"(?:please\s+)?(?:keep|remind|book|schedule|send|tell|add|use|note|leave|skip|pick|plan)\b|"
        r"(?:remember|don't forget|do not forget|keep in mind)(?:\s+that)?\s+(?!to\b)|[^,;]*\bplease[.!]*$")
_REMINDER = re.compile(r"^(?:remember|don't forget|do not forget|keep in mind)(?:\s+that)?\s+(?!to\b)")
# "We've got a Kia Niro now, so how do I find chargers?": a question after a statement
_QUESTION = r"(?i:how|what|where|when|who|which|why|any|anything|do|does|did|is|are|can|should|would|will)\b[^.!]*\?$"
# "..., what could I post him for his birthday": a question asked without its mark, a wh-word before an
# auxiliary and its subject
_UNMARKED_QUESTION = (r"(?i:how|what|where|when|which|who|why)\s+(?i:can|could|should|would|do|does|did|will|shall)"
                      r"\s+(?i:I|we|you|he|she|they|it)\b[^.!?]*$")
# "..., Ben you do drinks too?": a question put to someone in the words of a statement
_YOU_QUESTION = r"(?:[A-Z][a-z]+,?\s+)?you\b[^.!]*\?$"
# "..., so chess has relocated to the library": a result with a subject of its own, a thing
_RESULT = re.compile(r"(?:the\s+)?(?:(?!(?:i|we|you|he|she|it|they|that|this|there|so|and|but|then)\b)[a-z]+\s+){1,3}?"
                     r"(?:has|have|is|are|will)\s+\w+ed\b|"
                     r"(?:they|we)(?:'ve|'re|\s+have|\s+are)\s+\w+ed\b(?=[^,.;]*(?:\d|\b[A-Z]))")  # "so they've bumped Mochi up to 3"
# "my cat got diagnosed last month, she's on 2 units twice a day": a second fact, with a number, of the one just named
_COUNTED_AFTER = re.compile(r",\s+(?=(?:she|he)(?:'s|\s+is|\s+has|\s+gets|\s+takes)\s+[^,.;]*\d)")
_CLAUSE_BREAK = re.compile(r";\s+|:\s+(?=\S)|"
                           r",\s+(?:and\s+|but\s+|so\s+)?(?=(?:(?:as usual|also|now|then|actually),?\s+)?"
                           r"(?:I|I'm|I've|I'll|I'd|we|we're|we've|my|our|can you|could you|please)\b|" + _ASK + "|"
                           + _QUESTION + "|" + _UNMARKED_QUESTION + "|" + _YOU_QUESTION + r")|"
                           r"(?<=[\w,])\s+and\s+(?=(?:I|I'm|I've|I'll|I'd|we|we're|we've|we'll|my|our)\s|"
                           r"(?:the|his|her|their)\s+(?:[\w-]+\s+){0,3}?(?:is|are|was|were|sits|lives|runs|stays|works|meets|"
                           r"[\w-]+'s)\s|"
                           r"[A-Z][a-z]+(?:\s+(?:him|her)self)?\s+(?:is|was|has|had|can|can't|could|couldn't|will|won't|"
                           r"does|doesn't|did|didn't|isn't|wasn't)\s)|"
                           r"(?:,\s+|(?<=\w)\s+)so\s+(?=" + _RESULT.pattern + ")|" + _COUNTED_AFTER.pattern)
_THING_ON_A_DAY = re.compile(rf"(?:the|my|our|his|her|their)\s.*\b(?:{'|'.join(WEEKDAYS + tuple(m.lower() for m in MONTHS))}|"
                             r"tomorrow)\b", re.I)
# A tail clause that points back into the sentence before it ("..., I deployed it there last week").
_REFERS_BACK = re.compile(r"\b(?:it|there|them)\b", re.I)
_POLAR_START = re.compile(r"^(?:yes|yeah|yep|no|nope|nah|not anymore|not really|sorry)\b[\s,.!]*", re.I)
_REQUEST_START = re.compile(r"^(?i:can you|could you|please)\b|^(?:" + _ASK + ")")
_SUBORDINATE_START = re.compile(r"^(?:even if|if|when|whenever|since|because|although|though|while|after|before|as|"
                                r"once|unless|until)\b", re.I)
_GREETED_NAME = re.compile(r"^(?i:hey|hi|hello|dear|hiya|thanks|thank you)\s+[A-Z][a-z]+\s*[,!:.]\s*")


# An emoji between two words ends the first statement: "Letter from the landlord today 🙃 rent's going up"
_EMOJI_BETWEEN = re.compile(r"(?<=\w)\s*" + _EMOJI.pattern + r"\s+(?=\w)")


# "tues and fri": a weekday written short is written out, so a memory and a query name the same day (only the
# short forms that are no other word: not "sat", "sun", "mon", "wed")
_DAY_SHORT = {"tue": "Tuesday", "tues": "Tuesday", "weds": "Wednesday", "thu": "Thursday", "thur": "Thursday",
              "thurs": "Thursday", "fri": "Friday"}
_DAY_SHORT_RE = re.compile(r"\b(?:tues?|weds|thu(?:rs?)?|fri)\b\.?", re.I)
# "mon-thu", "Mon–Fri": in a range every short form is a day ("Monday to Thursday")
_ANY_SHORT = r"(?:mon|tues?|wed|weds|thu(?:rs?)?|fri|sat|sun)"
_DAY_RANGE_RE = re.compile(rf"\b({_ANY_SHORT})\s*[-\u2013]\s*({_ANY_SHORT})\b", re.I)
_DAY_FULL = {**_DAY_SHORT, **{day[:3]: day.capitalize() for day in WEEKDAYS}}
# "sat 22nd", "wed 5 june": before a day of the month every short form is a day ("sat" is no past of "sit")
_DAY_BEFORE_DATE = re.compile(r"\b(mon|wed|sat|sun)\.?(?=\s+(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?\b)", re.I)
_MAY_AFTER_DAY = re.compile(r"(?:(?<=\b\d\d )|(?<=\b\d )|(?<=\d(?:st|nd|rd|th) ))may\b"  # "17 may": the month, not "can"
                            r"(?=\s*(?:[.,;:!?)-]|$|\d|(?:at|for|and|in|on|from|to)\b))")


_DOTTED = re.compile(r"(?:[a-z]\.)+[a-z]")  # "d.c", "u.k": letters with periods
# "half nine", "quarter past ten", "quarter to eight": a time of day told in words is written as one
_HOURS = {w: n for n, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split(), 1)}
_CLOCK_WORDS = re.compile(rf"\b(?<!\ba )(?P<part>half|quarter past|quarter to)\s+(?P<hour>{'|'.join(_HOURS)}|1[0-2]|[1-9])\b"
                          r"(?!\s+(?:of|an?|the|hours?|days?|weeks?|months?|years?)\b)", re.I)


def _clock(m: re.Match[str]) -> str:
    hour = _HOURS.get(m["hour"].lower()) or int(m["hour"])
    part = m["part"].lower()
    if part == "quarter to":
        return f"{hour - 1 or 12}:45"
    return f"{hour}:{'30' if part == 'half' else '15'}"


# a chat spelling is a whole word in lower case (or capitalised at a sentence's start): not part of a code
# ("u-boat", "IM", "BRT-77Q4KX")
_CHAT_WORD = re.compile(r"(?<![\w'\-/.])(?:" + "|".join(sorted({*CONTRACTIONS_UNMARKED, *CHAT_SPELLINGS}, key=len,
                        reverse=True)) + r")(?![\w\-/]|'(?!s\b))", re.I)


def _word_written_out(m: re.Match[str]) -> str:
    word = m.group()
    if word != word.lower() and (word != word.capitalize() or len(word) == 1):
        return word
    lower = word.lower()
    out = CONTRACTIONS_UNMARKED.get(lower) or CHAT_SPELLINGS[lower]
    return out[0].upper() + out[1:] if word[0].isupper() else out


# "its 3 small meals now", "its not ready": "its" before a word no noun follows a possessive with is "it's"
_ITS_IS = re.compile(r"\b([Ii])ts(?=\s+(?:\d|a|an|the|not|been|gonna|going|all|just|so|too|very|really|fine|ok|okay|"
                     r"now|still|only|over|done|on|off|at|in|from|for)\b)")


@lru_cache(maxsize=4096)
def written_out(text: str) -> str:
    """`text` with its chat spellings written out: "im out tmrw, can u move it" -> "I'm out tomorrow, can you
    move it", so every rule reads one spelling of each word. Cached: each turn is read again as context."""
    return _ITS_IS.sub(r"\1t's", _CHAT_WORD.sub(_word_written_out, text))


def _normalize(text: str) -> str:
    """Straight quotes, no emoji (one between words ends a sentence), chat spellings written out ("im", "cant",
    "u", "pls"), weekdays written out, times of day in words written as a clock shows them, single spaces."""
    text = _EMOJI_BETWEEN.sub("\n", text.translate(_QUOTES))
    text = written_out(text)
    text = _CLOCK_WORDS.sub(_clock, text)
    text = _DAY_RANGE_RE.sub(lambda m: f"{_DAY_FULL[m[1].lower()]} to {_DAY_FULL[m[2].lower()]}", text)
    text = _MAY_AFTER_DAY.sub("May", _DAY_BEFORE_DATE.sub(lambda m: _DAY_FULL[m[1].lower()], text))
    text = _DAY_SHORT_RE.sub(lambda m: _DAY_SHORT[m.group().rstrip(".").lower()], text)
    return re.sub(r"[ \t]+", " ", _EMOJI.sub(" ", text)).strip()


def split_sentences(text: str) -> list[str]:
    """Sentences of a chat turn, each with its end punctuation; "Dr." and "v2.1" do not end one."""
    text = _normalize(text)
    sentences, start = [], 0
    for m in _BOUNDARY.finditer(text):
        before = text[start:m.start()].split()
        last = before[-1].lower().rstrip(".") if before else ""
        numbered = len(before) == 1 and last.isdigit()  # "1." opening a list item
        initial = len(last) == 1 and last.isalpha() or bool(_DOTTED.fullmatch(last))  # "J. K. Rowling", "D.C."
        street = last == "st" and len(before) > 1 and before[-2][:1].isupper()  # "on Harbour St. any tips?"
        if m.group().strip().startswith(".") and (last in ABBREVIATIONS and not street or initial or numbered):
            continue
        inside = text[start:m.start()]
        if ")" in m.group() and inside.count("(") > inside.count(")"):
            continue  # "Ember & Oak (my candle shop!) goes live": an aside, not a sentence
        piece = text[start:m.end()].strip()
        if piece.strip("-\u2013\u2014 "):
            sentences.append(piece.rstrip("-\u2013\u2014 ").strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return [" ".join(s.split()) for s in sentences if re.search(r"\w", s)]


def split_clauses(sentence: str, is_clause: Callable[[str], bool]) -> list[str]:
    """A sentence that joins units of different standing, split: a contrast ("Yes, but we're moving"), a
    request after a statement ("I'm going to Japan, can you find a ryokan?"), a statement after a
    fragment ("Not anymore, I joined Anthropic"), two facts joined by "and", each with its own subject and
    something named ("I live in Hamburg and I work at Zalando"). Two statements on one topic stay one
    memory ("I don't eat meat, I'm vegetarian"), as does a clause whose "it"/"there" points back into the
    one before ("billing runs on the old cluster, I deployed it there"); a sentence opening with
    "if"/"since"/"when" stays whole. A request to the listener after a statement is its own unit ("I'm
    vegan, keep that in mind"), as is "remember (that) ..." after one; a verbless fragment before
    "remember" only says when the reminder matters ("Catering again next week, remember I eat vegan")
    and is left out."""
    if _SUBORDINATE_START.match(sentence):
        return [sentence]
    units = [sentence]
    for m in reversed(list(_CLAUSE_BREAK.finditer(sentence))):
        head, tail = units[0][:m.start()].strip(), units[0][m.end():].strip()
        if not (head and tail):
            continue
        contrast = ";" in m.group() or "but" in m.group()
        if ":" in m.group():  # "can you keep this for me: the router is at 192.168.8.1": what to keep, alone
            if _REQUEST_START.match(head) and is_clause(tail):
                units[0:1] = [tail]
            continue
        if _REMINDER.match(tail) and not is_clause(head) and not re.search(r"\d", head):
            units[0:1] = [tail]  # "Catering again next week, remember I eat vegan": the fragment is the occasion
        elif contrast or _REQUEST_START.match(tail) or (_REQUEST_START.match(head) and is_clause(tail)) \
                or any(re.match(q, tail) for q in (_QUESTION, _UNMARKED_QUESTION, _YOU_QUESTION)):
            units[0:1] = [head, tail]
        elif _REFERS_BACK.search(tail) and len(_POLAR_START.sub("", head).split()) >= 4:
            continue  # the tail needs the head to be understood
        elif m.group().strip(", ") == "so" and _RESULT.match(tail) and _said_as_clause(head, is_clause):
            units[0:1] = [head, tail]  # "the pub got sold, so chess has relocated to the library": the result
        elif _COUNTED_AFTER.match(m.group() + tail) and _said_as_clause(head, is_clause) and is_clause(tail):
            units[0:1] = [head, tail]
        elif "and" in m.group() and _said_as_clause(head, is_clause) and is_clause(tail):
            if find_entities(tail) or re.search(r"\d", tail) or _THING_ON_A_DAY.match(tail):
                # "and I'm deciding by Friday" leans on the head; "and my first parkrun is the Saturday after next" does not
                units[0:1] = [head, tail]
        elif m.group().strip() != "and" and not is_clause(head):
            units[0:1] = [head, tail]
    return units


def _said_as_clause(text: str, is_clause: Callable[[str], bool]) -> bool:
    """A clause as said, or once a noun's 's is written out ("firmware's on 3.14": firmware is on)."""
    return is_clause(text) or is_clause(expand_is(text))


def strip_padding(sentence: str, names: Iterable[str] = ()) -> str:
    """Without leading discourse words or a name said to the listener; `sentence` if nothing is left.

    A vocative is a known name or its short form ("Mel" for Melanie), or any capitalised word right
    after a greeting ("Hey Caroline, ..."); a name elsewhere is content and stays."""
    vocatives = _vocatives(tuple(names))
    text = sentence.strip()
    while True:
        stripped = _DISCOURSE.sub("", _LEAD_IN.sub("", _GREETED_NAME.sub("", text)))
        if vocatives:
            stripped = vocatives[0].sub("", stripped)
        if stripped == text or not re.search(r"\w", stripped):
            break
        text = stripped
    text = vocatives[1].sub("", text) if vocatives else text
    return _TRAILING_FILLER.sub(r"\1", _CLAUSE_FILLER.sub("", text))


def is_padding(sentence: str) -> bool:
    """Whether `sentence` is discourse words alone ("bit of news", "update:", "ok so"): nothing to keep."""
    return not re.search(r"\w", _DISCOURSE.sub("", sentence.strip()))


@lru_cache(maxsize=256)
def _vocatives(names: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str]] | None:
    """Patterns for the names and their short forms said to the listener, at the start and at the end."""
    forms = {n for name in names if name for n in (name, name.split()[0])}
    forms |= {f[:k] for f in list(forms) for k in (3, 4) if len(f) > k + 1 and f[:1].isupper()}
    if not forms:
        return None
    alternation = "|".join(sorted((re.escape(f) for f in forms), key=len, reverse=True))
    return re.compile(rf"^(?:{alternation})\b\s*[,!:]\s*"), re.compile(rf",\s*(?:{alternation})\s*(?=[.!?]*$)")
