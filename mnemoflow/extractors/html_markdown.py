"""An HTML body as markdown blocks: headings, paragraphs, list items, table rows, code.

Each block remembers the text node it starts at, so a block can be traced through another tool
that reads the same tree (html.py marks that node and sees which marks trafilatura keeps). The
walk is not recursive: depth is bounded by the parser, but a walk need not rely on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from lxml import etree
from lxml.html import HtmlElement

from mnemoflow.extractors.text import escape_markdown_blocks

_BLOCK_TAGS = frozenset({
    "address", "article", "aside", "blockquote", "body", "center", "dd", "details", "dialog", "dir", "div", "dl",
    "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "hgroup", "hr", "html", "legend", "li",
    "main", "menu", "nav", "ol", "p", "section", "summary", "ul", "caption",
})
_APART = _BLOCK_TAGS | {"h1", "h2", "h3", "h4", "h5", "h6", "pre", "table", "tr", "td", "th"}
_HEADING_LEVEL = {f"h{n}": n for n in range(1, 7)}
_LISTS = ("ul", "ol", "menu", "dir")
_LINE_BREAK = "\ue000"  # a <br>, kept through whitespace folding
_FENCE_LIKE = re.compile(r"^(\s*)(?=```|~~~)", re.MULTILINE)

Anchor = tuple[HtmlElement, Literal["text", "tail"]]


@dataclass(frozen=True)
class Block:
    """One block of the page: `markdown` as it reads in the document, `text` its words alone."""

    markdown: str
    text: str
    anchor: Anchor
    heading: int = 0  # 1-6 for <h1>-<h6>
    group: int | None = None  # blocks of one list or table, written line by line


def _fold(text: str) -> str:
    """Runs of whitespace as one space; <br> marks as line ends; blank lines dropped."""
    lines = (" ".join(line.split()) for line in text.split(_LINE_BREAK))
    return "\n".join(line for line in lines if line)


def _first_text(element: HtmlElement) -> Anchor:
    """The first text node in an element, where a block that starts with it can be marked."""
    for node in element.iter(etree.Element):
        if node.text and node.text.strip():
            return node, "text"
        if node is not element and node.tail and node.tail.strip():
            return node, "tail"
    return element, "text"


def _inline_text(element: HtmlElement) -> str:
    """An element's text as one paragraph, <br> as line ends; what blocks inside it hold (a cell's
    paragraphs, a heading's line break) is kept apart by a space."""
    parts: list[str] = []
    for event, node in etree.iterwalk(element, events=("start", "end")):
        apart = " " if node.tag in _APART else ""
        if event == "start":
            parts += [_LINE_BREAK if node.tag == "br" else apart, node.text or ""]
        elif node is not element:
            parts += [apart, node.tail or ""]
    return _fold("".join(parts))


class _Writer:
    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.buffer: list[str] = []
        self.anchor: Anchor | None = None
        self.lists: list[tuple[int, bool, list[int]]] = []  # (group, ordered, [next number])
        self.marker: str | None = None  # the next paragraph is a list item and starts with it
        self.groups = 0

    # ------------------------------------------------------------------ inline text
    def add(self, text: str | None, anchor: Anchor) -> None:
        if not text:
            return
        if self.anchor is None and text.strip():
            self.anchor = anchor
        self.buffer.append(text)

    def flush(self) -> None:
        text = _fold("".join(self.buffer))
        anchor, self.buffer, self.anchor = self.anchor, [], None
        if not text or anchor is None:
            return
        markdown = escape_markdown_blocks(text)
        group = None
        if self.lists:
            group, _, _ = self.lists[-1]
            indent = "  " * (len(self.lists) - 1)
            lead, self.marker = (self.marker or "  "), None
            markdown = indent + lead + markdown.replace("\n", "\n" + indent + " " * len(lead))
        self.blocks.append(Block(markdown, text, anchor, group=group))

    def new_group(self) -> int:
        self.groups += 1
        return self.groups

    # ------------------------------------------------------------------ whole blocks
    def heading(self, element: HtmlElement, level: int) -> None:
        text = " ".join(_inline_text(element).split())
        if text:
            self.blocks.append(Block(f"{'#' * level} {text}", text, _first_text(element), heading=level))

    def code(self, element: HtmlElement) -> None:
        text = element.text_content().strip("\n")
        if text.strip():
            body = _FENCE_LIKE.sub(r"\1\\", text)
            self.blocks.append(Block(f"```\n{body}\n```", text, _first_text(element)))

    def table(self, element: HtmlElement) -> None:
        group = self.new_group()
        rows = element.xpath("./tr | ./thead/tr | ./tbody/tr | ./tfoot/tr")
        for n, row in enumerate(rows):
            cells = row.xpath("./td | ./th")
            texts = [" ".join(_inline_text(cell).split()).replace("|", "\\|") for cell in cells]
            if not any(texts):
                continue
            markdown = "| " + " | ".join(texts) + " |"
            if n == 0 and all(cell.tag == "th" for cell in cells):
                markdown += "\n|" + "---|" * len(cells)
            self.blocks.append(Block(markdown, " ".join(texts), _first_text(row), group=group))
        caption = element.find("caption")
        if caption is not None and (text := _inline_text(caption)):
            self.blocks.append(Block(escape_markdown_blocks(text), text, _first_text(caption)))

    # ------------------------------------------------------------------ the walk
    def start(self, element: HtmlElement) -> bool:
        """Handle an element's start; True when its subtree was read whole."""
        tag = element.tag
        if tag in _HEADING_LEVEL:
            self.flush()
            self.heading(element, _HEADING_LEVEL[tag])
            return True
        if tag == "pre":
            self.flush()
            self.code(element)
            return True
        if tag == "table":
            self.flush()
            self.table(element)
            return True
        if tag == "br":
            self.buffer.append(_LINE_BREAK)
        elif tag in _LISTS:
            self.flush()
            start = element.get("start") or ""
            self.lists.append((self.new_group(), tag == "ol", [int(start) if start.isdigit() else 1]))
        elif tag == "li":
            self.flush()
            if self.lists:
                _, ordered, number = self.lists[-1]
                self.marker = f"{number[0]}. " if ordered else "- "
                number[0] += 1
        elif tag in _BLOCK_TAGS:
            self.flush()
        self.add(element.text, (element, "text"))
        return False

    def end(self, element: HtmlElement) -> None:
        tag = element.tag
        if tag in _LISTS:
            self.flush()
            if self.lists:
                self.lists.pop()
        elif tag in _BLOCK_TAGS:
            self.flush()
        self.add(element.tail, (element, "tail"))


def page_blocks(body: HtmlElement) -> list[Block]:
    """The blocks of a page's body, in document order."""
    writer = _Writer()
    walk = etree.iterwalk(body, events=("start", "end"))
    for event, element in walk:
        if not isinstance(element.tag, str):
            continue
        if event == "start":
            if writer.start(element):
                walk.skip_subtree()
        elif element is body:
            writer.flush()
        else:
            writer.end(element)
    writer.flush()
    return writer.blocks


def render(blocks: list[Block]) -> str:
    """Blocks as one markdown text: a list's items and a table's rows one per line, other blocks
    separated by a blank line."""
    parts: list[str] = []
    for previous, block in zip([None, *blocks], blocks):
        if parts:
            parts.append("\n" if previous and block.group is not None and block.group == previous.group else "\n\n")
        parts.append(block.markdown)
    return "".join(parts)
