"""DERIVES: memories inferred from two or more memories of one scope, by a few precise rule families.

Precision over recall: a family fires only on the sentence shapes it knows, with the same people,
amounts, dates or versions named exactly in its supports; anything else derives nothing. Every
`Derived` names its supports (one DERIVES link per support), its rule and its confidence (the
pipeline's thresholds apply: >= 0.85 auto, 0.5 - 0.85 review).

Families:
- kinship: "Anna is Tom's sister" + "Anna's son Leo ..." -> "Leo is Tom's nephew" (also niece,
  grandparent, grandchild, aunt and uncle; only when the gender is stated by the kin word)
- reporting line: "Grace's manager is Tim" + "Tim reports to Rosa" -> "Rosa is Grace's skip-level manager"
- recovery: "Marta's knee surgery is on February 10, 2025" + "Marta's recovery from knee surgery
  takes about six weeks" -> "... recovered from the knee surgery around late March 2025"
- budget: "Nadia's budget for the Iceland trip is €3,000" + "Nadia spent €1,200 on flights for the
  Iceland trip" -> "Nadia has €1,800 left in the Iceland trip budget after flights"
- share of income: "Carlos takes home $6,000 a month" + "Carlos pays $1,800 a month in rent" ->
  "Rent takes 30% of Carlos's take-home pay"
- expiry: "Sara's passport expires on June 1, 2024" + a dated trip of Sara's after it -> the
  passport will have expired before the trip
- end of life: "billing-api runs on Python 3.8" + "Python 3.8 reaches end of life in October 2024"
  -> "billing-api will run on an unsupported Python version after October 2024 ..."
- allergen: "Elena is allergic to tree nuts" + "Marco's wedding cake is an almond cake" -> Elena
  cannot eat it (a small allergen -> food table)

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

from mnemoflow.memory.claims import NUMBER_WORDS, DateValue, parse_claim


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
_MONTH_NAMES = [calendar.month_name[i] for i in range(13)]


def derive(memories: Sequence[MemoryLike]) -> list[Derived]:
    """Inferences over the memories of ONE scope (the caller never mixes scopes)."""
    items = [(m.memory_id, m.content.strip().rstrip(".")) for m in memories]
    out: list[Derived] = []
    for family in (_kinship, _reporting_line, _recovery, _budget, _income_share, _expiry, _end_of_life,
                   _allergen):
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
    return out


# ---------------------------------------------------------------------------------------------
# dates


def _full_dates(text: str) -> list[DateValue]:
    return [v.key for v in parse_claim(text).all_values if v.type == "date"]  # type: ignore[misc]


def _as_date(value: DateValue) -> date | None:
    if value.year and value.month and value.day:
        try:
            return date(value.year, value.month, value.day)
        except ValueError:
            return None
    return None


def _month_text(d: date) -> str:
    return f"{_MONTH_NAMES[d.month]} {d.year}"


def _day_text(d: date) -> str:
    return f"{_MONTH_NAMES[d.month]} {d.day}, {d.year}"


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
    rf"^(?P<o>{_NAME})'s recovery from (?:(?:her|his|their|the) )?(?P<event>[a-z][a-z -]*?) "
    r"(?:takes|will take|should take|lasts) (?P<approx>(?:about|around|roughly|approximately) )?"
    r"(?P<n>\d+|[a-z]+) (?P<unit>days?|weeks?|months?)\b")


def _recovery(items: Sequence[tuple[str, str]]) -> list[Derived]:
    events = []
    for mid, text in items:
        m = _EVENT.match(text)
        if m:
            dates = [d for d in (_as_date(v) for v in _full_dates(text)) if d]
            if len(dates) == 1:
                events.append((m.group("o"), m.group("event"), dates[0], mid))
    out = []
    for mid, text in items:
        m = _RECOVERY.match(text)
        n = _number(m.group("n")) if m else None
        if not m or n is None:
            continue
        for owner, event, start, eid in events:
            if owner != m.group("o") or event != m.group("event"):
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
)
_SPENT = re.compile(
    rf"^(?P<o>{_NAME}) (?:spent|paid) (?P<amt>{_MONEY}) on (?P<what>[\w -]+?) for {_ARTICLE}(?P<target>.+)$")


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
        m = _SPENT.match(text)
        if m:
            spends.append((m.group("o"), m.group("target").lower(), m.group("what"), _money(m.group("amt")), mid))
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


_INCOME = (
    re.compile(rf"^(?P<o>{_NAME}) (?P<verb>takes home|earns|makes|nets) (?P<amt>{_MONEY}) (?:a|per|each) "
               r"(?P<period>week|month|year)(?P<net> after tax(?:es)?)?"),
    re.compile(rf"^(?P<o>{_NAME})'s (?:monthly |annual |weekly )?(?P<verb>take-home pay|net income|income|salary) "
               rf"is (?P<amt>{_MONEY}) (?:a|per) (?P<period>week|month|year)(?P<net> after tax(?:es)?)?"),
)
_EXPENSE = re.compile(
    rf"^(?P<o>{_NAME}) (?:pays|spends) (?P<amt>{_MONEY}) (?:a|per|each) (?P<period>week|month|year) (?:in|on|for) "
    r"(?P<what>rent|mortgage|childcare|daycare|groceries|insurance|tuition|utilities)\b")


def _income_share(items: Sequence[tuple[str, str]]) -> list[Derived]:
    incomes = []
    for mid, text in items:
        for pattern in _INCOME:
            m = pattern.match(text)
            if m:
                net = bool(m.group("net")) or m.group("verb") in ("takes home", "nets", "take-home pay", "net income")
                incomes.append((m.group("o"), m.group("period"), _money(m.group("amt")), net, mid))
                break
    out = []
    for mid, text in items:
        m = _EXPENSE.match(text)
        if not m:
            continue
        currency, amount = _money(m.group("amt"))
        for owner, period, (cur, income), net, iid in incomes:
            if owner != m.group("o") or period != m.group("period") or cur != currency or income <= 0:
                continue
            pct = 100 * amount / income
            pct_text = f"{round(pct)}%" if abs(pct - round(pct)) < 0.05 else f"about {round(pct)}%"
            if _states(items, owner, pct_text.replace("about ", "")):
                continue
            pay = "take-home pay" if net else "income"
            out.append(Derived(f"{m.group('what').capitalize()} takes {pct_text} of {owner}'s {pay}", "fact", 0.9,
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
        expiry = [d for d in (_as_date(v) for v in _full_dates(text)) if d]
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


_RUNS_ON = re.compile(
    r"^(?P<app>[\w.\-/]+(?: [\w.\-/]+)?) (?:still )?(?:runs on|uses|is on|is built on|depends on|is pinned to) "
    r"(?P<name>[A-Z][\w+#-]*) (?P<ver>\d+(?:\.\d+)*)$")
_EOL = re.compile(
    r"^(?P<name>[A-Z][\w+#-]*) (?P<ver>\d+(?:\.\d+)*) (?:reaches|reached|hits|hit|goes) "
    r"(?:its )?(?:end of life|end-of-life|EOL)\b")


def _end_of_life(items: Sequence[tuple[str, str]]) -> list[Derived]:
    eols = []
    for mid, text in items:
        m = _EOL.match(text)
        if m:
            dates = [v for v in parse_claim(text).all_values if v.type == "date"]
            if len(dates) == 1:
                eols.append((m.group("name").lower(), m.group("ver"), m.group("name"), dates[0].text, mid))
    out = []
    for mid, text in items:
        m = _RUNS_ON.match(text)
        if not m:
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
_ALLERGIC = (
    re.compile(rf"^(?P<o>{_NAME}) is allergic to (?P<what>[a-z ]+)$"),
    re.compile(rf"^(?P<o>{_NAME}) has an? (?P<what>[a-z ]+?) allergy$"),
)
_DISH = (
    re.compile(r"^(?P<thing>.+?) (?:is|are) (?:an? )?(?P<food>[a-z]+) (?P<noun>cake|pie|tart|dessert|dish|sauce|soup|"
               r"salad|bread|cookies|biscuits|curry|pasta|pudding|cookie)$"),
    re.compile(r"^(?P<thing>.+?) (?:contains|is made with|is made from|has) (?P<food>[a-z]+)$"),
)


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
    for mid, text in items:
        for pattern in _DISH:
            m = pattern.match(text)
            if not m:
                continue
            food = m.group("food")
            for owner, cls, aid in allergies:
                if food.rstrip("s") not in _ALLERGENS[cls] and food not in _ALLERGENS[cls]:
                    continue
                if owner in m.group("thing") or _states(items, owner, "cannot eat", food):
                    continue
                thing = m.group("thing")
                thing = thing if thing[:1].isupper() and not thing.startswith("The ") else thing[:1].lower() + thing[1:]
                detail = f" ({m.group(0)[len(m.group('thing')) + 1:]})" if m.groupdict().get("noun") else ""
                detail = detail.replace("(is ", "(").replace("(are ", "(")
                out.append(Derived(f"{owner} cannot eat {thing}{detail} because of {owner}'s {cls} allergy", "fact",
                                   0.85, (aid, mid), "allergen", f"{food} is a {cls} food"))
            break
    return out
