"""Amounts changed by a difference, not to a new value: "they've put the gym up by a fiver", "rent's going up
£50 in April", "it's a tenner more from March", "knocked £20 off the quote". No new amount is named, so the
new one is the old one plus the difference: the caller finds the memory that held the old amount and
restates it with the new one (`relate.moved`), as `shifts` does for dates moved by an amount.
"""

from __future__ import annotations

import re

# money said in words: "a fiver", "a tenner", "a quid", "a grand", "20 quid"
_SLANG = {"fiver": 5, "tenner": 10, "quid": 1, "grand": 1000, "buck": 1, "hundred": 100}
_MONEY = (r"(?P<cur>[$£€])\s?(?P<num>\d[\d,]*(?:\.\d+)?)|(?P<qnum>\d[\d,]*)\s+(?P<qword>quid|bucks|grand)\b|"
          r"an?\s+(?P<word>fiver|tenner|quid|grand|buck|hundred)\b")
_UP = re.compile(rf"\b(?P<dir>up|down)\s+(?:by\s+)?(?:{_MONEY})", re.I)
_MORE = re.compile(rf"(?:{_MONEY})\s+(?P<dir>more|less|extra|cheaper|dearer)\b(?!\s+than\b)", re.I)  # not a comparison
_OFF = re.compile(rf"\b(?:knocked|took|taken|knock)\s+(?:{_MONEY})\s+off\b", re.I)
_AMOUNT = re.compile(r"(?P<cur>[$£€])\s?(?P<num>\d[\d,]*(?:\.\d+)?)")
_DOWN = frozenset({"down", "less", "cheaper", "fewer"})


def find_difference(text: str) -> tuple[float, str | None] | None:
    """How much `text` says an amount went up (positive) or down (negative), and its currency sign if it
    names one; None when it names no difference, or names the new amount itself ("up to £38")."""
    if re.search(r"\b(?:up|down)\s+to\s+[$£€]?\d", text, re.I):
        return None
    m = _UP.search(text) or _MORE.search(text) or _OFF.search(text)
    if m is None:
        return None
    if m["num"]:
        amount, currency = float(m["num"].replace(",", "")), m["cur"]
    elif m["qnum"]:
        amount = float(m["qnum"].replace(",", "")) * (1000 if m["qword"].lower() == "grand" else 1)
        currency = None
    else:
        amount, currency = float(_SLANG[m["word"].lower()]), None
    down = (m.groupdict().get("dir") or "").lower() in _DOWN or m.re is _OFF
    return (-amount if down else amount), currency


# "bumping each jab up by 2 units", "3 more reps", "down by 5 kg": a count of something changed by a difference
_COUNT_UP = re.compile(r"\b(?P<dir>up|down)\s+(?:by\s+)?(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>[a-z]+)\b|"
                       r"\b(?P<num2>\d+(?:\.\d+)?)\s*(?P<unit2>[a-z]+)\s+(?P<dir2>more|less|fewer|extra)\b(?!\s+than\b)",
                       re.I)


def find_count_difference(text: str) -> tuple[float, str] | None:
    """How much `text` says a count went up (positive) or down (negative), and the word it counts ("units");
    None when it names none, or names money (`find_difference`) or the new count itself ("up to 14 units")."""
    if re.search(r"\b(?:up|down)\s+to\s+\d", text, re.I) or find_difference(text):
        return None
    m = _COUNT_UP.search(text)
    if m is None:
        return None
    amount = float(m["num"] or m["num2"])
    down = (m["dir"] or m["dir2"]).lower() in _DOWN
    return (-amount if down else amount), (m["unit"] or m["unit2"]).lower()


def written_like(amount: str, value: float) -> str:
    """`value` written the way `amount` was ("£1,150" and 1200 -> "£1,200"; "$9.99" and 10.99 -> "$10.99")."""
    old = _AMOUNT.search(amount)
    if old is None:
        return f"{value:g}"
    said = old["num"].rstrip(",")  # "£950," ends a clause
    decimals = len(said.split(".")[1]) if "." in said else (2 if value != int(value) else 0)
    number = f"{value:,.{decimals}f}" if "," in said or value >= 1000 else f"{value:.{decimals}f}"
    return amount[:old.start("num")] + number + amount[old.start("num") + len(said):]
