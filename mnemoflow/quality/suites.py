"""The expectation suites, one per frame (`storage/quality.py` builds the frames): what every row
of each table must satisfy. Declared as data; `runner` turns them into Great Expectations suites."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, get_args

from mnemoflow.models import ENTITY_TYPES, PREDICATES, MemoryKind

LINK_TYPES = ("UPDATES", "EXTENDS", "DERIVES", "RELATES_TO", "DUPLICATE_OF", "CONFLICTS_WITH", "EXTRACTED_FROM",
              "DERIVED_FROM", "MAY_UPDATE")
EMBEDDING_STATUSES = ("pending", "done")
OUTBOX_STATUSES = ("pending", "done", "dead")
TIERS = ("L0", "L1", "L2")


@dataclass(frozen=True)
class Expect:
    """One expectation: a Great Expectations class name, its column(s) and arguments, and when only
    some rows are concerned, a pandas row condition."""

    kind: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    when: str | None = None
    label: str | None = None  # what a person reads in results; the class and its column(s) otherwise

    @property
    def name(self) -> str:
        target = self.kwargs.get("column") or "/".join(filter(None, (self.kwargs.get("column_A"),
                                                                     self.kwargs.get("column_B"))))
        return (self.label or f"{self.kind}({target})") + (f" where {self.when}" if self.when else "")


def unique(column: str) -> Expect:
    return Expect("ExpectColumnValuesToBeUnique", {"column": column})


def one_of(column: str, values: tuple[Any, ...] | list[Any], when: str | None = None) -> Expect:
    return Expect("ExpectColumnValuesToBeInSet", {"column": column, "value_set": list(values)}, when)


def holds(flag: str, when: str | None = None) -> Expect:
    """A flag column the store computed (a join found what the row names) is true on every row."""
    return Expect("ExpectColumnValuesToBeInSet", {"column": flag, "value_set": [True]}, when, f"{flag} on every row")


def between(column: str, low: float, high: float) -> Expect:
    return Expect("ExpectColumnValuesToBeBetween", {"column": column, "min_value": low, "max_value": high})


COMMITTED = holds("commit_found")  # every row names a commit of its tenant's chain

SUITES: dict[str, list[Expect]] = {
    "memories": [
        unique("memory_id"),
        Expect("ExpectColumnValuesToNotBeNull", {"column": "content_hash"}),
        one_of("kind", get_args(MemoryKind)),
        one_of("tier", TIERS),
        one_of("embedding_status", EMBEDDING_STATUSES),
        between("salience", 0.0, 1.0),
        between("confidence", 0.0, 1.0),
        # lifecycle columns agree with each other
        Expect("ExpectColumnPairValuesAToBeGreaterThanB",
               {"column_A": "valid_to", "column_B": "valid_from", "or_equal": True,
                "ignore_row_if": "either_value_is_missing"}),
        Expect("ExpectColumnValuesToNotBeNull", {"column": "valid_to"}, "is_latest == False"),
        Expect("ExpectColumnValuesToBeNull", {"column": "archived_at"}, "pinned == True"),
        COMMITTED,
        holds("vector_found", 'embedding_status == "done"'),
    ],
    "chunks": [
        unique("chunk_id"),
        one_of("embedding_status", EMBEDDING_STATUSES),
        holds("document_found"),
        COMMITTED,
        holds("vector_found", 'embedding_status == "done"'),
    ],
    "source_documents": [unique("document_id"), COMMITTED],
    "turns": [unique("turn_key"), holds("document_found"), COMMITTED],
    "memory_links": [
        unique("link_id"),
        one_of("type", LINK_TYPES),
        one_of("decided_by", ("auto", "user", "review")),
        between("confidence", 0.0, 1.0),
        holds("src_found"),
        holds("dst_found"),
        COMMITTED,
    ],
    "entities": [unique("row_key"), one_of("type", ENTITY_TYPES), holds("named"), COMMITTED],
    "memory_entities": [unique("row_key"), holds("memory_found"), holds("entity_found"), COMMITTED],
    "relations": [unique("row_key"), one_of("predicate", PREDICATES), holds("memory_found"), COMMITTED],
    "categories": [unique("row_key"), holds("parent_found"), COMMITTED],
    "memory_categories": [unique("row_key"), holds("memory_found"), holds("category_found"), COMMITTED],
    "outbox": [unique("job_key"), one_of("status", OUTBOX_STATUSES)],
    # LanceDB rows: no vector lacks its row, and the filter columns say what the row says
    "memory_vectors": [unique("row_key"), holds("row_found"), holds("flags_match")],
    "chunk_vectors": [unique("row_key"), holds("row_found"), holds("flags_match")],
}
