"""A turn is one statement: what its clauses do together, after each was drafted on its own.

- Nothing the turn states is dropped in silence. A clause the rules passed over for want of a
  subject or of a name ("it's green tea for me now", "no one in it") that names things no memory of
  the turn names is kept: beside the turn's memory before it (or after it), in the third person when
  only the speaker's own "I", "me" and "my" are rewritten, as written otherwise. A turn with no memory to
  keep it beside records it as unread (a candidate not stored, `UNREAD`), which the generation report
  counts.
- A negated or ended old value and a new one said in the same turn are one change: "I no longer drink
  coffee at all; it's green tea for me now", "I've switched from React to Solid; I don't use React
  anymore" make one memory, which the relationship step relates as one change to what was held.
"""

from __future__ import annotations

import re
from dataclasses import replace

from mnemoflow.memory.english.coref import rewrite_persons
from mnemoflow.memory.generate.drafts import _Draft, _joined
from mnemoflow.memory.generate.judge import _Turn
from mnemoflow.memory.relate.claim_words import STOPWORDS
from mnemoflow.memory.relate.claims import parse_claim
from mnemoflow.memory.relate.replaces import ends_a_thing

UNREAD = "unread"
ONE_CHANGE = "one change"  # an ending and what holds now, joined: its kind is what holds now
# why a clause was passed over that says nothing about its content: it may still state something
_FOR_WANT_OF = frozenset({"skip:unresolved subject", "skip:vague", "skip:no one in it", "skip:elliptical"})
# ... and says it of something the turn named: "it's green tea for me now", not "skip the walnuts tho"
_POINTS_BACK = re.compile(r"^(?:it|that|this|there|they|these|those|which)\b", re.I)
_WORD = re.compile(r"[^\W_][\w'-]*")


def _content_words(text: str) -> set[str]:
    return {w.lower().removesuffix("'s") for w in _WORD.findall(text)} - STOPWORDS


def whole_turn(drafts: list[_Draft], info: _Turn) -> list[_Draft]:
    """The turn's drafts with its passed-over statements kept (or marked unread) and one change joined."""
    kept = _rescued(drafts, info)
    return _one_change(kept)


def _rescued(drafts: list[_Draft], info: _Turn) -> list[_Draft]:
    said = set().union(*(_content_words(d.content) for d in drafts if d.store))
    out: list[_Draft] = []
    pending: list[_Draft] = []  # rescued before any memory of the turn: joined to the next
    for draft in drafts:
        if draft.store:
            for early in pending:
                draft = _joined(draft, early)
            pending = []
            out.append(draft)
            continue
        new = _content_words(draft.content) - said
        if not (set(draft.reasons) & _FOR_WANT_OF) or not _POINTS_BACK.match(draft.content) or len(new) < 2:
            out.append(draft)
            continue
        rescued = replace(draft, content=_third_person(draft.content, info), store=True,
                          reasons=(*draft.reasons, "kept: names what no memory of the turn names"))
        said |= new
        stored = [n for n, d in enumerate(out) if d.store]
        if stored:
            out[stored[-1]] = _joined(out[stored[-1]], rescued)
        else:
            pending.append(rescued)
    out += [replace(d, store=False, reasons=(*d.reasons, UNREAD)) for d in pending]
    return out


def _third_person(text: str, info: _Turn) -> str:
    """The clause with the speaker's own words rewritten, when nothing else needs resolving."""
    rewrite = rewrite_persons(text, info.speaker, None)
    if rewrite.unresolved or rewrite.third_person or rewrite.plural_first_person:
        return text
    return rewrite.text


def _one_change(drafts: list[_Draft]) -> list[_Draft]:
    """Adjacent memories of the turn, one ending or negating a thing and the other announcing what holds
    now, joined into one (in the order said)."""
    out: list[_Draft] = []
    for draft in drafts:
        before = out[-1] if out and out[-1].store else None
        if draft.store and before is not None and (now := _change_pair(before, draft)):
            joined = _joined(before, draft)
            out[-1] = replace(joined, kind_text=now.kind_text, reasons=(*joined.reasons, ONE_CHANGE))
        else:
            out.append(draft)
    return out


def _change_pair(first: _Draft, second: _Draft) -> _Draft | None:
    """The draft that says what holds now, when one of the two ends or negates a thing and the other
    announces what holds instead; None otherwise."""
    for old, new in ((first, second), (second, first)):
        was, now = parse_claim(old.content), parse_claim(new.content)
        if (was.negated or ends_a_thing(was.text)) and not now.negated and now.change and not ends_a_thing(now.text):
            return new
    return None
