"""Memory filters in mem0's grammar, read once into a typed tree that the store turns into SQL.

    {"category": "work"}                               metadata equals
    {"priority": {"gte": 5}, "status": {"ne": "done"}} comparisons: eq ne gt gte lt lte
    {"tags": {"in": ["a", "b"]}, "state": {"nin": [..]}} lists
    {"title": {"contains": "meet"}, "tags": {"icontains": "Urgent"}}  substring, or element of a list
    {"category": "*"}                                  the field is set
    {"created_at": {"gte": "2026-03-01"}}             time columns (ISO date or time, epoch seconds)
    {"AND": [...]}, {"OR": [...]}, {"NOT": [...]}     logic (NOT: none of them holds); siblings are ANDed

A key names a column of the memory when it is one (`TIME_FIELDS`, `TEXT_FIELDS`, `NUMBER_FIELDS`,
the scope's `user_id`, `agent_id`, `run_id`, `container`; `memory` is the content, `categories` its
category keys), and a metadata key otherwise. A filter only ever narrows the scope it runs in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Literal, Union

from mnemoflow.errors import BadInputError
from mnemoflow.timeutil import naive_utc

Op = Literal["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "icontains", "exists"]
OPERATORS: tuple[str, ...] = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "icontains")
TIME_FIELDS = ("created_at", "updated_at", "observed_at", "event_start_at", "event_end_at", "valid_from",
               "valid_to", "expires_at")
TEXT_FIELDS = {"memory": "content", "content": "content", "kind": "kind", "user_id": "user_id",
               "agent_id": "agent_id", "run_id": "run_id", "container": "container"}
NUMBER_FIELDS = ("salience", "confidence")
CATEGORIES = "categories"
_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,63}$")
MAX_DEPTH = 8


@dataclass(frozen=True)
class Condition:
    """One test of one field: `field` is a memory column, `categories`, or `metadata.<key>`."""

    field: str
    op: Op
    value: Any = None


@dataclass(frozen=True)
class Logic:
    """`all` of the parts hold, `any` of them, or `none` of them."""

    kind: Literal["all", "any", "none"]
    parts: tuple[Filter, ...]


Filter = Union[Condition, Logic]  # noqa: UP007  (a forward reference in a dataclass field)


def parse_filters(raw: dict[str, Any] | None) -> Filter | None:
    """The typed tree of a mem0 filter dict; BadInputError naming the part it cannot read."""
    if raw is None or raw == {}:
        return None
    if not isinstance(raw, dict):
        raise BadInputError(f"filters must be an object (a dict); got {type(raw).__name__}")
    return _node(raw, 0)


def _node(raw: dict[str, Any], depth: int) -> Filter:
    if depth > MAX_DEPTH:
        raise BadInputError(f"filters nest deeper than {MAX_DEPTH} levels")
    parts: list[Filter] = []
    for key, value in raw.items():
        logic = key.upper() if isinstance(key, str) else key
        if logic in ("AND", "OR", "NOT"):
            if not isinstance(value, list) or not all(isinstance(v, dict) for v in value) or not value:
                raise BadInputError(f"filter {key} takes a non-empty list of filter objects")
            kind = {"AND": "all", "OR": "any", "NOT": "none"}[logic]
            parts.append(Logic(kind, tuple(_node(v, depth + 1) for v in value)))  # type: ignore[arg-type]
        else:
            parts.append(_field(key, value))
    return parts[0] if len(parts) == 1 else Logic("all", tuple(parts))


def _field(key: object, value: Any) -> Filter:
    if not isinstance(key, str) or not _KEY.match(key):
        raise BadInputError(f"filter field {key!r} is not a field name (letters, digits, _ . -)")
    field = key if key in TIME_FIELDS or key in TEXT_FIELDS or key in NUMBER_FIELDS or key == CATEGORIES \
        else f"metadata.{key}"
    if value == "*":
        return Condition(field, "exists")
    if not isinstance(value, dict):
        return Condition(field, "eq", _value(field, "eq", value))
    if not value:
        raise BadInputError(f"filter on {key} names no operator; use one of {', '.join(OPERATORS)}")
    tests: list[Filter] = []
    for op, operand in value.items():
        if op not in OPERATORS:
            raise BadInputError(f"filter operator {op!r} on {key} is not one of {', '.join(OPERATORS)}")
        tests.append(Condition(field, op, _value(field, op, operand)))  # type: ignore[arg-type]
    return tests[0] if len(tests) == 1 else Logic("all", tuple(tests))


def _value(field: str, op: str, value: Any) -> Any:
    if op in ("in", "nin"):
        if not isinstance(value, list) or not value:
            raise BadInputError(f"filter {op} on {field} takes a non-empty list")
        return tuple(_scalar(field, op, v) for v in value)
    if op in ("contains", "icontains") and not isinstance(value, str):
        raise BadInputError(f"filter {op} on {field} takes a string")
    if op in ("gt", "gte", "lt", "lte") and (value is None or isinstance(value, bool)):
        raise BadInputError(f"filter {op} on {field} takes a number, a date or a string")
    return _scalar(field, op, value)


def _scalar(field: str, op: str, value: Any) -> Any:
    if field in TIME_FIELDS:
        return as_time(field, value)
    if field in NUMBER_FIELDS and not isinstance(value, (int, float)):
        raise BadInputError(f"filter on {field} takes a number; got {value!r}")
    if isinstance(value, (dict, list)):
        raise BadInputError(f"filter {op} on {field} takes a string, number, boolean or null; got {value!r}")
    return value


def as_time(field: str, value: Any) -> datetime:
    """A filter's time as the store keeps times (naive UTC): an ISO date or datetime, or epoch seconds."""
    if isinstance(value, bool):
        raise BadInputError(f"filter on {field} takes a date or time; got {value!r}")
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, UTC).replace(tzinfo=None)
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, date):
        parsed = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise BadInputError(f"filter on {field} takes an ISO date or time; got {value!r}") from None
    else:
        raise BadInputError(f"filter on {field} takes a date or time; got {value!r}")
    return naive_utc(parsed)
