"""Recall: hybrid retrieval (vector + BM25 over memories and chunks), fusion, packing, citations.

`RecallConfig`, `RecallFilters` and the presets are light (pydantic only); `recall` loads the
search engines on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mnemoflow.recall.config import PRESETS, RecallConfig, RecallFilters, preset

if TYPE_CHECKING:
    from mnemoflow.recall.engine import recall

__all__ = ["PRESETS", "RecallConfig", "RecallFilters", "preset", "recall"]


def __getattr__(name: str) -> Any:
    if name == "recall":
        from mnemoflow.recall.engine import recall

        return recall
    raise AttributeError(f"module 'mnemoflow.recall' has no attribute {name!r}")
