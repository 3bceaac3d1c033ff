"""The memory tree in recall: sealed summaries, the user's profile and the topic signal.

What the query asks for decides (`intent.breadth`): a broad query ("summarise the trip planning",
"what did we talk about in March?") gets the best summaries first, within `summary_max_share` of
the budget, and a query about a person as a whole gets the profile's lines first, within
`profile_max_share`; the evidence fills the rest. A narrow query, most of them, gets neither in
the default preset, so neither can crowd out its evidence. Every summary and profile line goes
through the store's read-time gate: one that covers a memory no longer current is never shown.
A summary cites the conversation turns of the memories it covers, those its text shows first.
"""

from __future__ import annotations

import re
from datetime import datetime

from mnemoflow.models import MemoryItem
from mnemoflow.recall.citations import Covered
from mnemoflow.recall.config import RecallConfig
from mnemoflow.recall.fusion import Fused
from mnemoflow.recall.intent import Breadth, named_months
from mnemoflow.recall.packing import Candidate, tokens_of
from mnemoflow.storage import Scope, Store
from mnemoflow.tokens import budget_units, units
from mnemoflow.tree_models import Profile, Summary

TOPIC_VOTERS = 10  # the top memories whose topics decide the query's topic


def uses(config: RecallConfig, kinds: set[str], shape: Breadth) -> tuple[bool, bool]:
    """(search summaries, read the profile) for this query."""
    summaries = "summary" in kinds and (config.summaries == "ranked" or (config.summaries == "broad"
                                                                          and shape != "narrow"))
    profile = "profile" in kinds and (config.profile == "ranked" or (config.profile == "broad" and shape == "person"))
    return summaries, profile


def _in_months(summary: Summary, months: list[tuple[int, int | None]]) -> bool:
    """Whether the summary's period touches one of the months the query names."""
    if not months:
        return True
    if summary.period_start is None or summary.period_end is None:
        return False
    start, end = summary.period_start, summary.period_end
    spanned = set()
    year, month = start.year, start.month
    while (year, month) <= (end.year, end.month):
        spanned.add((year, month))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return any((y, m) in spanned if y is not None else any(s[1] == m for s in spanned) for m, y in months)


def _is_month(summary: Summary, months: list[tuple[int, int | None]]) -> bool:
    if summary.subject_kind != "month":
        return False
    year, month = (int(part) for part in summary.subject_key.split("-")[:2])
    return any(m == month and y in (None, year) for m, y in months)


def summary_candidate(summary: Summary, leaves: list[MemoryItem], score: float, scores: dict[str, float],
                      why: str) -> Candidate:
    return Candidate("summary", summary.id, summary.content, score, scores,
                     f"{summary.level} summary of {summary.title} ({len(summary.memory_ids)} memories); {why}",
                     Covered(tuple(leaves)), order=(summary.period_start or datetime.min, summary.id))


def summaries_first(
    found: dict[str, tuple[Summary, list[MemoryItem]]], fused: list[Fused], query: str, config: RecallConfig,
    budget: int, top: float,
) -> list[Candidate]:
    """For a broad query: the best-fused live summaries (those of the months the query names, when it
    names any), at most `summary_max_items` and `summary_max_share` of the budget, one at most per
    set of memories (a day and a session that cover the same memories are one summary twice)."""
    months = named_months(query)
    room = int(budget * config.summary_max_share)
    chosen: list[Candidate] = []
    covered: list[set[str]] = []
    # the summary of the very month a query names ("in March") comes before the days inside it
    fused = sorted(fused, key=lambda f: not (months and f.key[1] in found and _is_month(found[f.key[1]][0], months)))
    for f in fused:
        if f.key[1] not in found or len(chosen) >= config.summary_max_items:
            continue
        summary, leaves = found[f.key[1]]
        memories = set(summary.memory_ids)
        if not _in_months(summary, months) or any(memories <= held for held in covered):
            continue
        if tokens_of(summary.content) > room:
            continue
        room -= tokens_of(summary.content)
        covered.append(memories)
        ranks = ", ".join(f"{s} #{r}" for s, r in sorted(f.ranks.items(), key=lambda x: x[1]))
        chosen.append(summary_candidate(summary, leaves, top, {"fused": round(f.score, 6), "broad": 1.0},
                                        f"the query asks for an overview; matched by {ranks}"))
    return chosen


def _names(query: str) -> set[str]:
    """Capitalised words after the first: the names a query asks about ("Tell me about Maya")."""
    words = re.findall(r"[^\W\d_][\w-]*", query)
    return {w.casefold() for w in words[1:] if w[0].isupper()}


def profile_candidates(store: Store, scope: Scope, profile: Profile | None, query: str, score: float, why: str,
                       budget: int | None) -> list[Candidate]:
    """The profile's lines (static, then dynamic) as candidates; with `budget`, only as many as fit it.
    When the query names someone its lines name, the lines about them (a profile may hold several
    people: a shared chat, a family); otherwise all."""
    if profile is None:
        return []
    lines = [*profile.static, *profile.dynamic]
    names = _names(query)
    about = [line for line in lines if names & {w.casefold() for w in re.findall(r"[^\W\d_][\w-]*", line.text)}]
    lines = about or lines
    memories = store.fetch_memories(scope, list({m for line in lines for m in line.memory_ids}))
    found: list[Candidate] = []
    room = None if budget is None else budget_units(budget)
    for n, line in enumerate(lines):
        text = f"- {line.text}"
        if room is not None:
            if units(text) + 1 > room:
                break
            room -= units(text) + 1
        leaves = tuple(memories[m] for m in line.memory_ids if m in memories)
        found.append(Candidate("profile", f"profile:{scope.user_id}:v{profile.version}:{n}", text, score,
                               {"profile": 1.0}, f"{line.section} profile line v{profile.version}; {why}",
                               Covered(leaves), group="profile", header="[profile]", order=(n,),
                               states=frozenset(m.id for m in leaves)))
    return found


def topic_factors(store: Store, scope: Scope, memory_ids: list[str], boost: float) -> tuple[dict[str, float], str]:
    """Memories (among `memory_ids`, best first) of the query's topic, the one the top memories' votes
    (1 / rank) favour, each with the factor 1 + boost; and that topic's id."""
    if boost <= 0 or not memory_ids:
        return {}, ""
    topics = store.memory_topics(scope, memory_ids)
    votes: dict[str, float] = {}
    for rank, memory_id in enumerate(memory_ids[:TOPIC_VOTERS], start=1):
        if memory_id in topics:
            votes[topics[memory_id]] = votes.get(topics[memory_id], 0.0) + 1 / rank
    if not votes:
        return {}, ""
    topic = max(sorted(votes), key=lambda t: votes[t])
    return {m: 1 + boost for m, t in topics.items() if t == topic}, topic
