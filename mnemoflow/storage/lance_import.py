"""Importing LanceDB for half its CPU, with nothing it does changed.

`import lancedb` (0.40) costs ~2 CPU s, the largest part of a cold `mnemoflow recall`; more than
half of it is the generated REST client of Lance namespaces (`lance_namespace_urllib3_client`,
pulled in by `lance_namespace`), which a local LanceDB folder never calls:

- its package `__init__` imports every API class, each method wrapped in pydantic's
  `validate_call` (~0.5 CPU s). Only its `models` subpackage is imported at LanceDB's import; the
  package's own `__init__` runs when one of its names is first used (a REST namespace).
- its ~300 pydantic models and LanceDB's own build their validators at class creation; pydantic's
  documented `defer_build` builds each on its first validation instead, so it is set as the default
  while LanceDB is imported (`pydantic._internal._config.config_defaults`, the only private name used:
  without it the import only costs more).

And on Python 3.11 LanceDB marks its ~100 overriding methods with the `overrides` package's
`@override`, which disassembles each class body to check the method against its base class (~0.3 CPU
s); on 3.12+ it uses `typing.override`, a marker only. While LanceDB is imported, `@override` is that
marker on 3.11 too (`EnforceOverrides` still finds every override marked).

bench/startup.py measures the import; tests/storage/test_lance_import.py proves the deferred package
still works when used.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

DEFERRED_PACKAGES = ("lance_namespace_urllib3_client",)
_LOCK = threading.Lock()


def import_lancedb() -> ModuleType:
    """`lancedb`, imported the cheap way the first time (see the module docstring)."""
    with _LOCK:
        if "lancedb" not in sys.modules:
            for name in DEFERRED_PACKAGES:
                defer_package_init(name)
            with _pydantic_deferred_build(), _override_as_marker():
                importlib.import_module("lancedb")
                importlib.import_module("lancedb.index")
    return sys.modules["lancedb"]


def defer_package_init(name: str) -> None:
    """Put package `name` in `sys.modules` without running its `__init__`: its submodules import as
    usual (through its `__path__`), and the first name looked up on the package itself runs the real
    `__init__` and answers from it. Nothing happens to a package already imported or not installed."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    module = importlib.util.module_from_spec(spec)
    running = threading.RLock()

    def __getattr__(attr: str) -> Any:  # noqa: N807  (PEP 562: only for names the module lacks)
        with running:
            if module.__dict__.get("__getattr__") is __getattr__:
                del module.__getattr__
                spec.loader.exec_module(module)  # type: ignore[union-attr]
        try:
            return module.__dict__[attr]
        except KeyError:
            raise AttributeError(f"module {name!r} has no attribute {attr!r}") from None

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[name] = module


@contextmanager
def _pydantic_deferred_build() -> Iterator[None]:
    try:
        from pydantic._internal._config import config_defaults
    except ImportError:  # another pydantic: models build as they are created
        yield
        return
    before = config_defaults.get("defer_build", False)
    config_defaults["defer_build"] = True
    try:
        yield
    finally:
        config_defaults["defer_build"] = before


def _mark_override(method: Any) -> Any:
    """`typing.override` of Python 3.12: sets `__override__` and returns the method as it is."""
    try:
        method.__override__ = True
    except (AttributeError, TypeError):
        pass
    return method


@contextmanager
def _override_as_marker() -> Iterator[None]:
    try:
        import overrides
    except ImportError:  # Python 3.12+: LanceDB uses typing.override
        yield
        return
    checking = overrides.override
    overrides.override = _mark_override
    try:
        yield
    finally:
        overrides.override = checking
