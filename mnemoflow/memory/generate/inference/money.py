"""Money families: what is left of a trip budget after a cost, and the share of take-home pay an
expense takes."""

from __future__ import annotations

import re
from collections.abc import Sequence

from mnemoflow.memory.generate.inference.common import _MONEY, _NAME, Derived, _first_match, _states


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


def budget(items: Sequence[tuple[str, str]]) -> list[Derived]:
    budgets = []
    for mid, text in items:
        if m := _first_match(_BUDGET, text):
            target = m.group("target")
            budgets.append((m.group("o"), target.lower(), target, _money(m.group("amt")), mid))
    spends = []
    for mid, text in items:
        if m := _first_match(_SPENT, text):
            owner, what, amount = m.group("o"), m.group("what"), _money(m.group("amt"))
            what = what[:1].lower() + what[1:] if m.start("what") == 0 else what  # "Flights were ..."
            target = (m.groupdict().get("target") or "").lower()
            if not target and what.lower() in _TRAVEL_COSTS:
                trips = [b[1] for b in budgets if b[0] == owner and b[3][0] == amount[0] and _TRIP.search(b[1])]
                target = trips[0] if len(trips) == 1 else ""
            if target:
                spends.append((owner, target, what, amount, mid))
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


def income_share(items: Sequence[tuple[str, str]]) -> list[Derived]:
    incomes = []
    for mid, text in items:
        if m := _first_match(_INCOME, text):
            periods = {p for p in (m.group("period"), _PERIOD_OF.get(m.groupdict().get("adj") or "")) if p}
            if len(periods) == 1:
                net = bool(m.group("net")) or m.group("verb") in ("takes home", "nets", "take-home pay", "net pay",
                                                                  "net income")
                incomes.append((m.group("o"), periods.pop(), _money(m.group("amt")), net, mid))
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
