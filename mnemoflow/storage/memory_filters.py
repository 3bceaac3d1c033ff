"""A memory filter (`mnemoflow.filters`) as a DuckDB predicate over `memories`: columns compared as
themselves, metadata keys read from the JSON by type, categories through `memory_categories`.

Every test is NULL-safe (a missing field is simply not equal), so NOT and `ne` keep the rows that
lack the field, as a reader of the filter expects. Values are always parameters.
"""

from __future__ import annotations

from typing import Any

from mnemoflow.errors import BadInputError
from mnemoflow.filters import CATEGORIES, NUMBER_FIELDS, TEXT_FIELDS, TIME_FIELDS, Condition, Filter, Logic

Sql = tuple[str, list[Any]]
_COMPARE = {"eq": "=", "ne": "IS DISTINCT FROM", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
_NUMBER_TYPES = "('BIGINT', 'UBIGINT', 'DOUBLE')"


def filter_sql(tree: Filter, alias: str = "m") -> Sql:
    """`tree` as a predicate on the memories row of `alias`."""
    if isinstance(tree, Logic):
        parts = [filter_sql(part, alias) for part in tree.parts]
        joined = (" AND " if tree.kind == "all" else " OR ").join(f"({sql})" for sql, _ in parts)
        params = [p for _, part_params in parts for p in part_params]
        return (f"NOT ({joined})" if tree.kind == "none" else joined), params
    sql, params = _condition(tree, alias)
    return f"coalesce({sql}, false)", params


def _condition(c: Condition, alias: str) -> Sql:
    if c.field == CATEGORIES:
        return _categories(c, alias)
    if c.field.startswith("metadata."):
        return _metadata(c, alias, c.field.removeprefix("metadata."))
    column = f"{alias}.{TEXT_FIELDS.get(c.field, c.field)}"
    if c.op == "exists":
        return f"{column} IS NOT NULL", []
    if c.op in ("in", "nin"):
        marks = ", ".join("?" for _ in c.value)
        test = f"{column} IN ({marks})"
        return (test if c.op == "in" else f"NOT coalesce({test}, false)"), list(c.value)
    if c.op in ("contains", "icontains"):
        if c.field not in TEXT_FIELDS:
            raise BadInputError(f"filter {c.op} applies to text fields and metadata, not {c.field}")
        lower = "lower" if c.op == "icontains" else ""
        return f"strpos({lower}({column}), {lower}(?)) > 0", [c.value]
    if c.value is None:
        return (f"{column} IS NULL" if c.op == "eq" else f"{column} IS NOT NULL"), []
    if c.field in TIME_FIELDS or c.field in NUMBER_FIELDS or c.op in ("eq", "ne"):
        return f"{column} {_COMPARE[c.op]} ?", [c.value]
    return f"{column} {_COMPARE[c.op]} ?", [str(c.value)]


def _categories(c: Condition, alias: str) -> Sql:
    """A memory is filed under a category when one of its category keys is that key or below it ("food"
    holds "food/vegan"), or when the caller's metadata lists it under "categories" (as mem0 keeps them)."""
    has = (f"EXISTS (SELECT 1 FROM memory_categories mc WHERE {alias}.tenant_id = mc.tenant_id "
           f"AND {alias}.memory_id = mc.memory_id")
    listed = Condition(f"metadata.{CATEGORIES}", "exists")
    if c.op == "exists":
        meta, meta_params = _metadata(listed, alias, CATEGORIES)
        return f"{has}) OR coalesce({meta}, false)", meta_params
    values = list(c.value) if c.op in ("in", "nin") else [c.value]
    if any(not isinstance(v, str) for v in values) or c.op in ("gt", "gte", "lt", "lte"):
        raise BadInputError("filter on categories takes category names with eq, ne, in, nin, contains or icontains")
    folded = c.op == "icontains"
    key = "lower(mc.category_key)" if folded else "mc.category_key"
    names = [v.lower() if folded else v for v in values]
    test = " OR ".join(f"{key} = ? OR starts_with({key}, ? || '/')" for _ in names)
    metadata = [_metadata(Condition(listed.field, "icontains" if folded else "contains", v), alias, CATEGORIES)
                for v in values]
    either = " OR ".join([f"({has} AND ({test})))", *(f"coalesce({sql}, false)" for sql, _ in metadata)])
    params = [p for name in names for p in (name, name)] + [p for _, ps in metadata for p in ps]
    return (f"NOT ({either})" if c.op in ("ne", "nin") else f"({either})"), params


def _metadata(c: Condition, alias: str, key: str) -> Sql:
    path = '$."' + key + '"'
    meta = f"{alias}.metadata"
    if c.op == "exists":
        return f"json_extract({meta}, ?) IS NOT NULL", [path]
    if c.op in ("in", "nin"):
        tests = [_metadata(Condition(c.field, "eq", v), alias, key) for v in c.value]
        test = " OR ".join(f"coalesce({sql}, false)" for sql, _ in tests)
        params = [p for _, ps in tests for p in ps]
        return (f"({test})" if c.op == "in" else f"NOT ({test})"), params
    if c.op in ("contains", "icontains"):
        lower = "lower" if c.op == "icontains" else ""
        element = "list_contains(list_transform(json_extract_string({m}, ?), x -> lower(x)), lower(?))" \
            if lower else "list_contains(json_extract_string({m}, ?), ?)"
        return (f"CASE WHEN json_type({meta}, ?) = 'ARRAY' THEN {element.format(m=meta)} "
                f"ELSE strpos({lower}(json_extract_string({meta}, ?)), {lower}(?)) > 0 END",
                [path, path + "[*]", c.value, path, c.value])
    if c.op == "ne":
        sql, params = _metadata(Condition(c.field, "eq", c.value), alias, key)
        return f"NOT coalesce({sql}, false)", params
    value = c.value
    if value is None:
        return f"coalesce(json_type({meta}, ?), 'NULL') = 'NULL'", [path]
    if isinstance(value, bool):
        return f"json_type({meta}, ?) = 'BOOLEAN' AND json_extract_string({meta}, ?) = ?", \
            [path, path, "true" if value else "false"]
    if isinstance(value, (int, float)):
        return (f"json_type({meta}, ?) IN {_NUMBER_TYPES} AND "
                f"CAST(json_extract_string({meta}, ?) AS DOUBLE) {_COMPARE[c.op]} ?", [path, path, float(value)])
    return f"json_type({meta}, ?) = 'VARCHAR' AND json_extract_string({meta}, ?) {_COMPARE[c.op]} ?", \
        [path, path, str(value)]
