"""Procedural rules in the store: each rule scoped like a memory (reads see the owner's and the shared
ones, writes touch the owner's), every state move a commit naming who made it, counters per rule,
and the tool selections agents rate."""

from __future__ import annotations

import json
import uuid
from typing import Any

import duckdb

from mnemoflow.errors import BadInputError, NotFoundError
from mnemoflow.rules.model import LIVE_STATES, RULE_STATES, Rule, RuleSpec, RuleStats, RuleTransition
from mnemoflow.storage import batch
from mnemoflow.storage.commits import PendingCommit, sha256_json, write_commit
from mnemoflow.storage.room import Room
from mnemoflow.storage.scope import SCOPE_COLUMNS, Scope, owned, tenant, visible
from mnemoflow.timeutil import utcnow

_RULE_COLUMNS = ("r.rule_id, r.tenant_id, r.user_id, r.agent_id, r.run_id, r.container, r.shared, r.state, "
                 "r.conditions, r.patch, r.exceptions, r.origin, r.memory_id, r.created_at, r.updated_at, "
                 "coalesce(s.evaluations, 0), coalesce(s.applications, 0), coalesce(s.positive, 0), "
                 "coalesce(s.negative, 0)")
_RULE_SELECT = f"SELECT {_RULE_COLUMNS} FROM rules r LEFT JOIN rule_stats s ON s.rule_id = r.rule_id"


def _rule(row: tuple, transitions: list[RuleTransition] | None = None) -> Rule:
    return Rule(rule_id=row[0], tenant_id=row[1], user_id=row[2], agent_id=row[3], run_id=row[4], container=row[5],
                shared=row[6], state=row[7], if_=json.loads(row[8]), then=json.loads(row[9]),
                exceptions=json.loads(row[10]), origin=row[11], memory_id=row[12], created_at=row[13],
                updated_at=row[14], stats=RuleStats(evaluations=row[15], applications=row[16], positive=row[17],
                                                    negative=row[18]), transitions=transitions or [])


def _transition(con: duckdb.DuckDBPyConnection, pending: PendingCommit, rule_id: str, before: str | None,
                after: str, actor: str) -> None:
    transition_id = f"rtr_{uuid.uuid4().hex[:20]}"
    con.execute("INSERT INTO rule_transitions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [transition_id, pending.tenant_id, rule_id, before, after, actor, utcnow(), pending.commit_id])
    pending.record("rule_transitions", "insert", [transition_id])


def purge_rules_of(con: duckdb.DuckDBPyConnection, tenant_id: str, memory_set: str, pending: PendingCommit,
                   ) -> dict[str, list[str]]:
    """Inside a hard deletion of memories (the relation `memory_set` names their ids): a DRAFT rule read
    from one of them goes with it (derived, never adopted), with its moves and record; a rule a person
    or a call moved on stays policy, without its link to the memory (an update in the purge's commit).
    Returns the purged ids by table, for the caller to record."""
    within, params = tenant(tenant_id)
    drafts = [r[0] for r in con.execute(f"SELECT rule_id FROM rules WHERE {within} AND state = 'draft' "
                                        f"AND memory_id IN {memory_set}", params).fetchall()]
    purged: dict[str, list[str]] = {}
    if drafts:
        marks = ", ".join("?" for _ in drafts)
        purged["rule_transitions"] = batch.delete_returning(
            con, "rule_transitions", f"{within} AND rule_id IN ({marks})", [*params, *drafts], "transition_id")
        con.execute(f"DELETE FROM rule_stats WHERE {within} AND rule_id IN ({marks})", [*params, *drafts])
        purged["rules"] = batch.delete_returning(con, "rules", f"{within} AND rule_id IN ({marks})",
                                                 [*params, *drafts], "rule_id")
    adopted = [r[0] for r in con.execute(f"SELECT rule_id FROM rules WHERE {within} AND memory_id IN {memory_set}",
                                         params).fetchall()]
    if adopted:
        con.execute(f"UPDATE rules SET memory_id = NULL, updated_at = ?, commit_id = ? WHERE {within} AND rule_id IN "
                    f"({', '.join('?' for _ in adopted)})", [utcnow(), pending.commit_id, *params, *adopted])
        pending.record("rules", "update", adopted)
    con.execute(f"DELETE FROM rule_readings WHERE {within} AND memory_id IN {memory_set}", params)
    return purged


class Rules(Room):
    def add_rule(self, scope: Scope, spec: RuleSpec, *, state: str, actor: str, shared: bool = False,
                 origin: str = "api", memory_id: str | None = None) -> Rule:
        """A new rule in `state`, in one commit with its first transition (from nothing)."""
        if state not in RULE_STATES or state == "retired":
            raise BadInputError(f"a new rule is draft, shadow or active; got {state!r}")
        rule_id = f"rul_{uuid.uuid4().hex[:20]}"
        now = utcnow()
        slots = [json.dumps(spec.if_), json.dumps(spec.then), json.dumps(spec.exceptions)]
        with self._db.tx() as con:
            pending = PendingCommit(scope.tenant_id, actor, sha256_json([rule_id, *slots, state]),
                                    f"rule {rule_id} added as {state}")
            con.execute(f"INSERT INTO rules ({', '.join(SCOPE_COLUMNS)}, rule_id, shared, state, conditions, patch, "
                        "exceptions, origin, memory_id, created_at, updated_at, commit_id) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [*scope.stamp().values(), rule_id, shared, state, *slots, origin, memory_id, now, now,
                         pending.commit_id])
            con.execute("INSERT INTO rule_stats (rule_id, tenant_id) VALUES (?, ?)", [rule_id, scope.tenant_id])
            pending.record("rules", "insert", [rule_id])
            _transition(con, pending, rule_id, None, state, actor)
            write_commit(con, pending, now)
        found = self.get_rule(scope, rule_id)
        assert found is not None
        return found

    def get_rule(self, scope: Scope, rule_id: str) -> Rule | None:
        """One rule the scope may see, with its transitions, oldest first."""
        where, params = visible(scope, "r")
        with self._db.read() as con:
            row = con.execute(f"{_RULE_SELECT} WHERE {where} AND r.rule_id = ?", [*params, rule_id]).fetchone()
            if row is None:
                return None
            within, tenant_params = tenant(scope.tenant_id)
            moves = con.execute(
                f"SELECT from_state, to_state, actor, moved_at, commit_id FROM rule_transitions WHERE {within} "
                "AND rule_id = ? ORDER BY moved_at, transition_id", [*tenant_params, rule_id]).fetchall()
        return _rule(row, [RuleTransition(from_state=m[0], to_state=m[1], actor=m[2], at=m[3], commit_id=m[4])
                           for m in moves])

    def list_rules(self, scope: Scope, *, states: tuple[str, ...] | None = None, limit: int = 1000) -> list[Rule]:
        """The rules the scope may see (its own and the shared ones), oldest first."""
        where, params = visible(scope, "r")
        if states is not None:
            where += f" AND r.state IN ({', '.join('?' for _ in states)})"
            params = [*params, *states]
        with self._db.read() as con:
            rows = con.execute(f"{_RULE_SELECT} WHERE {where} ORDER BY r.created_at, r.rule_id LIMIT ?",
                               [*params, limit]).fetchall()
        return [_rule(r) for r in rows]

    def live_rules(self, scope: Scope) -> list[Rule]:
        """What evaluation reads: the SHADOW and ACTIVE rules the scope may see."""
        return self.list_rules(scope, states=LIVE_STATES, limit=10_000)

    def set_rule_state(self, scope: Scope, rule_id: str, state: str, *, actor: str) -> Rule:
        """Move one of the owner's rules to `state`, a commit naming `actor`. A retired rule stays retired;
        moving to the state it is in writes nothing."""
        if state not in RULE_STATES:
            raise BadInputError(f"a rule's state is one of {', '.join(RULE_STATES)}; got {state!r}")
        mine, params = owned(scope)
        now = utcnow()
        with self._db.tx() as con:
            row = con.execute(f"SELECT state FROM rules WHERE {mine} AND rule_id = ?", [*params, rule_id]).fetchone()
            if row is None:
                raise NotFoundError(f"no rule {rule_id} that {scope} may change")
            before = row[0]
            if before == "retired" and state != "retired":
                raise BadInputError(f"rule {rule_id} is retired; a retired rule stays so (add a new one)")
            if before != state:
                pending = PendingCommit(scope.tenant_id, actor, sha256_json([rule_id, before, state]),
                                        f"rule {rule_id}: {before} -> {state}")
                con.execute(f"UPDATE rules SET state = ?, updated_at = ?, commit_id = ? WHERE {mine} AND rule_id = ?",
                            [state, now, pending.commit_id, *params, rule_id])
                pending.record("rules", "update", [rule_id])
                _transition(con, pending, rule_id, before, state, actor)
                write_commit(con, pending, now)
        found = self.get_rule(scope, rule_id)
        assert found is not None
        return found

    # ------------------------------------------------------------------ counters and selections
    def count_rule_use(self, tenant_id: str, evaluated: list[str], applied: list[str]) -> None:
        """One evaluation more for each rule that matched, one application more for each that shaped the answer."""
        if not evaluated:
            return
        within, params = tenant(tenant_id)
        marks = ", ".join("?" for _ in evaluated)
        with self._db.tx() as con:
            con.execute(f"UPDATE rule_stats SET evaluations = evaluations + 1, last_evaluated_at = ? "
                        f"WHERE {within} AND rule_id IN ({marks})", [utcnow(), *params, *evaluated])
            if applied:
                con.execute(f"UPDATE rule_stats SET applications = applications + 1 WHERE {within} AND rule_id IN "
                            f"({', '.join('?' for _ in applied)})", [*params, *applied])

    def save_selection(self, scope: Scope, selection_id: str, *, context: dict[str, Any], candidates: list[str],
                       selected: list[str], strict: bool, fallback: str | None, rule_ids: list[str]) -> None:
        with self._db.tx() as con:
            con.execute(f"INSERT INTO tool_selections ({', '.join(SCOPE_COLUMNS)}, selection_id, context, candidates, "
                        "selected, strict, fallback, rule_ids, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                        "?, ?)", [*scope.stamp().values(), selection_id, json.dumps(context), json.dumps(candidates),
                                  json.dumps(selected), strict, fallback, json.dumps(rule_ids), utcnow()])

    def rate_selection(self, scope: Scope, selection_id: str, rating: str) -> list[str]:
        """Rate one of the owner's selections once; each rule that matched it counts the rating. Returns
        those rules' ids. Rating it the same way again changes nothing; the other way is refused."""
        if rating not in ("positive", "negative"):
            raise BadInputError(f"a rating is positive or negative; got {rating!r}")
        mine, params = owned(scope)
        with self._db.tx() as con:
            row = con.execute(f"SELECT rating, rule_ids FROM tool_selections WHERE {mine} AND selection_id = ?",
                              [*params, selection_id]).fetchone()
            if row is None:
                raise NotFoundError(f"no tool selection {selection_id} for {scope}")
            rule_ids = json.loads(row[1])
            if row[0] is not None:
                if row[0] != rating:
                    raise BadInputError(f"selection {selection_id} was already rated {row[0]}")
                return rule_ids
            con.execute(f"UPDATE tool_selections SET rating = ?, rated_at = ? WHERE {mine} AND selection_id = ?",
                        [rating, utcnow(), *params, selection_id])
            if rule_ids:
                within, tenant_params = tenant(scope.tenant_id)
                con.execute(f"UPDATE rule_stats SET {rating} = {rating} + 1 WHERE {within} AND rule_id IN "
                            f"({', '.join('?' for _ in rule_ids)})", [*tenant_params, *rule_ids])
        return rule_ids

    def rules_by_id(self, tenant_id: str, rule_ids: list[str]) -> list[Rule]:
        """Rules of one tenant by id (for a report on rules a scope already reached)."""
        if not rule_ids:
            return []
        within, params = tenant(tenant_id, "r")
        with self._db.read() as con:
            rows = con.execute(f"{_RULE_SELECT} WHERE {within} AND r.rule_id IN ({', '.join('?' for _ in rule_ids)}) "
                               "ORDER BY r.created_at", [*params, *rule_ids]).fetchall()
        return [_rule(r) for r in rows]

    def promotion_candidates(self, tenant_id: str, *, min_evaluations: int, min_ratings: int,
                             min_positive_rate: float) -> list[Rule]:
        """The tenant's SHADOW rules whose record meets the thresholds, best record first."""
        within, params = tenant(tenant_id, "r")
        with self._db.read() as con:
            rows = con.execute(
                f"{_RULE_SELECT} WHERE {within} AND r.state = 'shadow' AND s.evaluations >= ? "
                "AND s.positive + s.negative >= ? AND s.positive >= ? * (s.positive + s.negative) "
                "ORDER BY s.positive * 1.0 / greatest(s.positive + s.negative, 1) DESC, s.evaluations DESC, r.rule_id",
                [*params, min_evaluations, max(min_ratings, 1), min_positive_rate]).fetchall()
        return [_rule(r) for r in rows]

    # ------------------------------------------------------------------ rules read from memories
    def unread_rule_memories(self, limit: int = 500) -> list[tuple[Scope, str, str, dict[str, Any]]]:
        """Current memories of kind `rule`, of any tenant, that no rule reader has read yet: (scope, id,
        content, metadata), oldest first."""
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT {', '.join('m.' + c for c in SCOPE_COLUMNS)}, m.memory_id, m.content, m.metadata "
                "FROM memories m WHERE m.kind = 'rule' AND m.deleted_at IS NULL AND m.is_latest "
                "AND NOT EXISTS (SELECT 1 FROM rule_readings g WHERE g.memory_id = m.memory_id) "
                "ORDER BY m.created_at, m.memory_id LIMIT ?", [limit]).fetchall()
        return [(Scope(*r[:5]), r[5], r[6], json.loads(r[7]) if r[7] else {}) for r in rows]

    def record_rule_reading(self, scope: Scope, memory_id: str, reason: str, rule_id: str | None) -> None:
        with self._db.tx() as con:
            if not con.execute("SELECT 1 FROM rule_readings WHERE memory_id = ?", [memory_id]).fetchone():
                con.execute("INSERT INTO rule_readings VALUES (?, ?, ?, ?, ?)",
                            [memory_id, scope.tenant_id, rule_id, reason, utcnow()])
