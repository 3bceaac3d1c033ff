"""Profiles: per user, a static and a dynamic section of lines, each line citing the memories it was
built from (`maintenance/profiles.py` builds them). A rebuild that changes any line writes a new
version (the lines replaced, the `profiles` row's version and updated_at moved on) in one commit;
one that changes nothing writes nothing.

Reads check every line against the memories it cites: a line citing a memory that is no longer
current (forgotten, superseded, expired, gone with its source) is withheld until the next rebuild
drops it."""

from __future__ import annotations

from dataclasses import dataclass

from mnemoflow.models import MemoryItem
from mnemoflow.storage import batch
from mnemoflow.storage.commits import PendingCommit, sha256_json, write_commit
from mnemoflow.storage.room import Room
from mnemoflow.storage.rows import MEMORY_COLUMNS, active_memory_sql, memory_item
from mnemoflow.storage.scope import Scope, owned
from mnemoflow.timeutil import utcnow
from mnemoflow.tree_models import Profile, ProfileLine


@dataclass(frozen=True)
class ProfileInput:
    """A current memory with what the profile builder weighs besides it: how often it was said again."""

    memory: MemoryItem
    content_hash: str
    reinforcement: int


class Profiles(Room):
    def profile_inputs(self, scope: Scope) -> list[ProfileInput]:
        """The user's own current memories (the lifecycle gate recall applies), oldest first."""
        mine, params = owned(scope)
        now = utcnow()
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT {MEMORY_COLUMNS}, content_hash, coalesce(reinforcement, 0) FROM memories "
                f"WHERE {mine} AND {active_memory_sql()} ORDER BY coalesce(observed_at, created_at), memory_id",
                [*params, now, now]).fetchall()
        return [ProfileInput(memory_item(r[:-2]), r[-2], r[-1]) for r in rows]

    def write_profile(self, scope: Scope, lines: list[ProfileLine], *, actor: str) -> int | None:
        """Make `lines` the user's profile; returns the new version, or None when they are the lines
        already held (nothing written)."""
        mine, params = owned(scope)
        now = utcnow()
        wanted = [(line.section, line.text, list(line.memory_ids)) for line in lines]
        with self._db.tx(scope.tenant_id) as con:
            held = con.execute(f"SELECT version FROM profiles WHERE {mine}", params).fetchone()
            current = [tuple(r[:2]) + (list(r[2]),) for r in con.execute(
                f"SELECT section, text, memory_ids FROM profile_lines WHERE {mine} ORDER BY section DESC, ordinal",
                params).fetchall()]
            if held is not None and current == sorted(wanted, key=lambda w: w[0] != "static"):
                return None
            version = (held[0] if held else 0) + 1
            pending = PendingCommit(scope.tenant_id, actor, sha256_json(wanted),
                                    f"profile v{version}: {len(lines)} lines")
            con.execute(f"DELETE FROM profile_lines WHERE {mine}", params)
            rows, ordinal = [], {"static": 0, "dynamic": 0}
            for section, text, memory_ids in wanted:
                line_id = f"pl_{sha256_json([scope.tenant_id, scope.user_id, version, section, ordinal[section]])[:24]}"
                rows.append([line_id, scope.tenant_id, scope.user_id, version, section, ordinal[section], text,
                             memory_ids, pending.commit_id])
                ordinal[section] += 1
            batch.insert(con, "profile_lines", ["line_id", "tenant_id", "user_id", "version", "section", "ordinal",
                                                "text", "memory_ids", "commit_id"], rows)
            pending.record("profile_lines", "insert", [r[0] for r in rows])
            static = "\n".join(t for s, t, _ in wanted if s == "static")
            dynamic = "\n".join(t for s, t, _ in wanted if s == "dynamic")
            if held is None:
                con.execute("INSERT INTO profiles (tenant_id, user_id, static_summary, dynamic_summary, updated_at, "
                            "version, commit_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
                            [scope.tenant_id, scope.user_id, static, dynamic, now, version, pending.commit_id])
            else:
                con.execute(f"UPDATE profiles SET static_summary = ?, dynamic_summary = ?, updated_at = ?, "
                            f"version = ?, commit_id = ? WHERE {mine}",
                            [static, dynamic, now, version, pending.commit_id, *params])
            pending.record("profiles", "insert" if held is None else "update", [scope.user_id])
            write_commit(con, pending, now)
        return version

    def read_profile(self, scope: Scope) -> Profile | None:
        """The user's profile with only the lines whose memories are all still current; None before
        the first build."""
        mine, params = owned(scope)
        with self._db.read() as con:
            head = con.execute(f"SELECT version, updated_at FROM profiles WHERE {mine}", params).fetchone()
            if head is None:
                return None
            lines = [ProfileLine(section=r[0], text=r[1], memory_ids=list(r[2])) for r in con.execute(
                f"SELECT section, text, memory_ids FROM profile_lines WHERE {mine} AND version = ? "
                "ORDER BY section DESC, ordinal", [*params, head[0]]).fetchall()]
        current = self.fetch_memories(scope, list({m for line in lines for m in line.memory_ids}))  # type: ignore[attr-defined]
        shown = [line for line in lines if line.memory_ids and all(m in current for m in line.memory_ids)]
        return Profile(tenant_id=scope.tenant_id, user_id=scope.user_id, version=head[0], updated_at=head[1],
                       static=[line for line in shown if line.section == "static"],
                       dynamic=[line for line in shown if line.section == "dynamic"],
                       withheld=len(lines) - len(shown))
