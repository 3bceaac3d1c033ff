"""A FastAPI app served on a loopback port in a thread: the base of the stand-ins for outside
services the tests cannot reach (an OpenAI-compatible embeddings or chat endpoint)."""

from __future__ import annotations

import socket
import threading
import time

import uvicorn
from fastapi import FastAPI


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LoopbackServer:
    """`app` served on 127.0.0.1:`port` between `start()` and `stop()`."""

    def __init__(self, port: int, app: FastAPI) -> None:
        self.port = port
        self.app = app
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        self._server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="error"))
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{type(self).__name__} did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)  # type: ignore[union-attr]
