"""Whether a sentence is English: the rule engine reads nothing else.

Its rules rewrite English ("I" to the speaker's name, "next April" to a date); run on German or
Chinese they make a wrong memory ("Zoe has ich wohne jetzt in München"), so a sentence in another
language makes none (its turn stays a chunk, and the LLM path reads it). Chinese, Japanese and Korean
are told by their script. A sentence in another Latin-script language is told by py3langid (a
naive Bayes model shipped inside the package), and only when it has three words or more, none of
them an English function word, and the model is sure (0.99): short English chat ("Perfect
beer-garden weather!", "Will do.") must never be taken for another language.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache

from mnemoflow.memory.english.lexicon import ENGLISH_FUNCTION_WORDS

SURE = 0.99
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_CJK = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL")


@cache
def _identifier():  # type: ignore[no-untyped-def]
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_pickled_model(MODEL_FILE, norm_probs=True)


def _mostly_cjk(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    cjk = sum(1 for c in letters if unicodedata.name(c, "").startswith(_CJK))
    return bool(letters) and cjk * 2 >= len(letters)


@lru_cache(maxsize=4096)
def is_english(sentence: str) -> bool:
    """Whether the rule engine may read `sentence` (see the module docstring)."""
    if _mostly_cjk(sentence):
        return False
    words = [w.lower() for w in _WORD.findall(sentence)]
    if len(words) < 3 or not ENGLISH_FUNCTION_WORDS.isdisjoint(words):
        return True
    language, probability = _identifier().classify(sentence)
    return language == "en" or probability < SURE


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[\u3002\uff01\uff1f])\s*")  # "v0.7.0" ends nothing


def english_part(text: str) -> str:
    """The sentences of `text` the rules may read, as written (judged before chat spellings are written out:
    German "im" is no "I'm"); the text unchanged when every sentence is English."""
    sentences = [s for s in _SENTENCE_END.split(text.strip()) if s]
    kept = [s for s in sentences if is_english(s)]
    return text.strip() if len(kept) == len(sentences) else " ".join(kept)
