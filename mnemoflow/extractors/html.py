"""HTML pages: the main content as markdown, headings kept, navigation and banners left out.

trafilatura finds the main content (it is built and benchmarked for exactly this); its
markdown keeps h1-h6 as #-headings, so the chunker cites a heading path. The page is decoded
and parsed here rather than by trafilatura, because trafilatura guesses the encoding without
reading the page's own charset declaration and hides parser failures behind an empty result.
"""

from __future__ import annotations

import codecs
import re

import lxml.html
import trafilatura
from lxml import etree

from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors.registry import Extracted, register

_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
# <meta charset=x>, <meta http-equiv content="...; charset=x"> or <?xml ... encoding="x"?>
_DECLARED = re.compile(rb"""<(?:meta[^>]*?charset|\?xml[^>]*?encoding)\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
# Labels browsers read differently from Python (WHATWG Encoding): latin-1 and ASCII pages are
# windows-1252, and a UTF-16 declaration readable as ASCII cannot be true.
_AS_BROWSERS_READ = {"iso8859-1": "cp1252", "ascii": "cp1252", "utf-16": "utf-8", "utf-16-le": "utf-8",
                     "utf-16-be": "utf-8"}
_CONTROL = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f]")  # not allowed in XML text; lxml refuses to set them
# trafilatura backslash-escapes markdown's inline syntax (pg\_stat); memory text is searched and
# quoted, not rendered, so the escapes would only get in the way. Block-start escapes (\#) stay.
_INLINE_ESCAPE = re.compile(r"\\([*_`~\[\]<])")


def _declared_encoding(data: bytes) -> str | None:
    match = _DECLARED.search(data[:4096])
    if not match:
        return None
    try:
        name = codecs.lookup(match.group(1).decode("ascii")).name
    except LookupError:
        return None
    return _AS_BROWSERS_READ.get(name, name)


def _decode(data: bytes) -> str:
    """As a browser would: a BOM, else the declared charset, else UTF-8, else windows-1252."""
    bom = next((encoding for mark, encoding in _BOMS if data.startswith(mark)), None)
    candidates = [bom] if bom else [_declared_encoding(data), "utf-8"]
    for encoding in filter(None, candidates):
        try:
            text = data.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    else:
        text = data.decode("cp1252", errors="replace")
    if "\x00" in text:
        raise BadInputError("binary content: NUL bytes in an HTML file")
    return _CONTROL.sub("", text)


def _parse(text: str) -> lxml.html.HtmlElement:
    """Parse, refusing a page libxml2 gave up on part-way (it drops everything after its limits,
    e.g. nesting deeper than 256 elements) rather than keeping a silently truncated page."""
    parser = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True, collect_ids=False)
    try:
        tree = lxml.html.document_fromstring(text.encode("utf-8"), parser=parser)
    except etree.ParserError:
        raise BadInputError("empty file: no HTML to read") from None
    limit = next((e for e in parser.error_log if e.type == etree.ErrorTypes.ERR_RESOURCE_LIMIT), None)
    if limit is not None:
        reason = limit.message.split(", use")[0]
        raise BadInputError(f"HTML past the parser's limits ({reason} at line {limit.line}): the rest would be lost")
    return tree


@register("text/html")
def extract_html(data: bytes, name: str, settings: Settings) -> Extracted:
    tree = _parse(_decode(data))
    main = trafilatura.extract(tree, output_format="markdown", include_formatting=True, include_tables=True,
                               include_links=False, include_images=False, include_comments=False) or ""
    found = bool(main.strip())
    # trafilatura gives up silently on some pages; their body text beats losing them
    text = _INLINE_ESCAPE.sub(r"\1", main) if found else trafilatura.html2txt(tree)
    if not text.strip():
        raise BadInputError("no text: the page has no readable content")
    meta = trafilatura.extract_metadata(tree, extensive=False)
    metadata = {"content": "main" if found else "body",
                **{k: v for k, v in (("url", meta.url), ("author", meta.author)) if v}}
    return Extracted(mime="text/html", title=meta.title or name, layout="markdown" if found else "plain", text=text,
                     metadata=metadata)
