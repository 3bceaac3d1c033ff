"""Topics of a user's memories: density clusters of their vectors (scikit-learn's HDBSCAN), each
labelled by its most distinctive terms (class-based TF-IDF, the way BERTopic labels topics), and
matched to the topics found before so that a topic keeps its id while it lasts.

Topics are about what, not who: the names of the people a memory names are masked before it is
embedded for clustering (`without_people`). Unmasked, MiniLM's vectors of a two-person chat fall
into one cluster per person (LoCoMo: two clusters of 136 and 56 memories labelled by the names);
masked, into pottery classes, adoption agencies, pride parades, camping trips.

HDBSCAN needs no number of topics and leaves a memory that fits no dense group in none, which
suits memories: most are about a handful of recurring things, many about nothing that recurs.
Leaf clusters are taken (the finest stable ones): the excess-of-mass choice tends to return one
broad cluster beside a few small ones. Vectors are L2-normalised, so its euclidean distance
orders pairs as cosine similarity does.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np
from sklearn.cluster import HDBSCAN
from sklearn.feature_extraction.text import CountVectorizer

from mnemoflow.embedding.base import normalize

LABEL_TERMS = 3  # terms in a topic's label
KEPT_TERMS = 8  # terms kept with a topic (`topics.terms`)
CONTINUES = 0.5  # a new cluster continues a stored topic holding more than this share of the smaller one
_WORD = r"(?u)\b[^\W\d_][^\W\d_'-]+\b"  # words of two or more letters: no numbers, no possessive "s"


@dataclass(frozen=True)
class FoundTopic:
    """A cluster: its members (indexes into the input) with their membership strength, and its terms."""

    members: dict[int, float]
    terms: tuple[str, ...]

    @property
    def label(self) -> str:
        return ", ".join(self.terms[:LABEL_TERMS])


def find_topics(texts: list[str], vectors: np.ndarray, min_size: int) -> list[FoundTopic]:
    """Clusters of at least `min_size` memories, largest first; deterministic for the same input."""
    if len(texts) < 2 * min_size:  # one cluster at most: not a topic, everything
        return []
    model = HDBSCAN(min_cluster_size=min_size, cluster_selection_method="leaf", copy=True)
    model.fit(normalize(vectors).astype(np.float64))
    clusters: dict[int, dict[int, float]] = {}
    for index, (label, strength) in enumerate(zip(model.labels_, model.probabilities_)):
        if label >= 0:
            clusters.setdefault(int(label), {})[index] = float(strength)
    groups = sorted(clusters.values(), key=lambda m: (-len(m), min(m)))
    terms = distinctive_terms([[texts[i] for i in sorted(g)] for g in groups], KEPT_TERMS)
    return [FoundTopic(g, t) for g, t in zip(groups, terms)]


def without_people(text: str, names: tuple[str, ...]) -> str:
    """`text` with each of the people's names (and their possessives) said as "someone"."""
    if not names:
        return text
    pattern = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.sub(rf"\b(?:{pattern})\b", "someone", text)


def distinctive_terms(classes: list[list[str]], top: int) -> list[tuple[str, ...]]:
    """Each class's `top` terms by class-based TF-IDF: a term's share of the class's words times
    log(1 + average words per class / the term's count over all classes). Terms keep the casing
    they are most often written with ("Lisbon", "pottery")."""
    if not classes:
        return []
    vectorizer = CountVectorizer(stop_words="english", token_pattern=_WORD, lowercase=True)
    try:
        counts = vectorizer.fit_transform([" ".join(texts) for texts in classes]).toarray().astype(np.float64)
    except ValueError:  # nothing but stop words
        return [() for _ in classes]
    vocabulary = vectorizer.get_feature_names_out()
    tf = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
    idf = np.log1p(counts.sum() / len(classes) / np.maximum(counts.sum(axis=0), 1.0))
    scores = tf * idf
    casing = _casing(t for texts in classes for t in texts)
    found = []
    for row, count in zip(scores, counts):
        best = [i for i in np.argsort(-row, kind="stable") if count[i] > 0][:top]
        found.append(tuple(casing.get(vocabulary[i], vocabulary[i]) for i in best))
    return found


def _casing(texts) -> dict[str, str]:
    forms: dict[str, Counter[str]] = {}
    for text in texts:
        for word in re.findall(_WORD, text):
            forms.setdefault(word.lower(), Counter())[word] += 1
    return {low: counter.most_common(1)[0][0] for low, counter in forms.items()}


def continued(found: list[set[str]], stored: dict[str, set[str]]) -> list[str | None]:
    """For each new cluster (its memory ids), the stored topic it continues, or None: pairs are taken
    best overlap first (shared members over the smaller set's size), each stored topic once, and only
    when they share more than CONTINUES of the smaller one."""
    pairs = sorted(
        ((len(new & old) / min(len(new), len(old)), i, topic_id)
         for i, new in enumerate(found) for topic_id, old in stored.items() if new and old and new & old),
        key=lambda p: (-p[0], p[1], p[2]))
    chosen: list[str | None] = [None] * len(found)
    taken: set[str] = set()
    for overlap, i, topic_id in pairs:
        if overlap > CONTINUES and chosen[i] is None and topic_id not in taken:
            chosen[i] = topic_id
            taken.add(topic_id)
    return chosen
