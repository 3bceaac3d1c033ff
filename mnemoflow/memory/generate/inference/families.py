"""DERIVES: memories inferred from two or more memories of one scope, by a few precise rule families.

Precision over recall: a family fires only on the sentence shapes it knows, with the same people,
amounts, dates or versions named exactly in its supports; anything else derives nothing. Every
`Derived` names its supports (one DERIVES link per support), its rule and its confidence (the
pipeline's thresholds apply: >= 0.85 auto, 0.5 - 0.85 review).

Families:
- kinship: "Anna is Tom's sister" + "Anna's son Leo ..." -> "Leo is Tom's nephew" (also niece,
  grandparent, grandchild, aunt and uncle; only when the gender is stated by the kin word)
- reporting line: "Grace's manager is Tim" + "Tim reports to Rosa" (or "Grace's manager reports to
  Rosa") -> "Rosa is Grace's skip-level manager"
- recovery: "Marta's knee surgery is on February 10, 2025" + "Marta's recovery from knee surgery
  takes about six weeks" -> "... recovered from the knee surgery around late March 2025"; a recovery
  that names no event ("Marta's recovery takes about six weeks") is from the owner's one dated
  medical procedure (surgery, operation, ...), and from nothing when there are several
- budget: "Nadia's budget for the Iceland trip is €3,000" (or "The total budget for Nadia's Iceland
  trip is ...") + "Nadia spent €1,200 on flights for the Iceland trip" (or "Flights were €1,200 for
  Nadia": a travel cost goes to the owner's only trip budget) -> "Nadia has €1,800 left in the
  Iceland trip budget after flights"
- share of income: "Carlos takes home $6,000 a month" (or "Carlos's monthly take-home pay is $6,000
  after tax") + "Carlos pays $1,800 a month in rent" (or "... for the flat", or the speaker's
  fragment "Carlos: $1,800 a month for the flat") -> "Rent takes 30% of Carlos's take-home pay"
- expiry: "Sara's passport expires on June 1, 2024" + a dated trip of Sara's after it -> the
  passport will have expired before the trip
- end of life: "billing-api runs on Python 3.8" (the service may follow a lead-in: "Helen says
  billing-api still runs on ...") + "Python 3.8 reaches end of life in October 2024" ->
  "billing-api will run on an unsupported Python version after October 2024 ..."
- allergen: "Elena is allergic to tree nuts" + "Marco's wedding cake is an almond cake" -> Elena
  cannot eat it (a small allergen -> food table)
- diet: "Fatima is vegan" + "The main course is a chicken curry" -> Fatima cannot eat it (a diet ->
  excluded food classes table); + "Fatima is coming to the team dinner" -> "The team dinner needs
  vegan options for Fatima" (a memory of who organises that meal supports it too)
- work permit: "Kenji is a Japanese citizen" + "Kenji accepted a job in Vancouver" -> "Kenji will
  likely need a Canadian work permit ..." (a small country table: citizens' adjective and major
  cities; not within a free-movement area, nor once a permit, visa or residence is mentioned)

A conversational lead-in ("Just remember", "FYI") is dropped before the shapes are read.
A conclusion some input memory already states is not derived again, so `derive` is idempotent over
its own output.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Protocol

from mnemoflow.memory.relate.claim_values import DateValue, Value
from mnemoflow.memory.relate.claim_words import NUMBER_WORDS
from mnemoflow.memory.relate.claims import parse_claim
from mnemoflow.memory.english.temporal import MONTHS


class MemoryLike(Protocol):
    memory_id: str
    content: str


@dataclass(frozen=True)
class Derived:
    content: str
    kind: str
    confidence: float
    supporting_ids: tuple[str, ...]
    rule: str
    reason: str


_NAME = r"(?:[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?)(?: [A-Z][a-z]+)?"
_MONEY = r"[$€£]\d[\d,]*(?:\.\d+)?"


# A conversational lead-in a memory may keep ("Just remember Fatima is vegan"): it adds nothing to
# what the sentence states, and the families' shapes start at the statement itself.
_LEAD_IN = re.compile(r"^(?:(?:just |please )?(?:remember|note|keep in mind)(?: that)?|fyi|btw|by the way),? ",
                      re.IGNORECASE)


def derive(memories: Sequence[MemoryLike]) -> list[Derived]:
    """Inferences over the memories of ONE scope (the caller never mixes scopes)."""
    items = [(m.memory_id, _LEAD_IN.sub("", m.content.strip().rstrip("."))) for m in memories]
    out: list[Derived] = []
    for family in (_kinship, _reporting_line, _recovery, _budget, _income_share, _expiry, _end_of_life,
                   _allergen, _diet, _work_permit):
        out.extend(family(items))
    known = {_norm(text) for _, text in items}
    unique: dict[str, Derived] = {}
    for d in out:
        if _norm(d.content) not in known and _norm(d.content) not in unique:
            unique[_norm(d.content)] = d
    return list(unique.values())


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[\w$€£%.,-]+", text.lower())).rstrip(".")


def _states(items: Iterable[tuple[str, str]], *needles: str) -> bool:
    """Some input memory already says this (contains every needle, case-insensitive)."""
    return any(all(n.lower() in text.lower() for n in needles) for _, text in items)


# ---------------------------------------------------------------------------------------------
# kinship

_KIN: dict[str, tuple[str, str | None]] = {
    "sister": ("sibling", "f"), "brother": ("sibling", "m"), "sibling": ("sibling", None),
    "son": ("child", "m"), "daughter": ("child", "f"), "child": ("child", None), "kid": ("child", None),
    "mother": ("parent", "f"), "mom": ("parent", "f"), "mum": ("parent", "f"),
    "father": ("parent", "m"), "dad": ("parent", "m"), "parent": ("parent", None),
    "aunt": ("auncle", "f"), "uncle": ("auncle", "m"), "niece": ("nibling", "f"), "nephew": ("nibling", "m"),
    "grandmother": ("grandparent", "f"), "grandma": ("grandparent", "f"),
    "grandfather": ("grandparent", "m"), "grandpa": ("grandparent", "m"), "grandparent": ("grandparent", None),
    "grandson": ("grandchild", "m"), "granddaughter": ("grandchild", "f"), "grandchild": ("grandchild", None),
}
_KIN_WORD = "|".join(sorted(_KIN, key=len, reverse=True))
_KIN_PATTERNS = (
    re.compile(rf"^(?P<a>{_NAME}) is (?P<b>{_NAME})'s (?P<kin>{_KIN_WORD})\b"),
    re.compile(rf"^(?P<a>{_NAME}) is the (?P<kin>{_KIN_WORD}) of (?P<b>{_NAME})\b"),
    re.compile(rf"^(?P<b>{_NAME})'s (?P<kin>{_KIN_WORD}) is (?P<a>{_NAME})\b"),
    re.compile(rf"^(?P<b>{_NAME})'s (?P<kin>{_KIN_WORD}),? (?P<a>{_NAME})(?!'s)\b"),
    re.compile(rf"^(?P<b>{_NAME}) has an? (?P<kin>{_KIN_WORD}) (?:named|called) (?P<a>{_NAME})\b"),
)
_WORD_FOR = {
    ("nibling", "m"): "nephew", ("nibling", "f"): "niece",
    ("grandchild", "m"): "grandson", ("grandchild", "f"): "granddaughter", ("grandchild", None): "grandchild",
    ("grandparent", "m"): "grandfather", ("grandparent", "f"): "grandmother", ("grandparent", None): "grandparent",
    ("auncle", "m"): "uncle", ("auncle", "f"): "aunt",
}


@dataclass(frozen=True)
class _Edge:
    a: str  # a is b's rel
    rel: str
    gender: str | None
    b: str
    source: str


def _kin_edges(items: Sequence[tuple[str, str]]) -> list[_Edge]:
    edges: list[_Edge] = []
    for mid, text in items:
        for pattern in _KIN_PATTERNS:
            m = pattern.match(text)
            if m and m.group("a") != m.group("b"):
                rel, gender = _KIN[m.group("kin").lower()]
                edges.append(_Edge(m.group("a"), rel, gender, m.group("b"), mid))
                inverse = {"sibling": "sibling", "child": "parent", "parent": "child",
                           "grandchild": "grandparent", "grandparent": "grandchild",
                           "nibling": "auncle", "auncle": "nibling"}[rel]
                edges.append(_Edge(m.group("b"), inverse, None, m.group("a"), mid))
                break
    return edges


def _kinship(items: Sequence[tuple[str, str]]) -> list[Derived]:
    edges = _kin_edges(items)
    related = {frozenset((e.a, e.b)) for e in edges}  # a pair already linked by some statement
    gender = {e.a: e.gender for e in edges if e.gender}
    out: dict[frozenset[str], Derived] = {}
    compositions = (  # (first edge rel, second edge rel, derived rel): x first p, p second q -> x derived q
        ("child", "sibling", "nibling"), ("child", "child", "grandchild"),
        ("parent", "parent", "grandparent"), ("sibling", "parent", "auncle"),
    )
    for first in edges:
        for second in edges:
            if first.b != second.a or first.a == second.b or first.source == second.source:
                continue
            for r1, r2, derived in compositions:
                if first.rel != r1 or second.rel != r2:
                    continue
                word = _WORD_FOR.get((derived, gender.get(first.a)))
                pair = frozenset((first.a, second.b))
                if word is None or pair in related or pair in out:
                    continue
                out[pair] = Derived(
                    f"{first.a} is {second.b}'s {word}", "fact", 0.9, (first.source, second.source), "kinship",
                    f"{first.a} is {first.b}'s {first.rel} and {first.b} is {second.b}'s {second.rel}")
    return list(out.values())


# ---------------------------------------------------------------------------------------------
# reporting line

_MANAGER_PATTERNS = (
    re.compile(rf"^(?P<a>{_NAME})'s (?:new |direct |line )?(?:manager|boss) is (?P<b>{_NAME})\b"),
    re.compile(rf"^(?P<a>{_NAME}) reports (?:directly )?to (?P<b>{_NAME})\b"),
    re.compile(rf"^(?P<b>{_NAME}) is (?P<a>{_NAME})'s (?:manager|boss)\b"),
    re.compile(rf"^(?P<b>{_NAME}) manages (?P<a>{_NAME})\b"),
)
# "Grace's manager reports to Rosa": the manager is named by role, so only a memory that names
# the manager ("Grace's manager is Tim") makes the pair a reporting line of two people.
_MANAGER_REPORTS_TO = re.compile(
    rf"^(?P<a>{_NAME})'s (?:new |direct |line )?(?:manager|boss) reports (?:directly )?to (?P<c>{_NAME})\b")


def _reporting_line(items: Sequence[tuple[str, str]]) -> list[Derived]:
    lines = []
    for mid, text in items:
        for pattern in _MANAGER_PATTERNS:
            m = pattern.match(text)
            if m and m.group("a") != m.group("b"):
                lines.append((m.group("a"), m.group("b"), mid))
                break
    out = []
    for a, b, m1 in lines:
        for b2, c, m2 in lines:
            if b2 == b and c != a and m1 != m2 and not _states(items, c, a, "skip-level"):
                out.append(Derived(f"{c} is {a}'s skip-level manager", "fact", 0.9, (m1, m2), "reporting-line",
                                   f"{a} reports to {b} and {b} reports to {c}"))
    for m2, text in items:
        m = _MANAGER_REPORTS_TO.match(text)
        if not m:
            continue
        a, c = m.group("a"), m.group("c")
        for a2, b, m1 in lines:
            if a2 == a and c not in (a, b) and m1 != m2 and not _states(items, c, a, "skip-level"):
                out.append(Derived(f"{c} is {a}'s skip-level manager", "fact", 0.9, (m1, m2), "reporting-line",
                                   f"{a} reports to {b} and {a}'s manager reports to {c}"))
    return out


# ---------------------------------------------------------------------------------------------
# dates


def _date_values(text: str) -> list[Value]:
    return [v for v in parse_claim(text).all_values if v.type == "date"]


def _full_dates(text: str) -> list[DateValue]:
    return [v.key for v in _date_values(text)]  # type: ignore[misc]


def _days(text: str) -> list[date]:
    """The calendar days the text names in full (year, month and day)."""
    return [d for d in (_as_date(v) for v in _full_dates(text)) if d]


def _as_date(value: DateValue) -> date | None:
    if value.year and value.month and value.day:
        try:
            return date(value.year, value.month, value.day)
        except ValueError:
            return None
    return None


def _month_text(d: date) -> str:
    return f"{MONTHS[d.month - 1]} {d.year}"


def _day_text(d: date) -> str:
    return f"{MONTHS[d.month - 1]} {d.day}, {d.year}"


def _add(start: date, n: int, unit: str) -> date:
    unit = unit.rstrip("s")
    if unit == "day":
        return start + timedelta(days=n)
    if unit == "week":
        return start + timedelta(weeks=n)
    month = start.month - 1 + n
    year = start.year + month // 12
    month = month % 12 + 1
    return date(year, month, min(start.day, calendar.monthrange(year, month)[1]))


def _number(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    return NUMBER_WORDS.get(text.lower())


_EVENT = re.compile(rf"^(?P<o>{_NAME})'s (?P<event>[a-z][a-z -]*?) (?:is|was)(?: scheduled| planned)? (?:on|for) ")
_RECOVERY = re.compile(
    rf"^(?P<o>{_NAME})'s recovery(?: from (?:(?:her|his|their|the) )?(?P<event>[a-z][a-z -]*?))? "
    r"(?:takes|will take|should take|lasts) (?P<approx>(?:about|around|roughly|approximately) )?"
    r"(?P<n>\d+|[a-z]+) (?P<unit>days?|weeks?|months?)\b")


# a small stated list of medical procedures a recovery follows
_PROCEDURE = re.compile(r"\b(?:surgery|operation|procedure|transplant|replacement|implant|extraction|c-section)$")


def _recovery(items: Sequence[tuple[str, str]]) -> list[Derived]:
    events = []
    for mid, text in items:
        m = _EVENT.match(text)
        if m:
            dates = _days(text)
            if len(dates) == 1:
                events.append((m.group("o"), m.group("event"), dates[0], mid))
    out = []
    for mid, text in items:
        m = _RECOVERY.match(text)
        n = _number(m.group("n")) if m else None
        if not m or n is None:
            continue
        # "Marta's recovery takes six weeks" names no event: it is from the owner's one dated procedure
        procedures = [e for e in events if e[0] == m.group("o") and _PROCEDURE.search(e[1])]
        for owner, event, start, eid in events:
            if owner != m.group("o") or (event != m.group("event") if m.group("event") else
                                         len(procedures) != 1 or procedures[0][3] != eid):
                continue
            end = _add(start, n, m.group("unit"))
            if m.group("approx"):
                part = "early" if end.day <= 10 else "mid" if end.day <= 20 else "late"
                when, conf = f"around {part} {_month_text(end)}", 0.85
            else:
                when, conf = f"by {_day_text(end)}", 0.9
            if _states(items, owner, "recover", _month_text(end)):
                continue
            out.append(Derived(f"{owner} should be recovered from the {event} {when}", "fact", conf, (eid, mid),
                               "date-plus-duration",
                               f"{event} on {_day_text(start)} + {n} {m.group('unit')} = {_day_text(end)}"))
    return out


# ---------------------------------------------------------------------------------------------
# amounts


def _money(text: str) -> tuple[str, float]:
    return text[0], float(text[1:].replace(",", ""))


def _fmt_money(currency: str, amount: float) -> str:
    return f"{currency}{amount:,.0f}" if amount == int(amount) else f"{currency}{amount:,.2f}"


_ARTICLE = r"(?:(?:the|a|an|her|his|their|our) )?"
_BUDGET = (
    re.compile(rf"^(?P<o>{_NAME})'s (?:total )?budget for {_ARTICLE}(?P<target>.+?) is (?P<amt>{_MONEY})$"),
    re.compile(rf"^(?P<o>{_NAME})'s (?:total )?(?P<target>[\w -]+?) budget is (?P<amt>{_MONEY})$"),
    re.compile(rf"^(?P<o>{_NAME}) has a (?:total )?budget of (?P<amt>{_MONEY}) for {_ARTICLE}(?P<target>.+)$"),
    re.compile(rf"^The (?:total )?budget for (?P<o>{_NAME})'s (?P<target>.+?) is (?P<amt>{_MONEY})$"),
)
_SPENT = (
    re.compile(rf"^(?P<o>{_NAME}) (?:spent|paid) (?P<amt>{_MONEY}) (?:on|for) (?P<what>[\w -]+?)"
               rf"(?: for {_ARTICLE}(?P<target>.+))?$"),
    re.compile(rf"^(?P<o>{_NAME})'s (?P<what>[a-z]+(?: [a-z]+)?) (?:cost|costs|was|were|came to) (?P<amt>{_MONEY})$"),
    re.compile(rf"^(?P<what>[A-Z][a-z]+(?: [a-z]+)?) (?:cost|costs|was|were|came to) (?P<amt>{_MONEY}) "
               rf"for (?:(?:both|all) of )?(?P<o>{_NAME})$"),
)
# A spend that names no budget belongs to a trip budget when it is a travel cost and the owner has
# exactly one trip budget in that currency; any other spend needs its budget named.
_TRAVEL_COSTS = frozenset({"flight", "flights", "airfare", "plane tickets", "train tickets", "hotel", "hotels",
                           "accommodation", "lodging", "car rental", "rental car"})
_TRIP = re.compile(r"\b(?:trip|vacation|holiday|honeymoon|travel)\b", re.IGNORECASE)


def _budget(items: Sequence[tuple[str, str]]) -> list[Derived]:
    budgets = []
    for mid, text in items:
        for pattern in _BUDGET:
            m = pattern.match(text)
            if m:
                target = m.group("target")
                budgets.append((m.group("o"), target.lower(), target, _money(m.group("amt")), mid))
                break
    spends = []
    for mid, text in items:
        for pattern in _SPENT:
            m = pattern.match(text)
            if not m:
                continue
            owner, what, amount = m.group("o"), m.group("what"), _money(m.group("amt"))
            what = what[:1].lower() + what[1:] if m.start("what") == 0 else what  # "Flights were ..."
            target = (m.groupdict().get("target") or "").lower()
            if not target and what.lower() in _TRAVEL_COSTS:
                trips = [b[1] for b in budgets if b[0] == owner and b[3][0] == amount[0] and _TRIP.search(b[1])]
                target = trips[0] if len(trips) == 1 else ""
            if target:
                spends.append((owner, target, what, amount, mid))
            break
    out = []
    for owner, target, target_text, (currency, total), bid in budgets:
        mine = [s for s in spends if s[0] == owner and s[1] == target and s[3][0] == currency]
        if not mine:
            continue
        left = total - sum(s[3][1] for s in mine)
        if left < 0:
            continue
        amount = _fmt_money(currency, left)
        if _states(items, owner, amount):
            continue
        whats = " and ".join(s[2] for s in mine)
        out.append(Derived(f"{owner} has {amount} left in the {target_text} budget after {whats}", "fact", 0.9,
                           (bid, *(s[4] for s in mine)), "budget-minus-spent",
                           f"{_fmt_money(currency, total)} budget - " + " - ".join(
                               _fmt_money(currency, s[3][1]) for s in mine) + f" = {amount}"))
    return out


_PERIOD_OF = {"weekly": "week", "monthly": "month", "annual": "year", "yearly": "year"}
_INCOME = (
    re.compile(rf"^(?P<o>{_NAME}) (?P<verb>takes home|earns|makes|nets) (?P<amt>{_MONEY}) (?:a|per|each) "
               r"(?P<period>week|month|year)(?P<net> after tax(?:es)?)?"),
    # "Carlos's monthly take-home pay is $6,000 after tax": the period may be the adjective alone
    re.compile(rf"^(?P<o>{_NAME})'s (?:(?P<adj>weekly|monthly|annual|yearly) )?"
               rf"(?P<verb>take-home pay|net pay|net income|income|salary) is (?P<amt>{_MONEY})\b"
               r"(?: (?:a|per) (?P<period>week|month|year))?(?P<net> after tax(?:es)?)?(?:,|$)"),
)
_EXPENSE = re.compile(
    rf"^(?P<o>{_NAME})(?: (?:pays|spends)|:) (?P<amt>{_MONEY}) (?:a|per|each) (?P<period>week|month|year) "
    r"(?:(?:in|on|for) (?P<what>rent|mortgage|childcare|daycare|groceries|insurance|tuition|utilities)\b"
    r"|for (?:the|a|an|her|his|their) "
    r"(?P<home>(?:flat|apartment|house|room|studio)(?: in [A-Z]\w*(?: [A-Z]\w*)*)?)$)")


def _income_share(items: Sequence[tuple[str, str]]) -> list[Derived]:
    incomes = []
    for mid, text in items:
        for pattern in _INCOME:
            m = pattern.match(text)
            if m:
                periods = {p for p in (m.group("period"), _PERIOD_OF.get(m.groupdict().get("adj") or "")) if p}
                if len(periods) == 1:
                    net = bool(m.group("net")) or m.group("verb") in ("takes home", "nets", "take-home pay", "net pay",
                                                                      "net income")
                    incomes.append((m.group("o"), periods.pop(), _money(m.group("amt")), net, mid))
                break
    out = []
    for mid, text in items:
        m = _EXPENSE.match(text)
        if not m:
            continue
        currency, amount = _money(m.group("amt"))
        # "X: $1,800 a month for the flat" (X said it) reads as X paying it, as "X pays ..." does
        what = m.group("what") or f"the {m.group('home')}"
        for owner, period, (cur, income), net, iid in incomes:
            if owner != m.group("o") or period != m.group("period") or cur != currency or income <= 0:
                continue
            pct = 100 * amount / income
            pct_text = f"{round(pct)}%" if abs(pct - round(pct)) < 0.05 else f"about {round(pct)}%"
            if _states(items, owner, pct_text.replace("about ", "")):
                continue
            pay = "take-home pay" if net else "income"
            out.append(Derived(f"{what[:1].upper() + what[1:]} takes {pct_text} of {owner}'s {pay}", "fact", 0.9,
                               (iid, mid), "share-of-income",
                               f"{_fmt_money(currency, amount)} / {_fmt_money(cur, income)} a {period}"))
    return out


# ---------------------------------------------------------------------------------------------
# expiry and end of life

_DOCUMENT = re.compile(
    rf"^(?P<o>{_NAME})'s (?P<doc>passport|visa|ID card|identity card|residence permit) expires on ")
_TRAVEL = re.compile(r"\b(?:flies|fly|flying|flight|travels|travelling|traveling|trip|vacation|holiday)\b", re.I)


def _expiry(items: Sequence[tuple[str, str]]) -> list[Derived]:
    out = []
    for did, text in items:
        m = _DOCUMENT.match(text)
        if not m:
            continue
        expiry = _days(text)
        if len(expiry) != 1:
            continue
        owner, doc = m.group("o"), m.group("doc")
        for tid, trip in items:
            if tid == did or not (trip.startswith(owner + " ") or trip.startswith(owner + "'s ")):
                continue
            if not _TRAVEL.search(trip) or re.search(rf"\b{doc}\b", trip, re.I):
                continue
            when = [v for v in _full_dates(trip) if v.year and v.month]
            if len(when) != 1:
                continue
            w = when[0]
            after = (w.year, w.month, w.day or 32) > (expiry[0].year, expiry[0].month, expiry[0].day)
            if not after:
                continue
            event = trip[0].lower() + trip[1:] if not trip.startswith(owner) else trip
            out.append(Derived(f"{owner}'s {doc} will have expired before {event}, so {owner} needs to renew it",
                               "fact", 0.9, (tid, did), "expires-before-event",
                               f"{doc} expires {_day_text(expiry[0])}, before the trip"))
    return out


_RUNS_ON_TAIL = (r" (?:still )?(?:runs on|uses|is on|is built on|depends on|is pinned to) "
                 r"(?P<name>[A-Z][\w+#-]*) (?P<ver>\d+(?:\.\d+)*)$")
_RUNS_ON = (
    re.compile(r"^(?P<app>[\w.\-/]+(?: [\w.\-/]+)?)" + _RUNS_ON_TAIL),
    # a service identifier ("billing-api", "auth_service") later in the sentence, after a lead-in
    # ("Helen says billing-api still runs on Python 3.8") that neither negates nor doubts it
    re.compile(r"(?<![\w.\-/])(?P<app>[a-z][\w.]*[-_/][\w.\-/]*)" + _RUNS_ON_TAIL),
)
_DOUBT = re.compile(r"\b(?:not|no|never|if|whether|unless|maybe|perhaps)\b|n't", re.IGNORECASE)
_EOL = re.compile(
    r"^(?P<name>[A-Z][\w+#-]*) (?P<ver>\d+(?:\.\d+)*) (?:reaches|reached|hits|hit|goes) "
    r"(?:its )?(?:end of life|end-of-life|EOL)\b")


def _end_of_life(items: Sequence[tuple[str, str]]) -> list[Derived]:
    eols = []
    for mid, text in items:
        m = _EOL.match(text)
        if m:
            dates = _date_values(text)
            if len(dates) == 1:
                eols.append((m.group("name").lower(), m.group("ver"), m.group("name"), dates[0].text, mid))
    out = []
    for mid, text in items:
        m = _RUNS_ON[0].match(text) or _RUNS_ON[1].search(text)
        if not m or _DOUBT.search(text[:m.start()]):
            continue
        app = m.group("app")
        for name, ver, name_text, when, eid in eols:
            if m.group("name").lower() != name or m.group("ver") != ver or _states(items, app, "unsupported"):
                continue
            out.append(Derived(
                f"{app} will run on an unsupported {name_text} version after {when} and needs an upgrade",
                "fact", 0.85, (mid, eid), "end-of-life",
                f"{app} runs on {name_text} {ver}, which reaches end of life in {when}"))
    return out


# ---------------------------------------------------------------------------------------------
# allergens

_ALLERGENS: dict[str, frozenset[str]] = {
    "tree nut": frozenset({"almond", "walnut", "cashew", "pecan", "pistachio", "hazelnut", "macadamia",
                           "marzipan", "praline", "brazil nut", "pine nut"}),
    "peanut": frozenset({"peanut", "satay"}),
    "shellfish": frozenset({"shrimp", "prawn", "crab", "lobster", "crayfish", "langoustine", "scampi",
                            "mussel", "oyster", "clam", "scallop"}),
    "fish": frozenset({"salmon", "tuna", "cod", "anchovy", "sardine", "trout", "haddock", "mackerel"}),
    "milk": frozenset({"milk", "cheese", "butter", "cream", "yogurt", "yoghurt", "cheesecake"}),
    "egg": frozenset({"egg", "meringue", "mayonnaise"}),
    "wheat": frozenset({"wheat", "bread", "pasta", "couscous", "semolina"}),
    "soy": frozenset({"soy", "tofu", "edamame", "tempeh"}),
    "sesame": frozenset({"sesame", "tahini", "hummus"}),
}
_ALLERGEN_ALIASES = {"tree nuts": "tree nut", "nuts from trees": "tree nut", "peanuts": "peanut", "dairy": "milk",
                     "eggs": "egg", "gluten": "wheat", "soya": "soy", "shellfish": "shellfish", "fish": "fish",
                     "sesame seeds": "sesame"}
# every food class a rule may exclude: the allergens, and what diets leave out besides
_FOODS: dict[str, frozenset[str]] = {
    **_ALLERGENS,
    "meat": frozenset({"beef", "pork", "chicken", "lamb", "bacon", "ham", "sausage", "steak", "turkey", "duck",
                       "veal", "chorizo", "salami", "prosciutto", "meatball", "venison"}),
    "honey": frozenset({"honey"}),
}
# a trailing clause ("..., so careful with desserts") may follow, unless it carves out an exception
_ASIDE = r"(?:, (?!.*\b(?:except|but|not|apart from|other than|unless|only)\b).*)?$"
_ALLERGIC = (
    re.compile(rf"^(?P<o>{_NAME}) is allergic to (?P<what>[a-z ]+?){_ASIDE}"),
    re.compile(rf"^(?P<o>{_NAME}) has an? (?P<what>[a-z ]+?) allergy{_ASIDE}"),
)
# ", apparently": where the speaker heard it; it does not change what is served
_HEARSAY = r",? (?:apparently|I think|I hear|I heard|they say|it seems)"
_SERVED_AS = r"(?:is going to be|are going to be|will be|is|are)"
_DISH = (
    re.compile(rf"^(?P<thing>.+?) {_SERVED_AS} (?:an? )?(?P<food>[a-z]+) "
               r"(?P<noun>cake|pie|tart|dessert|dish|sauce|soup|salad|bread|cookies|biscuits|curry|pasta|pudding|"
               r"cookie|stew|burger|burgers|sandwiches|sandwich|pizza|roast)(?P<hedge>" + _HEARSAY + ")?$"),
    re.compile(r"^(?P<thing>.+?) (?:contains|is made with|is made from|has) (?P<food>[a-z]+)$"),
)


def _dishes(items: Sequence[tuple[str, str]]) -> list[tuple[str, str, str, str]]:
    """(memory id, the thing served as the sentence names it, its food word, "(an almond cake)" or "")."""
    out = []
    for mid, text in items:
        for pattern in _DISH:
            m = pattern.match(text)
            if m:
                thing = m.group("thing")
                thing = thing if thing[:1].isupper() and not thing.startswith("The ") else thing[:1].lower() + thing[1:]
                detail = ""
                if m.groupdict().get("noun"):
                    said = m.group(0)[len(m.group("thing")) + 1:m.start("hedge") if m.group("hedge") else None]
                    detail = " (" + re.sub(rf"^{_SERVED_AS} ", "", said) + ")"
                out.append((mid, thing, m.group("food"), detail))
                break
    return out


def _is_a(food: str, cls: str) -> bool:
    return food in _FOODS[cls] or food.rstrip("s") in _FOODS[cls]


def _allergen(items: Sequence[tuple[str, str]]) -> list[Derived]:
    allergies = []
    for mid, text in items:
        for pattern in _ALLERGIC:
            m = pattern.match(text)
            if m:
                what = m.group("what").strip()
                cls = _ALLERGEN_ALIASES.get(what) or (what if what in _ALLERGENS else None)
                if cls:
                    allergies.append((m.group("o"), cls, mid))
                break
    out = []
    for mid, thing, food, detail in _dishes(items):
        for owner, cls, aid in allergies:
            if not _is_a(food, cls) or owner in thing or _states(items, owner, "cannot eat", food):
                continue
            out.append(Derived(f"{owner} cannot eat {thing}{detail} because of {owner}'s {cls} allergy", "fact",
                               0.85, (aid, mid), "allergen", f"{food} is a {cls} food"))
    return out


# ---------------------------------------------------------------------------------------------
# diets

_DIET_EXCLUDES: dict[str, tuple[str, ...]] = {
    "vegan": ("meat", "fish", "shellfish", "milk", "egg", "honey"),
    "vegetarian": ("meat", "fish", "shellfish"),
    "pescatarian": ("meat",),
}
_DIET = re.compile(rf"^(?P<o>{_NAME}) (?:is (?:an? )?|eats (?:an? )?|follows an? )"
                   r"(?P<diet>vegan|vegetarian|pescatarian)(?: diet)?$")
_MEAL_WORDS = r"(?:dinner|lunch|breakfast|brunch|barbecue|bbq|picnic|potluck|banquet)"
_ATTENDS = re.compile(
    rf"^(?P<o>{_NAME}) (?:is coming to|is attending|is joining|will attend|will join|is going to|will come to) "
    rf"(?P<event>(?:the|a|an|our) (?:[\w,-]+ )*?{_MEAL_WORDS}\b.*)$")

# "Liam is organizing the team dinner on November 8": the plan of a meal, which a guest's diet bears on
_HOSTS = re.compile(
    rf"^(?P<o>{_NAME}) (?:is organi[sz]ing|is hosting|is planning|is throwing|organi[sz]es|hosts|will host) "
    rf"(?P<event>(?:the|a|an|our) (?:[\w,-]+ )*?{_MEAL_WORDS}\b.*)$")


def _diet(items: Sequence[tuple[str, str]]) -> list[Derived]:
    """A diet excludes food classes: a dish of an excluded class is out for that person, and a meal
    the person attends needs options for the diet (the host's plan of that meal supports it too)."""
    diets = [(m.group("o"), m.group("diet"), mid) for mid, text in items if (m := _DIET.match(text))]
    hosts: dict[str, list[str]] = {}  # the memories saying who hosts a meal: the plan the options are for
    for mid, text in items:
        if host := _HOSTS.match(text):
            hosts.setdefault(_the(host.group("event")), []).append(mid)
    out = []
    for mid, thing, food, detail in _dishes(items):
        for owner, diet, did in diets:
            excluded = [cls for cls in _DIET_EXCLUDES[diet] if _is_a(food, cls)]
            if not excluded or owner in thing or _states(items, owner, "cannot eat", food):
                continue
            out.append(Derived(f"{owner} cannot eat {thing}{detail} because {owner} is {diet}", "fact", 0.85,
                               (did, mid), "diet", f"{food} is {excluded[0]}, which a {diet} diet excludes"))
    for mid, text in items:
        m = _ATTENDS.match(text)
        if not m:
            continue
        event = m.group("event")
        for owner, diet, did in diets:
            if owner != m.group("o") or _states(items, f"{diet} options", owner):
                continue
            out.append(Derived(f"{event[:1].upper() + event[1:]} needs {diet} options for {owner}", "fact", 0.85,
                               (did, mid, *hosts.get(_the(event), ())), "diet",
                               f"{owner} is {diet} and is coming to {event}"))
    return out


def _the(event: str) -> str:
    """A meal as a key: "a team dinner" and "our team dinner" are the same as "the team dinner"."""
    return re.sub(r"^(?:a|an|our) ", "the ", event.lower())


# ---------------------------------------------------------------------------------------------
# work permits

# country: (the citizens' adjective, a few major cities); a city names its country only here
_COUNTRIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "Canada": ("Canadian", ("Toronto", "Vancouver", "Montreal", "Calgary", "Ottawa")),
    "the United States": ("American", ("New York", "San Francisco", "Seattle", "Boston", "Chicago", "Los Angeles",
                                       "Austin")),
    "Mexico": ("Mexican", ("Mexico City", "Guadalajara")),
    "Brazil": ("Brazilian", ("São Paulo", "Rio de Janeiro")),
    "the United Kingdom": ("British", ("London", "Manchester", "Edinburgh", "Glasgow")),
    "Ireland": ("Irish", ("Dublin", "Cork")),
    "Germany": ("German", ("Berlin", "Munich", "Hamburg", "Frankfurt")),
    "France": ("French", ("Paris", "Lyon")),
    "Spain": ("Spanish", ("Madrid", "Barcelona")),
    "Italy": ("Italian", ("Rome", "Milan")),
    "the Netherlands": ("Dutch", ("Amsterdam", "Rotterdam")),
    "Portugal": ("Portuguese", ("Lisbon", "Porto")),
    "Sweden": ("Swedish", ("Stockholm",)),
    "Poland": ("Polish", ("Warsaw", "Krakow")),
    "Switzerland": ("Swiss", ("Zurich", "Geneva")),
    "Japan": ("Japanese", ("Tokyo", "Osaka", "Kyoto", "Sapporo", "Yokohama")),
    "China": ("Chinese", ("Beijing", "Shanghai", "Shenzhen")),
    "South Korea": ("South Korean", ("Seoul", "Busan")),
    "India": ("Indian", ("Mumbai", "Delhi", "Bangalore", "Bengaluru", "Hyderabad")),
    "Singapore": ("Singaporean", ("Singapore",)),
    "Australia": ("Australian", ("Sydney", "Melbourne", "Brisbane")),
    "New Zealand": ("New Zealand", ("Auckland", "Wellington")),
    "the United Arab Emirates": ("Emirati", ("Dubai", "Abu Dhabi")),
}
# citizens of one country of a group may work in the others without a permit
_FREE_MOVEMENT = (
    frozenset({"Ireland", "Germany", "France", "Spain", "Italy", "the Netherlands", "Portugal", "Sweden", "Poland",
               "Switzerland"}),  # EU / EEA and Switzerland
    frozenset({"the United Kingdom", "Ireland"}),  # Common Travel Area
    frozenset({"Australia", "New Zealand"}),  # Trans-Tasman arrangement
)
_COUNTRY_OF_ADJ = {adj: country for country, (adj, _) in _COUNTRIES.items()}
_COUNTRY_OF_PLACE = {**{city: country for country, (_, cities) in _COUNTRIES.items() for city in cities},
                     **{country.removeprefix("the "): country for country in _COUNTRIES}}
_ADJ = "|".join(sorted(map(re.escape, _COUNTRY_OF_ADJ), key=len, reverse=True))
_PLACE = "|".join(sorted(map(re.escape, _COUNTRY_OF_PLACE), key=len, reverse=True))
_COUNTRY = "|".join(sorted((re.escape(c.removeprefix("the ")) for c in _COUNTRIES), key=len, reverse=True))
_CITIZEN = (
    re.compile(rf"^(?P<o>{_NAME}) is an? (?P<adj>{_ADJ}) (?:citizen|national)\b"),
    re.compile(rf"^(?P<o>{_NAME}) has (?P<adj>{_ADJ}) citizenship\b"),
    re.compile(rf"^(?P<o>{_NAME}) is a citizen of (?:the )?(?P<place>{_COUNTRY})\b"),
)
_JOB = (
    re.compile(rf"^(?P<o>{_NAME}) (?:accepted|took|got|landed|has|starts|is starting|will start|started) "
               rf"(?:a|an|the|her|his|their) (?:new )?job(?: offer)?(?: at [^,]+?)? in (?:the )?(?P<place>{_PLACE})\b"),
    re.compile(rf"^(?P<o>{_NAME})'s new job is in (?:the )?(?P<place>{_PLACE})\b"),
    re.compile(rf"^(?P<o>{_NAME}) is moving to (?:the )?(?P<place>{_PLACE}) for (?:a|an|her|his|their) (?:new )?job\b"),
)


def _work_permit(items: Sequence[tuple[str, str]]) -> list[Derived]:
    """A citizen of one country taking a job in another, outside any free-movement group the two
    share, will likely need a work permit there; not derived once a memory mentions a permit or visa."""
    citizen: dict[str, list[tuple[str, str]]] = {}
    for mid, text in items:
        for pattern in _CITIZEN:
            m = pattern.match(text)
            if m:
                adj = m.groupdict().get("adj")
                country = _COUNTRY_OF_ADJ[adj] if adj else _COUNTRY_OF_PLACE[m.group("place")]
                citizen.setdefault(m.group("o"), []).append((country, mid))
                break
    out = []
    for jid, text in items:
        m = next((m for pattern in _JOB if (m := pattern.match(text))), None)
        if not m or m.group("o") not in citizen:
            continue
        owner, place = m.group("o"), m.group("place")
        country = _COUNTRY_OF_PLACE[place]
        countries = [c for c, _ in citizen[owner]]
        free = any(country in g and c in g for g in _FREE_MOVEMENT for c in countries)
        if country in countries or free or any(_states(items, owner, w) for w in ("permit", "visa", "resident")):
            continue
        adj = _COUNTRIES[country][0]
        article = "an" if adj[0] in "AEIOU" else "a"
        where = country if place == country.removeprefix("the ") else place
        home, cid = citizen[owner][0]
        out.append(Derived(f"{owner} will likely need {article} {adj} work permit for the job in {where}", "fact",
                           0.85, (cid, jid), "work-permit",
                           f"{owner} is a {_COUNTRIES[home][0]} citizen and the job is in {country}"))
    return out
