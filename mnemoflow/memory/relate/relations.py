"""Relationship classification: what a new memory candidate does to the memories its scope already has.

The caller retrieves the candidate's neighbours *within one scope* (tenant and user: by exact content
hash, BM25 and vector search over the latest memories) and passes them with their retrieval signals.
`classify` decides, in code and never by one vector threshold, whether the candidate is

- ``duplicate`` of a neighbour (idempotent: the caller bumps the original's reinforcement),
- ``UPDATES`` a neighbour (a new version: the old one gets ``is_latest = false`` and ``valid_to``,
  and a supersedes row),
- ``EXTENDS`` a neighbour (adds detail to the same subject without contradicting it),
- ``CONFLICTS_WITH`` a neighbour (two sources disagree, or the same statement negated, and nothing
  says which is current), or
- ``new``.

Every decision carries a confidence and a reason naming the rule; `action` maps it onto the
pipeline's thresholds: ``>= 0.85`` applies automatically, ``0.5 - 0.85`` goes to ``review_queue``,
``< 0.5`` is ignored. ``new`` is always applied (there is nothing to link).

Isolation is the caller's job, by construction: `classify` sees only the neighbours it is given and
never looks anything up, so it cannot relate memories of different tenants or users as long as the
retrieval that feeds it is scoped (storage adds the scope predicates; see DESIGN.md, Tenancy).

DERIVES (a memory inferred from two or more others) is a separate step: a chat model's inferences
(`relate/llm_infer.py`), which the pipeline asks for after this one when a model is configured.

The rules, per neighbour, first match wins (`Decision.reason` starts with the rule's name):

1. ``hash``: the same content hash -> duplicate (1.0).
   A neighbour that shares no subject with the candidate is skipped; one about another person
   ("Grace's sister" against "Grace") is unrelated; one about another thing of the same owner
   ("Chen's return flight" against "Chen's flight") can only be extended, never replaced.
2. ``correction``: the candidate negates a name or value the neighbour asserts ("... and not to
   penicillin", "no longer uses VS Code") and asserts a replacement -> UPDATES. The same statement
   negated without a replacement is ``negation`` -> CONFLICTS_WITH (UPDATES with an ending marker,
   "no longer", "gave up on", or when what it negates is a name or value of the neighbour).
3. ``value``: a value of the same slot differs. Slots are found by value type and the words around
   the value: dates, times, amounts with the same role ("budget" is not "spent"), quantities with
   the same unit and activity, versions of the same name, ordinals, identifiers, a name after the
   same preposition in a single-valued predicate ("is", "prefers", "lives in"; "learns Spanish" and
   "learns Japanese" can both hold), a diet or relationship status, the one date or time of a
   thing ("standup is at 9:00" / "Standup moves to 9:30"); "June 6, not the 4th" names the old
   day; two speakers naming different places on one topic (a date and "dinner") conflict, for
   review. -> UPDATES when the same voice
   says it, the kind matches, and a past event is not being compared with a plan or a coming one;
   CONFLICTS_WITH when two sources disagree ("Kofi says" / "Ana says"), when only one of the two
   is attributed (review), or when the candidate is older than the neighbour (review).
4. ``change-marker``: "moved to", "switched to", "no longer", "now", "instead", "promoted", ...
   with the same subject and slot -> UPDATES; a strong marker whose slot the words do not name
   goes to review when the vectors agree. A word both say is the slot only when the candidate puts
   a value there that the neighbour lacks (a name, number, date, another word beside it: "oat milk"
   for "whole milk"), or ends what the neighbour says ("stopped using todoist"); a marker under a
   negator ("never quit", "hasn't moved") is none.
   ``restated``: the neighbour said again with the candidate's value in its place reads as the
   candidate ("Sam's car is a Tesla" / "Sam drives a Tesla now"; the caller passes the vector as
   `Neighbour.restated_similarity`, see `restate`), the candidate announcing the change ("now", "a
   new job") with nothing added alongside ("too"), in a slot that holds one value -> UPDATES (applied
   from 0.8, for review below); an event ("spent last weekend in Vienna") announces nothing.
5. ``paraphrase`` / ``restatement``: the same numbers, names and polarity and the candidate's
   content words covered by the neighbour's; or a vector similarity >= 0.8 where the only new word
   is the main verb ("eats vegan" / "is vegan") -> duplicate.
6. ``adds-detail``: the same subject, two or more shared anchors, at least one of them from what
   the neighbour says about its subject (its predicate), or the very same subject phrase ("Marek's
   car"); nothing contradicted, something new -> EXTENDS. A preference never extends a
   non-preference (a taste stands on its own), and a plan never extends a past event.
7. ``follow-up``: nothing above matched, and the candidate answers a question the other speaker
   asked right after the neighbour was said ("Which day?") -> EXTENDS (the caller marks such
   neighbours ``asked_about``; the words may share nothing).
8. otherwise ``new``.

The strongest decision over all neighbours wins: by confidence, then duplicate > UPDATES >
CONFLICTS_WITH > EXTENDS, then vector similarity, BM25 rank and recency.

Known limits: no world knowledge. "Aaron's mortgage" does not extend "Aaron bought a house",
"stay at a ryokan in Hakone" does not extend "going to Japan", "Mo loves Radiohead" is not seen
as "Mo's favourite band is Radiohead". Those are the LLM engine's job; the rules prefer missing a
link to inventing one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from mnemoflow.memory.english.lexicon import DEVICE_CLASSES
from mnemoflow.memory.relate.changes import (
    _ENDED_SUBJECT,
    _ended_by_marker,
    _held_value,
)
from mnemoflow.memory.relate.claim_values import Value
from mnemoflow.memory.relate.claim_words import (
    CLEARED,
    TIME_UNITS,
    among,
    overlap,
    stem,
)
from mnemoflow.memory.relate.claims import Claim, parse_claim
from mnemoflow.memory.relate.compare import (
    _QUALIFIER_STEMS,
    _adds_content,
    _changes_its_head,
    _completed_compound,
    _covers_predicate,
    _disagreements,
    _entity_keys,
    _modality_clash,
    _negated_values,
    _normalised,
    _other_person,
    _other_thing,
    _same_subject_phrase,
    _shared,
    _slot_link,
    _sources,
    _subject_link,
    _thing_ended,
    _value_keys,
)
from mnemoflow.memory.relate.facts import facts
from mnemoflow.memory.relate.restate import (
    RESTATED_APPLY,
    RESTATED_AT,
    RESTATED_GAIN,
    adds_alongside,
    announces_change,
    asserted,
    may_replace,
    single_valued,
)
from mnemoflow.models import MemoryKind

Relation = Literal["new", "duplicate", "UPDATES", "EXTENDS", "CONFLICTS_WITH"]
Action = Literal["apply", "review", "ignore"]

AUTO_APPLY_AT = 0.85
REVIEW_AT = 0.5
# "I opened a Roth IRA." / "How will you invest it?" / "$500 a month into an index fund.": the
# answer details what the question was about, whatever words it shares with it
FOLLOW_UP_CONFIDENCE = 0.87

__all__ = ["AUTO_APPLY_AT", "REVIEW_AT", "Decision", "Neighbour", "action", "classify"]


@dataclass(frozen=True)
class Neighbour:
    """A memory of the candidate's scope, as retrieval found it."""

    memory_id: str
    content: str
    kind: MemoryKind
    entities: tuple[str, ...] = ()
    observed_at: datetime | None = None
    event_start_at: datetime | None = None
    vector_similarity: float | None = None  # cosine of normalised embeddings, from the caller
    bm25_rank: int | None = None  # 1 = best
    same_hash: bool = False
    asked_about: bool = False  # the candidate answers a question the other speaker asked about this memory
    speaker: str | None = None  # who said what the memory was read from, when it came from a conversation
    restated_similarity: float | None = None  # the candidate against this memory restated with its values (restate)
    same_turn: bool = False  # read from the candidate's own turn: a clause of the same statement


@dataclass(frozen=True)
class Decision:
    relation: Relation
    target_id: str | None
    confidence: float
    reason: str


def action(decision: Decision) -> Action:
    """>= 0.85 applies automatically, 0.5 - 0.85 goes to the review queue, < 0.5 is ignored."""
    if decision.confidence >= AUTO_APPLY_AT:
        return "apply"
    if decision.confidence >= REVIEW_AT:
        return "review"
    return "ignore"


_PRIORITY = {"duplicate": 3, "UPDATES": 2, "CONFLICTS_WITH": 1, "EXTENDS": 0}


def classify(
    candidate_content: str,
    candidate_kind: MemoryKind,
    candidate_entities: Sequence[str],
    neighbours: Sequence[Neighbour],
    *,
    now: datetime,
    speaker: str | None = None,
) -> Decision:
    """Decide what the candidate does to its scope's memories. Pure: no storage, no model.

    `neighbours` must come from the candidate's own scope (see the module docstring); `now` is when
    the candidate was observed, so that a neighbour observed later is never superseded by it;
    `speaker` who said the candidate (two people who disagree conflict; one person corrects).
    """
    cand = parse_claim(candidate_content)
    cand_entities = _entity_keys(candidate_entities)
    verdicts: list[tuple[tuple, Decision]] = []
    notes: list[str] = []
    ruled_out = _negated_values(cand)  # the candidate's own: read once, not per neighbour
    for position, neighbour in enumerate(neighbours):
        decision = _judge(cand, candidate_kind, cand_entities, neighbour, now, notes, speaker, ruled_out)
        if neighbour.same_turn and decision is not None and decision.relation in ("UPDATES", "CONFLICTS_WITH"):
            decision = None  # the clauses of one turn are one statement: none replaces or contradicts another
        if neighbour.asked_about and (decision is None or decision.confidence < REVIEW_AT):
            decision = Decision("EXTENDS", neighbour.memory_id, FOLLOW_UP_CONFIDENCE,
                                "follow-up: details what was just asked or said about it")
        if decision is None or decision.confidence < REVIEW_AT:
            continue
        sim = neighbour.vector_similarity if neighbour.vector_similarity is not None else 0.0
        rank = neighbour.bm25_rank if neighbour.bm25_rank is not None else 10**6
        seen = neighbour.observed_at.timestamp() if neighbour.observed_at else 0.0
        key = (round(decision.confidence, 6), _PRIORITY[decision.relation], sim, -rank, seen, -position)
        verdicts.append((key, decision))
    best = max(verdicts, key=lambda kv: kv[0])[1] if verdicts else None
    if (best is None or best.relation == "EXTENDS") and len(parts := facts(candidate_content, clauses=True)) > 1:
        # "Priya left the company; Tom is Noor's manager now": the whole adds to "Noor's manager is Priya", and its
        # second fact changes it
        changes = (d for part in parts if (d := classify(part, candidate_kind, candidate_entities, neighbours,
                                                          now=now, speaker=speaker)).relation == "UPDATES")
        best = max(changes, key=lambda d: d.confidence, default=best)
    if best is not None:
        return best
    reason = "new: no neighbour shares its subject and slot"
    if notes:
        reason = "new: " + "; ".join(dict.fromkeys(notes))
    return Decision("new", None, 1.0, reason)


# ---------------------------------------------------------------------------------------------
# one neighbour


def _judge(cand: Claim, kind: str, cand_entities: frozenset[str], neighbour: Neighbour, now: datetime,
           notes: list[str], speaker: str | None = None, ruled_out: Sequence[Value] = ()) -> Decision | None:
    nid = neighbour.memory_id
    if neighbour.same_hash:
        return Decision("duplicate", nid, 1.0, "hash: same content hash")
    old = parse_claim(neighbour.content)
    if _normalised(cand.text) == _normalised(old.text):
        return Decision("duplicate", nid, 0.99, "paraphrase: the same text up to case and punctuation")
    old_entities = _entity_keys(neighbour.entities)
    if not _subject_link(cand, old, cand_entities, old_entities):
        return None
    sources = _sources(cand, old)
    if sources == "same" and not cand.source and speaker and neighbour.speaker and \
            speaker.casefold() != neighbour.speaker.casefold():
        sources = "speakers"  # "Dan: dinner is at Lupo" / "Mia: I booked Centrale": two voices
    older = neighbour.observed_at is not None and neighbour.observed_at > now
    sim = neighbour.vector_similarity
    if _other_person(cand, old):  # "Grace's sister ..." says nothing about Grace
        return None
    if _other_thing(cand, old) and not _changes_its_head(cand, old):
        # "Chen's return flight" against "Chen's flight": no value of one can replace a value of the
        # other; only detail can relate them
        return _extends(cand, old, kind, neighbour.kind, nid, sim, cand_entities, old_entities, same_thing=False)

    # 2. negation and correction
    decision, polarity_clash = _negation(cand, old, nid, sources, older)
    # a rule and a fact are two memories: "don't suggest peanuts" neither denies nor repeats "allergic to peanuts"
    rule_and_fact = "rule" in {kind, neighbour.kind} and kind != neighbour.kind
    if rule_and_fact:
        decision, polarity_clash = None, False
    if decision is not None and not (decision.relation == "UPDATES" and kind != neighbour.kind):
        return decision  # a rule ("never suggest peanuts") does not replace the fact behind it

    # 3. a value of the same slot differs
    diffs = _disagreements(cand, old, same_voice=sources not in ("different", "speakers"), now=now,
                           ruled_out=ruled_out)
    blocked, said_now = False, asserted(cand)
    if diffs and not said_now:  # "previously lived in Accra", "is considering ... next year"
        notes.append(f"not asserted as the case now, beside {nid}")
        diffs, blocked = [], True
    if diffs:
        what = "; ".join(f"{d.old.text} -> {d.new.text}" for d in diffs[:3])
        tight = any(d.tight for d in diffs)
        # a slot matched by position alone is for review, unless the vectors say the same thing is meant
        loose_conf = 0.86 if sim is not None and sim >= 0.75 else 0.8
        if sources == "different":
            conf = 0.88 if tight else loose_conf
            return Decision("CONFLICTS_WITH", nid, conf,
                            f"value: sources disagree ({old.source} / {cand.source}): {what}")
        if sources == "speakers" and cand.change != "strong":
            conf = 0.88 if tight else loose_conf
            return Decision("CONFLICTS_WITH", nid, conf,
                            f"value: {neighbour.speaker} and {speaker} disagree, nothing says which holds: {what}")
        if older:
            return Decision("CONFLICTS_WITH", nid, 0.6,
                            f"value: disagrees with a memory observed after it: {what}")
        if sources == "mixed" and not cand.change:
            return Decision("CONFLICTS_WITH", nid, 0.65,
                            f"value: an attributed and an unattributed statement disagree: {what}")
        if cand.change:
            return Decision("UPDATES", nid, 0.92, f"value: {what}, with change marker '{cand.change_text}'")
        if kind != neighbour.kind and not all(d.old.type in DEVICE_CLASSES for d in diffs):  # "got a Pixel 8 on
            # Saturday" is dated, yet the phone it names is the phone now
            notes.append(f"parallel statement to {nid} ({neighbour.kind} vs {kind}: {what})")
            blocked = True
        elif _modality_clash(cand, old):
            notes.append(f"a past event and a plan differ from {nid} ({what})")
            blocked = True
        elif cand.modality == old.modality == "past":  # "won a tournament on May 23" / "... on July 8": both happened
            notes.append(f"another occurrence of what {nid} says happened ({what})")
            blocked = True
        else:
            conf = 0.9 if tight else 0.75
            if all(d.old.type == "name" for d in diffs) and not _covers_predicate(cand, old, diffs):
                conf = 0.75  # another name in the same place, but the rest of the statement changed too
            return Decision("UPDATES", nid, conf, f"value: same slot, new value: {what}")

    # 4. explicit change markers
    ended = bool(_ENDED_SUBJECT.search(cand.change_text or ""))  # "Lisbon's off" adds nothing but the ending
    # "gone off tea, coffee all the way" ends tea: a change that ends nothing the neighbour says is not its change
    blocked = blocked or bool(cand.negated) and not any(among(x, old.positive) for x in cand.negated)
    if cand.change and not blocked and not older and (_adds_content(cand, old) or ended) and said_now and \
            not (cand.change == "weak" and adds_alongside(cand)):  # "now plays guitar too": one more
        slot = _slot_link(cand, old, strong=cand.change == "strong")
        if not slot and _thing_ended(cand, old):
            slot = f"{cand.subject}, which is gone"
        if slot:
            conf = 0.9 if cand.change == "strong" else 0.86
            if sources == "different":
                conf = 0.8
            return Decision("UPDATES", nid, conf, f"change-marker: '{cand.change_text}' on {slot}")
    if blocked:
        return None
    restated = _restated(cand, old, kind, neighbour, sources) if not older else None
    if restated:
        return restated
    if cand.change == "strong" and not older and sim is not None and sim >= 0.55 and _adds_content(cand, old) and \
            said_now:
        return Decision("UPDATES", nid, 0.7,
                        f"change-marker: '{cand.change_text}', same subject, vector {sim:.2f}, slot not named")

    # 5. duplicates
    if not polarity_clash and not rule_and_fact:
        decision = _duplicate(cand, old, kind, neighbour.kind, nid, sim)
        if decision is not None:
            return decision

    # 6. extends
    return _extends(cand, old, kind, neighbour.kind, nid, sim, cand_entities, old_entities)


def _restated(cand: Claim, old: Claim, kind: str, neighbour: Neighbour, sources: str) -> Decision | None:
    """The neighbour said again with the candidate's value in its place is what the candidate says
    ("Sam's car is a Tesla" / "Sam drives a Tesla now"), the candidate announces the change, and the
    slot holds one value: the same slot, whatever words name it (see `restate`). Applied from
    `RESTATED_APPLY`, for review below it."""
    restated, sim = neighbour.restated_similarity, neighbour.vector_similarity
    if restated is None or sim is None or sources in ("different", "speakers"):
        return None
    if restated < RESTATED_AT or restated - sim < RESTATED_GAIN or not announces_change(cand) or \
            not may_replace(cand) or not single_valued(cand, old) or \
            ("rule" in {kind, neighbour.kind} and kind != neighbour.kind):
        return None
    conf = 0.88 if restated >= RESTATED_APPLY else 0.7
    return Decision("UPDATES", neighbour.memory_id, conf,
                    f"restated: the old statement with the new value reads as this one (vector {restated:.2f}, "
                    f"against {sim:.2f}), with change marker '{cand.change_text or 'new'}'")


_CLEARED_STEMS = frozenset(stem(w) for w in CLEARED)


def _negation(cand: Claim, old: Claim, nid: str, sources: str, older: bool) -> tuple[Decision | None, bool]:
    # "Milk doesn't agree with Chloe" negates something about Chloe, not what "Chloe is ..." says
    negated_here = {x for x in cand.negated if among(x, old.positive) and not among(x, cand.positive)
                    and x != old.subject}
    negated_there = {x for x in old.negated if among(x, cand.positive) and not among(x, cand.negated)}
    if not negated_here and not negated_there:
        return None, False
    return _negation_decision(cand, old, nid, sources, older, negated_here, negated_there), True


def _negation_decision(cand: Claim, old: Claim, nid: str, sources: str, older: bool, negated_here: set[str],
                       negated_there: set[str]) -> Decision | None:
    clash = sorted(negated_here or negated_there)
    subject = {old.subject, cand.subject}
    old_core = {a for a in old.main_names | old.main_stems
                if a not in subject and a not in TIME_UNITS and a not in _QUALIFIER_STEMS}
    cand_all = cand.negated | cand.positive
    same_statement = bool(old_core) and all(among(a, cand_all) for a in old_core)
    if negated_here:
        shared_predicate = {x for x in cand.positive if among(x, old.positive) and x not in subject}
        stated = (cand.main_stems | cand.main_names) - cand.negated - _CLEARED_STEMS
        # "Penicillin is fine, it's sulfa drugs I react to": the replacement follows the main clause
        replacement = {x for x in (stated or cand.positive - _CLEARED_STEMS)
                       if not among(x, old.anchors) and x not in subject}
        # what a correction takes back is a name or value the neighbour holds, not a word of a mood ("won't give up")
        if shared_predicate and replacement and not older and any(_held_value(x, old) for x in negated_here):
            return Decision("UPDATES", nid, 0.92,
                            f"correction: negates {', '.join(clash)} and states {', '.join(sorted(replacement))}")
    if cand.change == "strong" and not older and (same_statement or negated_here) and \
            (_ended_by_marker(cand, old) or any(_held_value(x, old) for x in clash)):
        return Decision("UPDATES", nid, 0.9, f"negation: '{cand.change_text}' {', '.join(clash)}")
    if same_statement:
        conf = 0.88 if sources in ("different", "speakers") else 0.75
        return Decision("CONFLICTS_WITH", nid, conf,
                        f"negation: the same statement with the opposite polarity ({', '.join(clash)})")
    return None


def _duplicate(cand: Claim, old: Claim, kind: str, old_kind: str, nid: str, sim: float | None) -> Decision | None:
    if cand.change:
        return None
    cand_values, old_values = _value_keys(cand), _value_keys(old)
    if not cand_values <= old_values:
        return None
    if any(not among(n, old.names | old.source_names) for n in cand.names):
        return None
    cand_stems = {s for s in cand.stems if s not in _QUALIFIER_STEMS}
    old_stems = {s for s in old.stems if s not in _QUALIFIER_STEMS}
    covered = overlap(cand_stems, old_stems) | _completed_compound(cand, old_stems)
    coverage = len(covered) / len(cand_stems) if cand_stems else 1.0
    if coverage == 1.0 and (cand_stems or cand.names):
        mutual = cand_values == old_values and all(among(s, cand_stems) for s in old_stems) and \
            all(among(n, cand.names) for n in old.names)
        if mutual:
            return Decision("duplicate", nid, 0.97, "paraphrase: the same content words, names and values")
        return Decision("duplicate", nid, 0.92,
                        "restatement: says nothing the original does not (same names and values)")
    shared_names = {n for n in cand.names if n != cand.subject and among(n, old.names)}
    # a rewording may change the verb ("eats vegan" / "is vegan"), never add a thing ("cats and dogs")
    uncovered = cand_stems - covered - ({cand.verb_stem} if cand.verb_stem else set())
    # a preference restated as a fact ("mostly writes Python" / "Python is Leah's main language") is one
    same_kind = kind == old_kind or {kind, old_kind} == {"fact", "preference"}
    if sim is not None and sim >= 0.8 and same_kind and cand_values == old_values and not uncovered and \
            (coverage >= 0.5 or shared_names):
        conf = min(0.9, 0.8 + (sim - 0.8))
        if shared_names and not uncovered:
            conf = min(0.92, 0.85 + (sim - 0.8) / 2)  # another name besides the subject, nothing added
        return Decision("duplicate", nid, round(conf, 3),
                        f"paraphrase: vector {sim:.2f} with the same names and values (word coverage {coverage:.2f})")
    return None


def _extends(cand: Claim, old: Claim, kind: str, old_kind: str, nid: str, sim: float | None,
             cand_entities: frozenset[str], old_entities: frozenset[str], *,
             same_thing: bool = True) -> Decision | None:
    if kind == "preference" and old_kind != "preference":
        return None
    if not _adds_content(cand, old) and _value_keys(cand) <= _value_keys(old):
        return None
    if _modality_clash(cand, old):
        return None  # a plan is not a detail of a past event, nor the reverse
    shared = _shared(cand.anchors | cand_entities, old.anchors | old_entities)
    same_values = {v.text for v in old.values if v.type not in ("name", "version") and
                   any(v.type == w.type and v.compatible(w) and v.key == w.key for w in cand.values)}
    shared |= same_values
    same_phrase = same_thing and _same_subject_phrase(cand, old)
    if len(shared) < 2 and not same_phrase:
        return None
    in_predicate = {x for x in shared if x in same_values or among(x, old.predicate_anchors)}
    if not in_predicate and same_phrase:
        in_predicate = {f"{old.subject}" + (f"'s {old.subject_head}" if old.subject_head else "")}
    if not in_predicate:
        return None
    shared_names = {x for x in shared if among(x, old.names | old_entities) and x != old.subject}
    conf = 0.78 + 0.04 * min(3, len(shared) - 2)
    if shared_names:
        conf += 0.05
    if old.names and all(among(x, shared) for x in old.names):
        conf += 0.03  # every name the neighbour mentions, and more: "Ben is coming to Japan with Alex"
    if cand.subject and cand.subject == old.subject:
        conf += 0.03
    if sim is not None:
        conf += 0.1 * max(0.0, sim - 0.6)
    return Decision("EXTENDS", nid, round(min(conf, 0.95), 3),
                    f"adds-detail: shares {', '.join(sorted(shared))} (about {', '.join(sorted(in_predicate))})")
