"""`Scope`: the tenancy value every read and write of tenant data must carry."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mnemoflow.errors import ScopeError

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+\-]{0,127}$")


def _check(name: str, value: object) -> str:
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
    as the user's rows. The storage layer turns this into predicates in one place.
    """

    tenant_id: str
    user_id: str

    def __post_init__(self) -> None:
        _check("tenant_id", self.tenant_id)
        _check("user_id", self.user_id)

    def __str__(self) -> str:
        return f"{self.tenant_id}/{self.user_id}"
