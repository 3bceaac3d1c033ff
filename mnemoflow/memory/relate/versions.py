"""What a new memory does to the versions around the one it relates to, beyond its own link.

- **The facts a change leaves.** An UPDATES replaces the fact it changes, not the others the old memory
  holds: "Sam moved to Swansea" against "Sam lives in Cardiff and works as a plumber" leaves "Sam works as
  a plumber" (`unchanged_facts`), which the pipeline keeps current as a new version of the old memory,
  cited as it was.
- **What restates the replaced memory.** A memory that extends the one a change replaces by saying all of it
  and more ("Dana has judo on Wednesdays at 6:15" of "Dana has judo on Wednesdays") states the old value too:
  it is a possible update of the change, as below, since what it adds may still hold (`extensions_replaced`).
- **A possible update.** A new memory about the same owner as a held one and the same subject (a name or
  a word both predicates share, or vectors nearer than `MAY_UPDATE_AT`), whose change the rules could not
  classify, may replace it: it is linked MAY_UPDATE (both stay current; recall puts the newer first and
  marks the older), and the pair waits for review as an UPDATES (`possible_update`). An UPDATES the rules
  classified but doubt (in the review band) stands as a MAY_UPDATE the same way (`may_update`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from mnemoflow.memory.relate.claim_words import among
from mnemoflow.memory.relate.claims import parse_claim
from mnemoflow.memory.relate.compare import _shared
from mnemoflow.memory.relate.facts import facts
from mnemoflow.memory.relate.llm_judge import RelationJudge
from mnemoflow.memory.relate.relations import Neighbour, action
from mnemoflow.models import LinkDraft

# From this vector similarity a possible update needs no shared name or predicate word. Read on the tune half
# (bench/may_update.py): at 0.55 vectors alone proposed 5 pairs there, 1 right; the owner's name weighs so much
# in a short sentence that two facts of one person's in other slots reach 0.65 ("Nadia lives in Bremen" /
# "Nadia works at Osterholz Bakery"), and a wrong possible update marks a current fact as possibly superseded.
MAY_UPDATE_AT = 0.7
MAY_UPDATE_CONFIDENCE = 0.6  # in the review band: a person decides


def unchanged_facts(candidate: str, held: str, similarity: dict[str, float]) -> list[str]:
    """The facts of `held` that `candidate` leaves as they were: all but the one nearest to it
    (`similarity` by fact) and any it says again; none when `held` is one fact."""
    parts = facts(held)
    if len(parts) < 2:
        return []
    changed = max(parts, key=lambda p: similarity.get(p, -1.0))
    said = parse_claim(candidate)
    said_words = said.stems | said.names
    return [p for p in parts if p != changed and not all(among(x, said_words) for x in _words(p))]


def _words(fact: str) -> set[str]:
    claim = parse_claim(fact)
    return set(claim.stems | claim.names) - {claim.subject}


def extensions_replaced(replaced: Neighbour, extending: set[str],
                        neighbours: Sequence[Neighbour]) -> tuple[tuple[LinkDraft, ...], tuple[LinkDraft, ...]]:
    """The links (applied, for review) to the `extending` memories (those that EXTEND the one a change
    replaces) that say all it said, and more: they state the old value too, so each is a possible update,
    MAY_UPDATE and an UPDATES for review, like a change the rules cannot classify: what they add ("(office:
    Manchester)") may still hold. One that says something else ("works in the Manchester office" beside
    "starts at Arup on April 14") is no restatement and is left alone."""
    said = _words(replaced.content)
    restating = [held for held in neighbours if held.memory_id in extending and said and
                 all(among(word, (claim := parse_claim(held.content)).stems | claim.names) for word in said)]
    reason = f"possible update: restates {replaced.memory_id}, which this change replaces"
    return (tuple(LinkDraft("MAY_UPDATE", held.memory_id, 0.9, reason) for held in restating),
            tuple(LinkDraft("UPDATES", held.memory_id, MAY_UPDATE_CONFIDENCE, reason) for held in restating))


def possible_update(candidate: str, neighbours: Sequence[Neighbour]) -> tuple[Neighbour, str] | None:
    """The held memory the candidate may update (see the module docstring), the nearest of several; None."""
    cand = parse_claim(candidate)
    if not cand.subject:
        return None
    found: list[tuple[float, Neighbour, str]] = []
    for n in neighbours:
        if n.same_turn or n.same_hash:
            continue
        old = parse_claim(n.content)
        if old.subject != cand.subject:
            continue
        sim = n.vector_similarity or 0.0
        # a name both say, the thing the held one is about ("Tom's ThinkPad"), or a word both predicates say
        things = ({old.subject_head} if old.subject_head else set()) | old.names
        shared = (_shared(cand.predicate_anchors, old.predicate_anchors) | _shared(cand.anchors, frozenset(things))) \
            - {cand.subject}
        if shared or sim >= MAY_UPDATE_AT:
            about = f"subject ({', '.join(sorted(shared))})" if shared else "subject"
            found.append((sim, n, f"possible update: the same owner ({cand.subject}) and {about}, vector {sim:.2f}, "
                                  "change not classified"))
    if not found:
        return None
    _, best, reason = max(found, key=lambda f: f[0])
    return best, reason



def may_update_links(candidate: str, neighbours: Sequence[Neighbour], now: datetime,
                     judge: RelationJudge | None = None) -> tuple[tuple[LinkDraft, ...], tuple[LinkDraft, ...]]:
    """The links (applied, for review) of a candidate the rules judged new: for a possible update, the
    judge's decision where a chat model is configured and answers (an UPDATES or EXTENDS at the pipeline's
    thresholds; "new" when it is sure), else MAY_UPDATE and an UPDATES for review; nothing otherwise."""
    found = possible_update(candidate, neighbours)
    if found is None:
        return (), ()
    held, reason = found
    judged = judge.judge(candidate, held.content, held.memory_id, new_said=now, old_said=held.observed_at) \
        if judge else None
    if judged is not None and (verdict := action(judged)) != "ignore":
        if judged.relation == "new":
            return ((), ()) if verdict == "apply" else _may_update(held, reason)
        link = LinkDraft(judged.relation, held.memory_id, judged.confidence, f"{judged.reason}; {reason}")
        return ((link,), ()) if verdict == "apply" else ((), (link,))
    return _may_update(held, reason)


def may_update(doubted: LinkDraft) -> LinkDraft:
    """The MAY_UPDATE that stands while an UPDATES the rules doubt waits for review: until a person decides,
    both stay current and recall marks the older, so the old value is never given as if nothing had changed."""
    return LinkDraft("MAY_UPDATE", doubted.target_id, doubted.confidence, f"possible update: {doubted.reason}")


def _may_update(held: Neighbour, reason: str) -> tuple[tuple[LinkDraft, ...], tuple[LinkDraft, ...]]:
    return ((LinkDraft("MAY_UPDATE", held.memory_id, round(held.vector_similarity or 0.0, 3), reason),),
            (LinkDraft("UPDATES", held.memory_id, MAY_UPDATE_CONFIDENCE, reason),))
