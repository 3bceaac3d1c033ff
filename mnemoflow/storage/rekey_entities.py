"""Migration 0010 (issue 36): entity ids that spelled their names become digests.

Before, an entity's id was `entity:<type>:<slug of its name>`, and the commit chain keeps ids after a
purge: a deleted secret typed as an entity ("entity:concept:k7741902") outlived its deletion in every
commit that named it. Now the id is `entity:<type>:<digest of the slug>` (`models.entity_id_of`, what
new writes compute), and the name lives only in the entity's row, which the purge removes.

Per tenant, in the migration's transaction: every row naming an old id (entities, memory_entities, the
subject or object of relations) takes the new one and names a commit of the migration's own, which
records those rows with their digests; the ids inside the tenant's earlier commits are renamed the same
way and the chain re-derived from the first commit that changed (`commits.rewrite_row_ids`), so that
`verify` passes and no commit spells a name. The migration's commit says from which head the chain was
re-derived. Rows are re-inserted under their new ids rather than updated, since the ids are keys.
"""

from __future__ import annotations

import duckdb

from mnemoflow.models import rekeyed_entity_id
from mnemoflow.storage import batch
from mnemoflow.storage.commits import PendingCommit, rewrite_row_ids, sha256_json, write_commit
from mnemoflow.storage.scope import tenant
from mnemoflow.timeutil import utcnow

REKEYED = "0014_entity_id_digests"  # the migration's name (a store that applies it now is rewritten afresh)
_ENTITY_COLUMNS = "tenant_id, entity_id, name, type, aliases, mention_count, first_seen, last_seen, hotness"


def rekey_entity_ids(con: duckdb.DuckDBPyConnection) -> None:
    """Every tenant whose rows or commits name an entity by an old, name-bearing id."""
    tenants = [r[0] for r in con.execute(
        "SELECT tenant_id FROM entities UNION SELECT tenant_id FROM commits "
        "WHERE CAST(diff_json AS VARCHAR) LIKE '%\"entity:%' ORDER BY 1").fetchall()]
    for tenant_id in tenants:
        _rekey_tenant(con, tenant_id)


def _renamed(table: str, row_id: str) -> str:
    if table == "entities":
        return rekeyed_entity_id(row_id)
    if table == "memory_entities" and "|" in row_id:
        memory_id, entity_id = row_id.split("|", 1)
        return f"{memory_id}|{rekeyed_entity_id(entity_id)}"
    return row_id


def _rekey_tenant(con: duckdb.DuckDBPyConnection, tenant_id: str) -> None:
    within, params = tenant(tenant_id)
    held = [r[0] for r in con.execute(
        f"SELECT entity_id FROM entities WHERE {within} UNION SELECT entity_id FROM memory_entities WHERE {within} "
        f"UNION SELECT subject FROM relations WHERE {within} UNION SELECT object FROM relations WHERE {within}",
        params * 4).fetchall()]
    renames = [[old, new] for old in held if (new := rekeyed_entity_id(old)) != old]
    of_e, of_e_params = tenant(tenant_id, "e")
    of_x, of_x_params = tenant(tenant_id, "x")
    now = utcnow()
    pending = PendingCommit(tenant_id, "migration", sha256_json({"rekey entity ids": tenant_id}),
                            "entity ids become digests of their names (migration 0010)")
    if renames:
        with batch.registered(con, ["old", "new"], renames) as m:
            entities = [r[0] for r in con.execute(
                f"INSERT INTO entities ({_ENTITY_COLUMNS}, commit_id) SELECT e.tenant_id, m.new, e.name, e.type, "
                f"e.aliases, e.mention_count, e.first_seen, e.last_seen, e.hotness, ? FROM entities e "
                f"JOIN {m} m ON e.entity_id = m.old WHERE {of_e} RETURNING entity_id",
                [pending.commit_id, *of_e_params]).fetchall()]
            con.execute(f"DELETE FROM entities WHERE {within} AND entity_id IN (SELECT old FROM {m})", params)
            named = [r[0] for r in con.execute(
                f"INSERT INTO memory_entities (tenant_id, memory_id, entity_id, commit_id) SELECT x.tenant_id, "
                f"x.memory_id, m.new, ? FROM memory_entities x JOIN {m} m ON x.entity_id = m.old "
                f"WHERE {of_x} RETURNING memory_id || '|' || entity_id", [pending.commit_id, *of_x_params]).fetchall()]
            con.execute(f"DELETE FROM memory_entities WHERE {within} AND entity_id IN (SELECT old FROM {m})", params)
            relations = [r[0] for r in con.execute(
                f"UPDATE relations SET subject = coalesce((SELECT new FROM {m} WHERE old = subject), subject), "
                f"object = coalesce((SELECT new FROM {m} WHERE old = object), object), commit_id = ? "
                f"WHERE {within} AND (subject IN (SELECT old FROM {m}) OR object IN (SELECT old FROM {m})) "
                "RETURNING relation_id", [pending.commit_id, *params]).fetchall()]
        pending.record("entities", "update", entities)
        pending.record("memory_entities", "update", named)
        pending.record("relations", "update", relations)
    before = rewrite_row_ids(con, tenant_id, _renamed)
    if pending.empty and before is None:
        return
    if before is not None:  # also when only the history named old ids (what it named was purged)
        pending.message += f"; the chain re-derived with the new ids, its head was {before}"
    write_commit(con, pending, now)
