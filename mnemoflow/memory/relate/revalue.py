"""A new value said with next to nothing else: "mine's 5518 now", "we're at 120 now", "25mg, just once a
day now". The words name no subject of their own, so the value belongs to the memory that holds the one
value of its kind (a number, an amount of money, a percent, a quantity in the same unit): the caller
restates that memory with the new value (`revalued`), and the restatement replaces the memory it came from.
"""

from __future__ import annotations

import re

from mnemoflow.memory.relate.claim_values import Value
from mnemoflow.memory.relate.claim_words import MEASURE_UNITS, TIME_UNITS, stem
from mnemoflow.memory.relate.claims import Claim, parse_claim

# subjects that name no owner of their own: "mine's 5518 now", "it's 25mg now", "we're at 120 now"
_OWNERLESS = frozenset({"mine", "ours", "yours", "theirs", "hers", "his", "it", "its", "that", "this", "we", "they"})
_KINDS = frozenset({"quantity", "money", "percent"})
_FREQUENCY = frozenset({"onc", "twic", "just", "only"})  # "just once a day now" adds no subject


def new_value(claim: Claim, speaker: str | None) -> Value | None:
    """The one value `claim` announces as new when it names nothing it could be the value of: a change
    marker, no subject but a pronoun or the speaker, at most one content word besides the marker's
    ("they've changed it to 10"). The speaker's own
    bare number ("I'm 35 now") is their age, not a new value of something said before."""
    if claim.change is None or claim.source:
        return None
    values = [v for v in claim.values if v.type in _KINDS]
    speaker_key = (speaker or "").casefold()
    if len(values) != 1 or (claim.subject and claim.subject not in _OWNERLESS and claim.subject != speaker_key):
        return None
    said_change = {stem(w) for w in re.findall(r"[a-z]+", (claim.change_text or "").lower())}
    rest = {x for x in claim.main_stems | claim.main_names if x != claim.subject and x not in MEASURE_UNITS
            and x not in TIME_UNITS and x not in _FREQUENCY and x not in said_change}
    if len(rest) > 1:
        return None
    if claim.subject == speaker_key and re.search(rf"\b(?:is|am)\s+{re.escape(values[0].text)}\b", claim.main):
        return None
    return values[0]


def revalued(content: str, new: Value) -> tuple[str, str] | None:
    """`content` with its one value of `new`'s kind (and unit) replaced by `new`, and the old value's text;
    None when it holds none, several, the same one, or one of another magnitude (a code of four digits
    stays one of four)."""
    same = [v for v in parse_claim(content).all_values if v.type == new.type and v.unit == new.unit]
    if len(same) != 1 or same[0].key == new.key or not _comparable(same[0], new):
        return None
    old = same[0]
    pattern = re.compile(rf"(?<![\d.,]){re.escape(old.text)}(?![\d])")
    if len(pattern.findall(content)) != 1:
        return None
    return pattern.sub(new.text, content), old.text


def _comparable(old: Value, new: Value) -> bool:
    a, b = old.key, new.key
    if not isinstance(a, int | float) or not isinstance(b, int | float):
        return old.text != new.text
    digits = [re.sub(r"\D", "", v.text) for v in (old, new)]
    return len(digits[0]) == len(digits[1]) or (a > 0 and b > 0 and max(a, b) / min(a, b) <= 10)
