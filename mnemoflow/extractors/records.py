"""Records: CSV rows and JSON or JSON Lines objects, one unit each, read as `key: value` lines.

A record is asked about by its fields (an order number, a customer), so each record is a unit
of its own that cites its place in the file, instead of a table cut wherever the token cap falls.
Conversation transcripts are JSON too; `looks_like_transcript` tells them apart for the router.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors.registry import Extracted, TextUnit, mime_for, register
from mnemoflow.extractors.text import decode_utf8, without_lone_surrogates

MAX_RECORDS = 100_000  # one file is one source; past this it is a dataset, to be loaded as one
MAX_COLUMNS = 16_384  # Excel's limit: a wider "CSV" is a matrix or a dump, not records
# A record's locator names the header so a citation reads on its own; a wider header is in the
# document's metadata only, since every chunk of every row would carry (and store) all of it.
LOCATOR_COLUMNS = 100
TITLE_FIELDS = ("title", "name", "subject")  # first one present names a record in its search context
_SNIFF_CHARS = 16_384
_DELIMITERS = ",;\t|"


# ---------------------------------------------------------------------- record text
def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value).strip()


def _flatten(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """(dotted key, text) pairs: nested objects by dotted keys, lists of plain values joined,
    lists holding objects by position (`items[0].sku`); empty values left out."""
    if isinstance(value, dict):
        for name, item in value.items():
            yield from _flatten(item, f"{key}.{name}" if key else str(name))
    elif isinstance(value, list) and any(isinstance(item, dict | list) for item in value):
        for i, item in enumerate(value):
            yield from _flatten(item, f"{key}[{i}]")
    elif isinstance(value, list):
        if joined := ", ".join(filter(None, map(_scalar, value))):
            yield key, joined
    elif text := _scalar(value):
        yield key, text


def _unit(pairs: Iterable[tuple[str, str]], locator: dict[str, Any], name: str) -> TextUnit | None:
    pairs = [(without_lone_surrogates(k), without_lone_surrogates(v)) for k, v in pairs]  # JSON may escape "\ud800"
    if not pairs:
        return None
    title = next((v for field in TITLE_FIELDS for k, v in pairs if k.lower() == field), None)
    context = f"{name} > {title}" if title else name
    return TextUnit("\n".join(f"{k}: {v}" for k, v in pairs), locator, context, split="lines")


def record_unit(record: dict[str, Any], locator: dict[str, Any], name: str) -> TextUnit | None:
    """One record (a CSV row, a JSON object, an API record) as a unit of `key: value` lines."""
    return _unit(_flatten(record), locator, name)


def _cap(count: int) -> None:
    if count > MAX_RECORDS:
        raise BadInputError(f"more than {MAX_RECORDS} records: split the file or load it as a dataset")


def _records(units: list[TextUnit], mime: str, name: str, metadata: dict[str, Any]) -> Extracted:
    if not units:
        raise BadInputError("no records: every record is empty")
    return Extracted(mime=mime, title=name, layout="units", units=units, metadata={"records": len(units), **metadata})


def _require_text(data: bytes) -> str:
    text = decode_utf8(data)
    if not text.strip():
        raise BadInputError("empty file: no records")
    return text


# ---------------------------------------------------------------------- CSV
def _dialect(text: str) -> dict[str, Any]:
    """The sniffed delimiter and quote; quoting otherwise as Excel writes it, since the sniffer
    reads "no doubled quote in the sample" as "the file never doubles quotes"."""
    sample = text[:_SNIFF_CHARS]
    if len(text) > _SNIFF_CHARS and "\n" in sample:
        sample = sample[: sample.rfind("\n")]
    try:
        sniffed = csv.Sniffer().sniff(sample, delimiters=_DELIMITERS)
    except csv.Error:  # one column, or too little to tell
        return {}
    return {"delimiter": sniffed.delimiter, "quotechar": sniffed.quotechar or '"',
            "skipinitialspace": sniffed.skipinitialspace}


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


@register("text/csv")
def extract_csv(data: bytes, name: str, settings: Settings) -> Extracted:
    """The first row names the fields (required); a row longer or shorter than it is kept and
    counted. Records are numbered from 1 after the header, blank rows not counted."""
    text = _require_text(data)
    reader = csv.reader(io.StringIO(text, newline=""), **_dialect(text))
    units: list[TextUnit] = []
    header: list[str] = []
    ragged = 0
    line = 1
    try:
        for row in reader:
            first_line, line = line, reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            if not header:
                if len(row) > MAX_COLUMNS:
                    raise BadInputError(f"the header row has {len(row)} columns, over the limit of {MAX_COLUMNS}: "
                                        "not records (a matrix or a dump?)")
                header = [cell.strip() or f"column_{i}" for i, cell in enumerate(row, start=1)]
                if all(_is_number(cell) for cell in header):
                    raise BadInputError("no header row: the first row is all numbers, not field names")
                continue
            if len(row) > MAX_COLUMNS:
                raise BadInputError(f"line {first_line}: {len(row)} columns, over the limit of {MAX_COLUMNS}")
            ragged += len(row) != len(header)
            names = header + [f"column_{i}" for i in range(len(header) + 1, len(row) + 1)]
            locator = {"record": len(units) + 1, "line": first_line}
            if len(header) <= LOCATOR_COLUMNS:
                locator["columns"] = header
            if unit := _unit(((k, v.strip()) for k, v in zip(names, row) if v.strip()), locator, name):
                units.append(unit)
                _cap(len(units))
    except csv.Error as exc:
        raise BadInputError(f"line {reader.line_num}: unreadable CSV ({exc})") from None
    if not header:
        raise BadInputError("empty file: no records")
    if not units:
        raise BadInputError("no records: the CSV has a header row only")
    return _records(units, "text/csv", name, {"columns": header, "ragged_rows": ragged})


# ---------------------------------------------------------------------- JSON and JSON Lines
def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _member(key: str) -> str:
    return f"$.{key}" if key.isidentifier() else f"$[{json.dumps(key)}]"


def _json_records(document: Any) -> list[tuple[str, Any]]:
    """(JSONPath, record): a list of objects, an object holding exactly one list of objects
    (`{"data": [...]}`, the rest being an envelope), or else a single object."""
    if isinstance(document, dict):
        lists = [k for k, v in document.items() if isinstance(v, list) and v and all(isinstance(i, dict) for i in v)]
        if len(lists) != 1:
            return [("$", document)]
        base, items = _member(lists[0]), document[lists[0]]
    elif isinstance(document, list):
        base, items = "$", document
    else:
        raise BadInputError(f"the file holds {_json_type(document)}, not records: expected JSON objects")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise BadInputError(f"{base}[{i}] is {_json_type(item)}, not an object: records must be JSON objects")
    return [(f"{base}[{i}]", item) for i, item in enumerate(items)]


_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip(text: str, pos: int) -> int:
    return _JSON_SPACE.match(text, pos).end()  # type: ignore[union-attr]  (matches the empty string)


def _array(text: str, pos: int, limit: int, sniff: bool) -> tuple[list[Any], int]:
    """The array at `pos`, item by item: refused past `limit` items (or, to `sniff`, cut there;
    the end is then -1), before a parser's objects for millions of them take gigabytes."""
    items: list[Any] = []
    pos = _skip(text, pos + 1)
    if text.startswith("]", pos):
        return items, pos + 1
    while True:
        if len(items) == limit:
            if sniff:
                return items, -1
            raise BadInputError(f"more than {limit} records in one array: split the file or load it as a dataset")
        item, pos = _DECODER.raw_decode(text, pos)
        items.append(item)
        pos = _skip(text, pos)
        if text.startswith(",", pos):
            pos = _skip(text, pos + 1)
        elif text.startswith("]", pos):
            return items, pos + 1
        else:
            raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)


def _object(text: str, pos: int, limit: int, sniff: bool) -> tuple[dict[str, Any], int]:
    """The object at `pos`, member by member; an array member is read as `_array` reads one."""
    members: dict[str, Any] = {}
    pos = _skip(text, pos + 1)
    if text.startswith("}", pos):
        return members, pos + 1
    while True:
        if not text.startswith('"', pos):
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, pos)
        key, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, pos)
        if not text.startswith(":", pos):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, pos)
        pos = _skip(text, pos + 1)
        if text.startswith("[", pos):
            members[key], pos = _array(text, pos, limit, sniff)
            if pos < 0:
                return members, pos
        else:
            members[key], pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, pos)
        if text.startswith(",", pos):
            pos = _skip(text, pos + 1)
        elif text.startswith("}", pos):
            return members, pos + 1
        else:
            raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)


def _parse_json(text: str, limit: int, sniff: bool = False) -> Any:
    """`json.loads`, but the top level and the arrays of a top-level object (where records are) are
    read item by item, at most `limit` items each (see `_array`)."""
    pos = _skip(text, 0)
    if text.startswith("[", pos):
        document, end = _array(text, pos, limit, sniff)
    elif text.startswith("{", pos):
        document, end = _object(text, pos, limit, sniff)
    else:
        document, end = _DECODER.raw_decode(text, pos)
    if end >= 0 and _skip(text, end) != len(text):
        raise json.JSONDecodeError("Extra data", text, _skip(text, end))
    return document


def _load_json(text: str) -> Any:
    try:
        return _parse_json(text, MAX_RECORDS)
    except json.JSONDecodeError as exc:
        raise BadInputError(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise BadInputError("invalid JSON: nested too deeply to read") from None


@register("application/json")
def extract_json(data: bytes, name: str, settings: Settings) -> Extracted:
    found = _json_records(_load_json(_require_text(data)))
    _cap(len(found))
    units = [u for n, (path, record) in enumerate(found, start=1)
             if (u := _unit(_flatten(record), {"record": n, "path": path}, name))]
    return _records(units, "application/json", name, {})


def _json_lines(text: str) -> Iterator[tuple[int, Any | None]]:
    """(line number, value), None for a line that is not JSON; blank lines skipped."""
    for line_no, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                yield line_no, json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                yield line_no, None


@register("application/x-ndjson")
def extract_jsonl(data: bytes, name: str, settings: Settings) -> Extracted:
    """One object per line. A bad line is skipped and counted (with the first one's number) so
    one broken line does not cost the file; a file with no good line is refused naming it."""
    units: list[TextUnit] = []
    bad: list[int] = []
    for line_no, record in _json_lines(_require_text(data)):
        if not isinstance(record, dict):
            bad.append(line_no)
        elif unit := _unit(_flatten(record), {"record": len(units) + 1, "line": line_no}, name):
            units.append(unit)
            _cap(len(units))
    if bad and not units:
        raise BadInputError(f"no records: no line is a JSON object (line {bad[0]} is the first bad one)")
    return _records(units, "application/x-ndjson", name,
                    {"invalid_lines": len(bad), "first_invalid_line": bad[0]} if bad else {})


# ---------------------------------------------------------------------- routing
def looks_like_transcript(data: bytes, name: str) -> bool:
    """Whether a .json/.jsonl file belongs to the conversations connector: its first record is a turn
    (`turn_id`, with `session_id` or `speaker`: a chat exported without sessions is one session), or
    there is no record to judge by (not UTF-8, not JSON, empty), in which case the transcript parser
    reports the problem line by line, as it always has."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return True
    if mime_for(name) == "application/x-ndjson":
        first = next((value for _, value in _json_lines(text) if value is not None), None)
    else:
        try:
            document = _parse_json(text, 1, sniff=True)  # the first record decides; the rest is not read
        except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
            return True
        if isinstance(document, list):
            first = document[0] if document else None
        else:
            first = _json_records(document)[0][1] if isinstance(document, dict) else None
    return first is None or (isinstance(first, dict) and "turn_id" in first
                             and bool({"session_id", "speaker"} & first.keys()))
