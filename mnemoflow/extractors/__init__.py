"""Extractors: one module per input kind, each turning bytes into text with provenance."""

# each module registers its MIME types on import
from mnemoflow.extractors import audio as _audio  # noqa: F401
from mnemoflow.extractors import code as _code  # noqa: F401
from mnemoflow.extractors import html as _html  # noqa: F401
from mnemoflow.extractors import mail as _mail  # noqa: F401
from mnemoflow.extractors import office as _office  # noqa: F401
from mnemoflow.extractors import pdf as _pdf  # noqa: F401
from mnemoflow.extractors import records as _records  # noqa: F401
from mnemoflow.extractors import text as _text  # noqa: F401
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
