"""A long passage shown as the part of it the query is about.

Under a small budget one long chunk (a 240-token piece of an assistant's answer) takes half of a
512-token context, and the short turn that holds the answer no longer fits. A chunk longer than its
share of the budget is shown as its sentences that share most words with the query, in their own
order, with `…` where sentences were left out; it still cites its turn or place. Words are compared
as lower-case stems of five letters, without scikit-learn's English stop words; Chinese, Japanese and
Korean, written without spaces between words, as pairs of adjacent characters (`tokens.cjk_bigrams`)
and, for Chinese characters (kanji), each on its own: one is often a word (雨, rain), where a kana or a
hangul syllable alone is mostly grammar.
Lengths are in units (`tokens.units`), so a CJK sentence counts as the tokens it costs.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from mnemoflow.chunking import SENTENCE_END
from mnemoflow.tokens import HAN, cjk_bigrams, prefix_within, units


def _english_stop_words() -> frozenset[str]:
    """scikit-learn's list (`sklearn.feature_extraction.text.ENGLISH_STOP_WORDS`), read from its own
    module file without importing scikit-learn: that import costs a cold `mnemoflow recall` ~1.1 CPU s
    (scipy comes with it) for one frozenset."""
    package = importlib.util.find_spec("sklearn")
    assert package is not None and package.submodule_search_locations, "scikit-learn is a dependency"
    path = Path(package.submodule_search_locations[0]) / "feature_extraction" / "_stop_words.py"
    spec = importlib.util.spec_from_file_location("_mnemoflow_sklearn_stop_words", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ENGLISH_STOP_WORDS


ENGLISH_STOP_WORDS = _english_stop_words()

GAP = " … "
_WORD = re.compile(r"[a-z0-9]+")
_SPEAKER = re.compile(r"^[^\s:][^:\n]{0,40}: ")


def terms(text: str) -> set[str]:
    """The content words of `text`, as stems (their first five letters), and its CJK bigrams."""
    words = {w[:5] for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in ENGLISH_STOP_WORDS}
    return words | set(cjk_bigrams(text)) | set(HAN.findall(text))


def excerpt(text: str, query_terms: set[str], max_chars: int) -> tuple[str, int, int] | None:
    """`text` cut to at most `max_chars` units: its sentences with the most query words first, then
    those nearest the best one. Returns (excerpt, sentences kept, sentences in all), or None if it fits."""
    if units(text) <= max_chars:
        return None
    speaker = _SPEAKER.match(text)
    prefix = speaker.group(0) if speaker else ""
    sentences = [s for s in SENTENCE_END.split(text[len(prefix):].strip()) if s]
    scores = [len(terms(s) & query_terms) for s in sentences]
    best = max(range(len(sentences)), key=lambda i: (scores[i], -i))
    room = max_chars - units(prefix) - 2 * len(GAP)
    kept: list[int] = []
    used = 0
    for i in sorted(range(len(sentences)), key=lambda i: (-scores[i], abs(i - best), i)):
        if used + units(sentences[i]) <= room:
            kept.append(i)
            used += units(sentences[i]) + len(GAP)
    if not kept:  # the best sentence alone is too long: its start
        return prefix + sentences[best][: prefix_within(sentences[best], room - 1)].rstrip() + "…", 1, len(sentences)
    kept.sort()
    parts = [GAP.strip() + " "] if kept[0] > 0 else []
    for n, i in enumerate(kept):
        if n:
            parts.append(" " if i == kept[n - 1] + 1 else GAP)
        parts.append(sentences[i])
    if kept[-1] < len(sentences) - 1:
        parts.append(" " + GAP.strip())
    return prefix + "".join(parts), len(kept), len(sentences)
