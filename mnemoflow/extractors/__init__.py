"""Extractors: one module per input kind, each turning bytes into text with provenance."""

from mnemoflow.extractors import text as _text  # noqa: F401  (each module registers its MIME types)
from mnemoflow.extractors.registry import (
    Attachment,
    Extracted,
    TextUnit,
    extractor_for,
    mime_for,
    register,
    supported_mimes,
    supported_suffixes,
)

__all__ = ["Attachment", "Extracted", "TextUnit", "extractor_for", "mime_for", "register", "supported_mimes",
           "supported_suffixes"]
