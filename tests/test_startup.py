"""What a command imports: through a running server only argument parsing, an HTTP client and
printing (no model, no storage engine, no pydantic model tree, no rich renderable for --json), and
cold only the engines the command needs. bench/startup.py measures the time; this guards the cause."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mnemoflow.cli import COMMANDS, load_commands
from mnemoflow.cli.app import app
from mnemoflow.cli.memories import PRESET_NAMES
from mnemoflow.recall.config import PRESETS
from tests.serving import served

# what a served command must not import: the engines, the model, pydantic and the service's types,
# the server's web stack, httpx, and rich (which styles a terminal only; these commands print into a pipe)
SERVED_NEVER = ("duckdb", "lancedb", "lance", "pyarrow", "numpy", "pandas", "onnxruntime", "tokenizers", "torch",
                "sentence_transformers", "sklearn", "pydantic", "pydantic_core", "pydantic_settings", "httpx",
                "fastapi", "starlette", "uvicorn", "prefect", "dlt", "mnemoflow.service", "mnemoflow.models",
                "mnemoflow.config", "mnemoflow.storage.store", "mnemoflow.recall.engine", "mnemoflow.client", "rich")
# (rich styles only a terminal: none of these commands imports it printing into a pipe or a file)
JSON_NEVER = SERVED_NEVER


def imported(home: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run `mnemoflow ARGS --home HOME` as a user would; what it printed and every module it imported."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "mnemoflow.cli", *args, "--home", str(home)],
                          capture_output=True, text=True, timeout=600, env=os.environ)
    modules = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    modules.discard("package")  # the header line
    return done, modules


def offending(modules: set[str], never: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in never))


@pytest.fixture(scope="module")
def server_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("served") / "home"
    with served(home):
        done, _ = imported(home, "add", "Rosa keeps her climbing shoes in locker 41", "--tenant", "gym",
                           "--user", "rosa", "--no-infer")
        assert done.returncode == 0, done.stderr[-3000:]
        yield home


@pytest.mark.parametrize("args, never", [
    (["recall", "where are Rosa's climbing shoes?", "--json"], JSON_NEVER),
    (["recall", "where are Rosa's climbing shoes?"], SERVED_NEVER),
    (["search", "climbing shoes", "--json"], JSON_NEVER),
    (["search", "climbing shoes"], SERVED_NEVER),
    (["add", "Rosa's belay partner is Tomasz"], SERVED_NEVER),
])
def test_a_served_command_imports_no_engine_model_or_type_tree(server_home: Path, args: list[str],
                                                                never: tuple[str, ...]) -> None:
    done, modules = imported(server_home, *args, "--tenant", "gym", "--user", "rosa")
    assert done.returncode == 0, done.stderr[-3000:]
    assert offending(modules, never) == []
    assert "mnemoflow.remote" in modules and "http.client" in modules  # it did ask the server
    if args[0] == "recall" and "--json" in args:
        assert "locker 41" in json.loads(done.stdout)["items"][0]["text"]
    elif args[0] != "add":
        assert "locker 41" in done.stdout


def test_the_cold_path_opens_no_index_and_loads_no_model_it_does_not_need(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done, _ = imported(home, "add", "Rosa keeps her chalk bag in locker 12", "--tenant", "gym", "--user", "rosa",
                       "--no-infer")
    assert done.returncode == 0, done.stderr[-3000:]
    nothing_there = ("lancedb", "onnxruntime", "tokenizers", "torch", "sklearn")
    done, modules = imported(home, "recall", "chalk bag", "--tenant", "gym", "--user", "nobody-here")
    assert done.returncode == 0 and "nothing recalled" in done.stdout, done.stderr[-3000:]
    assert offending(modules, nothing_there) == []  # an empty scope: no index opened, no model loaded
    done, modules = imported(home, "keys", "list", "--tenant", "gym")
    assert done.returncode == 0, done.stderr[-3000:]
    assert offending(modules, nothing_there) == []
    done, modules = imported(home, "recall", "chalk bag", "--tenant", "gym", "--user", "rosa")
    assert "locker 12" in done.stdout, done.stderr[-3000:]
    assert offending(modules, ("torch", "sklearn", "sentence_transformers")) == []


def test_every_command_word_names_the_module_that_registers_it() -> None:
    load_commands(None)  # every module
    registered = {(c.name or c.callback.__name__): c.callback.__module__  # type: ignore[union-attr]
                  for c in app.registered_commands}
    for group in app.registered_groups:
        info = group.typer_instance
        callbacks = [c.callback for c in info.registered_commands]
        if info.registered_callback is not None:
            callbacks.append(info.registered_callback.callback)
        modules = {c.__module__ for c in callbacks if c is not None}
        assert len(modules) == 1, f"group {group.name} spreads over {modules}"
        registered[group.name] = modules.pop()  # type: ignore[index]
    assert {word: f"mnemoflow.cli.{module}" for word, module in COMMANDS.items()} == registered


def test_the_cli_knows_the_recall_presets_without_importing_them() -> None:
    assert set(PRESET_NAMES) == set(PRESETS)
