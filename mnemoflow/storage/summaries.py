"""Summaries: the sealed L1 and L2 nodes of the memory tree (`maintenance/seal.py` decides them),
their search rows in LanceDB, and the gate recall reads them through.

A sealed summary is never rewritten. Recall shows one only while every memory it covers is
current (not forgotten, superseded, expired or gone with its source): the check is made at read
time, so a forgotten memory hides its summaries at once. The next `seal` retires them, a commit
like any other write, and summarises what is left anew.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from mnemoflow.models import MemoryItem
from mnemoflow.storage import batch, fts, outbox
from mnemoflow.storage.commits import PendingCommit, sha256_json, write_commit
from mnemoflow.storage.lance_index import SUMMARY_INDEX, sql_in
from mnemoflow.storage.room import Room
from mnemoflow.storage.rows import active_memory_sql, columns, summary_index_row
from mnemoflow.storage.scope import Scope, owned, tenant
from mnemoflow.storage.vectors import embed_job
from mnemoflow.timeutil import utcnow
from mnemoflow.tokens import token_count
from mnemoflow.tree_models import Summary, SummaryDraft

SUMMARY_COLUMNS = (
    "summary_id, tenant_id, user_id, level, subject_kind, subject_key, title, content, child_ids, memory_ids, "
    "cited_ids, method, period_start, period_end, token_count, created_at, retired_at, retired_reason"
)


@dataclass(frozen=True)
class SealMemory:
    """A current memory as sealing sees it: what it says, when, and where it belongs (its source
    document or session, its topic)."""

    id: str
    content: str
    content_hash: str
    salience: float
    at: datetime  # when it was observed (said, written), else when it was stored
    source_id: str | None
    source_title: str | None
    topic_id: str | None
    topic_label: str | None


def summary_id(scope: Scope, draft: SummaryDraft) -> str:
    """Named by what it covers: sealing the same children under the same subject twice is one summary."""
    key = sha256_json([scope.tenant_id, scope.user_id, draft.level, draft.subject_kind, draft.subject_key,
                       sorted(draft.child_ids)])
    return f"sum_{key[:24]}"


def summary_content_hash(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()


def _summary(row: tuple) -> Summary:
    (sid, tenant_id, user_id, level, kind, key, title, content, children, memories, cited, method, start, end,
     tokens, created, retired, reason) = row
    return Summary(id=sid, tenant_id=tenant_id, user_id=user_id, level=level, subject_kind=kind, subject_key=key,
                   title=title or key, content=content, child_ids=list(children), memory_ids=list(memories or []),
                   cited_ids=list(cited or []), method=method or "extractive", period_start=start, period_end=end,
                   tokens=tokens or 0, created_at=created, retired_at=retired, retired_reason=reason)


class Summaries(Room):
    def seal_inputs(self, scope: Scope) -> tuple[list[SealMemory], list[Summary]]:
        """The user's current memories, oldest first, each with its source (the document or session its
        first EXTRACTED_FROM link reaches) and topic; and the user's summaries that are not retired."""
        mine, params = owned(scope, "m")
        links, link_params = tenant(scope.tenant_id, "l")
        topics, topic_params = owned(scope, "t")
        now = utcnow()
        with self._db.read() as con:
            memories = con.execute(
                f"""
                WITH src AS (
                    SELECT l.src AS memory_id, arg_min(coalesce(c.document_id, d.document_id), l.created_at) AS doc
                    FROM memory_links l
                    LEFT JOIN chunks c ON c.chunk_id = l.dst AND c.tenant_id = l.tenant_id
                    LEFT JOIN source_documents d ON d.document_id = l.dst AND d.tenant_id = l.tenant_id
                    WHERE {links} AND l.type = 'EXTRACTED_FROM' GROUP BY l.src),
                topic AS (
                    SELECT mt.memory_id, arg_max(t.topic_id, mt.weight) AS topic_id,
                           arg_max(t.label, mt.weight) AS label
                    FROM memory_topics mt JOIN topics t ON t.topic_id = mt.topic_id AND t.tenant_id = mt.tenant_id
                    WHERE {topics} AND t.retired_at IS NULL GROUP BY mt.memory_id)
                SELECT m.memory_id, m.content, m.content_hash, m.salience, coalesce(m.observed_at, m.created_at),
                       src.doc, coalesce(doc.title, doc.uri), topic.topic_id, topic.label
                FROM memories m
                LEFT JOIN src ON src.memory_id = m.memory_id
                LEFT JOIN source_documents doc ON doc.document_id = src.doc AND doc.tenant_id = m.tenant_id
                LEFT JOIN topic ON topic.memory_id = m.memory_id
                WHERE {mine} AND {active_memory_sql("m")}
                ORDER BY 5, 1
                """, [*link_params, *topic_params, *params, now, now]).fetchall()
            where, where_params = owned(scope)
            summaries = con.execute(
                f"SELECT {SUMMARY_COLUMNS} FROM summaries WHERE {where} AND retired_at IS NULL "
                "ORDER BY created_at, summary_id", where_params).fetchall()
        return [SealMemory(*r) for r in memories], [_summary(r) for r in summaries]

    def write_summaries(
        self, scope: Scope, drafts: list[SummaryDraft], retire: dict[str, str], *, actor: str,
    ) -> list[str]:
        """Retire summaries (id -> why) and seal new ones, in one transaction and one commit; each new
        summary's embedding job goes to the outbox with it. Returns the ids of the summaries written
        (a draft already sealed under its id is not written again)."""
        if not drafts and not retire:
            return []
        now = utcnow()
        mine, params = owned(scope)
        ids = [summary_id(scope, d) for d in drafts]
        hashes = [summary_content_hash(d.content) for d in drafts]
        pending = PendingCommit(scope.tenant_id, actor, sha256_json({"seal": sorted(ids), "retire": sorted(retire)}),
                                _message(len(drafts), len(retire)))
        with self._db.tx(pending.tenant_id) as con:
            retired: list[str] = []
            if retire:
                with batch.registered(con, ["summary_id", "reason"], [[k, v] for k, v in retire.items()]) as b:
                    retired = batch.update_returning(
                        con, "summaries", "summary_id", "retired_at = ?, retired_reason = b.reason, commit_id = ?",
                        f"summaries.summary_id = b.summary_id AND {mine} AND summaries.retired_at IS NULL",
                        [now, pending.commit_id], params, source=f"{b} b")
                pending.record("summaries", "retire", retired)
            written = batch.insert(
                con, "summaries",
                ["summary_id", "tenant_id", "user_id", "shared", "level", "subject_kind", "subject_key", "day", "title",
                 "content", "content_hash", "child_ids", "memory_ids", "cited_ids", "method", "period_start",
                 "period_end", "token_count", "created_at", "embedding_status", "commit_id"],
                [[sid, scope.tenant_id, scope.user_id, False, d.level, d.subject_kind, d.subject_key, d.day, d.title,
                  d.content, h, list(d.child_ids), list(d.memory_ids), list(d.cited_ids), d.method, d.period_start,
                  d.period_end, token_count(d.content), now, "pending", pending.commit_id]
                 for sid, h, d in zip(ids, hashes, drafts)],
                on_conflict_ignore=True, returning="summary_id")
            pending.record("summaries", "insert", written)
            fresh = set(written)
            outbox.enqueue(con, [embed_job(self._index.model, scope, "summaries", sid, h)
                                 for sid, h in zip(ids, hashes) if sid in fresh], now)
            if written:
                fts.mark_dirty(con, fts.SUMMARIES_FTS)
            if not pending.empty:
                write_commit(con, pending, now)
        rows = [{"summary_id": sid, **scope.stamp(), "content_hash": h,
                 **summary_index_row(d.level, d.subject_kind, d.content)}
                for sid, h, d in zip(ids, hashes, drafts) if sid in fresh]
        self._index.append(SUMMARY_INDEX, columns(rows))  # searchable by BM25 now, by vector once embedded
        if retired:
            self._index.update(SUMMARY_INDEX, sql_in("summary_id", retired), {"deleted": True})
        return written

    def fetch_summaries(self, scope: Scope, summary_ids: list[str]) -> dict[str, tuple[Summary, list[MemoryItem]]]:
        """The final gate before recall shows a summary: those among `summary_ids` inside the scope, not
        retired, whose every memory is still current; each with those memories in citation order."""
        if not summary_ids:
            return {}
        where, params = owned(scope)
        with self._db.read() as con, batch.id_set(con, summary_ids) as ids:
            found = [_summary(r) for r in con.execute(
                f"SELECT {SUMMARY_COLUMNS} FROM summaries WHERE {where} AND retired_at IS NULL "
                f"AND summary_id IN {ids}", params).fetchall()]
        current = self.fetch_memories(scope, list({m for s in found for m in s.memory_ids}))  # type: ignore[attr-defined]
        return {s.id: (s, [current[m] for m in dict.fromkeys([*s.cited_ids, *s.memory_ids])])
                for s in found if s.memory_ids and all(m in current for m in s.memory_ids)}

    def list_summaries(
        self, scope: Scope, *, level: str | None = None, include_retired: bool = False, limit: int = 100,
    ) -> list[Summary]:
        """The user's summaries, newest period first; retired ones only when asked."""
        where, params = owned(scope)
        if level is not None:
            where, params = f"{where} AND level = ?", [*params, level]
        if not include_retired:
            where += " AND retired_at IS NULL"
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT {SUMMARY_COLUMNS} FROM summaries WHERE {where} "
                "ORDER BY period_end DESC NULLS LAST, level DESC, summary_id LIMIT ?", [*params, limit]).fetchall()
        return [_summary(r) for r in rows]


def _message(sealed: int, retired: int) -> str:
    parts = [f"seal {sealed} summar{'y' if sealed == 1 else 'ies'}"] if sealed else []
    if retired:
        parts.append(f"retire {retired} summar{'y' if retired == 1 else 'ies'}")
    return "; ".join(parts)
