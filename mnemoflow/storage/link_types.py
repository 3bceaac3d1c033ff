"""The memory_links table as migration 0015 rebuilds it: its CHECK lists the link types, and `MAY_UPDATE`
joins them (a new memory about the same owner and subject as a held one, whose change the rules could not
classify: both stay current, the pair waits for review, accepting it makes it an UPDATES)."""

MEMORY_LINKS_0015 = """
CREATE TABLE memory_links_0015 (
    tenant_id VARCHAR NOT NULL,
    src VARCHAR NOT NULL,
    dst VARCHAR NOT NULL,
    type VARCHAR NOT NULL CHECK (type IN ('UPDATES', 'EXTENDS', 'DERIVES', 'RELATES_TO', 'DUPLICATE_OF',
        'CONFLICTS_WITH', 'EXTRACTED_FROM', 'DERIVED_FROM', 'MAY_UPDATE')),
    confidence DOUBLE NOT NULL,
    decided_by VARCHAR NOT NULL CHECK (decided_by IN ('auto', 'user', 'review')),
    reason VARCHAR,
    created_at TIMESTAMP NOT NULL,
    commit_id VARCHAR NOT NULL,
    link_id VARCHAR,
    PRIMARY KEY (tenant_id, src, dst, type)
)"""
