"""mnemoflow: durable, per-tenant long-term memory for AI agents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mnemoflow.client import AsyncMemory, Memory
    from mnemoflow.config import Settings, load_settings
    from mnemoflow.storage.scope import Scope

__all__ = ["AsyncMemory", "Memory", "Scope", "Settings", "load_settings"]
__version__ = "0.1.0"

# Each name is imported when first used: `Memory` pulls in the storage engines (~2 s of imports) and
# `Settings` pydantic-settings, and a command that a running server answers needs neither
# (tests/test_startup.py holds it to that).
_WHERE = {"Memory": "mnemoflow.client", "AsyncMemory": "mnemoflow.client", "Settings": "mnemoflow.config",
          "load_settings": "mnemoflow.config", "Scope": "mnemoflow.storage.scope"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'mnemoflow' has no attribute {name!r}")
