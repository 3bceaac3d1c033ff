"""The `mnemoflow` command: parse, call the service, print. One module per group of commands; `main`
imports only the one the command line names (see `mnemoflow.cli.app`)."""

from __future__ import annotations

from typing import Any

from mnemoflow.cli.app import COMMANDS, app, load_commands, main

__all__ = ["COMMANDS", "app", "generation_line", "load_commands", "main", "place_in_document"]


def __getattr__(name: str) -> Any:
    if name in ("generation_line", "place_in_document"):
        from mnemoflow.cli import output

        return getattr(output, name)
    raise AttributeError(f"module 'mnemoflow.cli' has no attribute {name!r}")
