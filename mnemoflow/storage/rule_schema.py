"""The tables of procedural rules (migration 0010_rules), kept beside the migration list so that it
stays short. Plain types and a primary key on each, so the same SQL runs on an attached PostgreSQL.

- `rules`: one row per rule, scoped like a memory; its slots as JSON, its state. Tracked by commits.
- `rule_transitions`: every move of a rule's state, with who made it. Tracked by commits.
- `rule_stats`: each rule's counters (evaluations, applications, ratings); derived, like access
  counts, so not part of any digest.
- `tool_selections`: each tool selection answered, so that it can be rated once.
- `rule_readings`: which rule memories the rule readers have read, and what came of it.
- `api_keys.admin`: keys that may see debug output (raw vectors, internal scores).
"""

RULES_0010 = """
    CREATE TABLE rules (
        rule_id VARCHAR PRIMARY KEY,
        tenant_id VARCHAR NOT NULL,
        user_id VARCHAR,
        agent_id VARCHAR,
        run_id VARCHAR,
        container VARCHAR,
        shared BOOLEAN NOT NULL DEFAULT false,
        state VARCHAR NOT NULL,
        conditions JSON NOT NULL,
        patch JSON NOT NULL,
        exceptions JSON NOT NULL,
        origin VARCHAR NOT NULL,
        memory_id VARCHAR,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        commit_id VARCHAR NOT NULL
    );
    CREATE TABLE rule_transitions (
        transition_id VARCHAR PRIMARY KEY,
        tenant_id VARCHAR NOT NULL,
        rule_id VARCHAR NOT NULL,
        from_state VARCHAR,
        to_state VARCHAR NOT NULL,
        actor VARCHAR NOT NULL,
        moved_at TIMESTAMP NOT NULL,
        commit_id VARCHAR NOT NULL
    );
    CREATE TABLE rule_stats (
        rule_id VARCHAR PRIMARY KEY,
        tenant_id VARCHAR NOT NULL,
        evaluations BIGINT NOT NULL DEFAULT 0,
        applications BIGINT NOT NULL DEFAULT 0,
        positive BIGINT NOT NULL DEFAULT 0,
        negative BIGINT NOT NULL DEFAULT 0,
        last_evaluated_at TIMESTAMP
    );
    CREATE TABLE tool_selections (
        selection_id VARCHAR PRIMARY KEY,
        tenant_id VARCHAR NOT NULL,
        user_id VARCHAR,
        agent_id VARCHAR,
        run_id VARCHAR,
        container VARCHAR,
        context JSON NOT NULL,
        candidates JSON NOT NULL,
        selected JSON NOT NULL,
        strict BOOLEAN NOT NULL,
        fallback VARCHAR,
        rule_ids JSON NOT NULL,
        created_at TIMESTAMP NOT NULL,
        rating VARCHAR,
        rated_at TIMESTAMP
    );
    CREATE TABLE rule_readings (
        memory_id VARCHAR PRIMARY KEY,
        tenant_id VARCHAR NOT NULL,
        rule_id VARCHAR,
        reason VARCHAR NOT NULL,
        read_at TIMESTAMP NOT NULL
    );
    ALTER TABLE api_keys ADD COLUMN admin BOOLEAN DEFAULT false;
"""
