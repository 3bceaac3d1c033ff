"""Extractors: one module per input kind, each turning bytes into text with provenance."""

from mnemoflow.extractors import text as _text  # noqa: F401  (registers its MIME types)
from mnemoflow.extractors.registry import Extracted, extractor_for, mime_for, register, supported_mimes

__all__ = ["Extracted", "extractor_for", "mime_for", "register", "supported_mimes"]
