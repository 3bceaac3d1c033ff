"""Person resolution: pronouns to names, so a memory reads on its own later.

"I moved to Berlin" said by Alex is "Alex moved to Berlin"; "my sister Maya" is "Alex's sister Maya";
"you" in a turn answering Sam is Sam. The verb after a replaced subject is put in the third person
("I have" -> "Alex has", "you don't" -> "Sam doesn't") so the sentence stays grammatical. "he" and
"she" are resolved only when exactly one person mentioned just before fits, and "it" only to a thing
named just before ("my dentist appointment") and only before something concrete ("It's next Tuesday");
otherwise they are left alone: a wrong name is worse than a pronoun.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from mnemoflow.memory.english.lexicon import ADDRESSED_KIN, MONTHS, WEEKDAYS, words
from mnemoflow.memory.english.tense import STATE_ED
from mnemoflow.memory.english.verbs import AUXILIARIES, IRREGULAR, PAST_FORMS, agree, is_adverb

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")  # letters of any script: "Zoë", "Łukasz"
# A quick test that `text` can name someone or something at all: a possessive, "adopted a", a capital
# after the first letter, "The ..." opening it, or a first word that reads as a subject ("Maya said ...").
_MAY_MENTION = re.compile(r"(?i:\b(?:my|our|your)\b|\b(?:adopted|got|have|has|had|rescued|bought|run|join|joined|lead|"
                          r"started|founded|in|of)\s+an?\b)|"
                          r"(?<=.)[A-Z]|^The\b|^[A-Z][a-z]+\s+(?:\w+s|\w+ed|is|was|had|said|told|just|will|can|and)\b",
                          re.S)
_FEMALE = words("coref.female")
_MALE = words("coref.male")
_NEUTRAL = words("coref.neutral")
# a role said right before a name introduces the person: "new starter Gemma is in on Monday"
_ROLES_BEFORE_NAMES = words("coref.roles_before_names")
# a group one belongs to: a later "we" of its member is the group ("I run a book club - we meet on Tuesdays")
_GROUPS = words("coref.groups")
_JOINING = words("coref.joining")
_RELATION_ADJ = words("coref.relation_adj")
# Words after which a "you" starts a clause (and so is its subject).
_CLAUSE_OPENERS = words("coref.clause_openers")
_PLACE_PREPOSITIONS = words("coref.place_prepositions")
_PREDICATE_OPENERS = words("coref.predicate_openers")
# Words that follow a possessive "her" ("her job") rarely follow an object "her" ("saw her today").
_AFTER_OBJECT = words("coref.after_object")
# "It" names a thing only before something concrete ("It's next Tuesday at 2:30pm", "It costs $40"),
# not in "It was so gratifying", where it stands for nothing.
_CONCRETE = re.compile(r"\d|\b(?:today|tomorrow|tonight|next|this|on|at|in|" + "|".join(WEEKDAYS) + "|"
                       + "|".join(m.lower() for m in MONTHS) + r")\b\s+\S*[\dA-Z]|\b(?:tomorrow|today|tonight)\b")
_SUBJECT_AUX = words("coref.subject_aux")
_INTRODUCING = words("coref.introducing")
_TITLES = {"grandma": "f", "granny": "f", "grandpa": "m", "aunt": "f", "auntie": "f", "uncle": "m", "mr": "m",
           "mrs": "f", "ms": "f", "miss": "f", "dr": None, "prof": None, "professor": None, "cousin": None}
_AUX_ONLY = re.compile(r"\s*(?:is|was|will be)?\s*")  # "it is" + the answer a follow-up adds after it
_IT_VERBS = words("coref.it_verbs")
# Words before a capitalised word that make it a place or a product, not a person ("to Lisbon", "using Go").
_BEFORE_PLACE = words("coref.before_place")
# the words a place's name starts with: "St Thomas'" or "The Arch" is no one "she" can be
_PLACE_TITLES = words("coref.place_titles")
# Words that end a noun phrase ("my flight to Paris", "my job is").
_NOT_NOUNS = _BEFORE_PLACE | _AFTER_OBJECT | AUXILIARIES | frozenset({
    "own", "very", "so", "which", "who", "that", "but", "or", "not", "can't", "won't", "don't", "isn't", "wasn't",
    "didn't", "doesn't", "i", "me", "you", "it", "he", "she", "we", "they", "without", "into", "over", "after"})
# Capitalised words that are not people even where a name could stand.
NOT_NAMES = frozenset({
    "i", "i'm", "i've", "i'll", "i'd", "the", "a", "an", "my", "your", "our", "his", "her", "their", "its", "we",
    "you", "he", "she", "they", "it", "this", "that", "these", "those", "there", "here", "what", "when", "where",
    "who", "why", "how", "which", "yes", "no", "yeah", "ok", "okay", "hi", "hey", "hello", "thanks", "thank",
    "oh", "wow", "well", "so", "and", "but", "or", "also", "just", "really", "today", "tomorrow", "yesterday",
    "tonight", "mom", "dad", "mum", "everyone", "everything", "someone", "something", "nothing", "nobody",
    "anyone", "anything", "please", "sure", "great", "nice", "cool", "good", "let", "let's", "if", "then",
    "maybe", "not", "never", "always", "all", "some", "any", "one", "both", "each", "every", "after", "before",
    "since", "because", "though", "in", "on", "at", "for", "to", "with", "from", "by", "as", "of", "about",
    "actually", "honestly", "anyway", "btw", "lol", "haha", "omg", "dear", "mr", "mrs", "ms", "dr", "st",
    "don't", "doesn't", "didn't", "can't", "won't", "isn't", "aren't", "wasn't", "haven't",
}) | AUXILIARIES | frozenset(WEEKDAYS) | frozenset(m.lower() for m in MONTHS)


_CLAUSE_BREAK = re.compile(r"[,;:]\s*|\s(?:and|but|so|because|while|whereas)\s", re.I)


@dataclass(frozen=True)
class Mention:
    """Someone a later "he"/"she" may refer to; `gender` is "f", "m" or None when unknown, and "n"
    for a thing a later "it" may refer to ("my dentist appointment"). A strong mention is surely a
    person, pet or that thing ("my sister", "a cat named Miso"); a weak one is any capitalised name."""

    name: str
    gender: str | None = None
    strong: bool = False


@dataclass(frozen=True)
class Rewrite:
    text: str
    first_person: bool = False  # "I"/"my"/"me" became the speaker
    plural_first_person: bool = False  # "we"/"our" folded into the speaker: less certain
    second_person: bool = False  # "you"/"your" became the addressee
    third_person: bool = False  # "he"/"she" resolved to a mention
    unresolved: bool = False  # a person pronoun left as written
    mentions: tuple[Mention, ...] = ()  # who a next sentence's "he"/"she" may mean: these, then the earlier


def possessive(name: str) -> str:
    return f"{name}'" if name.endswith("'") else f"{name}'s"


@lru_cache(maxsize=4096)  # each turn is read again as context for the turns after it
def find_mentions(text: str, speaker: str, addressee: str | None) -> tuple[Mention, ...]:
    """People named in `text`: "my sister Maya" (female), "my brother" (as "Alex's brother"), "Maya"."""
    if not _MAY_MENTION.search(text):
        return ()
    words = list(_WORD.finditer(text))
    found: list[Mention] = []
    skip_to = -1
    for i, m in enumerate(words):
        if i <= skip_to:
            continue
        low = m.group().lower()
        owner = {"my": speaker, "our": speaker, "your": addressee}.get(low)
        kin = words[i + 1].group().lower() if i + 1 < len(words) else ""
        if (low in {"his", "her", "their"} or (low.endswith("'s") and _name_at(words, i))) and \
                kin in _FEMALE | _MALE and (name := _name_at(words, i + 2)):
            # "her girlfriend Talia", "Omar's brother Idris": the relation says who a later "she"/"he" is
            found.append(Mention(name, "f" if kin in _FEMALE else "m", strong=True))
            skip_to = i + 2
            continue
        if owner:
            j = i + 1
            while j < len(words) and words[j].group().lower() in _RELATION_ADJ:
                j += 1
            relation = words[j].group().lower().removesuffix("'s") if j < len(words) else ""
            if relation in _FEMALE | _MALE | _NEUTRAL:
                gender = "f" if relation in _FEMALE else "m" if relation in _MALE else None
                name = _name_at(words, j + 1)
                named = None if name else _named_by_copula(words, j + 1)
                found.append(Mention(name or named or f"{possessive(owner)} {relation}", gender, strong=True))
                skip_to = j + (1 if name else 2 if named else 0)
            elif (thing := _noun_phrase(words, i + 1, text)):
                group = thing.split()[-1].lower() in _GROUPS  # "my band": a later "we" may be the band
                found.append(Mention(f"{possessive(owner)} {thing}", "g" if group else "n", strong=True))
            continue
        if low in _TITLES and (name := _name_at(words, i + 1)):  # "Grandma Edith", "Dr. Chen"
            found.append(Mention(f"{m.group()}{text[m.end():words[i + 1].start()]}{name}", _TITLES[low], strong=True))
            skip_to = i + 1
            continue
        introduced = i > 0 and words[i - 1].group().lower() in _INTRODUCING
        if low in {"a", "an"} and kin in _NEUTRAL | _FEMALE | _MALE and introduced:
            gender = "f" if kin in _FEMALE else "m" if kin in _MALE else None
            found.append(Mention(f"{possessive(speaker)} {kin}", gender, strong=True))  # "We adopted a dog!"
            continue
        if low in {"a", "an"} and i > 0 and words[i - 1].group().lower() in _JOINING and \
                (thing := _noun_phrase(words, i + 1, text)) and thing.split()[-1].lower() in _GROUPS:
            found.append(Mention(f"{possessive(speaker)} {thing}", "g", strong=True))  # "I run a little book club"
            continue
        if low == "the" and i == 0 and (thing := _noun_phrase(words, 1, text)):
            found.append(Mention(f"{m.group()} {thing}", "n", strong=True))  # "The design review ..."
            continue
        base = m.group().removesuffix("'s")
        if base[:1].isupper() and base.lower() in ADDRESSED_KIN:  # "Mum's hip op ..." / "I'll take her in": a name
            found.append(Mention(base, "f" if base.lower() in _FEMALE else "m"))
            continue
        name = _name_at(words, i)
        prev = words[i - 1].group().lower() if i else ""
        if name and m.group().endswith("'s") and (thing := _noun_phrase(words, i + 1, text)):
            found.append(Mention(f"{m.group()} {thing}", "n", strong=True))  # "Pickle's dose": a later "it"
        if not name or name in (speaker, addressee) or len(name) < 2:
            continue  # "buzzer 3B": a letter names no one
        j = i + 1
        while j < len(words) and _name_at(words, j) and text[words[j - 1].end():words[j].start()] == " ":
            j += 1  # "Scottish Fold", "Apple Store": one name
        skip_to = j - 1
        if prev in {"named", "called"} or prev in _NEUTRAL | _ROLES_BEFORE_NAMES:
            found.append(Mention(name, strong=True))  # "new starter Gemma", "my colleague Sam": introduced
        elif j == i + 1 and prev not in _BEFORE_PLACE and (i or _followed_by_verb(words, i)) and \
                not (prev in _PLACE_TITLES or i and words[i - 1].group() == "The"):  # "St Thomas'", "The Arch"
            found.append(Mention(name))
    return tuple(found)


def _noun_phrase(words: Sequence[re.Match[str]], i: int, text: str) -> str:
    """Up to three plain words after a possessive: "my dentist appointment" -> "dentist appointment"."""
    taken: list[str] = []
    while i < len(words) and len(taken) < 3:
        word = words[i].group()
        low = word.lower()
        if text[words[i - 1].end():words[i].start()] != " ":
            break  # "your 3rd movie": the phrase starts right after the possessive or not at all
        if not word.islower() or low in _NOT_NOUNS or low in PAST_FORMS or low.endswith(("ed", "ly")) or is_adverb(low):
            break
        if i + 1 < len(words) and words[i + 1].group().lower() in {"me", "us", "him", "them"}:
            break  # "the doctor put me on ...": a word before "me" is a verb
        taken.append(word)
        i += 1
    if taken and i + 1 < len(words) and words[i].group() in {"to", "for", "at", "in", "with"} \
            and words[i + 1].group()[:1].isupper() and words[i + 1].group().lower() not in NOT_NAMES:
        taken += [words[i].group(), words[i + 1].group()]  # "flight to Lisbon", "appointment with Dr"
    return " ".join(taken)


def _name_at(words: Sequence[re.Match[str]], i: int) -> str | None:
    """The capitalised word at `i` when it can be a person's name (not "The", not "NASA")."""
    if i >= len(words):
        return None
    word = words[i].group()
    base = word[:-2] if word.endswith("'s") else word
    if not base[:1].isupper() or base.lower() in NOT_NAMES or (base.isupper() and len(base) > 1):
        return None
    return base


def _named_by_copula(words: Sequence[re.Match[str]], i: int) -> str | None:
    """"(my new manager) is Tim": the relation is named by the copula, so a later "he" is Tim, not
    "Grace's manager". Only a bare name ending the phrase counts ("is Tim's brother" names another)."""
    if i + 1 >= len(words) or words[i].group().lower() not in {"is", "was"}:
        return None
    word = words[i + 1].group()
    if word.endswith("'s") or (i + 2 < len(words) and _name_at(words, i + 2)):
        return None
    return _name_at(words, i + 1)


def _followed_by_verb(words: Sequence[re.Match[str]], i: int) -> bool:
    if i + 1 >= len(words) or is_adverb(words[i].group()):
        return False
    nxt = words[i + 1].group().lower()
    if "'" in nxt:
        return False
    return (nxt in {"is", "was", "has", "had", "said", "says", "told", "and", "just", "will", "can"}
            or nxt in PAST_FORMS or (nxt.endswith(("s", "ed")) and len(nxt) > 3))


def rewrite_persons(text: str, speaker: str, addressee: str | None,
                    antecedents: Iterable[Mention] = ()) -> Rewrite:
    """Replace first-person words with `speaker`, second-person ones with `addressee` (None: keep
    them) and "he"/"she" with an antecedent when exactly one fits, fixing the verb after a subject."""
    words = list(_WORD.finditer(text))
    low = [m.group().lower() for m in words]
    out: dict[int, str] = {}
    flags = {"first": False, "plural": False, "second": False, "third": False, "unresolved": False}
    mentions = find_mentions(text, speaker, addressee)
    earlier = list(antecedents)

    def gap(a: int, b: int) -> str:
        return text[words[a].end():words[b].start()]

    def subject_verb(i: int) -> None:
        """Put the verb after the subject at `i` in the third person, skipping adverbs."""
        j = i + 1
        while j < len(words) and gap(j - 1, j).strip() == "" and is_adverb(low[j]) and j + 1 < len(words):
            j += 1
        if j < len(words) and gap(j - 1, j).strip() == "" and (form := agree(low[j])):
            out[j] = form
            # "I live in Leeds and teach chemistry": a verb right after "and" shares the subject
            k = next((k for k in range(j + 1, len(words)) if low[k] == "and" and gap(k - 1, k).strip() in ("", ",")), None)
            if k is not None and k + 1 < len(words) and (also := agree(low[k + 1])) and (
                    low[k + 1] in IRREGULAR or second_predicate(k, j)):
                out[k + 1] = also

    def second_predicate(k: int, j: int) -> bool:
        """Whether the word after the "and" at `k` opens a second predicate of the verb at `j`'s subject
        rather than naming a second thing: the first predicate ended in a place or a name ("live in Oslo and
        work at a bakery"), and a preposition or determiner follows the word, as after a verb ("work at",
        "run a"); "have a cat and dog at home" names two things."""
        ended = any(low[x] in _PLACE_PREPOSITIONS for x in range(j + 1, k)) or words[k - 1].group()[:1].isupper()
        return ended and k + 2 < len(words) and low[k + 2] in _PREDICATE_OPENERS

    def compound(i: int) -> bool:
        """"Maya and I" / "my wife and I" take a plural verb: leave it."""
        if i + 1 < len(words) and low[i + 1] == "and" and gap(i, i + 1).strip() == "":
            return True
        if i < 2 or low[i - 1] not in {"and", "or"} or "," in gap(i - 2, i - 1):
            return False
        if i >= 3 and low[i - 3] in {"my", "our", "your", "his", "her", "the"}:
            return True
        name = words[i - 2].group()
        return name[0].isupper() and not name.isupper() and (i == 2 or clause_start(i - 2))

    def said(name: str, i: int) -> bool:
        """Whether `name` is written before word `i` in its clause (as said, or put in for a pronoun): a
        possessive after it is a pronoun again ("Omar builds all their frontends", never "all Omar's
        frontends"); one that opens a clause of its own names its owner ("..., and Hannah's doctor is ...")."""
        start = max((m.end() for m in _CLAUSE_BREAK.finditer(text, 0, words[i].start())), default=0)
        pattern = rf"(?<!\w){re.escape(name)}(?!\w)"
        return bool(re.search(pattern, text[start:words[i].start()])) or any(
            re.search(pattern, out[j]) for j in out if start <= words[j].start() < words[i].start())

    def clause_start(i: int) -> bool:
        return i == 0 or bool(re.search(r"[,;:.!?(\-]", gap(i - 1, i))) or low[i - 1] in _CLAUSE_OPENERS

    for i, m in enumerate(words):
        if i in out:
            continue
        word, w = m.group(), low[i]
        nxt = low[i + 1] if i + 1 < len(words) else ""
        if w == "i" and (word == "I" or not text.startswith(".", m.end())):
            out[i] = speaker
            flags["first"] = True
            if not compound(i):
                subject_verb(i)
        elif w in {"i'm", "i've", "i'll", "i'd"}:
            out[i] = f"{speaker} {_contracted(w, low, i)}"
            flags["first"] = True
        elif w in {"me", "myself"}:  # a reflexive after the name, like a possessive: never "Alex treated Alex"
            out[i] = "themselves" if w == "myself" and said(speaker, i) else speaker
            flags["first"] = True
        elif w in {"my", "mine"}:
            out[i] = possessive(speaker) if not said(speaker, i) else "their" if w == "my" else "theirs"
            flags["first"] = True
        elif w == "we" and clause_start(i) and not compound(i) and (group := _resolve("g", [
                x for x in (*mentions, *(earlier if i else earlier[:1])) if x.gender == "g"])):
            out[i] = group  # "I run a book club - we meet on Tuesdays": the club meets
            flags["third"] = True
            subject_verb(i)
        elif w == "we" or w in {"we're", "we've", "we'll", "we'd"}:
            out[i] = speaker if w == "we" else f"{speaker} {_contracted(w, low, i)}"
            flags["plural"] = True
            if i + 1 < len(words) and low[i + 1] in {"all", "both"}:
                out[i + 1] = ""  # "we both love" -> "Alex loves", not "Alex both loves"
            if w == "we" and not compound(i):
                subject_verb(i + 1 if out.get(i + 1) == "" else i)
        elif word in {"us", "ourselves"}:
            out[i] = "themselves" if word == "ourselves" and said(speaker, i) else speaker
            flags["plural"] = True
        elif w in {"our", "ours"}:
            out[i] = possessive(speaker) if not said(speaker, i) else "their" if w == "our" else "theirs"
            flags["plural"] = True
        elif w in {"you", "you're", "you've", "you'll", "you'd", "your", "yours", "yourself", "yourselves"}:
            if addressee is None:
                flags["unresolved"] = True
                continue
            flags["second"] = True
            if w in {"your", "yours"}:
                out[i] = possessive(addressee) if not said(addressee, i) else "their" if w == "your" else "theirs"
            elif w == "you" and i + 1 < len(words) and gap(i, i + 1).strip() == "" and (
                    clause_start(i) or low[i + 1] in _SUBJECT_AUX):  # "the projects you are working on"
                out[i] = addressee
                subject_verb(i)
            elif w in {"you", "yourself", "yourselves"}:
                out[i] = addressee
            else:
                out[i] = f"{addressee} {_contracted(w, low, i)}"
        elif w in {"it", "it's"} and clause_start(i) and (w == "it's" or nxt in _IT_VERBS) \
                and (_CONCRETE.search(text, m.end()) or _AUX_ONLY.fullmatch(text, m.end())):
            name = _resolve("n", earlier)  # "It's next Tuesday" after "my dentist appointment"
            if name:
                out[i] = name if w == "it" else f"{name} {_aux_of_s(nxt)}"
                flags["third"] = True
        elif w in {"he", "she", "him", "his", "her", "hers", "himself", "herself", "he's", "she's"}:
            gender = "f" if w.startswith(("she", "her")) else "m"
            local = [x for x in mentions if _position(text, x.name) < m.start()]
            name = _resolve(gender, local) if _fits(gender, local) else _resolve(gender, earlier)
            if name is None:
                flags["unresolved"] = True
                continue
            flags["third"] = True
            if w in {"he's", "she's"}:
                out[i] = f"{name} {_aux_of_s(nxt)}"
            elif w in {"his", "hers"} or (w == "her" and nxt and nxt not in _AFTER_OBJECT
                                           and gap(i, i + 1).strip() == ""):
                if not said(name, i):  # "Zoë moved; her flat ...", not "Zoë loves Zoë's flat"
                    out[i] = possessive(name)
            elif w in {"himself", "herself"} and i and words[i - 1].group() == name.split()[-1]:
                out[i] = ""  # "Theo himself can't have dairy": Theo can't
            else:
                out[i] = name
    pieces, cursor = [], 0
    for i, m in enumerate(words):
        if i in out:
            pieces += [text[cursor:m.start()], _keep_case(m.group(), out[i], i == 0)]
            cursor = m.end()
            if not out[i]:  # a dropped word takes its following space along
                cursor += len(text[cursor:]) - len(text[cursor:].lstrip(" "))
    pieces.append(text[cursor:])
    recent = tuple(dict.fromkeys(mentions + tuple(earlier)))[:8]
    return Rewrite("".join(pieces), flags["first"], flags["plural"], flags["second"], flags["third"],
                   flags["unresolved"], recent)


def _aux_of_s(nxt: str) -> str:
    """"she's called Biscuit", "he's based in Leeds": a state, so the 's is "is"; "she's finished" is "has"."""
    return "has" if nxt not in STATE_ED and (nxt in PAST_FORMS or nxt.endswith("ed")) else "is"


def _contracted(word: str, low: Sequence[str], i: int) -> str:
    """The auxiliary in "I'm", "we've", "you'd": 'd is "had" before a participle, else "would"."""
    suffix = word.split("'")[1]
    if suffix == "d":
        nxt = next((w for w in low[i + 1:] if not is_adverb(w)), "")
        return "had" if nxt in PAST_FORMS or nxt.endswith("ed") else "would"
    return {"m": "is", "re": "is", "ve": "has", "ll": "will"}[suffix]


def _position(text: str, name: str) -> int:
    found = text.find(name)
    return found if found >= 0 else len(text)


def _fits(gender: str, pool: Sequence[Mention]) -> list[Mention]:
    return [x for x in pool if x.gender in ((gender,) if gender == "n" else (gender, None))]


def _resolve(gender: str, pool: Sequence[Mention]) -> str | None:
    """The one mention that fits: of the right gender, else the one strong mention, else the one
    weak one; two candidates at the same level are ambiguous and resolve to nothing."""
    fits = _fits(gender, pool)
    for level in ([x for x in fits if x.gender == gender], [x for x in fits if x.strong], fits):
        names = list(dict.fromkeys(x.name for x in level))
        if names:
            return names[0] if len(names) == 1 else None
    return None


def _keep_case(original: str, replacement: str, first: bool) -> str:
    if first and original[0].isupper() and replacement:
        return replacement[0].upper() + replacement[1:]
    return replacement
