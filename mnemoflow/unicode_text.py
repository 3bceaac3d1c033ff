"""What the service takes as text must be text: a lone surrogate ("\\ud800") is refused at the door.

JSON can escape half of a UTF-16 surrogate pair and Python can hold one in a `str` (bytes decoded
with `surrogateescape`), but no UTF-8 text, and so no DuckDB row, LanceDB column or JSON answer, can.
Left in, it fails deep in a write (after some of it was done) or in the answer that quotes it; refused
here, every interface says the same one line (HTTP and MCP a 4xx, the CLI exit 2, Python
`BadInputError`).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from mnemoflow.errors import BadInputError

_LONE = re.compile(r"[\ud800-\udfff]")  # a str holds a pair as one code point: any surrogate left is alone


def refuse_lone_surrogates(what: str, value: Any) -> None:
    """BadInputError when `value` (a string, or one inside a list, dict or model, keys included) holds
    a lone surrogate; `what` names the argument in the message."""
    if (found := _find(value)) is not None:
        raise BadInputError(f"{what} is not valid Unicode text: it holds a lone surrogate "
                            f"(\\u{ord(found):04x}), which no UTF-8 text can hold")


def _find(value: Any) -> str | None:
    if isinstance(value, str):
        match = _LONE.search(value)
        return match.group() if match else None
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list | tuple):
        for item in value:
            if (found := _find(item)) is not None:
                return found
    return None
