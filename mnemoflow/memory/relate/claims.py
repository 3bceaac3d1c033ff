"""A memory's content read as a claim, without a model: who says it, what it is about, which typed
values it asserts, what it negates, and whether it announces a change.

`relations.classify` compares two claims with these parts. Everything here is deterministic string
work over one sentence-sized text (memory contents are short, self-contained and written in the
third person, see eval/scenarios/README.md):

- attribution: "Kofi says ...", "The airline app says ...", "According to Ana, ..." -> `source`
- the main clause: the text before "because", "which", ", so", ", including", ... -> `main`
- names (capitalised, CamelCase, ALLCAPS, `package.json`), with an optional version ("React 18.2")
- typed values: dates ("June 14, 2024", "fall 2022", "end of 2025"), clock times, money, percents,
  quantities with their unit ("20 mg", "two children"), versions, and closed-class values whose
  members exclude each other (diet, relationship status)
- content stems: lowercased, lightly stemmed, stopwords and light verbs removed
- negation scope ("not", "n't", "never", "no", "no longer": the words up to the next comma or "and")
- change markers ("now", "moved to", "switched to", "no longer", "instead", "anymore", ...)
- modality: a completed past event, a plan or goal, or neither
- the main verb, which splits the subject from the predicate

The tokens and typed values are read in `claim_values`, the word lists and the stemmer kept in
`claim_words`; this module assembles the `Claim`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from mnemoflow.memory.english.temporal import ANY_DATE_WORD
from mnemoflow.memory.english.verbs import is_adverb
from mnemoflow.memory.relate.claim_values import (
    Token,
    Value,
    _context,
    _is_content_word,
    _mark_dates,
    _mark_names,
    _mark_values,
    _role_of,
    device_at,
    tokenize,
)
from mnemoflow.memory.relate.claim_words import (
    AUXILIARIES,
    CLEARED,
    EXCLUSIVE_CLASSES,
    IRREGULAR_PAST,
    MEASURE_UNITS,
    STRONG_CHANGE,
    TIME_UNITS,
    WEAK_CHANGE,
    WEEKDAYS,
    stem,
)

_STRONG_RE = re.compile(r"\b(?:" + "|".join(STRONG_CHANGE) + r")\b", re.I)
_WEAK_RE = re.compile(r"\b(?:" + "|".join(WEAK_CHANGE) + r")\b", re.I)
# "for about a month now", "for years now": how long something has held, not a change to it
_HOW_LONG = re.compile(rf"\bfor\s+(?:[\w-]+\s+){{0,3}}?(?:{'|'.join(TIME_UNITS)}|while|ages)s?\s+now\b", re.I)
_PLAN_RE = re.compile(
    r"\b(?:plans? to|planning to|planned|intends? to|aims?(?: for| to)?|aiming|hopes? to|wants? to|"
    r"would like|will|going to|goal|target|scheduled|upcoming)\b", re.I)
_ATTRIBUTION_VERBS = (r"says|said|say|claims|claimed|thinks|thought|believes|believed|reports|reported|"
                      r"lists|listed|mentions|mentioned|states|stated|insists|insisted|confirms|confirmed|"
                      r"told \w+")
_ATTRIBUTION_RE = re.compile(
    r"^(?P<src>(?:[\w.&'\-]+\s+){0,5}?[\w.&'\-]+)\s+(?:" + _ATTRIBUTION_VERBS + r")(?:\s+that)?\s+(?P<body>.+)$",
    re.S)
_ARRIVED_AND_SAYS_RE = re.compile(
    r"^(?P<src>(?:[\w.&'\-]+\s+){0,4}?[\w.&'\-]+)\s+(?:\w+\s+){0,3}?(?:and|,)\s+(?:it|they)\s+"
    r"(?:" + _ATTRIBUTION_VERBS + r")(?:\s+that)?\s+(?P<body>.+)$", re.S)
_ACCORDING_RE = re.compile(r"^according to (?P<src>[^,]+),\s*(?P<body>.+)$", re.I | re.S)
_CLAUSE_CUT_RE = re.compile(
    r"(?:,?\s+because\b|,?\s+since\b|,\s*so\b|\s+so that\b|,?\s+which\b|,\s*who\b|,?\s+although\b|"
    r",?\s+though\b|,?\s+but\b|,?\s+whereas\b|,\s*including\b|;|:\s|"
    r"\s+so (?=the|that|we|they|he|she|it|i|you|his|her|their)\b|"
    r",\s+(?=(?:it|he|she|they|we)(?:'s|'re| is| are| was| were)\b)|"
    r",\s+(?=(?-i:[A-Z])\w+ (?:is|are|was|were)\b))", re.I)
_VERB_FOLLOWERS = frozenset({"on", "at", "in", "to", "for", "from", "with", "a", "an", "the", "its", "his",
                             "her", "their", "every", "about", "into", "up", "out", "by"})
_PREPOSITIONS = frozenset({"in", "at", "to", "from", "with", "by", "for", "on", "near", "of", "into", "via"})
_MODALS = frozenset({"will", "would", "can", "could", "should", "shall", "may", "might", "must"})
_NEGATORS = frozenset({"not", "never", "no", "nor", "cannot"})
_SCOPE_ENDS = frozenset({"and", "but", "or", "while", "whereas", "because", "so"})  # conjunctions end a negation
# verbs that end what their object names: "dropped VS Code", "quit smoking", "left Shopify"
_LEAVING = frozenset({"dropped", "dumped", "quit", "ditched", "abandoned"})
# ... said in two words and a preposition: "gave up on the pixel", "got rid of the sofa"
_LEAVING_PHRASES = frozenset({("gave", "up", "on"), ("given", "up", "on"), ("got", "rid", "of"), ("gone", "off", ""),
                              ("went", "off", ""), ("used", "to", "")})
# ... and those that end it when it is named: "left Shopify", "sold the Octavia", "cancelled Ladlebox"
_LEAVING_NAMED = frozenset({"left", "sold", "closed", "escaped", "offloaded", "cancelled", "canceled", "scrapped", "binned"})
# "I'm used to the cold": a state, not a past habit
_USED_TO_STATE = frozenset({"be", "am", "is", "are", "was", "were", "get", "got", "getting", "been", "'m", "'re", "'s"})
_DETERMINERS = frozenset({"the", "my", "our", "his", "her", "their", "your"})


@dataclass(frozen=True)
class Claim:
    text: str
    source: str | None
    body: str
    main: str
    names: frozenset[str]  # name keys in the whole body (and the source)
    main_names: frozenset[str]
    stems: frozenset[str]  # content stems of the body (no stopwords, no names, no values)
    main_stems: frozenset[str]
    values: tuple[Value, ...]  # values of the main clause
    all_values: tuple[Value, ...]  # values of the whole text
    subject: str | None  # the first name of the subject span, else its first content stem
    subject_head: str | None  # "flight" in "Priya's flight"
    subject_anchors: frozenset[str]
    predicate_anchors: frozenset[str]  # names and stems after the main verb (main clause)
    negated: frozenset[str]  # names and stems under a negator
    positive: frozenset[str]
    change: str | None  # "strong" or "weak"
    change_text: str | None
    modality: str  # past, plan, present
    copula: bool  # the main verb is "is/are/was" with a nominal or prepositional predicate
    verb_stem: str | None  # the main verb's stem, unless it is an auxiliary
    subject_stems: frozenset[str]  # content stems of the subject span ("return", "fly")
    source_stems: frozenset[str] = field(default=frozenset())
    source_names: frozenset[str] = field(default=frozenset())

    @property
    def anchors(self) -> frozenset[str]:
        """What the claim is about: names and content stems, without units of time."""
        return self.names | frozenset(s for s in self.stems if s not in TIME_UNITS and s not in MEASURE_UNITS)

    @property
    def anchors_with_source(self) -> frozenset[str]:
        return self.anchors | self.source_names | frozenset(s for s in self.source_stems if s not in TIME_UNITS)


def _split_attribution(text: str) -> tuple[str | None, str, str]:
    """(normalised source or None, the attributed statement, the attribution prefix)."""
    stripped = text.strip().rstrip(".")
    # "According to Ana, ..."; "Lin's offer letter just arrived and it says $135,000": the letter is the source
    for pattern in (_ACCORDING_RE, _ARRIVED_AND_SAYS_RE):
        if match := pattern.match(stripped):
            return _norm_source(match.group("src")), match.group("body"), stripped[: match.start("body")]
    match = _ATTRIBUTION_RE.match(stripped)
    if match:
        src_words = match.group("src").lower().split()
        body = match.group("body")
        # "Tim reports to Rosa" is a reporting line, not an attribution; a source is a noun phrase
        if body.lower().startswith(("to ", "on ", "in ", "for ", "about ")) or any(
                w in AUXILIARIES or w in ("and", "or", "who", "which") for w in src_words):
            return None, stripped, ""
        return _norm_source(match.group("src")), body, stripped[: match.start("body")]
    return None, stripped, ""


def _norm_source(src: str) -> str:
    words = [w for w in re.findall(r"[\w.&'\-]+", src.lower()) if w not in ("the", "a", "an")]
    return " ".join(words)


# "..., the newsletter is at 5,500 now", "... so the Slate's retired": a second statement with a subject of its own
# "the engineer rang, he's pushed me back to Friday": the news after who brought it
_SPLICE_RE = re.compile(r"(?:,|\s+so)\s+(?=[Tt]he\s+(?:(?:[a-z]+\s+){1,2}?(?:is|are|was|were|has|have|had)\b|"
                        r"[A-Z][\w-]*(?:'s\b|\s+(?:is|was|has)\b))|(?:he|she|they|we)(?:'s|'ve|'re|\s+(?:has|have))\s)|"
                        r"(?:(?<=\bcalled)|(?<=\brang)|(?<=\bphoned)|(?<=\bemailed)|(?<=\btexted)),\s+")  # "the office called, I'm now ..."


_NEGATED_BEFORE = re.compile(r"(?:\b(?:not|never|no)|n't)\s+(?:[\w']+\s+){0,2}$", re.I)


def _no_change(body: str, match: re.Match[str]) -> bool:
    """A change marker that changes nothing: under a negator ("won't quit", "never gave up", "not much has
    changed"; the markers that carry their own negation, "no longer", "anymore", are what they say), or a
    "push"/"bump" whose "to" has no date word or number after it: an infinitive ("pushed Caroline to keep
    fighting"), since they move a time or an amount."""
    if not re.match(r"no\b|not\b|any", match.group(), re.I) and _NEGATED_BEFORE.search(body[:match.start()]):
        return True
    return bool(re.match(r"(?:push|bump)\w*\b.*\bto$", match.group(), re.I)) and \
        not ANY_DATE_WORD.search(" ".join(body[match.end():].split()[:4]))


def _changed_in(text: str) -> bool:
    return bool(_STRONG_RE.search(text) or _WEAK_RE.search(text))


def main_clause(body: str) -> str:
    match = _CLAUSE_CUT_RE.search(body)
    return body[: match.start()].strip() if match and match.start() > 0 else body.strip()


@dataclass
class _Parsed:
    tokens: list[Token]
    values: list[Value]
    names: list[tuple[str, int, int]]


def _parse(text: str) -> _Parsed:
    tokens = tokenize(text)
    values: list[Value] = []
    _mark_dates(tokens, values)
    names = _mark_names(tokens, values)
    _mark_values(tokens, values)
    # contexts, roles, exclusive classes
    spans: dict[int, list[int]] = {}
    for idx, value in enumerate(values):
        positions = [k for k, t in enumerate(tokens) if t.role in ("date", "value") and t.group == idx]
        if value.type == "version":
            key = value.key[0]  # type: ignore[index]
            positions = [k for (nk, a, b) in names if nk == key for k in range(a, b + 1)]
        if positions:
            spans[idx] = positions
    out: list[Value] = []
    for idx, value in enumerate(values):
        pos = spans.get(idx)
        if not pos:
            out.append(value)
            continue
        lo, hi = min(pos), max(pos)
        ctx = _context(tokens, lo, hi)
        role = _role_of(tokens, lo, hi) if value.type == "money" else None
        out.append(Value(value.type, value.key, value.text, value.unit, role, ctx))
    for key, a, b in names:
        lead = noun = ""
        if a > 0 and tokens[a - 1].lower in _PREPOSITIONS:
            lead = tokens[a - 1].lower
        elif a > 1 and tokens[a - 1].lower == "the" and tokens[a - 2].lower in _PREPOSITIONS:
            lead = tokens[a - 2].lower  # "at the Red Lion"
        elif a > 1 and _is_content_word(tokens[a - 1]) and tokens[a - 2].lower in _PREPOSITIONS:
            lead, noun = tokens[a - 2].lower, stem(tokens[a - 1].lower)  # "in room Orion"
        out.append(Value("name", key, " ".join(t.text for t in tokens[a:b + 1]), context=_context(tokens, a, b),
                         lead=lead, noun=noun))
    for k, t in enumerate(tokens):
        day = t.lower[:-1] if t.lower.endswith("s") else t.lower
        if t.kind == "word" and not t.role and day in WEEKDAYS and t.text[0].isupper():
            out.append(Value("weekday", day, t.text, context=_context(tokens, k, k)))
    for k, t in enumerate(tokens):
        if t.kind == "word" and not t.role:
            for cls, members in EXCLUSIVE_CLASSES.items():
                if t.lower in members:
                    out.append(Value(cls, t.lower, t.text, context=_context(tokens, k, k)))
        if t.kind == "word" and (cls := device_at(tokens, k)) and not (  # "Pixel 6a", "an iphone 15": any role
                k + 1 < len(tokens) and device_at(tokens, k + 1) == cls):  # "Kia Niro": the model
            out.append(Value(cls, t.lower, t.text, context=_context(tokens, k, k)))
    return _Parsed(tokens, out, names)


def _ends_what_follows(tokens: list[Token], i: int) -> bool:
    """"dropped VS Code", "left Shopify", "sold the Octavia", "cancelled the gym membership", "gave up on the
    pixel" (not "left knee", "left for Lisbon", "left the office", "sold out")."""
    low = tokens[i].lower
    if low in _LEAVING or i >= 2 and (tokens[i - 2].lower, tokens[i - 1].lower, low) in _LEAVING_PHRASES:
        return True
    if i >= 1 and (tokens[i - 1].lower, low, "") in _LEAVING_PHRASES:  # "gone off coffee", "used to love running"
        return tokens[i - 2].lower not in _USED_TO_STATE if low == "to" and i >= 2 else True
    determiner = i + 2 < len(tokens) and tokens[i + 1].lower in _DETERMINERS
    j = i + 2 if determiner else i + 1
    if low not in _LEAVING_NAMED or j >= len(tokens):
        return False
    return tokens[j].role == "name" or determiner and low != "left" and _is_content_word(tokens[j])


def _negation_scope(tokens: list[Token]) -> list[bool | None]:
    """For each token, whether a negator before it in its clause ("not", "n't", "never", "dropped")
    has it in scope; None for the words that open a scope or end one (a comma, a semicolon, a
    conjunction)."""
    scope: list[bool | None] = []
    in_scope = False
    for i, t in enumerate(tokens):
        if t.kind == "punct" and t.text in ",;:." or t.lower in _SCOPE_ENDS:
            in_scope, marker = False, True
        else:
            marker = t.lower in _NEGATORS or t.lower.endswith("n't") or _ends_what_follows(tokens, i)
            in_scope = in_scope or marker
        scope.append(None if marker else in_scope)
    return scope


def _negation_split(tokens: list[Token]) -> tuple[set[str], set[str]]:
    negated: set[str] = set()
    positive: set[str] = set()
    for t, in_scope in zip(tokens, _negation_scope(tokens), strict=True):
        item = _item(t) if in_scope is not None else None
        if item is not None:
            (negated if in_scope else positive).add(item)
    return negated, positive


def _item(t: Token) -> str | None:
    if t.role == "name":
        return None  # names are added per group by the caller
    if _is_content_word(t):
        return stem(t.lower)
    return None


def _main_verb(tokens: list[Token]) -> int | None:
    """Index of the main verb: the first auxiliary, past form, or '-s' verb right after a name."""
    for k, t in enumerate(tokens):
        if k > 12:
            break
        if t.kind != "word" or t.role in ("date", "value"):
            continue
        low = t.lower
        if low in AUXILIARIES or low in IRREGULAR_PAST:
            return k
        if t.role == "name" or t.possessive:
            continue
        if low.endswith("ed") and len(low) > 4 and k > 0 or low == "used" and k > 0 and \
                k + 1 < len(tokens) and tokens[k + 1].lower == "to":  # "Ana's partner used to be vegan"
            return k
        if low.endswith("s") and not low.endswith(("ss", "is", "us", "ous", "ics")) and k > 0:
            back = k - 1
            while back > 0 and is_adverb(tokens[back].lower):
                back -= 1
            prev = tokens[back]
            nxt = tokens[k + 1] if k + 1 < len(tokens) else None
            if prev.role == "name" and not prev.possessive:
                return k
            if _is_content_word(prev) and back > 0 and tokens[back - 1].role == "name" and tokens[back - 1].possessive:
                return k  # "Marek's car needs ..."
            if _is_content_word(prev) and nxt is not None and (
                    nxt.lower in _VERB_FOLLOWERS or nxt.role in ("date", "value", "name")):
                return k
        if _PLAN_RE.fullmatch(low) and k > 0:
            return k
        if k >= 2 and _plural_owned(tokens[k - 2], tokens[k - 1]) and k + 1 < len(tokens) and (
                tokens[k + 1].lower in _VERB_FOLLOWERS or tokens[k + 1].role in ("date", "value", "name")):
            return k  # "Zoltan's parents live in ...", "Aroha's kids attend Ponsonby Primary"
    return None


def _plural_owned(owner: Token, noun: Token) -> bool:
    """"Zoltan's parents": a plural noun right after its possessive owner, whose verb takes no '-s'."""
    low = noun.lower
    return owner.role == "name" and owner.possessive and noun.role != "name" and _is_content_word(noun) and \
        low.endswith("s") and not low.endswith(("ss", "is", "us", "ous", "ics"))


def parse_claim(text: str) -> Claim:
    """Read one memory's content. Pure and cached per text."""
    return _parse_claim_cached(text)


# "Tariq's rule: don't suggest peanuts": how the rule engine writes a rule; the claim is after the colon
_RULE_PREFIX_RE = re.compile(r"^[\w.\-]+(?: [\w.\-]+)?'s rule:\s+(?=\S)")


_LABEL_RE = re.compile(r"^(?P<label>[^:,.!?]{1,40}(?:, [^:,.!?]{1,30})?):\s+(?P<rest>\S.*)$", re.S)


def _without_label(text: str) -> str:
    """"New quarter, new time: standup is at 10:00" -> the statement after the label; "Mei: dentist on
    May 2" (a note without a verb) -> "Mei's dentist on May 2". A prefix with its own verb ("Hassan
    has drug allergies: penicillin") is no label."""
    match = _LABEL_RE.match(text)
    if not match:
        return text
    label, rest = match.group("label"), match.group("rest")
    label_tokens = tokenize(label)
    if len(label_tokens) > 6 or _main_verb(label_tokens) is not None:
        return text
    if _main_verb(tokenize(rest)) is not None:
        return rest
    names = _mark_names(label_tokens, [])
    if len(names) == 1 and names[0][1] == 0 and names[0][2] == len(label_tokens) - 1:
        return f"{label}'s {rest}"
    return text


@lru_cache(maxsize=4096)
def _parse_claim_cached(text: str) -> Claim:
    text = _without_label(_RULE_PREFIX_RE.sub("", text))
    source, body, prefix = _split_attribution(text)
    main = main_clause(body)
    if (splice := _SPLICE_RE.search(body)) and _changed_in(body[splice.end():]) and not _changed_in(body[:splice.start()]):
        main = main_clause(body[splice.end():])  # "The shoutout worked, the newsletter is at 5,500 now": the change
    whole = _parse(body)
    head = _parse(main)
    source_parsed = _parse(prefix) if source else None

    def names_of(p: _Parsed) -> frozenset[str]:
        return frozenset(k for k, _, _ in p.names)

    def stems_of(p: _Parsed) -> frozenset[str]:
        return frozenset(stem(t.lower) for t in p.tokens if _is_content_word(t))

    names = names_of(whole)
    stems = stems_of(whole)
    # values: the main clause; when the body is only a value ("... letter says $135,000"), use the
    # whole text so that the value's context includes the source's words
    full = _parse(text)
    main_values = tuple(head.values)
    if source and len([t for t in head.tokens if _is_content_word(t) or t.role == "name"]) == 0:
        main_values = tuple(v for v in full.values if v.type != "name" or v.key not in (
            names_of(source_parsed) if source_parsed else frozenset()))
    # subject and predicate, on the main clause
    verb = _main_verb(head.tokens)
    subject_tokens = head.tokens[:verb] if verb is not None else head.tokens[:3]
    subject = subject_head = None
    subject_names = [head.names[t.group][0] for t in subject_tokens if t.role == "name"]
    subject_stems = [stem(t.lower) for t in subject_tokens if _is_content_word(t)]
    owners = [head.names[t.group][0] for t in subject_tokens if t.role == "name" and t.possessive]
    if subject_names:
        # "Ana's sister Carla", "Tobias's daughter Lumi's bedtime": the last person named is the subject
        subject = subject_names[-1] if _appositive(subject_tokens) else owners[-1] if len(owners) > 1 else \
            subject_names[0]
        subject_head = None if _appositive(subject_tokens) else _possessed_head(subject_tokens)
    elif subject_stems:
        subject = subject_stems[-1] if verb is not None else subject_stems[0]
    subject_anchors = frozenset(subject_names) | frozenset(subject_stems)
    predicate_anchors: frozenset[str] = frozenset()
    if verb is not None:
        start = verb + 1
        if start < len(head.tokens) and head.tokens[start].kind == "word" and (
                head.tokens[verb].lower in AUXILIARIES and head.tokens[start].lower.endswith(("ing", "ed"))
                or head.tokens[verb].lower in _MODALS and not head.tokens[start].role):
            start += 1  # "is running the Berlin Marathon", "will start at Riverside"
        after = head.tokens[start:]
        predicate_anchors = frozenset(
            {head.names[t.group][0] for t in after if t.role == "name"}
            | {stem(t.lower) for t in after if _is_content_word(t) and stem(t.lower) not in TIME_UNITS})
    negated, positive = _negation_split(whole.tokens)
    for key, a, _ in whole.names:
        if _name_negated(whole.tokens, a):
            negated.add(key)
        else:
            positive.add(key)
    change_text = None
    change = None
    match = next((m for m in _STRONG_RE.finditer(body) if not _no_change(body, m)), None)
    if match:
        change, change_text = "strong", match.group().lower()
    else:
        match = _WEAK_RE.search(_HOW_LONG.sub("", body))
        if match:
            change, change_text = "weak", match.group().lower()
    return Claim(
        text=text, source=source, body=body, main=main, names=names, main_names=names_of(head),
        stems=stems, main_stems=stems_of(head), values=main_values, all_values=tuple(full.values),
        subject=subject, subject_head=subject_head, subject_anchors=subject_anchors,
        predicate_anchors=predicate_anchors, negated=frozenset(negated), positive=frozenset(positive),
        change=change, change_text=change_text, modality=_modality(head.tokens, verb),
        copula=_copula(head.tokens, verb),
        verb_stem=(stem(head.tokens[verb].lower) if verb is not None and head.tokens[verb].lower not in AUXILIARIES
                   else None),
        subject_stems=frozenset(subject_stems),
        source_stems=stems_of(source_parsed) if source_parsed else frozenset(),
        source_names=names_of(source_parsed) if source_parsed else frozenset(),
    )


def _possessed_head(subject_tokens: list[Token]) -> str | None:
    """"Victor's favourite color" -> "color", "Marta's recovery from knee surgery" -> "recovery", the thing of
    the last owner named."""
    owners = [k for k, t in enumerate(subject_tokens) if t.role == "name" and t.possessive]
    if not owners:
        return None
    start = owners[-1]  # "Tobias's daughter Lumi's bedtime" -> "bedtime"
    head = None
    for t in subject_tokens[start + 1:]:
        if _is_content_word(t):
            head = stem(t.lower)
        elif t.role in ("name", "value") and head is None:
            continue
        else:
            break
    return head


def _copula(tokens: list[Token], verb: int | None) -> bool:
    if verb is None or tokens[verb].lower not in ("is", "are", "was", "were"):
        return False
    nxt = tokens[verb + 1] if verb + 1 < len(tokens) else None
    return nxt is None or not (nxt.kind == "word" and not nxt.role and nxt.lower.endswith(("ing", "ed")))


def _appositive(subject_tokens: list[Token]) -> bool:
    """"Ana's sister Carla": the subject is the last name, after a possessive and a noun."""
    seq = "".join("N" if t.role == "name" and not t.possessive else "P" if t.role == "name" else
                  "w" if _is_content_word(t) else "s" for t in subject_tokens)
    return bool(re.search(r"Pw+N+s*$", seq.replace("NN", "N")))  # "Callum's sister Moira just got ..."


def _name_negated(tokens: list[Token], index: int) -> bool:
    """Under a negator, or cleared by what follows it: "Penicillin is fine, it's sulfa I react to"."""
    after = [t.lower for t in tokens[index:index + 6] if t.role != "name"][:2]
    if len(after) == 2 and after[0] in ("is", "'s", "are") and after[1] in CLEARED:
        return True
    return bool(_negation_scope(tokens)[index])


def _modality(tokens: list[Token], verb: int | None) -> str:
    text = " ".join(t.lower for t in tokens)
    if _PLAN_RE.search(text):
        return "plan"
    if verb is not None:
        low = tokens[verb].lower
        if low in ("was", "were", "did") or low in IRREGULAR_PAST and low not in ("had",) or \
                low.endswith("ed") and low not in AUXILIARIES:
            return "past"
    return "present"
