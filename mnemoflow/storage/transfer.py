"""Transfer: a tenant's memories out (every version, with their links, entities, relations, categories
and citations; no vectors) and an import batch in (`mnemoflow.transfer`), written with the memories'
own ids and times, one commit per owner, vectors queued for the importer's model."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime
from typing import Any

import duckdb

from mnemoflow.models import EntityRef, MemoryDraft, MemoryItem
from mnemoflow.storage import batch, fts, outbox
from mnemoflow.storage.commits import PendingCommit, sha256_json, write_commit
from mnemoflow.storage.graph import write_graph
from mnemoflow.storage.lance_index import MEMORY_INDEX
from mnemoflow.storage.links import insert_links, live_sources
from mnemoflow.storage.memory_writes import NewMemory
from mnemoflow.storage.room import Room
from mnemoflow.storage.rows import columns, memory_content_hash, memory_row, relation_id
from mnemoflow.storage.scope import SCOPE_COLUMNS, Scope, owned, tenant
from mnemoflow.storage.vectors import embed_job
from mnemoflow.timeutil import utcnow
from mnemoflow.transfer import FORMAT, VERSION, ImportBatch, ImportedEntity, ImportedMemory

_MEMORY = ("memory_id", *SCOPE_COLUMNS, "shared", "content", "kind", "salience", "confidence", "is_latest",
           "created_at", "updated_at", "valid_from", "valid_to", "expires_at", "observed_at", "event_start_at",
           "event_end_at", "temporal_text", "tier", "metadata", "access_count", "last_accessed_at", "reinforcement")
_SOURCE_LINKS = ("EXTRACTED_FROM", "DERIVED_FROM")


def _json(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


class Transfer(Room):
    def export_memories(self, tenant_id: str, user_id: str | None = None) -> list[dict[str, Any]]:
        """The lines of an export: a header, the entities the memories name, every memory not deleted
        (past versions included, oldest first), then the links between them."""
        where, params = tenant(tenant_id, "m") if user_id is None else owned(Scope(tenant_id, user_id), "m")
        within, within_params = tenant(tenant_id, "x")
        with self._db.read() as con:
            memories = [dict(zip(_MEMORY, r)) for r in con.execute(
                f"SELECT {', '.join('m.' + c for c in _MEMORY)} FROM memories m WHERE {where} "
                "AND m.deleted_at IS NULL ORDER BY m.created_at, m.memory_id", params).fetchall()]
            with batch.id_set(con, [m["memory_id"] for m in memories]) as ids:
                named = _grouped(con.execute(
                    f"SELECT x.memory_id, x.entity_id FROM memory_entities x WHERE {within} AND x.memory_id IN {ids} "
                    "ORDER BY 1, 2", within_params).fetchall())
                filed = _grouped(con.execute(
                    f"SELECT x.memory_id, x.category_key FROM memory_categories x WHERE {within} "
                    f"AND x.memory_id IN {ids} ORDER BY 1, 2", within_params).fetchall())
                stated = _grouped(con.execute(
                    f"SELECT x.memory_id, x.subject, x.predicate, x.object, x.confidence, x.created_at, "
                    f"x.superseded_at FROM relations x WHERE {within} AND x.memory_id IN {ids} ORDER BY 1, 3, 2, 4",
                    within_params).fetchall(), whole=True)
                links = con.execute(
                    f"SELECT x.src, x.dst, x.type, x.confidence, x.decided_by, x.reason, x.created_at, "
                    f"c.locator, d.document_id, d.uri, d.title FROM memory_links x "
                    f"LEFT JOIN chunks c ON c.chunk_id = x.dst AND c.tenant_id = x.tenant_id "
                    f"LEFT JOIN source_documents d ON d.document_id = coalesce(c.document_id, x.dst) "
                    f"AND d.tenant_id = x.tenant_id "
                    f"WHERE {within} AND x.src IN {ids} AND (x.dst IN {ids} OR x.type IN ('EXTRACTED_FROM', "
                    "'DERIVED_FROM')) ORDER BY x.created_at, x.src, x.dst, x.type", within_params).fetchall()
            entity_ids = sorted({e for found in named.values() for e in found})
            with batch.id_set(con, entity_ids) as ids:
                entities = con.execute(
                    f"SELECT x.entity_id, x.name, x.type, x.aliases, x.mention_count, x.first_seen, x.last_seen, "
                    f"x.hotness FROM entities x WHERE {within} AND x.entity_id IN {ids} ORDER BY 1",
                    within_params).fetchall()
        cited: dict[str, list[dict[str, Any]]] = defaultdict(list)
        lines: list[dict[str, Any]] = [{"type": "header", "format": FORMAT, "version": VERSION, "tenant_id": tenant_id,
                                        "user_id": user_id, "exported_at": utcnow().isoformat(),
                                        "memories": len(memories)}]
        lines += [{"type": "entity", "entity_id": e[0], "name": e[1], "entity_type": e[2], "aliases": list(e[3] or []),
                   "mention_count": e[4], "first_seen": _json(e[5]), "last_seen": _json(e[6]), "hotness": e[7]}
                  for e in entities]
        link_lines = []
        for src, dst, kind, confidence, decided_by, reason, created_at, locator, document, uri, title in links:
            if kind in _SOURCE_LINKS:
                cited[src].append({"chunk_id": dst if document != dst else None, "document_id": document,
                                   "uri": uri, "title": title, "locator": json.loads(locator) if locator else {}})
            else:
                link_lines.append({"type": "link", "src": src, "dst": dst, "link_type": kind, "confidence": confidence,
                                   "decided_by": decided_by, "reason": reason, "created_at": _json(created_at)})
        for m in memories:
            mid = m.pop("memory_id")
            m["metadata"] = json.loads(m["metadata"]) if m["metadata"] else {}
            lines.append({"type": "memory", "id": mid, **{k: _json(v) for k, v in m.items()},
                          "entities": named.get(mid, []), "categories": filed.get(mid, []),
                          "relations": [{"subject": r[0], "predicate": r[1], "object": r[2], "confidence": r[3],
                                         "created_at": _json(r[4]), "superseded_at": _json(r[5])}
                                        for r in stated.get(mid, [])],
                          "citations": cited.get(mid, [])})
        return lines + link_lines

    def import_memories(self, imported: ImportBatch, *, actor: str) -> tuple[int, int, int, list[str]]:
        """Write the batch (one tenant's), one commit per owner: (memories imported, already held,
        links, rejected). A memory the tenant holds already is skipped (an import can be run again);
        an id another tenant holds is refused. Entities the import creates keep their exported counts."""
        if not imported.memories:
            return 0, 0, 0, []
        with self._db.read() as con, batch.id_set(con, [m.id for m in imported.memories]) as ids:
            held = {r[0]: r[1] for r in con.execute(
                f"SELECT memory_id, tenant_id FROM memories WHERE memory_id IN {ids}").fetchall()}
        rejected = [f"memory {m.id}: the id belongs to another tenant" for m in imported.memories
                    if m.id in held and held[m.id] != m.scope.tenant_id]
        fresh = [m for m in imported.memories if m.id not in held]
        known = {m.id for m in imported.memories} | set(held)
        entities = {e.entity_id: e for e in imported.entities}
        by_scope: dict[Scope, list[ImportedMemory]] = defaultdict(list)
        for m in fresh:
            by_scope[m.scope].append(m)
        within, within_params = tenant(imported.memories[0].scope.tenant_id)
        with self._db.read() as con, batch.id_set(con, list(entities)) as ids:
            existed = {r[0] for r in con.execute(
                f"SELECT entity_id FROM entities WHERE {within} AND entity_id IN {ids}", within_params).fetchall()}
        linked = 0
        for scope, group in by_scope.items():
            mine = {m.id for m in group}
            links = [li for li in imported.links if li.src in mine and li.dst in known]
            linked += self._import_group(scope, group, links, entities, existed, actor)
        return len(fresh), len(imported.memories) - len(fresh) - len(rejected), linked, rejected

    def _import_group(self, scope: Scope, group: list[ImportedMemory], links: list[Any],
                      entities: dict[str, ImportedEntity], existed: set[str], actor: str) -> int:
        now = utcnow()
        items = [(m, _item(m), memory_content_hash(m.content)) for m in group]
        pending = PendingCommit(scope.tenant_id, actor, sha256_json(sorted(m.id for m in group)),
                                f"import {len(group)} memories")
        with self._db.tx(pending.tenant_id) as con:
            batch.insert(con, "memories", [*_MEMORY, "content_hash", "embedding_status", "commit_id"], [
                [m.id, *scope.stamp().values(), m.shared, m.content, m.kind, m.salience, m.confidence, m.is_latest,
                 m.created_at, m.updated_at, m.valid_from, m.valid_to, m.expires_at, m.observed_at, m.event_start_at,
                 m.event_end_at, m.temporal_text, m.tier, json.dumps(m.metadata), m.access_count, m.last_accessed_at,
                 m.reinforcement, digest, "pending", pending.commit_id] for m, _, digest in items])
            pending.record("memories", "insert", [m.id for m in group])
            write_graph(con, scope, [_new(m, item, digest, entities) for m, item, digest in items], pending)
            _entity_stats(con, scope, [entities[e] for e in entities if e not in existed], pending.commit_id)
            relations = [[scope.tenant_id, relation_id(scope.tenant_id, r.subject, r.predicate, r.object, m.id),
                          r.subject, r.predicate, r.object, m.id, r.confidence, r.created_at, r.superseded_at,
                          pending.commit_id] for m in group for r in m.relations]
            pending.record("relations", "insert", batch.insert(
                con, "relations", ["tenant_id", "relation_id", "subject", "predicate", "object", "memory_id",
                                   "confidence", "created_at", "superseded_at", "commit_id"], relations,
                on_conflict_ignore=True, returning="relation_id"))
            sources = live_sources(con, scope, {s for m in group for s in m.sources})
            rows = [[li.src, li.dst, li.type, li.confidence, li.decided_by, li.reason, li.created_at] for li in links]
            rows += [[m.id, s, "EXTRACTED_FROM", 1.0, "auto", None, m.created_at] for m in group for s in m.sources
                     if s in sources]
            insert_links(con, scope, rows, pending)
            outbox.enqueue(con, [embed_job(self._index.model, scope, "memories", m.id, digest)
                                 for m, _, digest in items], now)
            fts.mark_dirty(con, fts.MEMORIES_FTS)
            write_commit(con, pending, now)
        self._index.append(MEMORY_INDEX, columns([memory_row(scope, item, digest, m.shared)
                                                  for m, item, digest in items]))
        return len(rows)


def _grouped(rows: list[tuple], whole: bool = False) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = defaultdict(list)
    for row in rows:
        found[row[0]].append(tuple(row[1:]) if whole else row[1])
    return found


def _item(m: ImportedMemory) -> MemoryItem:
    return MemoryItem(id=m.id, **m.scope.stamp(), content=m.content, kind=m.kind, salience=m.salience,
                      confidence=m.confidence, is_latest=m.is_latest, created_at=m.created_at,
                      updated_at=m.updated_at, valid_from=m.valid_from, valid_to=m.valid_to, expires_at=m.expires_at,
                      observed_at=m.observed_at, event_start_at=m.event_start_at, event_end_at=m.event_end_at,
                      temporal_text=m.temporal_text, embedding_status="pending", metadata=m.metadata)


def _new(m: ImportedMemory, item: MemoryItem, digest: str, entities: dict[str, ImportedEntity]) -> NewMemory:
    """The graph half of an imported memory, as `write_graph` takes it (relations are written as exported)."""
    refs = {}
    for entity_id in m.entities:
        e = entities.get(entity_id)
        _, kind, slug = entity_id.split(":", 2)
        refs[entity_id] = EntityRef(entity_id, e.name if e else slug.replace("-", " ").title(), e.type if e else kind,
                                    e.aliases if e else ())  # type: ignore[arg-type]
    draft = MemoryDraft(content=m.content, kind=m.kind, salience=m.salience)  # type: ignore[arg-type]
    return NewMemory(item, digest, draft, m.created_at, (), (), refs, {}, list(m.categories),
                     retired_at=None if m.is_latest else m.valid_to)


def _entity_stats(con: duckdb.DuckDBPyConnection, scope: Scope, exported: list[ImportedEntity], commit: str) -> None:
    """Entities the import created take the counts and heat they had where they were exported."""
    if not exported:
        return
    where, params = tenant(scope.tenant_id, "entities")
    with batch.registered(con, ["entity_id", "mention_count", "first_seen", "last_seen", "hotness"],
                          [[e.entity_id, e.mention_count, e.first_seen, e.last_seen, e.hotness] for e in exported]) as b:
        con.execute(f"UPDATE entities SET mention_count = b.mention_count, first_seen = b.first_seen, "
                    f"last_seen = b.last_seen, hotness = b.hotness FROM {b} b WHERE {where} "
                    f"AND entities.entity_id = b.entity_id AND entities.commit_id = ?", [*params, commit])
