"""Source code: one unit per symbol with its dotted path, kind and exact lines, for every language."""

from pathlib import Path

import pytest

import mnemoflow.extractors.code  # noqa: F401  (registers the code MIME types)
from mnemoflow.chunking import chunk_extracted
from mnemoflow.config import Settings, load_settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors import Extracted, extractor_for, mime_for
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

PYTHON = '''\
"""Retry helpers for flaky network calls."""

import random

ATTEMPTS = 5


def jitter(delay: float) -> float:
    return delay * random.uniform(0.5, 1.5)


class Backoff:
    """Exponential backoff between attempts."""

    base = 0.5

    @property
    def ceiling(self) -> float:
        return 30.0

    # doubles every attempt
    def delay(self, attempt: int) -> float:
        return min(self.ceiling, self.base * 2**attempt)

    class Config:
        strict = True

        def check(self) -> bool:
            def inner() -> bool:
                return True
            return inner()


if __name__ == "__main__":
    print(jitter(1.0))
'''

JAVASCRIPT = """\
const http = require("http");

/** Adds two numbers. */
function add(a, b) {
  return a + b;
}

class Counter extends Base {
  count = 0;

  constructor() {
    super();
  }

  onClick = () => {
    this.count += 1;
  };
}

const double = (n) => n * 2;
export const triple = function (n) { return n * 3; };
export default function main() {}
"""

TYPESCRIPT = """\
import { fetch } from "./http";

/** Options for the client. */
export interface ClientOptions {
  baseUrl: string;
}

export type Id = string;

export enum Mode { Fast, Slow }

export class Client {
  private retries = 3;

  @logged
  async get(id: Id): Promise<string> {
    return fetch(id);
  }
}

export const toUrl = (id: Id): string => `/items/${id}`;

namespace Util {
  export function slug(s: string): string {
    return s.toLowerCase();
  }
}
"""

TSX = """\
import React from "react";

type Props = { label: string };

export function Button({ label }: Props) {
  return <button>{label}</button>;
}

export const Icon = () => <svg />;
"""

GO = """\
package store

import "fmt"

// Store keeps items.
type Store struct {
	items map[string]int
}

type (
	Key   string
	Value int
)

type Getter interface {
	Get(k Key) Value
}

func New() *Store {
	return &Store{}
}

func (s *Store) Get(k Key) Value {
	return Value(s.items[string(k)])
}

func (s Stack[T]) Push(v T) {}
"""

RUST = """\
use std::fmt;

/// A wrapper.
#[derive(Debug)]
pub struct Wrapper<T> {
    inner: T,
}

pub enum Shape { Circle, Square }

pub trait Area {
    fn area(&self) -> f64;
    fn double(&self) -> f64 { self.area() * 2.0 }
}

impl<T: fmt::Display> fmt::Display for Wrapper<T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.inner)
    }
}

pub fn helper() -> u32 {
    1
}

mod tests {
    #[test]
    fn it_works() {}
}
"""

JAVA = """\
package org.example;

import java.util.Map;

/** A cache. */
public class Cache<K, V> {
    private final Map<K, V> map;

    public Cache(Map<K, V> map) {
        this.map = map;
    }

    @Override
    public String toString() {
        return "Cache";
    }

    interface Loader {
        Object load(String key);
    }
}
"""

EXPECTED = {
    "retry.py": ("python", [
        ("module", "retry", [1, 5]),
        ("function", "jitter", [8, 9]),
        ("class", "Backoff", [12, 15]),
        ("method", "Backoff.ceiling", [17, 19]),
        ("method", "Backoff.delay", [21, 23]),
        ("class", "Backoff.Config", [25, 26]),
        ("method", "Backoff.Config.check", [28, 31]),  # its closure stays inside it
        ("module", "retry", [34, 35]),
    ]),
    "app.js": ("javascript", [
        ("module", "app", [1, 1]),
        ("function", "add", [3, 6]),
        ("class", "Counter", [8, 9]),
        ("method", "Counter.constructor", [11, 13]),
        ("method", "Counter.onClick", [15, 17]),
        ("function", "double", [20, 20]),
        ("function", "triple", [21, 21]),
        ("function", "main", [22, 22]),
    ]),
    "client.ts": ("typescript", [
        ("module", "client", [1, 1]),
        ("interface", "ClientOptions", [3, 6]),
        ("type", "Id", [8, 8]),
        ("enum", "Mode", [10, 10]),
        ("class", "Client", [12, 13]),
        ("method", "Client.get", [15, 18]),
        ("function", "toUrl", [21, 21]),
        ("namespace", "Util", [23, 23]),
        ("function", "Util.slug", [24, 26]),
    ]),
    "Button.tsx": ("tsx", [
        ("module", "Button", [1, 1]),
        ("type", "Props", [3, 3]),
        ("function", "Button", [5, 7]),
        ("function", "Icon", [9, 9]),
    ]),
    "store.go": ("go", [
        ("module", "store", [1, 3]),
        ("struct", "Store", [5, 8]),
        ("type", "Key", [10, 11]),  # a grouped `type (...)`: the first and last take the brackets
        ("type", "Value", [12, 13]),
        ("interface", "Getter", [15, 17]),
        ("function", "New", [19, 21]),
        ("method", "Store.Get", [23, 25]),
        ("method", "Stack.Push", [27, 27]),
    ]),
    "lib.rs": ("rust", [
        ("module", "lib", [1, 1]),
        ("struct", "Wrapper", [3, 7]),
        ("enum", "Shape", [9, 9]),
        ("trait", "Area", [11, 12]),
        ("method", "Area.double", [13, 13]),
        ("impl", "Wrapper", [16, 16]),
        ("method", "Wrapper.fmt", [17, 19]),
        ("function", "helper", [22, 24]),
        ("mod", "tests", [26, 26]),
        ("function", "tests.it_works", [27, 28]),
    ]),
    "Cache.java": ("java", [
        ("module", "Cache", [1, 3]),
        ("class", "Cache", [5, 7]),
        ("constructor", "Cache.Cache", [9, 11]),
        ("method", "Cache.toString", [13, 16]),
        ("interface", "Cache.Loader", [18, 18]),
        ("method", "Cache.Loader.load", [19, 19]),
    ]),
}
SOURCES = {"retry.py": PYTHON, "app.js": JAVASCRIPT, "client.ts": TYPESCRIPT, "Button.tsx": TSX, "store.go": GO,
           "lib.rs": RUST, "Cache.java": JAVA}


def extract(name: str, data: bytes, settings: Settings) -> Extracted:
    return extractor_for(mime_for(name))(data, name, settings)


@pytest.mark.parametrize("name", list(SOURCES))
def test_one_unit_per_symbol_with_its_path_kind_and_lines(name: str, settings: Settings) -> None:
    language, expected = EXPECTED[name]
    extracted = extract(name, SOURCES[name].encode(), settings)

    assert [(u.locator["kind"], u.locator["symbol"], u.locator["lines"]) for u in extracted.units] == expected
    assert {u.locator["language"] for u in extracted.units} == {language}
    assert extracted.title == name and extracted.layout == "units"
    assert extracted.metadata["language"] == language
    assert extracted.metadata["symbol_count"] == sum(kind != "module" for kind, _, _ in expected)
    assert extracted.metadata["parse_errors"] is False


@pytest.mark.parametrize("name", list(SOURCES))
def test_units_are_the_files_own_lines_each_once(name: str, settings: Settings) -> None:
    lines = SOURCES[name].split("\n")
    units = extract(name, SOURCES[name].encode(), settings).units
    for unit in units:
        first, last = unit.locator["lines"]
        assert unit.split == "lines"
        assert unit.text == "\n".join(lines[first - 1 : last])  # whole lines: no two symbols share one here
    covered = [n for u in units for n in range(u.locator["lines"][0], u.locator["lines"][1] + 1)]
    assert len(covered) == len(set(covered))  # no line twice
    assert {n for n, line in enumerate(lines, 1) if any(c.isalnum() for c in line)} <= set(covered)  # none lost


def test_context_carries_the_file_and_the_signatures_above(settings: Settings) -> None:
    units = {u.locator["symbol"]: u for u in extract("retry.py", PYTHON.encode(), settings).units}
    assert units["Backoff.delay"].context == (
        "retry.py > class Backoff: > def delay(self, attempt: int) -> float:")
    assert units["Backoff.ceiling"].context == "retry.py > class Backoff: > @property def ceiling(self) -> float:"
    assert units["Backoff.delay"].text.startswith("    # doubles every attempt\n    def delay(")
    assert units["retry"].context == "retry.py"


def test_a_long_function_is_cut_on_whole_lines_each_piece_with_its_own_range(settings: Settings) -> None:
    body = "".join(f"    total += step({i})  # step {i} of the long loop\n" for i in range(120))
    source = f"import math\n\n\ndef long_one(step):\n    total = 0\n{body}    return total\n"
    lines = source.split("\n")
    chunks = chunk_extracted("doc", extract("long.py", source.encode(), settings), max_tokens=64)

    pieces = [c for c in chunks if c.locator["symbol"] == "long_one"]
    assert len(pieces) > 10
    assert [c.locator["part"] for c in pieces] == list(range(len(pieces)))
    assert pieces[0].locator["lines"][0] == 4 and pieces[-1].locator["lines"][1] == 126
    for before, after in zip(pieces, pieces[1:]):
        assert after.locator["lines"][0] == before.locator["lines"][1] + 1
    for chunk in pieces:
        first, last = chunk.locator["lines"]
        assert chunk.text == "\n".join(lines[first - 1 : last])
        assert chunk.token_count <= 64 and chunk.context == "long.py > def long_one(step):"


def test_code_that_does_not_parse_keeps_what_it_can(settings: Settings) -> None:
    source = "def fine(x):\n    return x\n\n\ndef broken(:\n    return )(\n\n\ndef also_fine():\n    pass\n"
    extracted = extract("broken.py", source.encode(), settings)
    symbols = {u.locator["symbol"]: u.locator["lines"] for u in extracted.units}
    assert symbols["fine"] == [1, 2] and symbols["also_fine"] == [9, 10]
    assert "return )(" in "".join(u.text for u in extracted.units)
    assert extracted.metadata["parse_errors"] is True


def test_files_over_the_code_size_limit_are_refused(tmp_path: Path) -> None:
    small = load_settings(tmp_path / "home", code_max_bytes=100)
    with pytest.raises(BadInputError, match=r"source file is 101 bytes, over the 100-byte limit"):
        extract("big.py", b"x" * 101, small)
    assert extract("ok.py", b"x = 1\n" + b"#" * 94, small).units


@pytest.mark.parametrize(("data", "reason"), [
    (b"def f():\n    return b'\x00\x01'\x00\n", "binary content"),
    ("s = 'caf\xe9'\n".encode("latin-1"), "not UTF-8 text: byte 0xe9"),
    (b"  \n\n\t\n", "empty file"),
])
def test_unreadable_code_is_refused_with_a_reason(data: bytes, reason: str, settings: Settings) -> None:
    with pytest.raises(BadInputError, match=reason):
        extract("bad.go", data, settings)


RETRY_POLICY = '''\
"""Resilience settings shared by every outbound client."""

import json
from dataclasses import dataclass


@dataclass
class RetryPolicy:
    """What a client does when a call to another service fails."""

    base_s: float = 0.5
    ceiling_s: float = 30.0

    def should_retry(self, status: int) -> bool:
        return status == 429 or status >= 500

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number `attempt`: exponential backoff from
        `base_s`, doubled on every attempt and capped at `ceiling_s`."""
        return min(self.ceiling_s, self.base_s * 2**attempt)


def load_policy(path: str) -> RetryPolicy:
    with open(path) as handle:
        return RetryPolicy(**json.load(handle))
'''


def test_recall_cites_the_method_and_its_lines(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    for name, text in {"resilience/retry.py": RETRY_POLICY, "store/store.go": GO, "web/client.ts": TYPESCRIPT,
                       "core/lib.rs": RUST, "core/Cache.java": JAVA}.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    scope = Scope("t", "u")
    with MemoryService(load_settings(tmp_path / "home")) as svc:
        outcome = svc.ingest(scope, [repo])
        assert outcome.report.errors == [] and outcome.report.documents_changed == 5
        hit = svc.recall(scope, "how is the retry delay computed?", k=3).items[0]

    assert hit.citations[0].title == "retry.py"
    assert hit.citations[0].locator["symbol"] == "RetryPolicy.delay"
    assert hit.citations[0].locator["lines"] == [17, 20]
    assert hit.text.startswith("    def delay(self, attempt: int) -> float:")
