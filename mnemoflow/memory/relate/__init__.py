"""What a new memory does to the memories a scope already has: claims read from a memory's text,
duplicate / UPDATES / EXTENDS / CONFLICTS_WITH classification with its thresholds, and the entities and
relation triples a memory names."""
