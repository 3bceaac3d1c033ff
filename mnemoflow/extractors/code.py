"""Source code: one unit per symbol (function, method, class, type), found with tree-sitter.

A question about code is answered by a function or a type, and a citation that names
`Backoff.delay` and its lines is one a person can open. Every line of the file lands in exactly one
unit, so nothing is lost and nothing is embedded twice:

- a function, method, constructor or macro is whole: its definition with the comments, decorators
  and attributes right above it (a closure or local class stays inside it);
- a type (class, interface, struct, enum, trait, impl block, namespace) keeps only the lines its
  members do not: header, docstring and fields, one unit per contiguous run. Its members are units
  of their own whose context carries the type's signature, so a method is found by its class too;
- what no symbol covers (imports, constants, module-level statements) becomes "module" units named
  after the file, one per contiguous run.

Runs of blank lines and bare brackets are dropped. Every unit is cut on whole lines under the cap,
each piece with its own line range. A file that parses with errors keeps every symbol tree-sitter
recovered; the rest lands in module units.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_left
from dataclasses import dataclass, field
from pathlib import Path

from tree_sitter import Node, Query, QueryCursor
from tree_sitter_language_pack import get_language, get_parser

from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors.registry import Extracted, Extractor, TextUnit, register
from mnemoflow.extractors.text import decode_utf8

LANGUAGES = {
    "text/x-python": "python", "text/javascript": "javascript", "text/x-typescript": "typescript",
    "text/x-tsx": "tsx", "text/x-go": "go", "text/x-rust": "rust", "text/x-java": "java",
}

# Capture names are the symbol kinds; `name` (and Go's `receiver`) name the symbol.
_JS = """
(function_declaration name: (_) @name) @function
(generator_function_declaration name: (_) @name) @function
(class_declaration name: (_) @name) @class
(method_definition name: (_) @name) @method
(variable_declarator name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @function
(variable_declarator name: (identifier) @name value: (class)) @class
"""
_TS = _JS + """
(abstract_class_declaration name: (_) @name) @class
(interface_declaration name: (_) @name) @interface
(type_alias_declaration name: (_) @name) @type
(enum_declaration name: (_) @name) @enum
(internal_module name: (_) @name) @namespace
(public_field_definition name: (_) @name value: [(arrow_function) (function_expression)]) @method
"""
_QUERIES = {
    "python": """
(function_definition name: (identifier) @name) @function
(class_definition name: (identifier) @name) @class
""",
    "javascript": _JS + """
(field_definition property: (_) @name value: [(arrow_function) (function_expression)]) @method
""",
    "typescript": _TS,
    "tsx": _TS,
    "go": """
(function_declaration name: (identifier) @name) @function
(method_declaration receiver: (parameter_list (parameter_declaration type: (_) @receiver))
  name: (field_identifier) @name) @method
(type_spec name: (type_identifier) @name) @type
(type_alias name: (type_identifier) @name) @type
""",
    "rust": """
(function_item name: (identifier) @name) @function
(struct_item name: (type_identifier) @name) @struct
(enum_item name: (type_identifier) @name) @enum
(union_item name: (type_identifier) @name) @union
(trait_item name: (type_identifier) @name) @trait
(impl_item type: (_) @name) @impl
(mod_item name: (identifier) @name body: (declaration_list)) @mod
(macro_definition name: (identifier) @name) @macro
(type_item name: (type_identifier) @name) @type
""",
    "java": """
(class_declaration name: (identifier) @name) @class
(interface_declaration name: (identifier) @name) @interface
(enum_declaration name: (identifier) @name) @enum
(record_declaration name: (identifier) @name) @record
(annotation_type_declaration name: (identifier) @name) @annotation
(method_declaration name: (identifier) @name) @method
(constructor_declaration name: (identifier) @name) @constructor
(compact_constructor_declaration name: (identifier) @name) @constructor
""",
}
_WHOLE = frozenset({"function", "method", "constructor", "macro"})  # never split into member units
_METHOD_OWNERS = frozenset({"class", "interface", "enum", "record", "trait", "impl"})
_LEADING = frozenset({"comment", "line_comment", "block_comment", "decorator", "attribute_item"})
_GO_TYPES = {"struct_type": "struct", "interface_type": "interface"}
_SIGNATURE_CHARS = 200
_TERMINATOR = re.compile(rb"[ \t]*[;,]")


@dataclass
class _Symbol:
    kind: str
    path: str
    signature: str
    start: int  # byte span, with the comments and decorators above the definition
    end: int
    members: list[_Symbol] = field(default_factory=list)


@dataclass
class _Source:
    data: bytes
    newlines: list[int]

    def line(self, offset: int) -> int:
        return bisect_left(self.newlines, offset) + 1

    def piece(self, start: int, end: int) -> tuple[str, list[int]] | None:
        """The text between two offsets on whole lines (indentation kept) and its line range;
        None when it holds nothing but blanks and brackets."""
        chunk = self.data[start:end]
        first = start + len(chunk) - len(chunk.lstrip())
        end = start + len(chunk.rstrip())
        if first >= end:
            return None
        first = max(start, self.data.rfind(b"\n", 0, first) + 1)
        text = self.data[first:end].decode()
        if not re.search(r"\w", text):
            return None
        return text, [self.line(first), self.line(end - 1)]


@functools.cache
def _query(language: str) -> Query:
    return Query(get_language(language), _QUERIES[language])


def _bare_type(text: str) -> str:
    """`&'a mut Wrapper<T>`, `*Stack[T]`, `fmt::Display` -> `Wrapper`, `Stack`, `Display`."""
    names = re.findall(r"[A-Za-z_]\w*", re.split(r"[<\[]", text, maxsplit=1)[0])
    return names[-1] if names else text


def _outer(node: Node) -> Node:
    """The definition with what belongs to it: decorators, `export`, `const x =`, a lone Go `type`."""
    while (parent := node.parent) is not None:
        if parent.type in ("decorated_definition", "export_statement") or (
            parent.type in ("lexical_declaration", "variable_declaration", "type_declaration", "expression_statement")
            and parent.named_child_count == 1
        ):
            node = parent
        else:
            break
    return node


def _last_row(node: Node) -> int:
    """A Rust line comment ends at column 0 of the next line; its last row is the one before."""
    return node.end_point.row - (node.end_point.column == 0 and node.end_point.row > node.start_point.row)


def _span(node: Node) -> tuple[int, int]:
    start_node = end_node = node
    if node.type == "type_spec" and node.parent is not None:  # one of `type ( A ...; B ... )`
        specs = [c for c in node.parent.named_children if c.type == "type_spec"]
        start_node = node.parent if node == specs[0] else node
        end_node = node.parent if node == specs[-1] else node
    while (prev := start_node.prev_named_sibling) is not None and prev.type in _LEADING:
        before = prev.prev_sibling
        if _last_row(prev) < start_node.start_point.row - 1 or (
            before is not None and _last_row(before) == prev.start_point.row
        ):  # a blank line in between, or a comment trailing the code before it
            break
        start_node = prev
    return start_node.start_byte, end_node.end_byte


def _on_lines(data: bytes, start: int, end: int) -> tuple[int, int]:
    """Back to the start of the line when only indentation comes before (pieces keep their
    indentation), and on through the `;` or `,` that ends the statement."""
    line_start = data.rfind(b"\n", 0, start) + 1
    terminator = _TERMINATOR.match(data, end)
    return line_start if not data[line_start:start].strip() else start, terminator.end() if terminator else end


def _signature(node: Node, outer: Node, data: bytes) -> str:
    """From the definition's first token (decorators and `export` included) to its body."""
    body = node.child_by_field_name("body")
    value = node.child_by_field_name("value")
    if body is None and value is not None:
        body = value.child_by_field_name("body")
    if body is not None:
        end = body.start_byte
    else:
        newline = data.find(b"\n", node.start_byte, node.end_byte)
        end = newline if newline >= 0 else node.end_byte
    text = " ".join(data[outer.start_byte:end].decode(errors="replace").split()).removesuffix("{").rstrip()
    return text[:_SIGNATURE_CHARS]


def _symbols(root: Node, data: bytes, language: str) -> list[_Symbol]:
    """Top-level symbols, each with its members; nothing inside a function is a symbol."""
    found: list[tuple[int, int, str, str, str]] = []
    for _, captures in QueryCursor(_query(language)).matches(root):
        kind, (node,) = next((k, v) for k, v in captures.items() if k not in ("name", "receiver"))
        name = captures["name"][0].text.decode(errors="replace")
        if kind == "impl":
            name = _bare_type(name)
        if "receiver" in captures:
            name = f"{_bare_type(captures['receiver'][0].text.decode(errors='replace'))}.{name}"
        if node.type == "type_spec":
            spec = node.child_by_field_name("type")
            kind = _GO_TYPES.get(spec.type if spec else "", "type")
        outer = _outer(node)
        found.append((*_on_lines(data, *_span(outer)), kind, name, _signature(node, outer, data)))
    found.sort(key=lambda f: (f[0], -f[1]))
    top: list[_Symbol] = []
    stack: list[_Symbol] = []
    for start, end, kind, name, signature in found:
        while stack and stack[-1].end <= start:
            stack.pop()
        owner = stack[-1] if stack else None
        if owner is not None and owner.kind in _WHOLE:
            continue
        if kind == "function" and owner is not None and owner.kind in _METHOD_OWNERS:
            kind = "method"
        symbol = _Symbol(kind, f"{owner.path}.{name}" if owner else name, signature, start, end)
        (owner.members if owner else top).append(symbol)
        stack.append(symbol)
    return top


def _units(source: _Source, symbols: list[_Symbol], span: tuple[int, int], owner: _Symbol | None,
           context: list[str], module: str, language: str) -> list[tuple[int, TextUnit]]:
    """The owner's own runs between its members (the module's when there is no owner), then the
    members', each unit keyed by its start offset."""
    units: list[tuple[int, TextUnit]] = []
    kind, symbol = (owner.kind, owner.path) if owner else ("module", module)
    cuts = [span[0], *(edge for s in symbols for edge in (s.start, s.end)), span[1]]
    for start, end in zip(cuts[::2], cuts[1::2]):
        if (piece := source.piece(start, end)) is not None:
            text, lines = piece
            locator = {"symbol": symbol, "kind": kind, "lines": lines, "language": language}
            units.append((start, TextUnit(text, locator, " > ".join(context), split="lines")))
    for member in symbols:
        units += _units(source, member.members, (member.start, member.end), member, [*context, member.signature],
                        module, language)
    return units


def _count(symbols: list[_Symbol]) -> int:
    return sum(1 + _count(s.members) for s in symbols)


def extract_code(data: bytes, name: str, settings: Settings, *, mime: str) -> Extracted:
    """The extractor behind every code MIME type (registered below, one per language)."""
    if len(data) > settings.code_max_bytes:
        raise BadInputError(f"source file is {len(data)} bytes, over the {settings.code_max_bytes}-byte limit for code")
    text = decode_utf8(data)
    if not text.strip():
        raise BadInputError("empty file: no code to ingest")
    language = LANGUAGES[mime]
    encoded = text.replace("\r\n", "\n").encode()
    root = get_parser(language).parse(encoded).root_node
    source = _Source(encoded, [m.start() for m in re.finditer(b"\n", encoded)])
    symbols = _symbols(root, encoded, language)
    units = _units(source, symbols, (0, len(encoded)), None, [name], Path(name).stem, language)
    return Extracted(
        mime=mime, title=name, layout="units", units=[unit for _, unit in sorted(units, key=lambda u: u[0])],
        metadata={"language": language, "symbol_count": _count(symbols), "parse_errors": root.has_error},
    )


def _extractor(mime: str) -> Extractor:
    def extract(data: bytes, name: str, settings: Settings) -> Extracted:
        return extract_code(data, name, settings, mime=mime)

    extract.__name__ = f"extract_{LANGUAGES[mime]}"
    return extract


for _mime in LANGUAGES:
    register(_mime)(_extractor(_mime))
