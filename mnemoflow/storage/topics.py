"""Topics: clusters of a user's current memories (`maintenance/cluster.py` finds them), each with a
readable label, and which memories belong to which (`memory_topics`). Analysts read them joined to
the current memories through the `topic_memories` view.

A clustering run hands over the whole picture; only what changed is written (new and changed
topics, memberships that came or went, topics no longer found retired), in one commit.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from mnemoflow.storage import batch
from mnemoflow.storage.commits import PendingCommit, sha256_json, write_commit
from mnemoflow.storage.room import Room
from mnemoflow.storage.rows import active_memory_sql
from mnemoflow.storage.scope import Scope, owned, tenant
from mnemoflow.timeutil import utcnow
from mnemoflow.tree_models import Topic, TopicDraft


class Topics(Room):
    def cluster_inputs(self, scope: Scope) -> list[tuple[str, str, tuple[str, ...]]]:
        """(memory id, content, the names and aliases of the people it names) of the user's current
        memories, oldest first."""
        mine, params = owned(scope, "m")
        graph, graph_params = tenant(scope.tenant_id, "e")
        now = utcnow()
        with self._db.read() as con:
            rows = con.execute(
                f"""
                SELECT m.memory_id, m.content,
                    (SELECT flatten(list([e.name] || coalesce(e.aliases, []))) FROM memory_entities x
                     JOIN entities e ON e.entity_id = x.entity_id AND e.tenant_id = x.tenant_id
                     WHERE {graph} AND x.memory_id = m.memory_id AND e.type = 'person')
                FROM memories m WHERE {mine} AND {active_memory_sql("m")}
                ORDER BY coalesce(m.observed_at, m.created_at), m.memory_id
                """, [*graph_params, *params, now, now]).fetchall()
        return [(r[0], r[1], tuple(dict.fromkeys(r[2] or ()))) for r in rows]

    def list_topics(self, scope: Scope) -> list[Topic]:
        """The user's live topics, largest first, each with its current memories (strongest first)."""
        topics, params = owned(scope, "t")
        now = utcnow()
        with self._db.read() as con:
            rows = con.execute(
                f"""
                SELECT t.topic_id, t.tenant_id, t.user_id, t.label, t.terms, t.created_at, t.updated_at,
                       list(m.memory_id ORDER BY mt.weight DESC, m.memory_id) FILTER (WHERE m.memory_id IS NOT NULL)
                FROM topics t
                LEFT JOIN memory_topics mt ON mt.topic_id = t.topic_id AND mt.tenant_id = t.tenant_id
                LEFT JOIN memories m ON m.memory_id = mt.memory_id AND m.tenant_id = mt.tenant_id
                     AND {active_memory_sql("m")}
                WHERE {topics} AND t.retired_at IS NULL
                GROUP BY ALL
                """, [now, now, *params]).fetchall()
        found = [Topic(id=r[0], tenant_id=r[1], user_id=r[2], label=r[3], terms=list(r[4]), size=len(r[7] or []),
                       memory_ids=list(r[7] or []), created_at=r[5], updated_at=r[6]) for r in rows]
        return sorted(found, key=lambda t: (-t.size, t.id))

    def memory_topics(self, scope: Scope, memory_ids: list[str]) -> dict[str, str]:
        """The live topic of each of `memory_ids` that has one (the strongest, if several)."""
        if not memory_ids:
            return {}
        topics, params = owned(scope, "t")
        with self._db.read() as con, batch.id_set(con, memory_ids) as ids:
            return dict(con.execute(
                f"SELECT mt.memory_id, arg_max(t.topic_id, mt.weight) FROM memory_topics mt "
                f"JOIN topics t ON t.topic_id = mt.topic_id AND t.tenant_id = mt.tenant_id "
                f"WHERE {topics} AND t.retired_at IS NULL AND mt.memory_id IN {ids} GROUP BY mt.memory_id",
                params).fetchall())

    def write_topics(self, scope: Scope, drafts: list[TopicDraft], *, actor: str) -> dict[str, int]:
        """Make the user's topics what `drafts` say: a draft naming a live topic updates it, one naming
        none (or a topic not live) becomes a new topic, and live topics no draft names are retired.
        Memberships follow. One transaction, one commit; nothing is written when nothing changed.
        Returns counts of what changed."""
        now = utcnow()
        topics, params = owned(scope)
        pending = PendingCommit(scope.tenant_id, actor, sha256_json(
            [[d.topic_id, d.label, sorted(d.members)] for d in drafts]), "cluster topics")
        counts = {"topics_new": 0, "topics_changed": 0, "topics_retired": 0, "memberships_changed": 0}
        with self._db.tx(pending.tenant_id) as con:
            live = {r[0]: (r[1], tuple(r[2])) for r in con.execute(
                f"SELECT topic_id, label, terms FROM topics WHERE {topics} AND retired_at IS NULL", params).fetchall()}
            members: dict[str, dict[str, float]] = {}
            for memory_id, topic_id, weight in con.execute(
                    f"SELECT memory_id, topic_id, weight FROM memory_topics WHERE {topics}", params).fetchall():
                members.setdefault(topic_id, {})[memory_id] = weight
            wanted: dict[str, TopicDraft] = {}
            for d in drafts:
                continues = d.topic_id in live and d.topic_id not in wanted
                wanted[d.topic_id if continues else f"top_{uuid.uuid4().hex[:20]}"] = d  # type: ignore[index]
            new = [t for t in wanted if t not in live]
            changed = [t for t, d in wanted.items() if t in live and (live[t] != (d.label, d.terms)
                                                                       or members.get(t, {}) != _rounded(d.members))]
            gone = [t for t in live if t not in wanted]
            batch.insert(con, "topics", ["topic_id", "tenant_id", "user_id", "label", "terms", "size", "created_at",
                                         "updated_at", "commit_id"],
                         [[t, scope.tenant_id, scope.user_id, wanted[t].label, list(wanted[t].terms),
                           len(wanted[t].members), now, now, pending.commit_id] for t in new])
            batch.update(con, "topics", "topic_id", ["label", "terms", "size", "updated_at", "commit_id"],
                         [[t, wanted[t].label, list(wanted[t].terms), len(wanted[t].members), now, pending.commit_id]
                          for t in changed])
            batch.update(con, "topics", "topic_id", ["retired_at", "updated_at", "commit_id"],
                         [[t, now, now, pending.commit_id] for t in gone])
            pending.record("topics", "insert", new)
            pending.record("topics", "update", changed)
            pending.record("topics", "retire", gone)
            counts["memberships_changed"] = self._write_members(con, scope, wanted, members, pending, now)
            counts.update(topics_new=len(new), topics_changed=len(changed), topics_retired=len(gone))
            if not pending.empty:
                write_commit(con, pending, now)
        return counts

    @staticmethod
    def _write_members(con, scope: Scope, wanted: dict[str, TopicDraft], stored: dict[str, dict[str, float]],
                       pending: PendingCommit, now: datetime) -> int:
        """Delete the membership rows no draft keeps, insert the new or re-weighted ones."""
        mine, params = owned(scope)
        target = {(m, t): w for t, d in wanted.items() for m, w in _rounded(d.members).items()}
        held = {(m, t): w for t, rows in stored.items() for m, w in rows.items()}
        drop = [f"{m}|{t}" for (m, t), w in held.items() if target.get((m, t)) != w]
        add = [[scope.tenant_id, scope.user_id, m, t, w, pending.commit_id]
               for (m, t), w in target.items() if held.get((m, t)) != w]
        if drop:
            with batch.id_set(con, drop) as ids:
                con.execute(f"DELETE FROM memory_topics WHERE {mine} AND memory_id || '|' || topic_id IN {ids}",
                            params)
        batch.insert(con, "memory_topics", ["tenant_id", "user_id", "memory_id", "topic_id", "weight", "commit_id"],
                     add)
        pending.record("memory_topics", "insert", [f"{r[2]}|{r[3]}" for r in add])
        return len(drop) + len(add)


def _rounded(members: dict[str, float]) -> dict[str, float]:
    """Weights as stored: rounded, so an unchanged clustering compares equal and writes nothing."""
    return {m: round(float(w), 4) for m, w in members.items()}
