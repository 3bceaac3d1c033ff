"""A claim's tokens and the typed values marked on them: dates ("June 14, 2024", "fall 2022"), clock
times, money, percents, quantities with their unit, versions, closed-class values (diet, relationship
status) and names, each with the role the words around it give it ("budget", "rent").

Separate from `claims` (which assembles a whole `Claim`: attribution, main clause, negation, verb)
because values are a self-contained step that `relate/revalue.py` and `relate/moved.py` also read."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mnemoflow.memory.english.lexicon import (
    ABBREVIATIONS,
    DEVICE_CLASSES,
    MONTH_ABBREVIATIONS,
    MONTH_NUMBERS,
    NAME_CONNECTORS,
    SEASONS,
)
from mnemoflow.memory.relate.claim_words import (
    AMOUNT_ROLES,
    NOT_NAMES,
    NUMBER_WORDS,
    ORDINALS,
    STOPWORDS,
    TIME_UNITS,
    TITLES,
    WEEKDAYS,
    stem,
)

_TOKEN_RE = re.compile(
    r"(?P<money>[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn|million|billion|thousand)\b)?)"
    r"|(?P<percent>\d+(?:\.\d+)?\s?%)"
    r"|(?P<time>\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?|\d{1,2}\s?[ap]\.?m\.?(?![a-z]))"
    r"|(?P<isodate>\d{4}-\d{2}-\d{2})"
    r"|(?P<yearrange>(?:19|20)\d\d-(?:19|20)\d\d)"
    r"|(?P<ident>[\w.+-]+@[\w-]+(?:\.[\w-]+)+|https?://[^\s,;]+[^\s,;.!?)]|\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?(?!\.?\d)"
    r"|\d+(?:-[\dA-Z]+)+)"
    r"|(?P<number>\d+(?:[.,]\d+)*(?:st|nd|rd|th)?(?:-[a-z]+)*)"
    r"|(?P<word>`[^`]+`|[^\W\d_][\w&+#]*(?:[.'\-][\w&+#]+)*(?:'s|’s|')?\.?)"  # letters of any script: "Ørsted"
    r"|(?P<punct>[^\s\w])",
    re.U)


@dataclass(frozen=True)
class DateValue:
    year: int | None = None
    month: int | None = None
    day: int | None = None
    season: str | None = None
    part: str | None = None  # early / mid / late / end

    def compatible(self, other: DateValue) -> bool:
        """One refines the other: 'PyCon 2023' and 'April 22, 2023'; 'fall 2022' and 'October 2022'."""
        for a, b in ((self.year, other.year), (self.month, other.month), (self.day, other.day)):
            if a is not None and b is not None and a != b:
                return False
        if self.season and other.season and self.season != other.season:
            return SEASONS.get(self.season) == SEASONS.get(other.season)
        for season, month in ((self.season, other.month), (other.season, self.month)):
            if season and month and month not in SEASONS[season]:
                return False
        return True


@dataclass(frozen=True)
class Value:
    """A typed value in a claim. `key` compares exactly; `unit` (quantities) and `role` (amounts)
    say which slot it fills; `context` are the content stems around it in its clause."""

    type: str  # date, time, money, percent, quantity, version, name, <exclusive class>
    key: object
    text: str
    unit: str | None = None
    role: str | None = None
    context: frozenset[str] = frozenset()
    lead: str = ""  # names: the preposition right before ("at" Stripe, "in" Denver), else ""
    noun: str = ""  # names: the common noun between that preposition and the name ("in room Orion")

    def compatible(self, other: Value) -> bool:
        if self.type != other.type:
            return False
        if self.type == "date":
            return self.key.compatible(other.key)  # type: ignore[union-attr]
        if self.type == "version":
            a, b = str(self.key[1]), str(other.key[1])  # type: ignore[index]
            return a == b or a.startswith(b + ".") or b.startswith(a + ".")
        if self.type == "name":
            a, b = str(self.key), str(other.key)
            return a == b or a in b.split() or b in a.split()
        return self.key == other.key


# ---------------------------------------------------------------------------------------------
# tokens


@dataclass
class Token:
    text: str
    kind: str  # word, number, money, percent, time, isodate, punct
    lower: str = ""
    possessive: bool = False
    role: str = ""  # name, date, value, or "" for ordinary words
    group: int = -1  # index of the name or value this token belongs to

    def __post_init__(self) -> None:
        text = self.text
        if self.kind == "word" and text.endswith(".") and text.lower()[:-1] not in ABBREVIATIONS:
            text = text[:-1]
        if self.kind == "word" and text.endswith(("'s", "’s")):
            self.possessive, text = True, text[:-2]
        elif self.kind == "word" and text.endswith("'") and text[:-1].endswith("s"):
            self.possessive, text = True, text[:-1]
        self.text = text.strip("`")
        self.lower = self.text.lower()


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    for match in _TOKEN_RE.finditer(text):
        kind = match.lastgroup or "punct"
        tokens.append(Token(match.group(), "number" if kind == "yearrange" else kind))
    return tokens


def _is_name_like(token: Token, first: bool) -> bool:
    if token.kind != "word" or not token.text:
        return False
    t = token.text
    low = token.lower.rstrip(".")
    if low in WEEKDAYS or low in MONTH_NUMBERS or (low.rstrip("s") in WEEKDAYS):
        return False
    if t[0].isupper():
        if first and (low in NOT_NAMES or low in AMOUNT_ROLES):  # "Rent is going up": a word, capitalised
            return False
        return low not in NOT_NAMES or len(t) > 1 and t.isupper()
    if any(c.isupper() for c in t[1:]):  # iPhone
        return True
    if any(c.isdigit() for c in t) and any(c.isalpha() for c in t):  # tulip99, gr20: identifiers
        return True
    return bool(re.fullmatch(r"[a-z][a-z0-9_-]*\.[a-z0-9]+", t))  # package.json


def _name_key(parts: list[str]) -> str:
    words = [p.lower().rstrip(".") for p in parts]
    while len(words) > 1 and words[0] in TITLES:
        words = words[1:]
    key = " ".join(words)
    if len(parts) == 1 and len(parts[0]) > 2 and parts[0][:-1].isupper() and parts[0].endswith("s"):
        key = key[:-1]  # PRs -> pr
    return key


def _mark_dates(tokens: list[Token], values: list[Value]) -> None:
    """Find dates and tag their tokens (role 'date')."""
    n = len(tokens)
    i = 0
    while i < n:
        tok = tokens[i]
        start = i
        low = tok.lower
        part = None
        if low in ("early", "mid", "late") and i + 1 < n:
            part, i = low, i + 1
        elif low == "end" and i + 2 < n and tokens[i + 1].lower == "of":
            part, i = "end", i + 2
        elif low == "the" and i + 3 < n and tokens[i + 1].lower in ("end", "start", "beginning") \
                and tokens[i + 2].lower == "of":
            part, i = tokens[i + 1].lower, i + 3
        t = tokens[i]
        date: DateValue | None = None
        end = i
        if t.kind == "isodate":
            y, m, d = (int(x) for x in t.text.split("-"))
            date, end = DateValue(y, m, d, part=part), i
        elif t.kind == "word" and (
                t.lower in MONTH_NUMBERS and t.text[0].isupper()
                or t.lower.rstrip(".") in MONTH_ABBREVIATIONS and i + 1 < n and tokens[i + 1].kind == "number"):
            month = MONTH_NUMBERS.get(t.lower) or MONTH_ABBREVIATIONS[t.lower.rstrip(".")]
            day = year = None
            end = i
            if i + 1 < n and tokens[i + 1].kind == "number":
                num = int(re.match(r"\d+", tokens[i + 1].text).group())
                if 1 <= num <= 31 and not re.fullmatch(r"\d{4}", tokens[i + 1].text):
                    day, end = num, i + 1
                elif re.fullmatch(r"(19|20)\d\d", tokens[i + 1].text):
                    year, end = num, i + 1
            if day is not None:
                j = end + 1
                if j < n and tokens[j].text == ",":
                    j += 1
                if j < n and re.fullmatch(r"(19|20)\d\d", tokens[j].text):
                    year, end = int(tokens[j].text), j
            if t.lower == "may" and day is None and year is None and part is None:
                date = None  # the modal verb
            else:
                date = DateValue(year, month, day, part=part)
        elif t.kind == "number" and re.fullmatch(r"\d{1,2}(st|nd|rd|th)?", t.text) and i + 1 < n and \
                tokens[i + 1].lower in MONTH_NUMBERS and tokens[i + 1].text[0].isupper():
            day = int(re.match(r"\d+", t.text).group())
            end, year = i + 1, None
            if end + 1 < n and re.fullmatch(r"(19|20)\d\d", tokens[end + 1].text):
                year, end = int(tokens[end + 1].text), end + 1
            date = DateValue(year, MONTH_NUMBERS[tokens[i + 1].lower], day, part=part)
        elif t.kind == "word" and t.lower in SEASONS:
            j = i + 1
            if j < n and tokens[j].lower == "of":
                j += 1
            if j < n and re.match(r"(19|20)\d\d", tokens[j].text):
                year = int(tokens[j].text[:4])
                date, end = DateValue(year, season=t.lower, part=part), j
        elif t.kind == "number" and re.fullmatch(r"(19|20)\d\d(?:-(?:19|20)\d\d)?", t.text):
            prev = tokens[i - 1].lower if i > 0 else ""
            if part or prev in ("in", "since", "by", "until", "from", "before", "after", "during", "of",
                                "through", "to", "till") or i == 0:
                date, end = DateValue(int(t.text[:4]), part=part), i
        if date is None:
            i = start + 1
            continue
        group = len(values)
        for k in range(start, end + 1):
            tokens[k].role, tokens[k].group = "date", group
        values.append(Value("date", date, " ".join(x.text for x in tokens[start:end + 1])))
        i = end + 1


def _money_key(text: str) -> tuple[str, float]:
    currency = text[0]
    amount = text[1:].strip().lower()
    mult = 1.0
    for suffix, m in (("million", 1e6), ("billion", 1e9), ("thousand", 1e3), ("bn", 1e9), ("k", 1e3), ("m", 1e6)):
        if amount.endswith(suffix):
            amount, mult = amount[: -len(suffix)].strip(), m
            break
    return currency, round(float(amount.replace(",", "")) * mult, 2)


def _time_key(text: str) -> int:
    low = text.lower().replace(".", "").replace(" ", "")
    pm, am = low.endswith("pm"), low.endswith("am")
    low = low.rstrip("apm")
    hours, _, minutes = low.partition(":")
    h, m = int(hours), int(minutes or 0)
    if pm and h < 12:
        h += 12
    if am and h == 12:
        h = 0
    return h * 60 + m


_DEVICE_OF = {member: cls for cls, members in DEVICE_CLASSES.items() for member in members}


def device_at(tokens: list[Token], k: int) -> str | None:
    """The kind of device token `k` names ("phone" for "Pixel"), when it is written as a product line: a name
    ("Golf", "iPhone"), a model ("ev6"), a word with its number after it ("iphone 15", "galaxy s23"), after a
    model year or beside its make ("2012 civic", "honda jazz"); "plays golf", "a polo shirt", "into jazz" are
    the words, not the cars."""
    kind = _DEVICE_OF.get(tokens[k].lower)
    if kind is None:
        return None
    text, before, after = tokens[k].text, tokens[k - 1].text if k else "", tokens[k + 1].text if k + 1 < len(tokens) else ""
    as_model = text[:1].isupper() or any(c.isupper() or c.isdigit() for c in text[1:]) or \
        any(c.isdigit() for c in after) or re.fullmatch(r"(?:19|20)\d\d", before) is not None or \
        kind in (_DEVICE_OF.get(before.lower()), _DEVICE_OF.get(after.lower()))  # "iphone 15", "2012 honda civic"
    return kind if as_model else None


def _is_content_word(tok: Token) -> bool:
    return tok.kind == "word" and not tok.role and tok.lower not in STOPWORDS and tok.lower not in NOT_NAMES \
        and not tok.lower.endswith(("n't", "n’t")) and tok.lower != "cannot" \
        and stem(tok.lower) not in STOPWORDS and len(tok.lower) > 1


def _mark_values(tokens: list[Token], values: list[Value]) -> None:
    n = len(tokens)
    for i, tok in enumerate(tokens):
        if tok.role:
            continue
        if tok.kind == "ident":  # 555-0132, 22-CV-1043
            tok.role, tok.group = "value", len(values)
            values.append(Value("identifier", tok.text.upper(), tok.text))
        elif tok.kind == "money":
            tok.role, tok.group = "value", len(values)
            values.append(Value("money", _money_key(tok.text.replace(" ", "")), tok.text))
        elif tok.kind == "percent":
            tok.role, tok.group = "value", len(values)
            values.append(Value("percent", float(tok.text.rstrip("% ")), tok.text))
        elif tok.kind == "time":
            tok.role, tok.group = "value", len(values)
            values.append(Value("time", _time_key(tok.text), tok.text))
        elif tok.kind == "word" and tok.lower in ORDINALS and i + 1 < n and _is_content_word(tokens[i + 1]) \
                and not _is_name_like(tokens[i + 1], False):
            tok.role, tok.group = "value", len(values)
            values.append(Value("ordinal", ORDINALS[tok.lower], tok.text, unit=stem(tokens[i + 1].lower)))
        elif tok.kind == "number" and re.fullmatch(r"\d+(?:\.\d+)+", tok.text) and i > 0 and \
                tokens[i - 1].kind == "word" and not tokens[i - 1].role and tokens[i - 1].lower not in STOPWORDS and \
                not (i + 1 < n and _is_content_word(tokens[i + 1])):
            # "lists react 18.2": a dotted version after a lower-case name, as package files write it
            tok.role, tok.group = "value", len(values)
            values.append(Value("version", (tokens[i - 1].lower, tok.text), f"{tokens[i - 1].text} {tok.text}"))
        elif tok.kind == "number" and re.fullmatch(r"\d{1,2}", tok.text) and int(tok.text) <= 24 and i > 0 \
                and tokens[i - 1].lower == "at" and not (i + 1 < n and _is_content_word(tokens[i + 1])):
            # "is now at 10": an hour said without minutes, compared with "at 9:30" as a clock time
            tok.role, tok.group = "value", len(values)
            values.append(Value("time", int(tok.text) * 60, tok.text))
        elif tok.kind == "number" or tok.kind == "word" and tok.lower.split("-")[0] in NUMBER_WORDS:
            head, *rest = tok.lower.split("-")
            if tok.kind == "word":
                number = float(NUMBER_WORDS[head])
                if not rest and not (i + 1 < n and _is_content_word(tokens[i + 1])):
                    continue  # "one of the two", "turned one": not a quantity
            else:
                digits = re.match(r"\d+(?:[.,]\d+)*", head)
                if not digits or not re.fullmatch(r"\d{1,3}(?:,\d{3})*(?:\.\d+)?|\d+(?:\.\d+)?", digits.group()):
                    continue  # an address, a dotted code or a version ("192.168.1.47"): a token, not a quantity
                number = float(digits.group().replace(",", ""))
            unit = None
            if rest:
                unit = stem(rest[0])
            elif _age_at(tokens, i):
                unit = AGE
            elif i + 1 < n and _is_content_word(tokens[i + 1]) and not _is_name_like(tokens[i + 1], False):
                unit = stem(tokens[i + 1].lower)
            tok.role, tok.group = "value", len(values)
            values.append(Value("quantity", number, tok.text, unit=unit))


AGE = "age"
_AGE_BEFORE = frozenset({"is", "am", "'s", "was", "turned", "turns", "turning"})


def _age_at(tokens: list[Token], i: int) -> bool:
    """"Ana is 34", "turned 35 yesterday", "is 35 years old": a person's age, whatever words say it."""
    after = [t.lower for t in tokens[i + 1:i + 3]]
    if after[:2] in (["years", "old"], ["year", "old"], ["yrs", "old"]):
        return True
    bare = not (i + 1 < len(tokens) and _is_content_word(tokens[i + 1]))
    if not (bare and i > 0 and tokens[i - 1].lower in _AGE_BEFORE):
        return False
    said = tokens[i].text
    return tokens[i].kind != "number" or said.isdigit() and int(said) < 125  # not "is 40,000", "is 60th"


def _mark_names(tokens: list[Token], values: list[Value]) -> list[tuple[str, int, int]]:
    """Names as (key, first token, last token); a version number right after a name is kept with it."""
    names: list[tuple[str, int, int]] = []
    n = len(tokens)
    i = 0
    sentence_start = True
    while i < n:
        tok = tokens[i]
        if tok.role or not _is_name_like(tok, sentence_start):
            sentence_start = tok.kind == "punct" and tok.text in ".!?"
            i += 1
            continue
        sentence_start = False
        parts, j = [tok.text], i + 1
        while j < n and not tokens[j - 1].possessive and not tokens[j].role:
            nxt = tokens[j]
            if _is_name_like(nxt, False) and nxt.kind == "word":
                parts.append(nxt.text)
                j += 1
            elif nxt.lower in NAME_CONNECTORS and j + 1 < n and _is_name_like(tokens[j + 1], False) and \
                    tokens[j + 1].text[0].isupper():
                parts.append(nxt.text)
                j += 1
            else:
                break
        last = j - 1
        key = _name_key(parts)
        version = None
        if j < n and tokens[j].kind == "number" and not tokens[j].role and not tokens[last].possessive and \
                re.fullmatch(r"v?\d+(?:\.\d+)*", tokens[j].text):
            version, last = tokens[j].text, j
        group = len(names)
        for k in range(i, last + 1):
            tokens[k].role, tokens[k].group = "name", group
        if version is not None:
            values.append(Value("version", (key, version), f"{' '.join(parts)} {version}"))
        names.append((key, i, last))
        i = last + 1
    return names


def _context(tokens: list[Token], lo: int, hi: int, width: int = 3) -> frozenset[str]:
    """Content stems and name keys within `width` content words either side of tokens[lo:hi+1],
    without crossing a comma."""
    found: list[str] = []
    for direction, start in ((-1, lo - 1), (1, hi + 1)):
        k, taken = start, 0
        while 0 <= k < len(tokens) and taken < width:
            t = tokens[k]
            if t.kind == "punct" and t.text in ",;:" and not _inside_date(tokens, k):
                break
            if _is_content_word(t) and stem(t.lower) not in TIME_UNITS:
                found.append(stem(t.lower))
                taken += 1
            k += direction
    return frozenset(found)


def _inside_date(tokens: list[Token], k: int) -> bool:
    """The comma of "December 17, 2023": both sides belong to one date."""
    return 0 < k < len(tokens) - 1 and tokens[k - 1].role == "date" and tokens[k + 1].role == "date" and \
        tokens[k - 1].group == tokens[k + 1].group


def _role_of(tokens: list[Token], lo: int, hi: int) -> str | None:
    """The role word nearest to an amount ("budget", "spent", "rent", ...)."""
    best: tuple[int, str] | None = None
    for k, t in enumerate(tokens):
        if t.kind != "word" or t.role:
            continue
        role = AMOUNT_ROLES.get(t.lower) or AMOUNT_ROLES.get(stem(t.lower))
        if role is None:
            continue
        dist = lo - k if k < lo else k - hi
        if best is None or dist < best[0]:
            best = (dist, role)
    return best[1] if best else None
