"""Extractors: one module per input kind, each turning bytes into text with provenance. The modules
are imported by the registry when an extractor is first asked for."""

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
