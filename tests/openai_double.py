"""A loopback stand-in for an OpenAI-compatible embeddings endpoint (an outside service the tests
cannot reach). It answers with the real offline MiniLM, so what it returns is meaningful, and
counts the texts it was asked to embed."""

from __future__ import annotations

import socket
import threading
import time

import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel

from mnemoflow.embedding.local import LocalEmbedder


class EmbeddingRequest(BaseModel):
    model: str
    input: list[str] | str


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OpenAIDouble:
    def __init__(self, port: int) -> None:
        self.port = port
        self.texts_embedded = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        embedder = LocalEmbedder()
        app = FastAPI()

        @app.post("/v1/embeddings")
        def embeddings(request: EmbeddingRequest) -> dict:
            texts = [request.input] if isinstance(request.input, str) else request.input
            self.texts_embedded += len(texts)
            vectors = embedder.embed(texts)
            return {"object": "list", "model": request.model,
                    "data": [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)],
                    "usage": {"prompt_tokens": 0, "total_tokens": 0}}

        self.app = app

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
                raise RuntimeError("embedding double did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)  # type: ignore[union-attr]
