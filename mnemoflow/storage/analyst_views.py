"""The stable views analysts query (docs/tables.md): `current_memories`, `memory_history`,
`ingest_error_counts` and `tenant_usage`. The columns of a view stay while the tables under it change, so
saved queries and dashboards keep working. Each view spans every tenant, like the tables: an operator's
view.

Kept apart from `migrations` because the views are what analysts read, a concept of their own; the
migration that created them (`0008_analyst_views`) runs this text as it stood. A later change to a view
is a new migration with its own text, never an edit of this one.
"""

from __future__ import annotations

ANALYST_VIEWS_0008 = """
        CREATE VIEW current_memories AS
            SELECT tenant_id, user_id, agent_id, run_id, container, memory_id, kind, content, salience,
                   confidence, shared, pinned, observed_at, event_start_at, event_end_at, temporal_text,
                   created_at, access_count, last_accessed_at, retention, reinforcement
            FROM memories
            WHERE deleted_at IS NULL AND is_latest AND archived_at IS NULL
              AND (valid_to IS NULL OR valid_to > (now() AT TIME ZONE 'UTC'))
              AND (expires_at IS NULL OR expires_at > (now() AT TIME ZONE 'UTC'));
        CREATE VIEW memory_history AS
            SELECT m.tenant_id, m.user_id, m.agent_id, m.run_id, m.container, m.memory_id, m.kind, m.content,
                   m.created_at, m.valid_from, m.valid_to, m.expires_at, m.archived_at, m.deleted_at,
                   CASE WHEN m.deleted_at IS NOT NULL THEN 'deleted'
                        WHEN m.archived_at IS NOT NULL THEN 'archived'
                        WHEN NOT m.is_latest THEN 'superseded'
                        WHEN m.expires_at IS NOT NULL AND m.expires_at <= (now() AT TIME ZONE 'UTC') THEN 'expired'
                        WHEN m.valid_to IS NOT NULL AND m.valid_to <= (now() AT TIME ZONE 'UTC') THEN 'ended'
                        ELSE 'current' END AS state,
                   (SELECT min(l.src) FROM memory_links l
                    WHERE l.tenant_id = m.tenant_id AND l.dst = m.memory_id AND l.type = 'UPDATES') AS superseded_by
            FROM memories m;
        CREATE VIEW ingest_error_counts AS
            SELECT tenant_id, connector, kind, count(*) AS errors, min(created_at) AS first_at,
                   max(created_at) AS last_at
            FROM ingest_errors GROUP BY ALL;
        CREATE VIEW tenant_usage AS
            WITH tenants AS (SELECT DISTINCT tenant_id FROM commits)
            SELECT t.tenant_id,
                   (SELECT count(*) FROM source_documents d WHERE d.tenant_id = t.tenant_id AND d.deleted_at IS NULL)
                       AS documents,
                   (SELECT count(*) FROM chunks c WHERE c.tenant_id = t.tenant_id AND c.deleted_at IS NULL) AS chunks,
                   (SELECT count(*) FROM turns u WHERE u.tenant_id = t.tenant_id) AS turns,
                   (SELECT count(*) FROM current_memories m WHERE m.tenant_id = t.tenant_id) AS current_memories,
                   (SELECT count(*) FROM memories m WHERE m.tenant_id = t.tenant_id AND m.deleted_at IS NULL)
                       AS memory_versions,
                   (SELECT count(DISTINCT m.user_id) FROM memories m WHERE m.tenant_id = t.tenant_id) AS users,
                   (SELECT count(*) FROM ingest_errors e WHERE e.tenant_id = t.tenant_id) AS ingest_errors,
                   (SELECT count(*) FROM api_keys k WHERE k.tenant_id = t.tenant_id AND k.revoked_at IS NULL)
                       AS active_keys,
                   (SELECT count(*) FROM commits c WHERE c.tenant_id = t.tenant_id) AS commits,
                   (SELECT max(c.created_at) FROM commits c WHERE c.tenant_id = t.tenant_id) AS last_write_at
            FROM tenants t;
"""
