"""mnemoflow: durable, per-tenant long-term memory for AI agents."""

from mnemoflow.client import Memory
from mnemoflow.config import Settings, load_settings
from mnemoflow.storage.scope import Scope

__all__ = ["Memory", "Scope", "Settings", "load_settings"]
__version__ = "0.1.0"
