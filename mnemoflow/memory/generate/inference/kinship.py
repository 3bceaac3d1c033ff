"""People-relation families: kinship ("Anna is Tom's sister" + "Anna's son Leo" -> Leo is Tom's nephew)
and the reporting line (a manager's manager is the skip-level manager)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from mnemoflow.memory.generate.inference.common import _NAME, Derived

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


def kinship(items: Sequence[tuple[str, str]]) -> list[Derived]:
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

