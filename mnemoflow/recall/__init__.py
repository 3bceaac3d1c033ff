"""Recall: hybrid retrieval (vector + BM25 over memories and chunks), fusion, packing, citations."""

from mnemoflow.recall.config import PRESETS, RecallConfig, preset
from mnemoflow.recall.engine import RecallFilters, recall

__all__ = ["PRESETS", "RecallConfig", "RecallFilters", "preset", "recall"]
