"""mnemoflow: durable, per-tenant long-term memory for AI agents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mnemoflow.config import Settings, load_settings
from mnemoflow.storage.scope import Scope

if TYPE_CHECKING:
    from mnemoflow.client import AsyncMemory, Memory

__all__ = ["AsyncMemory", "Memory", "Scope", "Settings", "load_settings"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # `Memory` pulls in the storage engines (~2 s of imports); `mnemoflow --help` should not wait for them
    if name in ("Memory", "AsyncMemory"):
        from mnemoflow import client

        return getattr(client, name)
    raise AttributeError(f"module 'mnemoflow' has no attribute {name!r}")
