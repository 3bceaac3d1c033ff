"""The fast salience score: cheap rules for what is worth remembering (Memory Tree style).

Explicit requests to remember, preferences, money, dates, versions, errors and
decisions raise the score; very short text lowers it. Deterministic, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    weight: float


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_MONTHS = r"jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?|sep(t(ember)?)?|oct(ober)?|nov(ember)?|dec(ember)?"
RULES: tuple[Rule, ...] = (
    Rule("remember", _rx(r"\b(remember|don'?t forget|do not forget|note that|keep in mind|make a note)\b"), 0.35),
    Rule("preference", _rx(r"\b(prefer(s|red)?|favou?rite|love[sd]?|like[sd]?|enjoy(s|ed)?|hate[sd]?|dislike[sd]?|"
                           r"can'?t stand|allergic)\b"), 0.2),
    Rule("money", _rx(r"([$€£¥]\s?\d)|\b\d+(\.\d+)?\s?(dollars|euros?|pounds|usd|eur|gbp|k)\b|\b(budget|salary|price|cost|paid)\b"), 0.15),
    Rule("date", _rx(rf"\b(\d{{4}}-\d{{2}}-\d{{2}}|(19|20)\d{{2}}|{_MONTHS}|monday|tuesday|wednesday|thursday|friday|"
                     r"saturday|sunday|yesterday|tomorrow|tonight|next (week|month|year)|last (week|month|year)|"
                     r"deadline)\b"), 0.15),
    Rule("version", _rx(r"\bv?\d+\.\d+(\.\d+)?\b|\bversion\b|\brelease\b"), 0.1),
    Rule("error", _rx(r"\b(error|exception|traceback|failed|failure|crash(ed|es)?|bug|broken|stack trace)\b"), 0.15),
    Rule("decision", _rx(r"\b(decided|decision|we will|i will|i'?ll|going to|plan(ning|ned)? to|agreed|chose|"
                         r"settled on|switch(ed|ing)? to)\b"), 0.15),
)
BASE = 0.3


def fast_score(text: str) -> float:
    """A salience in [0, 1]; 0.3 for ordinary text."""
    score = BASE + sum(rule.weight for rule in RULES if rule.pattern.search(text))
    words = len(text.split())
    if words < 4:
        score -= 0.3
    elif words < 8:
        score -= 0.1
    return round(min(1.0, max(0.0, score)), 3)


def matched_rules(text: str) -> list[str]:
    return [rule.name for rule in RULES if rule.pattern.search(text)]
