"""`Scope`, the tenancy value every read and write of tenant data carries, and the only place
that turns it into predicates, for DuckDB and for LanceDB alike.

A test fails when a `tenant_id` or `user_id` comparison with a value appears anywhere else in
the package: a scope is enforced here or nowhere.

What a scope means (README, "Scopes"):

- The tenant is the wall. Nothing is ever read or written across it.
- Inside it a row belongs to an owner: the user, agent, run and container that wrote it (its
  stamp). A write stamps exactly the scope's fields; a field the scope leaves out is NULL.
- A scope names a user, an agent or a run (or several). A read sees the owner's rows that match
  every field the scope names: `Scope(t, "alex")` sees all of Alex's rows, whatever agent, run or
  container wrote them; `Scope(t, "alex", agent_id="planner")` only those the planner wrote for
  Alex. A scope without a user sees only rows without a user (an agent's own memories): leaving
  the user out never widens a read to other people's rows.
- Shared rows: `shared` rows without a container are the tenant's and every scope of the tenant
  sees them (as before); `shared` rows of a container are seen by the scopes that name that
  container (a project or ACL group), and by no other.
- Writes (updates, deletions) touch only the owner's rows, with the same matching.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mnemoflow.errors import ScopeError

# what a tenant, user, agent, run or container id may be; the HTTP API's schema declares the same
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@+\-]{0,127}$"
_ID = re.compile(ID_PATTERN)

Sql = tuple[str, list[str]]  # a predicate and its parameters
BOUNDARIES = ("agent_id", "run_id", "container")  # what narrows an owner inside the tenant, after the user
SCOPE_COLUMNS = ("tenant_id", "user_id", *BOUNDARIES)  # a row's stamp, in this order


def check_id(name: str, value: object) -> str:
    """`value` if it is a usable tenant, user, agent, run or container id; ScopeError naming `name` otherwise."""
    if not isinstance(value, str) or not _ID.fullmatch(value):  # `$` alone lets a final newline by
        raise ScopeError(
            f"{name} must be 1-128 characters of letters, digits and . _ : @ + - "
            f"(starting with a letter or digit); got {value!r}"
        )
    return value


@dataclass(frozen=True, slots=True)
class Scope:
    """A tenant and an owner inside it: a user, an agent or a run, optionally narrowed by the others
    and by a container (see the module docstring for what each reads and writes)."""

    tenant_id: str
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    container: str | None = None

    def __post_init__(self) -> None:
        check_id("tenant_id", self.tenant_id)
        for name in ("user_id", *BOUNDARIES):
            if getattr(self, name) is not None:
                check_id(name, getattr(self, name))
        if self.user_id is None and self.agent_id is None and self.run_id is None:
            raise ScopeError("a scope names a user_id, an agent_id or a run_id (a tenant or a container alone "
                             "owns no rows)")

    @property
    def user_level(self) -> bool:
        """A user and nothing narrower: the scope of documents and conversations from before scopes had
        agents, runs and containers (and of everything ingested through dlt landing tables)."""
        return self.user_id is not None and not any(getattr(self, name) for name in BOUNDARIES)

    @property
    def key(self) -> str:
        """The scope as text for derived ids (documents, sessions): a user-level scope keeps the form
        ids had before, so re-ingesting an old source finds its documents."""
        parts = [self.tenant_id, self.user_id or ""]
        parts += [f"{name}={getattr(self, name)}" for name in BOUNDARIES if getattr(self, name) is not None]
        return "\x1f".join(parts)

    def stamp(self) -> dict[str, str | None]:
        """The columns a row written in this scope carries."""
        return {name: getattr(self, name) for name in SCOPE_COLUMNS}

    def __str__(self) -> str:
        extra = "".join(f" {name.removesuffix('_id')}={getattr(self, name)}" for name in BOUNDARIES
                        if getattr(self, name) is not None)
        return f"{self.tenant_id}/{self.user_id or '-'}{extra}"


def row_scope(row: tuple[Any, ...] | list[Any]) -> Scope:
    """The scope that wrote a row, from its SCOPE_COLUMNS values in order."""
    return Scope(*row)


def require_user_level(scope: Scope, what: str) -> None:
    """ScopeError unless `scope` is a user and nothing narrower (`Scope.user_level`)."""
    if not scope.user_level:
        raise ScopeError(f"{what} is per user: name a user_id and no agent_id, run_id or container (got {scope})")


def _a(alias: str) -> str:
    return f"{alias}." if alias else ""


# ---------------------------------------------------------------------- DuckDB
def _owner(scope: Scope, a: str) -> Sql:
    clauses, params = [], []
    if scope.user_id is None:
        clauses.append(f"{a}user_id IS NULL")
    else:
        clauses.append(f"{a}user_id = ?")
        params.append(scope.user_id)
    for name in BOUNDARIES:
        if getattr(scope, name) is not None:
            clauses.append(f"{a}{name} = ?")
            params.append(getattr(scope, name))
    return " AND ".join(clauses), params


def _shared(scope: Scope, a: str) -> Sql:
    if scope.container is None:
        return f"{a}shared AND {a}container IS NULL", []
    return f"{a}shared AND ({a}container IS NULL OR {a}container = ?)", [scope.container]


def visible(scope: Scope, alias: str = "") -> Sql:
    """What a read in `scope` may see: the owner's rows and the shared ones it may see."""
    a = _a(alias)
    own, own_params = _owner(scope, a)
    shared, shared_params = _shared(scope, a)
    return f"{a}tenant_id = ? AND (({own}) OR ({shared}))", [scope.tenant_id, *own_params, *shared_params]


def owned(scope: Scope, alias: str = "") -> Sql:
    """The owner's rows: what a write in `scope` may touch."""
    a = _a(alias)
    own, params = _owner(scope, a)
    return f"{a}tenant_id = ? AND {own}", [scope.tenant_id, *params]


def stamped(scope: Scope, alias: str = "") -> Sql:
    """The rows written in exactly `scope`: the owner's, without those of a narrower scope."""
    a = _a(alias)
    where, params = owned(scope, alias)
    exact = [f"{a}{name} IS NULL" for name in BOUNDARIES if getattr(scope, name) is None]
    return " AND ".join([where, *exact]), params


def tenant(tenant_id: str, alias: str = "") -> Sql:
    """Every row of one tenant: tenant-wide rows (entities, links, commits) and tenant operations."""
    return f"{_a(alias)}tenant_id = ?", [check_id("tenant_id", tenant_id)]


def owned_by(row: str, owner: str) -> str:
    """A join condition: the row of alias `row` is one the scope that wrote the row of alias `owner`
    owns (`owned` of that row's stamp)."""
    narrower = [f"({owner}.{c} IS NULL OR {row}.{c} = {owner}.{c})" for c in BOUNDARIES]
    return " AND ".join([f"{row}.tenant_id = {owner}.tenant_id",
                         f"{row}.user_id IS NOT DISTINCT FROM {owner}.user_id", *narrower])


# ---------------------------------------------------------------------- LanceDB filters
def _literal(value: str) -> str:
    # ids are validated to a quote-free alphabet; escaped regardless
    return "'" + value.replace("'", "''") + "'"


def _lance_owner(scope: Scope) -> str:
    clauses = ["user_id IS NULL" if scope.user_id is None else f"user_id = {_literal(scope.user_id)}"]
    clauses += [f"{name} = {_literal(getattr(scope, name))}" for name in BOUNDARIES if getattr(scope, name) is not None]
    return " AND ".join(clauses)


def lance_visible(scope: Scope) -> str:
    # `shared = true`, not `shared`: the bare column defeats the bitmap index (3x slower)
    shared = "container IS NULL" if scope.container is None else \
        f"(container IS NULL OR container = {_literal(scope.container)})"
    return (f"tenant_id = {_literal(scope.tenant_id)} AND "
            f"(({_lance_owner(scope)}) OR (shared = true AND {shared}))")


def lance_owned(scope: Scope) -> str:
    return f"tenant_id = {_literal(scope.tenant_id)} AND {_lance_owner(scope)}"


def lance_tenant(tenant_id: str) -> str:
    return f"tenant_id = {_literal(check_id('tenant_id', tenant_id))}"
