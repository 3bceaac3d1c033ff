"""HTML pages: the main content as markdown, headings kept, navigation and banners left out.

Three steps. Page furniture (navigation, banners, the page's header and footer, cookie notices,
menus of links) is removed from the tree first (html_furniture.py), so no later step can bring it
back. trafilatura then chooses the main content among what is left: it is built and benchmarked
for that (sidebars, related articles, share widgets). Its own output is not used as the text,
because it loses headings where the content does not sit in a container it recognises, and it
falls back to a headingless baseline on short pages; instead every block of the page is marked
at its first text node, and the blocks whose mark trafilatura kept are written as markdown, each
heading kept where its section keeps text. The chunker then cites a heading path. A page larger
than `html_main_content_max_bytes` (a spec, an export) is read whole once its furniture is gone:
trafilatura's copies of a 47 MB page take 1.5 GB.

The page is decoded and parsed here rather than by trafilatura, because trafilatura guesses the
encoding without reading the page's own charset declaration and hides parser failures behind an
empty result.
"""

from __future__ import annotations

import codecs
import re

import lxml.html
import trafilatura
from lxml import etree

from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors.html_furniture import remove_furniture
from mnemoflow.extractors.html_markdown import Block, page_blocks, render
from mnemoflow.extractors.registry import Extracted, register

_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
# <meta charset=x>, <meta http-equiv content="...; charset=x"> or <?xml ... encoding="x"?>
_DECLARED = re.compile(rb"""<(?:meta[^>]*?charset|\?xml[^>]*?encoding)\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
# Labels browsers read differently from Python (WHATWG Encoding): latin-1 and ASCII pages are
# windows-1252, and a UTF-16 declaration readable as ASCII cannot be true.
_AS_BROWSERS_READ = {"iso8859-1": "cp1252", "ascii": "cp1252", "utf-16": "utf-8", "utf-16-le": "utf-8",
                     "utf-16-be": "utf-8"}
_CONTROL = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f]")  # not allowed in XML text; lxml refuses to set them
# Marks are digits of base 922 in cuneiform signs: letters to trafilatura (printable, kept by its
# Unicode normalisation, not whitespace), so it keeps them with the text they start; one or two
# characters each, so they barely move its text-length and link-density measures.
_MARK_BASE, _MARK_FIRST = 922, 0x12000
_ANY_TEXT = "boolean(.//text()[normalize-space() and not(ancestor::script or ancestor::style)])"
_MARK_CHARS = re.compile("[\U00012000-\U00012399]+")


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


def _mark_width(count: int) -> int:
    width = 1
    while _MARK_BASE ** width < count:
        width += 1
    return width


def _mark(blocks: list[Block]) -> int:
    """Prefix each block's first text node with its number; the width of a number."""
    width = _mark_width(len(blocks))
    for number, block in enumerate(blocks):
        digits = []
        for _ in range(width):
            number, digit = divmod(number, _MARK_BASE)
            digits.append(chr(_MARK_FIRST + digit))
        element, where = block.anchor
        setattr(element, where, "".join(reversed(digits)) + (getattr(element, where) or ""))
    return width


def _kept_marks(text: str, width: int) -> set[int]:
    kept = set()
    for run in _MARK_CHARS.findall(text):
        for start in range(0, len(run) - width + 1, width):
            number = 0
            for char in run[start : start + width]:
                number = number * _MARK_BASE + ord(char) - _MARK_FIRST
            kept.add(number)
    return kept


def _with_headings(blocks: list[Block], kept: set[int]) -> list[Block]:
    """The kept blocks, and every heading whose section (up to the next heading of its level or
    above) keeps one."""
    chosen: list[Block] = []
    pending = [False] * 7  # pending[n]: a kept block follows, before the next heading of level <= n
    for number in range(len(blocks) - 1, -1, -1):
        block = blocks[number]
        if block.heading:
            if pending[block.heading]:
                chosen.append(block)
            for level in range(block.heading, 7):
                pending[level] = False
        elif number in kept:
            chosen.append(block)
            pending = [True] * 7
    return chosen[::-1]


def _main_content(tree: lxml.html.HtmlElement, blocks: list[Block]) -> list[Block] | None:
    """The blocks trafilatura takes for the main content; None when it finds none among them."""
    if _MARK_CHARS.search(tree.text_content()):
        return None  # the page itself is written in cuneiform: its marks could not be told apart
    width = _mark(blocks)
    main = trafilatura.extract(tree, output_format="txt", include_tables=True, include_links=False,
                               include_images=False, include_comments=False) or ""
    kept = {n for n in _kept_marks(main, width) if n < len(blocks) and not blocks[n].heading}
    return _with_headings(blocks, kept) if kept else None


@register("text/html")
def extract_html(data: bytes, name: str, settings: Settings) -> Extracted:
    text = _decode(data)
    tree = _parse(text)
    meta = trafilatura.extract_metadata(tree, extensive=False)
    body = tree.find("body")
    had_text = body is not None and body.xpath(_ANY_TEXT)
    remove_furniture(tree)
    blocks = page_blocks(body) if body is not None else []
    if not any(not block.heading for block in blocks):
        raise BadInputError("no text: the page holds only navigation and page furniture (menus, banners, "
                            "header, footer)" if had_text else "no text: the page has no readable content")
    main = _main_content(tree, blocks) if len(data) <= settings.html_main_content_max_bytes else None
    metadata = {"content": "main" if main else "body",
                **{k: v for k, v in (("url", meta.url), ("author", meta.author)) if v}}
    return Extracted(mime="text/html", title=meta.title or name, layout="markdown", text=render(main or blocks),
                     metadata=metadata)
