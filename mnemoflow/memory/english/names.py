"""Entity names in a memory's content, found without a model.

People, places, organisations and tools are written capitalised ("Maya", "Lisbon", "Stripe"), in
CamelCase ("PyTorch", "iPhone"), with a version ("Postgres 16", "Python 3.12") or in backticks
(`make release`); names the scope already knows are matched in any case. Months, weekdays and
sentence words ("The", "My") are not entities.
"""

from __future__ import annotations

import re
from functools import lru_cache

from mnemoflow.memory.english.coref import NOT_NAMES
from mnemoflow.memory.english.lexicon import NAME_CONNECTORS

_TOKEN = re.compile(r"`[^`]+`|[^\W\d_][\w.+#&-]*(?:'s)?|\d[\w.]*|\S")  # a name in any script: "Ørsted"
_VERSION = re.compile(r"v?\d+(?:\.\d+)*[a-z]?")


def _is_name(token: str) -> bool:
    word = token.rstrip(".")
    if len(word) < 2 or word.lower() in NOT_NAMES:
        return False
    return word[0].isupper() or any(c.isupper() for c in word[1:])  # "Maya", "iPhone"


@lru_cache(maxsize=4096)  # a sentence is looked at more than once while it is judged
def find_entities(text: str, known: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Names in `text`, in order of first appearance, each once."""
    found: list[str] = []
    tokens = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    i = 0
    while i < len(tokens):
        token = tokens[i][0]
        if token.startswith("`"):
            if quoted := token.strip("`").strip():  # a lone backtick quotes nothing
                found.append(quoted)
            i += 1
            continue
        bare = token[:-2] if token.endswith("'s") else token
        if not _is_name(bare):
            i += 1
            continue
        parts, end, j = [bare.rstrip(".")], tokens[i][2], i + 1
        while j < len(tokens) and not token.endswith("'s") and text[end:tokens[j][1]] == " ":
            nxt = tokens[j][0]
            nbare = nxt[:-2] if nxt.endswith("'s") else nxt
            if _VERSION.fullmatch(nbare.rstrip(".")):
                parts.append(nbare.rstrip("."))  # "Postgres 16": a version ends the name
                end, j = tokens[j][2], j + 1
                break
            if _is_name(nbare):
                parts.append(nbare.rstrip("."))
            elif nbare in NAME_CONNECTORS and j + 1 < len(tokens) and _is_name(tokens[j + 1][0]):
                parts.append(nbare)
            else:
                break
            end, token = tokens[j][2], nxt
            j += 1
        found.append(" ".join(parts))
        i = j
    lowered = text.lower()
    for name in known:
        key = name.lower()
        if name and not any(key in f.lower() for f in found) and re.search(rf"(?<!\w){re.escape(key)}(?!\w)", lowered):
            found.append(name)
    unique: dict[str, str] = {}
    for name in found:
        unique.setdefault(name.lower(), name)
    return tuple(unique.values())
