"""The settings a command needs before it knows whether a server will answer it: the home (to find
`<home>/server.json`) or a cluster's servers and their token, and the tenant and user it acts for
when it names none.

`mnemoflow.config` is the one settings object, but importing it costs pydantic-settings (~0.2 CPU s,
as much as the rest of a served command together). This is its light half, the only other module
that reads the environment: the same sources in the same order (explicit > `MNEMOFLOW_*`
environment, any case > the TOML file > defaults) for these three fields, with `config.py` using the
same file lookup and defaults. Anything it cannot read plainly (a TOML file that does not parse, a
value that is not a string) makes `client_settings` return None, and the caller builds the full
`Settings`, which explains the problem. tests/test_config.py holds the two to the same answers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_HOME = Path("~/.mnemoflow")
DEFAULT_TENANT = "default"
DEFAULT_USER = "default"
ENV_PREFIX = "MNEMOFLOW_"


@dataclass(frozen=True)
class ClientSettings:
    home: Path
    tenant_id: str
    user_id: str
    server: str | None = None  # a cluster's servers, and the operator token that reaches them
    server_token: str | None = None


def config_file(home_override: Any) -> Path | None:
    """The TOML file: `$MNEMOFLOW_CONFIG`, else `<home>/config.toml` when present."""
    explicit = os.environ.get("MNEMOFLOW_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    home = Path(home_override or os.environ.get("MNEMOFLOW_HOME") or DEFAULT_HOME).expanduser()
    candidate = home / "config.toml"
    return candidate if candidate.is_file() else None


def _environment(field: str) -> str | None:
    """`MNEMOFLOW_<FIELD>` in any case, as pydantic-settings matches it (case-insensitive)."""
    wanted = (ENV_PREFIX + field).lower()
    found = [value for key, value in os.environ.items() if key.lower() == wanted]
    return found[-1] if found else None


def client_settings(home: Path | str | None = None) -> ClientSettings | None:
    """home, tenant_id and user_id as `load_settings(home)` would give them; None when only the full
    settings can tell (then build those)."""
    import tomllib

    file = config_file(home)
    table: dict[str, Any] = {}
    if file is not None:
        try:
            table = tomllib.loads(file.read_text())
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None
    values: dict[str, Any] = {}
    for field, default in (("home", str(DEFAULT_HOME)), ("tenant_id", DEFAULT_TENANT), ("user_id", DEFAULT_USER)):
        value = _environment(field)
        if value is None:
            value = table.get(field, default)
        if not isinstance(value, str):
            return None
        values[field] = value
    for field in ("server", "server_token"):  # optional, no default
        value = _environment(field)
        if value is None:
            value = table.get(field)
        if value is not None and not isinstance(value, str):
            return None
        values[field] = value or None
    chosen = Path(home) if home is not None else Path(values["home"])
    return ClientSettings(chosen.expanduser(), values["tenant_id"], values["user_id"], values["server"],
                          values["server_token"])
