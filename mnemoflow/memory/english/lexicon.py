"""The rule engine's lexicon: its word lists live in `lexicon.toml` beside this module (one section per
module that reads them: months, weekdays, chat spellings, product lines and what kind of device each is,
allergens, stopwords, change markers, kin words, place and organisation gazetteers, irregular verbs),
not inside the logic; `words`, `listed` and `table` read them. The lists several parts share are named
here once; a module that needs more (temporal's "a couple of", claims' "dozen") extends these rather than
keeping its own copy."""

from __future__ import annotations

import tomllib
from importlib.resources import files
from typing import Any

# the word lists themselves, one section per module that reads them
_DATA: dict[str, Any] = tomllib.loads(files(__package__).joinpath("lexicon.toml").read_text(encoding="utf-8"))


def _entry(key: str) -> Any:
    section, name = key.split(".", 1)
    return _DATA[section][name]


def words(key: str) -> frozenset[str]:
    """A word list of lexicon.toml ("claim_words.stopwords") as a set."""
    return frozenset(_entry(key))


def listed(key: str) -> list[Any]:
    """A list of lexicon.toml in its order."""
    return list(_entry(key))


def table(key: str) -> dict[str, Any]:
    """A table of lexicon.toml ("lexicon.device_classes")."""
    return dict(_entry(key))



MONTHS = tuple(listed("lexicon.months"))
MONTH_NUMBERS = {m.lower(): i + 1 for i, m in enumerate(MONTHS)}  # "january" -> 1
MONTH_ABBREVIATIONS = table("lexicon.month_abbreviations")
# northern-hemisphere meteorological seasons, each with its months (the first is where it starts)
SEASONS = {k: tuple(w) for k, w in table("lexicon.seasons").items()}
WEEKDAYS = tuple(listed("lexicon.weekdays"))
# lower-case words inside a name: "Vincent van Gogh", "Bank of England", "Procter & Gamble"
NAME_CONNECTORS = words("lexicon.name_connectors")
# words written with a period that ends no sentence ("Dr. Chen", "e.g.", "5 p.m.")
ABBREVIATIONS = words("lexicon.abbreviations")
NUMBERS_TO_TWELVE = table("lexicon.numbers_to_twelve")
# chat spellings of contractions without the apostrophe ("im", "couldnt"): only forms that are no other
# word ("its", "well", "ill", "id", "hell", "were", "lets" are), mapped to the written form
CONTRACTIONS_UNMARKED = table("lexicon.contractions_unmarked")
# chat spellings of everyday words, written out so a memory and a query use the same word
CHAT_SPELLINGS = table("lexicon.chat_spellings")
# English words other languages written in Latin letters rarely use ("in", "so", "was", "will" and "a" they do):
# a sentence with one of them is read as English (`language`)
ENGLISH_FUNCTION_WORDS = words("lexicon.english_function_words")
# family named the way one addresses them, with no "my" ("Mum's hip op", "dad wants to come")
ADDRESSED_KIN = words("lexicon.addressed_kin")

# Product lines and the one device of a kind each is (a new phone replaces the phone): names that say the kind
DEVICE_CLASSES: dict[str, frozenset[str]] = {k: frozenset(w) for k, w in table("lexicon.device_classes").items()}
# any product line as a pattern, longest first ("cr-v" before "cr")
DEVICE_WORDS = "|".join(sorted((w.replace("-", r"\-") for ws in DEVICE_CLASSES.values() for w in ws), key=len,
                               reverse=True))
# a product line named with up to two words before it and its model after it: "2012 honda civic", "galaxy s23",
# "kobo clara 2e" (the group "thing")
DEVICE_PHRASE = (rf"(?P<thing>(?:[\w-]+\s+){{0,2}}(?:{DEVICE_WORDS})(?:(?:\s+[a-z]+)?\s+[\w-]*\d[\w-]*)?)"
                 r"(?![\w-])")
# the food allergens, each with the foods that hold it, and the words said for them
ALLERGENS: dict[str, frozenset[str]] = {k: frozenset(w) for k, w in table("lexicon.allergens").items()}
ALLERGEN_ALIASES = table("lexicon.allergen_aliases")
