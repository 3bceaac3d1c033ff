"""The data model as the first migration created it (`migrations.py` applies it; later migrations change
it, never this text: an applied migration is never edited)."""

DATA_MODEL_0001 = """
        CREATE TABLE commits (
            commit_id VARCHAR PRIMARY KEY,
            tenant_id VARCHAR NOT NULL,
            seq BIGINT NOT NULL,
            parent_id VARCHAR,
            input_sha256 VARCHAR NOT NULL,
            diff_json JSON NOT NULL,
            commit_hash VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL,
            actor VARCHAR NOT NULL,
            message VARCHAR,
            UNIQUE (tenant_id, seq)
        );
        CREATE TABLE source_documents (
            document_id VARCHAR PRIMARY KEY,
            tenant_id VARCHAR NOT NULL,
            user_id VARCHAR NOT NULL,
            shared BOOLEAN NOT NULL DEFAULT false,
            connector VARCHAR NOT NULL,
            uri VARCHAR NOT NULL,
            mime VARCHAR,
            title VARCHAR,
            content_hash VARCHAR NOT NULL,
            metadata JSON,
            created_at TIMESTAMP NOT NULL,
            deleted_at TIMESTAMP,
            commit_id VARCHAR NOT NULL
        );
        CREATE TABLE chunks (
            chunk_id VARCHAR PRIMARY KEY,
            tenant_id VARCHAR NOT NULL,
            user_id VARCHAR NOT NULL,
            shared BOOLEAN NOT NULL DEFAULT false,
            document_id VARCHAR NOT NULL,
            ordinal INTEGER NOT NULL,
            text VARCHAR NOT NULL,
            context VARCHAR,
            content_hash VARCHAR NOT NULL,
            token_count INTEGER NOT NULL,
            locator JSON,
            score DOUBLE,
            embedding_status VARCHAR NOT NULL DEFAULT 'pending',
            embedding_model VARCHAR,
            created_at TIMESTAMP NOT NULL,
            deleted_at TIMESTAMP,
            commit_id VARCHAR NOT NULL
        );
        CREATE TABLE turns (
            turn_key VARCHAR PRIMARY KEY,
            tenant_id VARCHAR NOT NULL,
            user_id VARCHAR NOT NULL,
            document_id VARCHAR NOT NULL,
            session_id VARCHAR NOT NULL,
            turn_id VARCHAR NOT NULL,
            ordinal INTEGER NOT NULL,
            role VARCHAR,
            speaker VARCHAR,
            ts TIMESTAMP,
            text VARCHAR NOT NULL,
            metadata JSON,
            source_uri VARCHAR,
            created_at TIMESTAMP NOT NULL,
            commit_id VARCHAR NOT NULL
        );
        CREATE TABLE memories (
            memory_id VARCHAR PRIMARY KEY,
            tenant_id VARCHAR NOT NULL,
            user_id VARCHAR NOT NULL,
            shared BOOLEAN NOT NULL DEFAULT false,
            content VARCHAR NOT NULL,
            content_hash VARCHAR NOT NULL,
            kind VARCHAR NOT NULL,
            salience DOUBLE NOT NULL,
            confidence DOUBLE NOT NULL,
            is_latest BOOLEAN NOT NULL DEFAULT true,
            valid_from TIMESTAMP NOT NULL,
            valid_to TIMESTAMP,
            expires_at TIMESTAMP,
            deleted_at TIMESTAMP,
            observed_at TIMESTAMP,
            event_start_at TIMESTAMP,
            event_end_at TIMESTAMP,
            temporal_text VARCHAR,
            access_count INTEGER NOT NULL DEFAULT 0,
            last_accessed_at TIMESTAMP,
            tier VARCHAR NOT NULL DEFAULT 'L0',
            metadata JSON,
            embedding_status VARCHAR NOT NULL DEFAULT 'pending',
            embedding_model VARCHAR,
            created_at TIMESTAMP NOT NULL,
            updated_at TIMESTAMP NOT NULL,
            commit_id VARCHAR NOT NULL
        );
        CREATE TABLE memory_links (
            tenant_id VARCHAR NOT NULL,
            src VARCHAR NOT NULL,
            dst VARCHAR NOT NULL,
            type VARCHAR NOT NULL CHECK (type IN ('UPDATES', 'EXTENDS', 'DERIVES', 'RELATES_TO',
                'DUPLICATE_OF', 'CONFLICTS_WITH', 'EXTRACTED_FROM', 'DERIVED_FROM')),
            confidence DOUBLE NOT NULL,
            decided_by VARCHAR NOT NULL CHECK (decided_by IN ('auto', 'user', 'review')),
            reason VARCHAR,
            created_at TIMESTAMP NOT NULL,
            commit_id VARCHAR NOT NULL,
            PRIMARY KEY (tenant_id, src, dst, type)
        );
        CREATE TABLE entities (
            tenant_id VARCHAR NOT NULL,
            entity_id VARCHAR NOT NULL,
            name VARCHAR NOT NULL,
            type VARCHAR NOT NULL CHECK (type IN ('person', 'organization', 'place', 'library',
                'tool', 'project', 'concept')),
            aliases VARCHAR[],
            mention_count INTEGER NOT NULL DEFAULT 0,
            first_seen TIMESTAMP,
            last_seen TIMESTAMP,
            hotness DOUBLE NOT NULL DEFAULT 0,
            commit_id VARCHAR NOT NULL,
            PRIMARY KEY (tenant_id, entity_id)
        );
        CREATE TABLE memory_entities (
            tenant_id VARCHAR NOT NULL,
            memory_id VARCHAR NOT NULL,
            entity_id VARCHAR NOT NULL,
            commit_id VARCHAR NOT NULL,
            PRIMARY KEY (tenant_id, memory_id, entity_id)
        );
        CREATE TABLE relations (
            tenant_id VARCHAR NOT NULL,
            relation_id VARCHAR NOT NULL,
            subject VARCHAR NOT NULL,
            predicate VARCHAR NOT NULL CHECK (predicate IN ('mentions', 'works_on', 'uses', 'prefers',
                'supersedes', 'superseded_by', 'conflicts_with', 'cites', 'runs_on', 'belongs_to',
                'located_at')),
            object VARCHAR NOT NULL,
            memory_id VARCHAR,
            confidence DOUBLE NOT NULL,
            created_at TIMESTAMP NOT NULL,
            superseded_at TIMESTAMP,
            commit_id VARCHAR NOT NULL,
            PRIMARY KEY (tenant_id, relation_id)
        );
        CREATE TABLE categories (
            tenant_id VARCHAR NOT NULL,
            category_key VARCHAR NOT NULL,
            name VARCHAR NOT NULL,
            parent_key VARCHAR,
            commit_id VARCHAR NOT NULL,
            PRIMARY KEY (tenant_id, category_key)
        );
        CREATE TABLE memory_categories (
            tenant_id VARCHAR NOT NULL,
            memory_id VARCHAR NOT NULL,
            category_key VARCHAR NOT NULL,
            commit_id VARCHAR NOT NULL,
            PRIMARY KEY (tenant_id, memory_id, category_key)
        );
        CREATE TABLE profiles (
            tenant_id VARCHAR NOT NULL,
            user_id VARCHAR NOT NULL,
            static_summary VARCHAR,
            dynamic_summary VARCHAR,
            updated_at TIMESTAMP NOT NULL,
            version INTEGER NOT NULL,
            commit_id VARCHAR NOT NULL,
            PRIMARY KEY (tenant_id, user_id)
        );
        CREATE TABLE summaries (
            summary_id VARCHAR PRIMARY KEY,
            tenant_id VARCHAR NOT NULL,
            user_id VARCHAR NOT NULL,
            level VARCHAR NOT NULL,
            subject_kind VARCHAR NOT NULL,
            subject_key VARCHAR NOT NULL,
            day DATE,
            content VARCHAR NOT NULL,
            child_ids VARCHAR[] NOT NULL,
            created_at TIMESTAMP NOT NULL,
            commit_id VARCHAR NOT NULL
        );
        CREATE TABLE review_queue (
            review_id VARCHAR PRIMARY KEY,
            tenant_id VARCHAR NOT NULL,
            user_id VARCHAR NOT NULL,
            src VARCHAR NOT NULL,
            dst VARCHAR NOT NULL,
            proposed_type VARCHAR NOT NULL,
            confidence DOUBLE NOT NULL,
            reason VARCHAR,
            status VARCHAR NOT NULL DEFAULT 'open',
            created_at TIMESTAMP NOT NULL,
            decided_at TIMESTAMP,
            decided_by VARCHAR
        );
        CREATE TABLE outbox (
            job_key VARCHAR PRIMARY KEY,
            tenant_id VARCHAR NOT NULL,
            user_id VARCHAR NOT NULL,
            kind VARCHAR NOT NULL,
            payload JSON NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            lease_until TIMESTAMP,
            status VARCHAR NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'done', 'failed')),
            last_error VARCHAR,
            created_at TIMESTAMP NOT NULL,
            updated_at TIMESTAMP NOT NULL
        );
        CREATE TABLE ingest_errors (
            error_id VARCHAR PRIMARY KEY,
            tenant_id VARCHAR NOT NULL,
            user_id VARCHAR NOT NULL,
            connector VARCHAR NOT NULL,
            uri VARCHAR NOT NULL,
            kind VARCHAR NOT NULL,
            reason VARCHAR NOT NULL,
            detail VARCHAR,
            created_at TIMESTAMP NOT NULL
        );
        CREATE TABLE eval_runs (
            run_id VARCHAR PRIMARY KEY,
            suite VARCHAR NOT NULL,
            config JSON NOT NULL,
            summary JSON NOT NULL,
            created_at TIMESTAMP NOT NULL
        );
        CREATE TABLE eval_results (
            run_id VARCHAR NOT NULL,
            question_id VARCHAR NOT NULL,
            budget INTEGER NOT NULL,
            category VARCHAR,
            evidence_recall DOUBLE NOT NULL,
            latency_ms DOUBLE NOT NULL,
            PRIMARY KEY (run_id, question_id, budget)
        );
        CREATE TABLE store_state (
            key VARCHAR PRIMARY KEY,
            value VARCHAR NOT NULL
        );
        INSERT INTO store_state VALUES ('fts:chunks', 'dirty'), ('fts:memories', 'dirty');
    """
