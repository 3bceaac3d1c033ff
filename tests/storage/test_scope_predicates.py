"""Tenancy is enforced in one place: no SQL or LanceDB filter outside `storage/scope.py` compares a
tenant, user, agent, run or container column with a value."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import mnemoflow

PACKAGE = Path(mnemoflow.__file__).parent
SCOPE_MODULE = PACKAGE / "storage" / "scope.py"
# a scope column compared with a value: a parameter, a literal, an interpolation or a list
PREDICATE = re.compile(r"\b(tenant_id|user_id|agent_id|run_id|container)\s*(=|==|<>|!=|\bIN\b|\bIS\b)\s*[?'\"{(N]",
                       re.IGNORECASE)


STATEMENT_START = {tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.NL, tokenize.ENCODING}


def scope_predicates(source: str) -> list[str]:
    """The string literals (f-strings included) of `source` that hold a scope predicate; docstrings
    (a string that is a statement of its own) are prose and may show calls like `Scope(tenant_id="a")`."""
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type != tokenize.COMMENT]
    found = []
    for before, token, after in zip([None, *tokens], tokens, [*tokens[1:], None]):
        docstring = (before is None or before.type in STATEMENT_START) and (after is None or after.type in (
            tokenize.NEWLINE, tokenize.ENDMARKER))
        if token.type == tokenize.STRING and not docstring and PREDICATE.search(token.string):
            found.append(f"line {token.start[0]}: {token.string[:80]}")
    return found


def test_the_detector_sees_the_forms_a_predicate_takes() -> None:
    assert scope_predicates('sql = "SELECT 1 FROM t WHERE tenant_id = ?"')
    assert scope_predicates("where = f\"m.user_id = {user!r}\"")
    assert scope_predicates("q = \"tenant_id IN ('a', 'b')\"")
    assert scope_predicates('sql = "SELECT 1 FROM m WHERE agent_id = ? AND container IS NULL"')
    assert scope_predicates("where = f\"run_id = {run!r}\"")
    assert not scope_predicates('sql = "JOIN m ON m.tenant_id = l.tenant_id"')  # a join names no tenant
    assert not scope_predicates("tenant_id = 'acme'")  # Python, not a query
    assert not scope_predicates('def f():\n    """Call f(tenant_id="acme")."""\n')  # a docstring


def test_no_scope_predicate_outside_the_scope_module() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): hits
        for path in sorted(PACKAGE.rglob("*.py")) if path != SCOPE_MODULE
        if (hits := scope_predicates(path.read_text()))
    }
    assert offenders == {}
