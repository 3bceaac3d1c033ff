"""How a long run reports how far it is (`Progress`, drawn by the CLI), and how the stages of a
sequence are run: as plain calls (`inline`) or, in the Prefect flows, as tasks (`Step`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

Step = Callable[..., Any]


def inline(stage: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Run a stage as a plain call (the in-process `step`)."""
    return stage(*args, **kwargs)


class Progress(Protocol):
    def file_read(self, path: Path) -> None: ...

    def deriving(self, pending: int) -> None: ...

    def embedded(self, count: int) -> None: ...


class Quiet:
    """A run nobody watches."""

    def file_read(self, path: Path) -> None:
        pass

    def deriving(self, pending: int) -> None:
        pass

    def embedded(self, count: int) -> None:
        pass
