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

DERIVES (a memory inferred from two or more others) is a separate step: `derive` in
`mnemoflow.memory.generate.inference.families`, re-exported here.

The rules, per neighbour, first match wins (`Decision.reason` starts with the rule's name):

1. ``hash``: the same content hash -> duplicate (1.0).
   A neighbour that shares no subject with the candidate is skipped; one about another person
   ("Grace's sister" against "Grace") is unrelated; one about another thing of the same owner
   ("Chen's return flight" against "Chen's flight") can only be extended, never replaced.
2. ``correction``: the candidate negates something the neighbour asserts ("... and not to
   penicillin", "no longer uses VS Code") and asserts a replacement -> UPDATES. The same statement
   negated without a replacement is ``negation`` -> CONFLICTS_WITH (UPDATES with "no longer").
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
   goes to review when the vectors agree.
   One word swapped in a single-valued slot ("prefers aisle seats" / "prefers window seats") ->
   UPDATES for review.
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

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

from mnemoflow.memory.relate.claims import (
    ANTONYMS,
    CLEARED,
    FUNCTIONAL,
    PERSON_NOUNS,
    QUALIFIERS,
    RESIDENCE,
    SEASONS,
    TIME_UNITS,
    Claim,
    Value,
    overlap,
    parse_claim,
    same_stem,
    stem,
)
from mnemoflow.memory.generate.inference.families import Derived, derive
from mnemoflow.models import MemoryKind

Relation = Literal["new", "duplicate", "UPDATES", "EXTENDS", "CONFLICTS_WITH"]
Action = Literal["apply", "review", "ignore"]

AUTO_APPLY_AT = 0.85
REVIEW_AT = 0.5
# "I opened a Roth IRA." / "How will you invest it?" / "$500 a month into an index fund.": the
# answer details what the question was about, whatever words it shares with it
FOLLOW_UP_CONFIDENCE = 0.87

__all__ = ["AUTO_APPLY_AT", "REVIEW_AT", "Decision", "Derived", "Neighbour", "action", "classify", "derive"]


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


_STATUSES = frozenset({"diet", "relationship status"})  # one holds at a time, wherever it is said
_PRIORITY = {"duplicate": 3, "UPDATES": 2, "CONFLICTS_WITH": 1, "EXTENDS": 0}
_QUALIFIER_STEMS = frozenset(stem(q) for q in QUALIFIERS) | QUALIFIERS


def classify(
    candidate_content: str,
    candidate_kind: MemoryKind,
    candidate_entities: Sequence[str],
    neighbours: Sequence[Neighbour],
    *,
    now: datetime,
    speaker: str | None = None,
    reminder: bool = False,
) -> Decision:
    """Decide what the candidate does to its scope's memories. Pure: no storage, no model.

    `neighbours` must come from the candidate's own scope (see the module docstring); `now` is when
    the candidate was observed, so that a neighbour observed later is never superseded by it;
    `speaker` who said the candidate (two people who disagree conflict; one person corrects);
    `reminder` that the speaker said it was told before ("..., remember, ...").
    """
    cand = parse_claim(candidate_content)
    cand_entities = _entity_keys(candidate_entities)
    verdicts: list[tuple[tuple, Decision]] = []
    notes: list[str] = []
    ruled_out = _negated_values(cand)  # the candidate's own: read once, not per neighbour
    for position, neighbour in enumerate(neighbours):
        decision = _judge(cand, candidate_kind, cand_entities, neighbour, now, notes, speaker, ruled_out)
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
    if verdicts:
        best = max(verdicts, key=lambda kv: kv[0])[1]
        return _reminded(cand, best, neighbours) if reminder else best
    reason = "new: no neighbour shares its subject and slot"
    if notes:
        reason = "new: " + "; ".join(dict.fromkeys(notes))
    return Decision("new", None, 1.0, reason)


def _reminded(cand: Claim, decision: Decision, neighbours: Sequence[Neighbour]) -> Decision:
    """A reminder ("don't suggest peanuts, remember, because of my allergy") of a memory it says all of,
    in near the same meaning, is that memory said again: it reinforces it rather than extending it."""
    if decision.relation != "EXTENDS":
        return decision
    old = next(n for n in neighbours if n.memory_id == decision.target_id)
    said = parse_claim(old.content)
    core = {x for x in said.stems | said.names if x not in _QUALIFIER_STEMS and x not in TIME_UNITS}
    if (old.vector_similarity or 0.0) < 0.8 or not core or not all(_has(x, cand.stems | cand.names) for x in core):
        return decision
    return Decision("duplicate", old.memory_id, 0.9, f"reminder: says all of {old.memory_id} again, as told before "
                                                     f"(vector {old.vector_similarity:.2f})")


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
    if _other_person(cand, old):
        return None  # "Grace's sister ..." says nothing about Grace
    if _other_thing(cand, old):
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
    blocked = False
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
        if kind != neighbour.kind:
            notes.append(f"parallel statement to {nid} ({neighbour.kind} vs {kind}: {what})")
            blocked = True
        elif _modality_clash(cand, old):
            notes.append(f"a past event and a plan differ from {nid} ({what})")
            blocked = True
        else:
            conf = 0.9 if tight else 0.75
            if all(d.old.type == "name" for d in diffs) and not _covers_predicate(cand, old, diffs):
                conf = 0.75  # another name in the same place, but the rest of the statement changed too
            return Decision("UPDATES", nid, conf, f"value: same slot, new value: {what}")

    # 4. explicit change markers
    if cand.change and not blocked and not older and _adds_content(cand, old):
        slot = _slot_link(cand, old, strong=cand.change == "strong")
        if slot:
            conf = 0.9 if cand.change == "strong" else 0.86
            if sources == "different":
                conf = 0.8
            return Decision("UPDATES", nid, conf, f"change-marker: '{cand.change_text}' on {slot}")
        alongside = _slot_said_alongside(cand, old) if cand.change == "strong" and sim and sim >= 0.7 else None
        if alongside:  # "switched to oat milk flat whites; black coffee upsets Omar's stomach now"
            return Decision("UPDATES", nid, 0.86, f"change-marker: '{cand.change_text}' on {alongside}, "
                                                  f"said in the same change, vector {sim:.2f}")
        if cand.change == "strong" and sim is not None and sim >= 0.55:
            return Decision("UPDATES", nid, 0.7,
                            f"change-marker: '{cand.change_text}', same subject, vector {sim:.2f}, slot not named")

    if blocked:
        return None

    # 4b. the same sentence with one word swapped in a single-valued slot ("prefers aisle/window seats")
    swap = _substitution(cand, old)
    if swap and not older:
        if sources in ("different", "speakers"):
            return Decision("CONFLICTS_WITH", nid, 0.8, f"value: sources disagree on one word: {swap}")
        return Decision("UPDATES", nid, 0.8, f"value: one word replaced in a single-valued slot: {swap}")

    # 5. duplicates
    if not polarity_clash and not rule_and_fact:
        decision = _duplicate(cand, old, kind, neighbour.kind, nid, sim)
        if decision is not None:
            return decision

    # 6. extends
    return _extends(cand, old, kind, neighbour.kind, nid, sim, cand_entities, old_entities)


# ---------------------------------------------------------------------------------------------
# the pieces


def _normalised(text: str) -> str:
    return " ".join(re.findall(r"[\w$€£%:.,]+", text.lower())).rstrip(".")


def _entity_keys(entities: Sequence[str]) -> frozenset[str]:
    keys = set()
    for entity in entities:
        text = entity.split(":", 2)[-1] if entity.startswith("entity:") else entity
        keys.add(text.replace("-", " ").replace("_", " ").strip().lower())
    return frozenset(k for k in keys if k)


def _has(item: str, pool: frozenset[str] | set[str]) -> bool:
    if item in pool:
        return True
    if " " in item or any(" " in p for p in pool):
        words = set(item.split())
        if any(words & set(p.split()) and (len(words) > 1 or len(p.split()) > 1) and
               (words <= set(p.split()) or set(p.split()) <= words) for p in pool):
            return True
    return any(same_stem(item, p) for p in pool)


def _subject_link(cand: Claim, old: Claim, cand_entities: frozenset[str], old_entities: frozenset[str]) -> bool:
    cand_pool = cand.anchors_with_source | cand_entities
    old_pool = old.anchors_with_source | old_entities
    return bool(cand.subject and _has(cand.subject, old_pool) or old.subject and _has(old.subject, cand_pool)
                or _changed_thing(cand, old))


def _changed_thing(cand: Claim, old: Claim) -> str | None:
    """A change said of a thing ("we switched the frontend to Solid") is about the thing, whoever made
    it: its attribute is the one another statement about the same thing gave ("Omar builds the
    frontend in React"), when that statement names a value the change does not keep."""
    if cand.change != "strong" or not any(v.type == "name" and v.lead in ("to", "for") for v in cand.values):
        return None
    things = {a for a in cand.predicate_anchors if a not in cand.names and a not in TIME_UNITS
              and a not in _QUALIFIER_STEMS and _has(a, old.predicate_anchors - old.names)}
    replaced = [v for v in old.values if v.type == "name" and v.key != old.subject
                and not _has(v.key, cand.names)]
    return ", ".join(sorted(things)) if things and replaced else None


def _sources(cand: Claim, old: Claim) -> str:
    if cand.source == old.source:
        return "same"
    if cand.source and old.source:
        return "different"
    return "mixed"


_CLEARED_STEMS = frozenset(stem(w) for w in CLEARED)


def _negation(cand: Claim, old: Claim, nid: str, sources: str, older: bool) -> tuple[Decision | None, bool]:
    # "Milk doesn't agree with Chloe" negates something about Chloe, not what "Chloe is ..." says
    negated_here = {x for x in cand.negated if _has(x, old.positive) and not _has(x, cand.positive)
                    and x != old.subject}
    negated_there = {x for x in old.negated if _has(x, cand.positive) and not _has(x, cand.negated)}
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
    same_statement = bool(old_core) and all(_has(a, cand_all) for a in old_core)
    if negated_here:
        shared_predicate = {x for x in cand.positive if _has(x, old.positive) and x not in subject}
        stated = (cand.main_stems | cand.main_names) - cand.negated - _CLEARED_STEMS
        # "Penicillin is fine, it's sulfa drugs I react to": the replacement follows the main clause
        replacement = {x for x in (stated or cand.positive - _CLEARED_STEMS)
                       if not _has(x, old.anchors) and x not in subject}
        if shared_predicate and replacement and not older:
            return Decision("UPDATES", nid, 0.92,
                            f"correction: negates {', '.join(clash)} and states {', '.join(sorted(replacement))}")
    if cand.change == "strong" and not older and (same_statement or negated_here):
        return Decision("UPDATES", nid, 0.9, f"negation: '{cand.change_text}' {', '.join(clash)}")
    if same_statement:
        conf = 0.88 if sources in ("different", "speakers") else 0.75
        return Decision("CONFLICTS_WITH", nid, conf,
                        f"negation: the same statement with the opposite polarity ({', '.join(clash)})")
    return None


@dataclass(frozen=True)
class _Diff:
    old: Value
    new: Value
    tight: bool


def _covers_predicate(cand: Claim, old: Claim, diffs: list[_Diff]) -> bool:
    replaced = {str(d.old.key) for d in diffs} | {d.old.noun for d in diffs if d.old.noun}  # "room" of "room Orion"
    rest = {a for a in old.predicate_anchors if a not in replaced and a not in _QUALIFIER_STEMS}
    return all(_has(a, cand.predicate_anchors) for a in rest)


def _disagreements(cand: Claim, old: Claim, *, same_voice: bool = True, now: datetime | None = None,
                   ruled_out: Sequence[Value] = ()) -> list[_Diff]:
    """Values of `old` that `cand` replaces in the same slot. A name fills the same slot only after the
    same preposition when one voice speaks ("at Shopify" -> "at Stripe"); two sources are compared
    on the topic alone ("dinner is at Osteria Lupo" / "booked Bar Centrale for dinner")."""
    out: list[_Diff] = []
    shared = _shared(cand.anchors_with_source, old.anchors_with_source)
    single_valued = old.copula or bool(overlap(set(old.main_stems), FUNCTIONAL))
    # "dinner on November 10" said by both: a shared value is a shared topic too
    topic = len(shared) + sum(1 for v in old.all_values if v.type not in ("name", "version")
                              and any(w.type == v.type and w.compatible(v) for w in cand.all_values))
    one_thing = _same_thing(cand, old)
    for value in old.values:
        if value.type == "name":
            if value.key not in old.predicate_anchors or _has(str(value.key), cand.main_names):
                continue
            if same_voice and not single_valued and not cand.change:
                continue  # "learns Spanish" and "learns Japanese" can both hold
            pool = [v for v in cand.values if v.type == "name" and v.key in cand.predicate_anchors
                    and not _has(str(v.key), old.names)]
        else:
            pool = [v for v in cand.values if v.type == value.type]
            if not pool and value.type in _STATUSES:  # "..., so Hana is pescatarian now"
                pool = [v for v in cand.all_values if v.type == value.type]
        pool = [v for v in pool if v not in ruled_out]
        if not pool or any(v.compatible(value) for v in pool):
            continue
        if any(v.compatible(value) or _same_day(v, value) for v in ruled_out):
            out.append(_Diff(value, pool[0], True))  # "on June 16, not on June 14": a correction
            continue
        same_type_old = [v for v in old.values if v.type == value.type]
        for new in pool:
            if value.type == "name" and same_voice and new.lead != value.lead:
                continue
            if value.type == "date" and now is not None and not cand.change and _past_and_future(new, value, now):
                continue  # a trip that happened and a trip that is coming are two trips
            tight = _aligned(new, value, cand, old)
            loose = tight is None and value.type in ("date", "time", "money", "percent", "quantity") and \
                len(pool) == 1 and len(same_type_old) == 1 and (len(shared) >= 2 or one_thing and value.type in ("date", "time")) and \
                _roles_agree(new, value)
            if tight is None and value.type == "name" and not same_voice:
                loose = len(pool) == 1 and topic >= 2  # two people naming different places for one dinner
            if tight or loose:
                out.append(_Diff(value, new, bool(tight)))
                break
    out.extend(_antonyms(cand, old))
    return out


def _negated_values(claim: Claim) -> list[Value]:
    """Values the claim rules out ("..., not on June 14", "not the 4th"): they are the old value, not a new one."""
    ruled_out = []
    for v in claim.values:
        written = re.escape(re.sub(r"\s+(?=[,.])", "", v.text))
        if v.type != "name" and re.search(rf"\bnot\s+(?:(?:on|at|in|for|to|from|by|the)\s+)?{written}",
                                          claim.text, re.I):
            ruled_out.append(v)
    return ruled_out


def _same_day(ruled_out: Value, old_value: Value) -> bool:
    """"June 6, not the 4th": an ordinal ruled out next to a date names the old date's day."""
    if ruled_out.type != "quantity" or old_value.type != "date" or not re.fullmatch(r"\d{1,2}(?:st|nd|rd|th)",
                                                                                    ruled_out.text):
        return False
    return getattr(old_value.key, "day", None) == int(ruled_out.key)  # type: ignore[call-overload]


def _same_thing(cand: Claim, old: Claim) -> bool:
    """Both claims are about one thing, not a person: "standup is at 9:00" / "Standup moves to 9:30",
    "Mei's dentist ..." / "Mei's dentist ...". A thing's single time or date is its slot."""
    if not cand.subject or cand.subject != old.subject:
        return False
    if cand.subject_head or old.subject_head:
        return cand.subject_head == old.subject_head
    return cand.subject in cand.stems or cand.subject in old.stems


def _roles_agree(a: Value, b: Value) -> bool:
    return not (a.role and b.role and a.role != b.role)


def _aligned(new: Value, old_value: Value, cand: Claim, old: Claim) -> bool | None:
    """True: the two values fill the same slot; False: they cannot; None: no evidence either way."""
    kind = old_value.type
    if kind == "version":
        return new.key[0] == old_value.key[0]  # type: ignore[index]
    if kind in ("diet", "relationship status"):
        return cand.subject == old.subject and cand.subject_head == old.subject_head
    if kind == "quantity" and new.unit and old_value.unit:
        if not same_stem(new.unit, old_value.unit):
            return None
        rest_new = set(new.context) - {new.unit} - _QUALIFIER_STEMS
        rest_old = set(old_value.context) - {old_value.unit} - _QUALIFIER_STEMS
        # "runs 20 km" / "runs 35 km": yes; "swims 2 km" / "runs 20 km": no
        return True if (not rest_new and not rest_old) or overlap(rest_new, rest_old) else False
    if kind == "money":
        if new.key[0] != old_value.key[0] or not _roles_agree(new, old_value):  # type: ignore[index]
            return False
    if kind == "name" and _title(new.text) and _title(new.text) == _title(old_value.text) and \
            overlap(set(old.main_stems), FUNCTIONAL):
        return True  # "Pepper's vet is Dr. Alvarez" / "Pepper sees Dr. Chen": one doctor's place
    new_context = set(new.context) - _QUALIFIER_STEMS
    old_context = set(old_value.context) - _QUALIFIER_STEMS
    if cand.copula and old.copula and kind == "name":
        # "The design review is in Vega" / "The design review ... is in room Orion": the subject is the slot
        new_context |= cand.subject_stems
        old_context |= old.subject_stems
    if not old.copula:
        # "The server has 32 GB of RAM": the owner is not the slot; in "Priya's flight is on ..." it is
        new_context -= cand.subject_stems
        old_context -= old.subject_stems
    return True if overlap(new_context, old_context) else None


_PROFESSIONAL_TITLES = frozenset({"dr", "prof", "professor"})


def _title(name: str) -> str | None:
    """"Dr." of "Dr. Chen": a professional title names the role the person fills."""
    first = name.split()[0].lower().rstrip(".") if name.split() else ""
    return first if first in _PROFESSIONAL_TITLES and len(name.split()) > 1 else None


def _antonyms(cand: Claim, old: Claim) -> list[_Diff]:
    """'the old cluster' against 'the new cluster': an antonym before the same noun."""
    found = []
    for a, b in ANTONYMS:
        for x, y in ((a, b), (b, a)):
            nx = re.search(rf"\b{x}\s+(\w+)", cand.main, re.I)
            ny = re.search(rf"\b{y}\s+(\w+)", old.main, re.I)
            if nx and ny and same_stem(stem(nx.group(1)), stem(ny.group(1))) and \
                    not re.search(rf"\b{y}\b", cand.main, re.I) and not re.search(rf"\b{x}\b", old.main, re.I):
                found.append(_Diff(Value("antonym", y, f"{y} {ny.group(1)}"),
                                   Value("antonym", x, f"{x} {nx.group(1)}"), True))
    return found


def _modality_clash(cand: Claim, old: Claim) -> bool:
    return {cand.modality, old.modality} == {"past", "plan"}


def _shared(a: frozenset[str], b: frozenset[str]) -> set[str]:
    return {x for x in a if x not in TIME_UNITS and x not in _QUALIFIER_STEMS and _has(x, b)}


def _adds_content(cand: Claim, old: Claim) -> bool:
    new_names = {n for n in cand.main_names if not _has(n, old.names)}
    new_stems = {s for s in cand.main_stems if s not in _QUALIFIER_STEMS and not _has(s, old.stems)}
    return bool(new_names or new_stems)


def _slot_link(cand: Claim, old: Claim, *, strong: bool) -> str | None:
    subject = {cand.subject, old.subject}
    if overlap(set(cand.main_stems), RESIDENCE) and overlap(set(old.main_stems), RESIDENCE):
        return "where they live"
    shared_stems = {s for s in cand.main_stems if s not in subject and s not in TIME_UNITS
                    and s not in _QUALIFIER_STEMS and _has(s, old.main_stems)}
    if shared_stems:
        return ", ".join(sorted(shared_stems))
    if strong:
        shared_names = {n for n in cand.main_names if n not in subject and _has(n, old.main_names)}
        if shared_names:
            return ", ".join(sorted(shared_names))
    return None


def _slot_said_alongside(cand: Claim, old: Claim) -> str | None:
    """A change told in two clauses ("switched to X; black coffee upsets me now") names the old slot
    in its second clause: the old statement's own words there are its slot."""
    subject = {cand.subject, old.subject}
    shared = {s for s in cand.stems if s not in cand.main_stems and s not in subject and s not in TIME_UNITS
              and s not in _QUALIFIER_STEMS and _has(s, old.main_stems)}
    return ", ".join(sorted(shared)) or None


def _value_keys(claim: Claim) -> set[tuple[str, str]]:
    return {(v.type, repr(v.key)) for v in claim.all_values if v.type != "name"}


def _duplicate(cand: Claim, old: Claim, kind: str, old_kind: str, nid: str, sim: float | None) -> Decision | None:
    if cand.change:
        return None
    cand_values, old_values = _value_keys(cand), _value_keys(old)
    if not cand_values <= old_values:
        return None
    if any(not _has(n, old.names | old.source_names) for n in cand.names):
        return None
    cand_stems = {s for s in cand.stems if s not in _QUALIFIER_STEMS}
    old_stems = {s for s in old.stems if s not in _QUALIFIER_STEMS}
    covered = overlap(cand_stems, old_stems) | _completed_compound(cand, old_stems)
    coverage = len(covered) / len(cand_stems) if cand_stems else 1.0
    if coverage == 1.0 and (cand_stems or cand.names):
        mutual = cand_values == old_values and all(_has(s, cand_stems) for s in old_stems) and \
            all(_has(n, cand.names) for n in old.names)
        if mutual:
            return Decision("duplicate", nid, 0.97, "paraphrase: the same content words, names and values")
        return Decision("duplicate", nid, 0.92,
                        "restatement: says nothing the original does not (same names and values)")
    shared_names = {n for n in cand.names if n != cand.subject and _has(n, old.names)}
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


def _completed_compound(cand: Claim, old_stems: set[str]) -> set[str]:
    """The last word of the candidate's main clause when it only completes a compound whose first
    word the neighbour said alone: "prefers window" / "wants a window seat", "on Pacific time" /
    "in the Pacific time zone". A word before one the neighbour said ("green tea") adds detail."""
    words = re.findall(r"[a-z]+", cand.main.lower())
    if len(words) < 2 or stem(words[-2]) not in old_stems:
        return set()
    last = stem(words[-1])
    return {last} if last not in old_stems else set()


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
    in_predicate = {x for x in shared if x in same_values or _has(x, old.predicate_anchors)}
    if not in_predicate and same_phrase:
        in_predicate = {f"{old.subject}" + (f"'s {old.subject_head}" if old.subject_head else "")}
    if not in_predicate:
        return None
    shared_names = {x for x in shared if _has(x, old.names | old_entities) and x != old.subject}
    conf = 0.78 + 0.04 * min(3, len(shared) - 2)
    if shared_names:
        conf += 0.05
    if old.names and all(_has(x, shared) for x in old.names):
        conf += 0.03  # every name the neighbour mentions, and more: "Ben is coming to Japan with Alex"
    if cand.subject and cand.subject == old.subject:
        conf += 0.03
    if sim is not None:
        conf += 0.1 * max(0.0, sim - 0.6)
    return Decision("EXTENDS", nid, round(min(conf, 0.95), 3),
                    f"adds-detail: shares {', '.join(sorted(shared))} (about {', '.join(sorted(in_predicate))})")


def _other_person(cand: Claim, old: Claim) -> bool:
    """"Grace's sister" against "Grace": a person noun heads one subject and the other never mentions it."""
    if cand.subject_head == old.subject_head:
        return False
    for head, other in ((cand.subject_head, old), (old.subject_head, cand)):
        if head in PERSON_NOUNS and not _has(head, other.stems):
            return True
    return False


def _span(value: Value) -> tuple[date, date] | None:
    d = value.key
    if getattr(d, "year", None) is None:
        return None
    if d.month and d.day:
        try:
            day = date(d.year, d.month, d.day)
        except ValueError:
            return None
        return day, day
    if d.month:
        return date(d.year, d.month, 1), date(d.year, d.month, 28)
    if d.season:
        months = SEASONS[d.season]
        return date(d.year, min(months), 1), date(d.year, max(months), 28)
    return date(d.year, 1, 1), date(d.year, 12, 31)


def _past_and_future(a: Value, b: Value, now: datetime) -> bool:
    spans = [_span(a), _span(b)]
    if None in spans:
        return False
    today = now.date()
    past = [s[1] < today for s in spans]  # type: ignore[index]
    future = [s[0] > today for s in spans]  # type: ignore[index]
    return (past[0] and future[1]) or (past[1] and future[0])


def _substitution(cand: Claim, old: Claim) -> str | None:
    """Main clauses equal but for one word, in a single-valued slot ("prefers", "favourite", "main")."""
    a, b = cand.sequence, old.sequence
    if len(a) != len(b) or len(a) < 3:
        return None
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if not same_stem(x, y)]
    if len(diff) != 1:
        return None
    i = diff[0]
    if a[i] in _QUALIFIER_STEMS or b[i] in _QUALIFIER_STEMS or i == 0:
        return None
    if not overlap(set(old.main_stems), FUNCTIONAL):
        return None
    return f"{b[i]} -> {a[i]}"


def _other_thing(cand: Claim, old: Claim) -> bool:
    """Both subjects are possessive phrases and one carries a modifier the other claim never mentions."""
    if cand.subject_head is None or old.subject_head is None or cand.subject != old.subject:
        return False
    extra_here = {x for x in cand.subject_stems if not _has(x, old.stems)}
    extra_there = {x for x in old.subject_stems if not _has(x, cand.stems)}
    if not (extra_here & _QUALIFIER_STEMS and extra_there & _QUALIFIER_STEMS):
        # "Tom's daily standup" is "Tom's standup"; "the daily standup" is not "the weekly standup"
        extra_here, extra_there = extra_here - _QUALIFIER_STEMS, extra_there - _QUALIFIER_STEMS
    return bool(extra_here or extra_there)


def _same_subject_phrase(cand: Claim, old: Claim) -> bool:
    """"Marek's car ..." and "Marek's car ...", "The release ..." and "The release ...": one thing."""
    if not cand.subject or cand.subject != old.subject:
        return False
    if cand.subject_head is not None:
        return cand.subject_head == old.subject_head
    return old.subject_head is None and cand.subject not in cand.names
