"""`seal`: the memory tree. L1 summaries of a user's memories per source (a document or a
conversation session), per topic (from `cluster`) and per day; L2 summaries of those L1s per month
(the days of a month that is over) and per source or topic sealed in several pieces.

Sealing is incremental and idempotent: a summary covers a fixed set of children and is never
rewritten. What a live summary of a subject covers is not summarised again for that subject; new
children make a new summary of their own once there are `seal_min_children` of them. A day is
sealed once it is over (UTC), a month likewise. A summary that covers a memory which is no longer
current is retired (recall already stopped showing it: `storage/summaries.py`), and its other
children are summarised anew.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING

import numpy as np

from mnemoflow.embedding.worker import vectors_by_hash
from mnemoflow.maintenance import JobReport, job, user_scopes
from mnemoflow.llm.chat import ChatClient, chat_client
from mnemoflow.memory.summarize import Sentence, summarize
from mnemoflow.storage import Scope
from mnemoflow.storage.summaries import SealMemory, summary_id
from mnemoflow.timeutil import utcnow
from mnemoflow.tree_models import SubjectKind, Summary, SummaryDraft

if TYPE_CHECKING:
    from mnemoflow.service import MemoryService

Subject = tuple[SubjectKind, str]
ROLLUP: dict[str, SubjectKind] = {"day": "month", "source": "source", "topic": "topic"}  # an L1's L2 subject


@dataclass(frozen=True)
class _Node:
    """An L1 summary, sealed before or in this run, as an L2 sees it."""

    id: str
    subject: Subject
    content: str
    memory_ids: tuple[str, ...]
    start: datetime | None
    end: datetime | None


def span(start: datetime, end: datetime) -> str:
    """`8 May 2023`, `8-9 May 2023`, `28 April - 2 May 2023`, `December 2022 - January 2023`-style dates."""
    if start.date() == end.date():
        return f"{start.day} {start:%B %Y}"
    if (start.year, start.month) == (end.year, end.month):
        return f"{start.day}-{end.day} {end:%B %Y}"
    if start.year == end.year:
        return f"{start.day} {start:%B} - {end.day} {end:%B %Y}"
    return f"{start.day} {start:%B %Y} - {end.day} {end:%B %Y}"


def _title(kind: SubjectKind, key: str, name: str | None, start: datetime, end: datetime) -> str:
    if kind == "day":
        return f"{start:%A}, {start.day} {start:%B %Y}"
    if kind == "month":
        return f"{start:%B %Y}"
    if kind == "topic":
        return f"About {name or key}, {span(start, end)}"
    return f"{name or key}, {span(start, end)}"


def _subjects(memory: SealMemory, today: date) -> list[tuple[Subject, str | None]]:
    """The L1 subjects a memory belongs to, each with a name for its title."""
    found: list[tuple[Subject, str | None]] = []
    if memory.source_id is not None:
        found.append((("source", memory.source_id), memory.source_title))
    if memory.at.date() < today:  # a day is sealed once it is over
        found.append((("day", memory.at.date().isoformat()), None))
    if memory.topic_id is not None:
        found.append((("topic", memory.topic_id), memory.topic_label))
    return found


class Sealer:
    """One user's sealing pass: what to retire, which L1s and L2s to write."""

    def __init__(self, service: MemoryService, scope: Scope, chat: ChatClient | None) -> None:
        self.service, self.scope, self.chat = service, scope, chat
        settings = service.settings
        self.min_children, self.l1_tokens, self.l2_tokens = (settings.seal_min_children, settings.seal_l1_tokens,
                                                             settings.seal_l2_tokens)
        self.memories: dict[str, SealMemory] = {}
        self.vectors: dict[str, np.ndarray] = {}

    def run(self, today: date) -> tuple[list[SummaryDraft], dict[str, str]]:
        memories, live = self.service.store.seal_inputs(self.scope)
        self.memories = {m.id: m for m in memories}
        retire = {s.id: "covers " + ", ".join(m for m in s.memory_ids if m not in self.memories)[:200]
                  + " (no longer current)" for s in live if not set(s.memory_ids) <= self.memories.keys()}
        live = [s for s in live if s.id not in retire]
        if memories:
            hashes = {m.content_hash: m.content for m in memories}
            by_hash, _ = vectors_by_hash(self.service.store, self.service.embedder, hashes)
            self.vectors = {m.id: by_hash[m.content_hash] for m in memories}
        l1 = self._level_one(live, today)
        return l1 + self._level_two(live, l1, today), retire

    def _level_one(self, live: list[Summary], today: date) -> list[SummaryDraft]:
        covered: dict[Subject, set[str]] = defaultdict(set)
        for s in live:
            if s.level == "L1":
                covered[(s.subject_kind, s.subject_key)].update(s.child_ids)
        groups: dict[Subject, list[SealMemory]] = defaultdict(list)
        names: dict[Subject, str | None] = {}
        for m in self.memories.values():
            for subject, name in _subjects(m, today):
                if m.id not in covered[subject]:
                    groups[subject].append(m)
                    names[subject] = name or names.get(subject)
        drafts = []
        for (kind, key), members in groups.items():
            if len(members) < self.min_children:
                continue
            start, end = members[0].at, members[-1].at
            title = _title(kind, key, names[(kind, key)], start, end)
            text, cited, method = self._summarize(title, members, self.l1_tokens)
            ids = tuple(m.id for m in members)
            drafts.append(SummaryDraft("L1", kind, key, title, text, ids, ids, tuple(cited), method, start, end,
                                       day=start.date() if kind == "day" else None))
        return drafts

    def _level_two(self, live: list[Summary], new: list[SummaryDraft], today: date) -> list[SummaryDraft]:
        nodes = [_Node(s.id, (s.subject_kind, s.subject_key), s.content, tuple(s.memory_ids), s.period_start,
                       s.period_end) for s in live if s.level == "L1"]
        nodes += [_Node(summary_id(self.scope, d), (d.subject_kind, d.subject_key), d.content, d.memory_ids,
                        d.period_start, d.period_end) for d in new]
        covered: dict[Subject, set[str]] = defaultdict(set)
        for s in live:
            if s.level == "L2":
                covered[(s.subject_kind, s.subject_key)].update(s.child_ids)
        groups: dict[Subject, list[_Node]] = defaultdict(list)
        for node in nodes:
            kind, key = node.subject
            parent: Subject = (ROLLUP[kind], key[:7] if kind == "day" else key)
            if node.id not in covered[parent] and (kind != "day" or parent[1] < today.isoformat()[:7]):
                groups[parent].append(node)
        drafts = []
        for (kind, key), children in groups.items():
            if len(children) < 2:
                continue
            children.sort(key=lambda n: (n.start or datetime.min, n.id))
            leaves = list(dict.fromkeys(m for n in children for m in n.memory_ids if m in self.memories))
            members = sorted((self.memories[m] for m in leaves), key=lambda m: (m.at, m.id))
            if not members:
                continue
            start, end = members[0].at, members[-1].at
            name = next((m.source_title if kind == "source" else m.topic_label for m in members), None)
            title = _title(kind, key, name, start, end)
            text, cited, method = self._summarize(title, members, self.l2_tokens,
                                                  notes=[n.content for n in children])
            drafts.append(SummaryDraft("L2", kind, key, title, text, tuple(n.id for n in children), tuple(leaves),
                                       tuple(cited), method, start, end))
        return drafts

    def _summarize(self, title: str, members: list[SealMemory], max_tokens: int,
                   notes: list[str] | None = None) -> tuple[str, list[str], str]:
        sentences = [Sentence(m.id, m.content, m.salience, m.at) for m in members]
        vectors = np.stack([self.vectors[m.id] for m in members])
        return summarize(title, sentences, vectors, max_tokens, chat=self.chat, notes=notes)


@job("seal", schedule="30 2 * * *",
     description="Seal L1 summaries of each user's memories per source, topic and day, and L2 summaries per month "
                 "and per source or topic sealed in pieces; retire summaries whose memories are no longer current.")
def seal(service: MemoryService, tenant_id: str | None, report: JobReport) -> None:
    """After `cluster` (02:00), so that topic summaries see the night's topics; days end at midnight UTC."""
    store = service.store
    chat = chat_client(service.settings)
    today = utcnow().date()
    try:
        for scope in user_scopes(service, tenant_id):
            drafts, retire = Sealer(service, scope, chat).run(today)
            written = store.write_summaries(scope, drafts, retire, actor="seal")
            sealed = {summary_id(scope, d): d for d in drafts}
            for sid in written:
                key = f"{sealed[sid].level}_{sealed[sid].subject_kind}"
                report.counts[key] = report.counts.get(key, 0) + 1
                if sealed[sid].method.startswith("extractive (llm-fallback"):
                    report.counts["llm_fallbacks"] = report.counts.get("llm_fallbacks", 0) + 1
            if retire:
                report.counts["retired"] = report.counts.get("retired", 0) + len(retire)
    finally:
        if chat is not None:
            chat.close()
    if report.counts:
        drained = service.drain()  # the new summaries' vectors, so vector search finds them too
        report.details["embedded"] = drained.embedded
