"""Counting tokens, the one rule every budget and cap uses, and the CJK character classes it needs.

A token is about four characters of English (or any alphabetic script), but about one character of
Chinese, Japanese or Korean: a tokenizer like cl100k spends one to two tokens on each ideograph,
kana or hangul syllable. Text is measured in *units*, a quarter of a token each: an ordinary
character is one unit, a CJK character four, and `tokens = ceil(units / 4)`. For text without CJK
that is exactly the old ceil(chars / 4), so budgets and figures measured on English are unchanged.
"""

from __future__ import annotations

import math
import re

# Han (with extension A and compatibility ideographs), kana (and the half-width forms), hangul
# syllables and jamo. Punctuation of these scripts (。、「」) is counted as a character of its own
# script too: a tokenizer spends a token on it.
CJK_CLASS = (
    "\u1100-\u11ff\u3000-\u303f\u3040-\u309f\u30a0-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff01-\uff60\uff65-\uff9f"
)
CJK = re.compile(f"[{CJK_CLASS}]")
HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")  # Chinese characters (hanzi, kanji, hanja)
CJK_RUN = re.compile(f"[{CJK_CLASS}]+")
UNITS_PER_TOKEN = 4
CJK_UNITS = 4  # a CJK character is about a token


def is_cjk(char: str) -> bool:
    return bool(CJK.match(char))


def cjk_count(text: str) -> int:
    return 0 if text.isascii() else len(CJK.findall(text))


def has_cjk(text: str) -> bool:
    return not text.isascii() and CJK.search(text) is not None


def units(text: str) -> int:
    """The text's length in quarter tokens: a character each, a CJK character four."""
    return len(text) + (CJK_UNITS - 1) * cjk_count(text)


def token_count(text: str) -> int:
    """ceil(units / 4): ceil(chars / 4) for English, about a token per CJK character."""
    return math.ceil(units(text) / UNITS_PER_TOKEN)


def budget_units(tokens: int) -> int:
    return tokens * UNITS_PER_TOKEN


def prefix_within(text: str, max_units: int, start: int = 0) -> int:
    """The end of the longest piece of `text` from `start` that is at most `max_units` long."""
    if text.isascii():
        return min(len(text), start + max_units)
    used, end = 0, start
    while end < len(text):
        cost = CJK_UNITS if is_cjk(text[end]) else 1
        if used + cost > max_units:
            break
        used += cost
        end += 1
    return end


def cjk_bigrams(text: str) -> list[str]:
    """Each run of CJK characters as its pairs of adjacent characters (a run of one: itself).
    Chinese and Japanese put no spaces between words and Korean attaches particles to them, so a
    word of two or more characters inside a sentence is found by its pairs."""
    grams: list[str] = []
    if text.isascii():
        return grams
    for run in CJK_RUN.findall(text):
        run = _PUNCTUATION.sub(" ", run)
        for part in run.split():
            grams += [part] if len(part) == 1 else [part[i : i + 2] for i in range(len(part) - 1)]
    return grams


# CJK punctuation and full-width symbols: not part of a word
_PUNCTUATION = re.compile("[\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]+")


def cjk_index_text(text: str) -> str:
    """`text` as a full-text index should read it: each CJK run written as its characters and their
    adjacent pairs, separated by spaces (a one-character query word finds the character, a longer one
    its pairs); everything else as it is."""
    if text.isascii():
        return text
    return CJK_RUN.sub(lambda m: f" {' '.join(_PUNCTUATION.sub('', m.group()))} {' '.join(cjk_bigrams(m.group()))} ",
                       text)


def cjk_query_text(query: str) -> str:
    """A query as the index is asked: each CJK run as its adjacent pairs (a one-character run as itself)."""
    if query.isascii():
        return query
    return CJK_RUN.sub(lambda m: f" {' '.join(cjk_bigrams(m.group()))} ", query)
