"""Command-line values without importing pydantic for the ones that need no conversion.

typer (0.29) turns every parameter's value into its annotated type with a pydantic `TypeAdapter`,
built when the command runs, and importing pydantic for that costs a command ~0.15 CPU s: half of
what a command that a running server answers may cost (bench/startup.py). Most values need no
conversion: a missing option (None), a `str` typed as str, a default already of its type and range
(`--limit` left at 10), a `Path`. `defer_coercion` gives each
parameter of a command a coercer that answers those itself, as typer does (the path through typer's
own `coerce_cli_path`), and builds typer's own adapter for anything else (an `--k 5`) when a value
comes, so behaviour and messages are typer's. It leans on typer's coercion internals
(`_runtime_param`, `RuntimeParam`); where they are missing it changes nothing, and
tests/test_startup.py notices the cost coming back.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

try:
    from typer._coercion import RuntimeParam, build_runtime_param
    from typer._param_types import coerce_cli_path, routes_to_path
except ImportError:  # another typer: it coerces as it does
    RuntimeParam = None  # type: ignore[assignment,misc]


if RuntimeParam is not None:

    @dataclass(frozen=True)
    class _Deferred(RuntimeParam):  # type: ignore[misc,valid-type]
        descriptor: Any = None

        def _in_range(self, value: float) -> bool:
            low, high = self.parameter_info.min, self.parameter_info.max
            return (low is None or value >= low) and (high is None or value <= high)

        @cached_property
        def _typers_own(self) -> Any:
            return build_runtime_param(self.descriptor)

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if self.annotation is str and isinstance(value, str):
                return value  # typer's str coercion returns a str as it is
            if self.annotation in (int, float) and type(value) is self.annotation and self._in_range(value):
                return value  # a default: what typer's adapter returns for it
            if routes_to_path(self.annotation, self.parameter_info):
                path_type = self.parameter_info.path_type
                if path_type is None and isinstance(self.annotation, type) and issubclass(self.annotation, Path):
                    path_type = self.annotation
                if path_type is not None and isinstance(value, str):
                    value = path_type(value)  # what typer's pydantic adapter makes of a str
                return coerce_cli_path(value, self.parameter_info, path_type=path_type, param=param, ctx=ctx)
            return self._typers_own._coerce_value(value, param=param, ctx=ctx)


def defer_coercion(command: Any) -> None:
    """Give the parameters of `command` (a click command from `typer.main.get_command`) and of its
    subcommands the coercer above, where typer would build a pydantic adapter up front."""
    if RuntimeParam is None:
        return
    # with the --help option, which typer makes (and keeps) when the command is first parsed
    for param in command.get_params(command.context_class(command)):
        descriptor = getattr(param, "type_descriptor", None)
        if (descriptor is not None and getattr(param, "_runtime_param", False) is None
                and descriptor.file_annotation is None and isinstance(descriptor.annotation, type)):
            param._runtime_param = _Deferred(descriptor.parameter_info, descriptor.annotation, descriptor)
    for sub in getattr(command, "commands", {}).values():
        defer_coercion(sub)

