"""`Scope`, the tenancy value every read and write of tenant data carries, and the only place
that turns it into predicates, for DuckDB and for LanceDB alike.

A test fails when a `tenant_id` or `user_id` comparison with a value appears anywhere else in
the package: a scope is enforced here or nowhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mnemoflow.errors import ScopeError

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+\-]{0,127}$")

Sql = tuple[str, list[str]]  # a predicate and its parameters


def check_id(name: str, value: object) -> str:
    """`value` if it is a usable tenant or user id; ScopeError naming `name` otherwise."""
    if not isinstance(value, str) or not _ID.match(value):
        raise ScopeError(
            f"{name} must be 1-128 characters of letters, digits and . _ : @ + - "
            f"(starting with a letter or digit); got {value!r}"
        )
    return value


@dataclass(frozen=True, slots=True)
class Scope:
    """A tenant and one of its users.

    Reads see the user's own rows plus rows the tenant marked shared; writes land
    as the user's rows. The predicates below are the only translation of it.
    """

    tenant_id: str
    user_id: str

    def __post_init__(self) -> None:
        check_id("tenant_id", self.tenant_id)
        check_id("user_id", self.user_id)

    def __str__(self) -> str:
        return f"{self.tenant_id}/{self.user_id}"


def _a(alias: str) -> str:
    return f"{alias}." if alias else ""


# ---------------------------------------------------------------------- DuckDB
def visible(scope: Scope, alias: str = "") -> Sql:
    """What a read in `scope` may see: the user's own rows and the tenant's shared ones."""
    a = _a(alias)
    return f"{a}tenant_id = ? AND ({a}user_id = ? OR {a}shared)", [scope.tenant_id, scope.user_id]


def owned(scope: Scope, alias: str = "") -> Sql:
    """The user's own rows: what a write in `scope` may touch."""
    a = _a(alias)
    return f"{a}tenant_id = ? AND {a}user_id = ?", [scope.tenant_id, scope.user_id]


def tenant(tenant_id: str, alias: str = "") -> Sql:
    """Every row of one tenant: tenant-wide rows (entities, links, commits) and tenant operations."""
    return f"{_a(alias)}tenant_id = ?", [check_id("tenant_id", tenant_id)]


# ---------------------------------------------------------------------- LanceDB filters
def _literal(value: str) -> str:
    # ids are validated to a quote-free alphabet; escaped regardless
    return "'" + value.replace("'", "''") + "'"


def lance_visible(scope: Scope) -> str:
    # `shared = true`, not `shared`: the bare column defeats the bitmap index (3x slower)
    return (f"tenant_id = {_literal(scope.tenant_id)} AND "
            f"(user_id = {_literal(scope.user_id)} OR shared = true)")


def lance_owned(scope: Scope) -> str:
    return f"tenant_id = {_literal(scope.tenant_id)} AND user_id = {_literal(scope.user_id)}"


def lance_tenant(tenant_id: str) -> str:
    return f"tenant_id = {_literal(check_id('tenant_id', tenant_id))}"
